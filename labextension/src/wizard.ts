import { JupyterFrontEnd } from '@jupyterlab/application';
import { NotebookActions, NotebookPanel } from '@jupyterlab/notebook';

/** The first cell of a wizard notebook. */
export const WIZARD_SOURCE = 'from ari_jupyter import Wizard; Wizard()';

/**
 * Create a notebook in `cwd`, put the wizard cell in it, run it and save.
 *
 * The notebook stays an ordinary file: the user can re-run or edit it.
 */
export async function createWizardNotebook(
  app: JupyterFrontEnd,
  cwd: string,
  source: string = WIZARD_SOURCE
): Promise<NotebookPanel> {
  const specs = app.serviceManager.kernelspecs.specs;
  const kernelName = specs?.default || 'python3';
  const panel = (await app.commands.execute('notebook:create-new', {
    cwd,
    kernelName
  })) as NotebookPanel;
  await panel.context.ready;

  const model = panel.content.model;
  if (!model) {
    throw new Error('the new notebook has no model');
  }
  if (model.cells.length === 0) {
    model.sharedModel.insertCell(0, {
      cell_type: 'code',
      source
    });
  } else {
    model.cells.get(0).sharedModel.setSource(source);
  }
  panel.content.activeCellIndex = 0;

  await panel.sessionContext.ready;
  await NotebookActions.run(panel.content, panel.sessionContext);
  await panel.context.save();
  return panel;
}
