import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator } from '@jupyterlab/translation';
import { ISignal } from '@lumino/signaling';
import { LabIcon } from '@jupyterlab/ui-components';

import { bundle, bundleIn, wizardLanguage } from './i18n';

import { RunPhaseStatusItem, RunsPanel } from './runs';
import { createWizardNotebook, reopenWizardNotebook } from './wizard';

export const RUNS_COMMAND = 'ari-jupyter:runs';

/**
 * Add the Runs side panel, its command and the run-phase status item.
 *
 * The panel speaks the wizard's language (`lang`: the "Wizard language" setting, else
 * JupyterLab's) and follows it when `languageChanged` fires, and so does its run-phase status
 * item; the palette is JupyterLab's own and speaks JupyterLab's language.
 */
export function registerRuns(
  app: JupyterFrontEnd,
  icon: LabIcon,
  palette: ICommandPalette | null,
  browser: IDefaultFileBrowser | null,
  statusBar: IStatusBar | null,
  translator: ITranslator | null = null,
  lang: () => string = () => wizardLanguage('', translator),
  languageChanged: ISignal<unknown, unknown> | null = null
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
    lang
  );
  let spoken = wizardLanguage('', translator); // the bundle above: JupyterLab's language
  let phaseItem: RunPhaseStatusItem | null = null; // the status bar's, speaking as the panel
  const follow = async (): Promise<void> => {
    const wanted = lang();
    if (wanted !== spoken) {
      spoken = wanted;
      const strings = await bundleIn(wanted, translator);
      if (spoken === wanted && !panel.isDisposed) {  // unless it changed again meanwhile
        panel.setTranslation(strings);
        phaseItem?.setTranslation(strings);
      }
    }
  };
  languageChanged?.connect(() => void follow());
  void follow();
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
    phaseItem = item;
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
