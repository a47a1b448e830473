import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator } from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';

import { bundle, wizardLanguage } from './i18n';

import { RunPhaseStatusItem, RunsPanel } from './runs';
import { createWizardNotebook, reopenWizardNotebook } from './wizard';

export const RUNS_COMMAND = 'ari-jupyter:runs';

/** Add the Runs side panel, its command and the run-phase status item. */
export function registerRuns(
  app: JupyterFrontEnd,
  icon: LabIcon,
  palette: ICommandPalette | null,
  browser: IDefaultFileBrowser | null,
  statusBar: IStatusBar | null,
  translator: ITranslator | null = null
): RunsPanel {
  const trans = bundle(translator);
  const panel = new RunsPanel(
    // beside the wizard's notebook in the run's workspace when the lab can open it, else in
    // the folder the file browser shows; Reopen reuses the run's notebook, Clone makes a new one
    (source, name, folder, reuse) => {
      const where = folder ?? browser?.model.path ?? '';
      return reuse
        ? reopenWizardNotebook(app, where, source, name)
        : createWizardNotebook(app, where, source, name);
    },
    trans,
    () => wizardLanguage('', translator)  // JupyterLab's own language, e.g. ja-JP -> ja
  );
  panel.title.icon = icon;
  app.shell.add(panel, 'left', { rank: 950 });
  app.commands.addCommand(RUNS_COMMAND, {
    label: trans.__('ARI: runs'),
    caption: trans.__('Follow ARI runs of the workspace: phase, nodes, log, SLURM jobs'),
    execute: () => app.shell.activateById(panel.id)
  });
  if (palette) {
    palette.addItem({ command: RUNS_COMMAND, category: 'ARI' });
  }
  if (statusBar) {
    const item = new RunPhaseStatusItem(trans);
    statusBar.registerStatusItem('ari-jupyter-labextension:run-phase', {
      item,
      align: 'left',
      rank: 11,
      isActive: () => item.hasRun,
      activeStateChanged: item.activeChanged
    });
    panel.activeRunChanged.connect((_, run) => item.setRun(run));
  }
  void panel.startup();
  return panel;
}
