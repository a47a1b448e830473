import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, InputDialog, Notification } from '@jupyterlab/apputils';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { ILauncher } from '@jupyterlab/launcher';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator, TranslationBundle } from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';

import { registerTerminalComm } from './comm';
import { addGuideCommand } from './guides';
import { registerRuns } from './runs_plugin';
import { bundle, wizardLanguage } from './i18n';
import { translatedPlugin } from './settings';
import { IAriSettings, readSettings } from './settings_values';
import { AllocationStatusItem } from './status';
import { enterAddsTags } from './tags_enter';
import { openTerminal } from './terminal';
import { parseTerminalRequest } from './terminal_request';
import { openWizardNotebook } from './wizard';

/** The plugin id; schema/plugin.json holds its settings. */
export const PLUGIN_ID = 'ari-jupyter-labextension:plugin';

/** The launcher section of the wizard card. */
export const LAUNCHER_CATEGORY = 'HPC';

/** Command ids, stable: the wizard and tests refer to them. */
export namespace CommandIDs {
  export const setup = 'ari-jupyter:multi-node-setup';
  export const openTerminal = 'ari-jupyter:open-terminal';
  export const openGuide = 'ari-jupyter:open-guide';
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
  id: PLUGIN_ID,
  description:
    'ARI multi-node setup: wizard launcher, terminal hand-off and allocation status.',
  autoStart: true,
  optional: [
    ILauncher,
    ICommandPalette,
    INotebookTracker,
    IDefaultFileBrowser,
    IStatusBar,
    ITranslator,
    ISettingRegistry
  ],
  activate: async (
    app: JupyterFrontEnd,
    launcher: ILauncher | null,
    palette: ICommandPalette | null,
    notebooks: INotebookTracker | null,
    browser: IDefaultFileBrowser | null,
    statusBar: IStatusBar | null,
    translator: ITranslator | null,
    registry: ISettingRegistry | null
  ) => {
    const trans = bundle(translator);
    enterAddsTags();
    let settings: ISettingRegistry.ISettings | null = null;
    try {
      // before the first load: the registry holds the plugin back until it is transformed
      registry?.transform(PLUGIN_ID, {
        fetch: plugin => translatedPlugin(plugin, trans)
      });
      settings = registry ? await registry.load(PLUGIN_ID) : null;
    } catch (reason) {
      console.warn('ari-jupyter: settings unavailable, using defaults', reason);
    }
    const current = (): IAriSettings => readSettings(settings);

    const lang = (): string => wizardLanguage(current().wizardLanguage, translator);
    addCommands(app, trans, browser, lang);
    addGuideCommand(app, CommandIDs.openGuide, trans, lang); // the Help menu's entries
    if (launcher) {
      launcher.add({
        command: CommandIDs.setup,
        category: LAUNCHER_CATEGORY,
        rank: 0
      });
    }
    if (palette) {
      const category = trans.__('ARI');
      palette.addItem({ command: CommandIDs.setup, category });
      palette.addItem({ command: CommandIDs.openTerminal, category });
      for (const guide of ['wizard', 'runs', 'teaching']) {
        palette.addItem({ command: CommandIDs.openGuide, args: { guide }, category });
      }
    }
    // the time left in JupyterLab's own language, as the rest of the status bar
    const status = statusBar
      ? addStatusItem(statusBar, trans, current, settings, () => wizardLanguage('', translator))
      : null;
    if (notebooks) {
      registerTerminalComm(app, notebooks, {
        trans,
        locale: lang,
        siteChanged: () => void status?.refresh()
      });
    }
    registerRuns(app, ariIcon, palette, browser, statusBar, translator, lang, settings?.changed ?? null);
    console.log('ari-jupyter extension activated');
  }
};

/** The wizard and terminal commands; `lang` is the wizard's language ('' for the server's). */
function addCommands(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  browser: IDefaultFileBrowser | null,
  lang: () => string
): void {
    app.commands.addCommand(CommandIDs.setup, {
      label: trans.__('ARI multi-node setup'),
      caption: trans.__(
        'Open the ARI multi-node setup wizard notebook (in the workspace, copied there when absent)'
      ),
      icon: args => (args['isPalette'] ? undefined : ariIcon),
      execute: async args => {
        const cwd =
          typeof args['cwd'] === 'string'
            ? (args['cwd'] as string)
            : browser?.model.path ?? '';
        try {
          return await openWizardNotebook(app, cwd, lang());
        } catch (reason) {
          Notification.error(
            trans.__('ARI: could not create the wizard: %1', String(reason))
          );
          throw reason;
        }
      }
    });

    app.commands.addCommand(CommandIDs.openTerminal, {
      label: trans.__('ARI: type a command into a new terminal'),
      caption: trans.__(
        'Open a terminal and type a command; Enter is pressed only with run=true'
      ),
      execute: async args => {
        let command = args['command'];
        if (command === undefined) {
          const answer = await InputDialog.getText({
            title: trans.__('Command to type into a new terminal (not run)')
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
}

/** The allocation item; the statusBar and refreshInterval settings apply at once. */
function addStatusItem(
  statusBar: IStatusBar,
  trans: TranslationBundle,
  current: () => IAriSettings,
  settings: ISettingRegistry.ISettings | null,
  lang: () => string
): AllocationStatusItem {
  const item = new AllocationStatusItem(trans, lang);
  item.setInterval(current().refreshInterval);
  statusBar.registerStatusItem('ari-jupyter-labextension:allocation', {
    item,
    align: 'left',
    rank: 10,
    isActive: () => current().statusBar && item.isActiveAllocation,
    activeStateChanged: item.activeChanged
  });
  item.start();
  settings?.changed.connect(() => {
    item.setInterval(current().refreshInterval);
    item.notifyActiveChanged();
  });
  return item;
}

export default plugin;
