import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, InputDialog, Notification } from '@jupyterlab/apputils';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { ILauncher } from '@jupyterlab/launcher';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IStatusBar } from '@jupyterlab/statusbar';
import { LabIcon } from '@jupyterlab/ui-components';

import { registerTerminalComm } from './comm';
import { AllocationStatusItem } from './status';
import { openTerminal, parseTerminalRequest } from './terminal';
import { createWizardNotebook } from './wizard';

/** Command ids, stable: the wizard and tests refer to them. */
export namespace CommandIDs {
  export const setup = 'ari-jupyter:multi-node-setup';
  export const openTerminal = 'ari-jupyter:open-terminal';
}

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <rect x="2" y="3" width="8" height="6" rx="1"/>
    <rect x="14" y="3" width="8" height="6" rx="1"/>
    <rect x="2" y="15" width="8" height="6" rx="1"/>
    <rect x="14" y="15" width="8" height="6" rx="1"/>
    <rect x="11" y="11" width="2" height="2"/>
    <path d="M6 9v3h12V9h-1v2H7V9zM6 15v-3h1v3zM17 15v-3h1v3z"/>
  </g>
</svg>`;

const ariIcon = new LabIcon({ name: 'ari-jupyter:cluster', svgstr: ICON_SVG });

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'ari-jupyter-labextension:plugin',
  description:
    'ARI multi-node setup: wizard launcher, terminal hand-off and allocation status.',
  autoStart: true,
  optional: [
    ILauncher,
    ICommandPalette,
    INotebookTracker,
    IDefaultFileBrowser,
    IStatusBar
  ],
  activate: (
    app: JupyterFrontEnd,
    launcher: ILauncher | null,
    palette: ICommandPalette | null,
    notebooks: INotebookTracker | null,
    browser: IDefaultFileBrowser | null,
    statusBar: IStatusBar | null
  ) => {
    app.commands.addCommand(CommandIDs.setup, {
      label: 'ARI multi-node setup',
      caption:
        'Create a notebook with the ARI multi-node setup wizard in the current folder',
      icon: args => (args['isPalette'] ? undefined : ariIcon),
      execute: async args => {
        const cwd =
          typeof args['cwd'] === 'string'
            ? (args['cwd'] as string)
            : browser?.model.path ?? '';
        try {
          return await createWizardNotebook(app, cwd);
        } catch (reason) {
          Notification.error(`ARI: could not create the wizard: ${reason}`);
          throw reason;
        }
      }
    });

    app.commands.addCommand(CommandIDs.openTerminal, {
      label: 'ARI: type a command into a new terminal',
      caption:
        'Open a terminal and type a command; Enter is pressed only with run=true',
      execute: async args => {
        let command = args['command'];
        if (command === undefined) {
          const answer = await InputDialog.getText({
            title: 'Command to type into a new terminal (not run)'
          });
          if (!answer.button.accept || !answer.value) {
            return undefined;
          }
          command = answer.value;
        }
        const request = parseTerminalRequest({
          command,
          cwd: args['cwd'] ?? browser?.model.path,
          run: args['run']
        });
        return openTerminal(app, request);
      }
    });

    if (launcher) {
      launcher.add({ command: CommandIDs.setup, category: 'Notebook', rank: 100 });
    }
    if (palette) {
      palette.addItem({ command: CommandIDs.setup, category: 'ARI' });
      palette.addItem({ command: CommandIDs.openTerminal, category: 'ARI' });
    }
    if (notebooks) {
      registerTerminalComm(app, notebooks);
    }
    if (statusBar) {
      const item = new AllocationStatusItem();
      statusBar.registerStatusItem('ari-jupyter-labextension:allocation', {
        item,
        align: 'left',
        rank: 10,
        isActive: () => item.isActiveAllocation,
        activeStateChanged: item.activeChanged
      });
      item.start();
    }
    console.log('ari-jupyter extension activated');
  }
};

export default plugin;
