import { JupyterFrontEnd } from '@jupyterlab/application';
import { NotebookActions, NotebookPanel } from '@jupyterlab/notebook';

import { fetchJSON } from './fetch_json';
import { firstFreeName } from './runs_text';

/** The first cell of a notebook made for a run (the Runs panel's "reopen"). */
export const WIZARD_SOURCE = 'from ari_jupyter import Wizard; Wizard()';

/**
 * Create a notebook in `cwd`, put `source` in its first cell, run it and save. With `name`
 * (e.g. `reopen-<run id>.ipynb`) the new notebook is renamed to it, or to `reopen-<run id>-2.ipynb`
 * and so on when that is taken, so it says which run it is for and never replaces a file.
 */
export async function createWizardNotebook(
  app: JupyterFrontEnd,
  cwd: string,
  source: string = WIZARD_SOURCE,
  name = ''
): Promise<NotebookPanel> {
  const specs = app.serviceManager.kernelspecs.specs;
  const kernelName = specs?.default || 'python3';
  // The file gets its name before it is opened: renaming an open notebook races its kernel
  // session, and the next Untitled of the folder would take that session over.
  const contents = app.serviceManager.contents;
  let path = (await contents.newUntitled({ path: cwd, type: 'notebook' })).path;
  if (name) {
    const free = await freeName(app, cwd, name);
    if (free) {
      const named = cwd ? `${cwd}/${free}` : free;
      path = await contents.rename(path, named).then(
        () => named,
        () => path // taken meanwhile: keep Untitled
      );
    }
  }
  const panel = (await app.commands.execute('docmanager:open', {
    path,
    factory: 'Notebook',
    kernel: { name: kernelName }
  })) as NotebookPanel;
  await panel.context.ready;

  const model = panel.content.model;
  if (!model) {
    throw new Error('the new notebook has no model');
  }
  if (model.cells.length === 0) {
    model.sharedModel.insertCell(0, { cell_type: 'code', source });
  } else {
    model.cells.get(0).sharedModel.setSource(source);
  }
  panel.content.activeCellIndex = 0;

  await panel.sessionContext.ready;
  await NotebookActions.run(panel.content, panel.sessionContext);
  await panel.context.save();
  return panel;
}

/** Where the server placed the wizard notebook (POST /ari-jupyter/wizard-notebook). */
export interface IPlacedNotebook {
  path: string;
  folder: 'workspace' | 'user' | 'browsed';
  created: boolean;
}

/**
 * Ask the server extension to place the explained wizard notebook (copied when absent, never
 * overwritten) and answer its contents path. The server picks the folder; `cwd` (the folder
 * the file browser shows) is only its last resort. `lang` picks the language of the
 * notebook's explanations ('' lets the server choose).
 */
export async function placeWizardNotebook(
  cwd: string,
  lang = '',
  open: string[] = []
): Promise<IPlacedNotebook> {
  return fetchJSON<IPlacedNotebook>(['ari-jupyter', 'wizard-notebook'], {
    method: 'POST',
    body: JSON.stringify({ cwd, lang, open })
  });
}

/**
 * The contents paths of the documents open in the main area. The server never rewrites one
 * of them (in another language): JupyterLab would find the file changed under its tab and ask
 * to overwrite or revert it.
 */
export function openDocumentPaths(app: JupyterFrontEnd): string[] {
  const paths: string[] = [];
  for (const widget of app.shell.widgets('main')) {
    const path = (widget as { context?: { path?: unknown } }).context?.path;
    if (typeof path === 'string') {
      paths.push(path);
    }
  }
  return paths;
}

/**
 * Open the wizard notebook (its explanations included), run its first code cell and save.
 *
 * The file exists on the server before it is opened: opening a path the contents service
 * does not know yet fails on JupyterLab 4.0. The notebook stays an ordinary file the user
 * can re-run or edit. Open already, with its wizard shown: it is brought to the front as it
 * is, nothing run again (a wizard in progress keeps every value typed).
 */
export async function openWizardNotebook(
  app: JupyterFrontEnd,
  cwd: string,
  lang = ''
): Promise<NotebookPanel> {
  const placed = await placeWizardNotebook(cwd, lang, openDocumentPaths(app));
  const open = openWizardPanel(app, placed.path);
  if (open) {
    app.shell.activateById(open.id);
    return open;
  }
  // Confirms the file through the contents service the document manager uses.
  await app.serviceManager.contents.get(placed.path, { content: false });
  const panel = (await app.commands.execute('docmanager:open', {
    path: placed.path,
    factory: 'Notebook'
  })) as NotebookPanel | undefined;
  if (!panel || !panel.context) {
    throw new Error(`could not open ${placed.path}`);
  }
  await panel.context.ready;
  app.shell.activateById(panel.id);

  const model = panel.content.model;
  if (!model) {
    throw new Error(`${placed.path} has no notebook model`);
  }
  let first = -1;
  for (let i = 0; i < model.cells.length; i++) {
    if (model.cells.get(i).type === 'code') {
      first = i;
      break;
    }
  }
  if (first < 0) {
    throw new Error(`${placed.path} has no code cell to run`);
  }
  panel.content.activeCellIndex = first;

  await panel.sessionContext.ready;
  await NotebookActions.run(panel.content, panel.sessionContext);
  await panel.context.save();
  return panel;
}

/** The notebook at `path` open in the main area with its first code cell run (a wizard shown),
 * or null. */
function openWizardPanel(app: JupyterFrontEnd, path: string): NotebookPanel | null {
  for (const widget of app.shell.widgets('main')) {
    if (widget instanceof NotebookPanel && widget.context.path === path) {
      const cells = widget.content.model?.cells;
      for (let i = 0; cells && i < cells.length; i++) {
        const cell = cells.get(i);
        if (cell.type === 'code') {
          const ran = (cell.sharedModel as { execution_count?: number | null }).execution_count;
          return ran !== null && ran !== undefined ? widget : null;
        }
      }
      return null;
    }
  }
  return null;
}

/**
 * The Runs panel's "Reopen in the wizard": the run's notebook `name` in `folder`, reused. Open
 * already: it is shown as it is (nothing the user typed is replaced, no second kernel). On
 * disk but closed: it is opened, and its wizard cell run again only while it is still the one
 * written for the run. Else a new one is made (createWizardNotebook).
 */
export async function reopenWizardNotebook(
  app: JupyterFrontEnd,
  folder: string,
  source: string,
  name: string
): Promise<NotebookPanel> {
  const path = folder ? `${folder}/${name}` : name;
  for (const widget of app.shell.widgets('main')) {
    if (widget instanceof NotebookPanel && widget.context.path === path) {
      app.shell.activateById(widget.id);
      return widget;
    }
  }
  if (!(await namesIn(app, folder)).has(name)) {
    return createWizardNotebook(app, folder, source, name);
  }
  const panel = (await app.commands.execute('docmanager:open', { path })) as NotebookPanel;
  await panel.context.ready;
  const cell = panel.content.model?.cells.get(0);
  if (cell && cell.type === 'code' && cell.sharedModel.getSource() === source) {
    panel.content.activeCellIndex = 0;
    await panel.sessionContext.ready;
    await NotebookActions.run(panel.content, panel.sessionContext);
  }
  return panel;
}

/** `name`, else `<stem>-2.ipynb`, `-3`, …: the first that no file in `cwd` has
 * (a second Reopen of a run opens a notebook of its own; '' when all are taken). */
async function freeName(app: JupyterFrontEnd, cwd: string, name: string): Promise<string> {
  return firstFreeName(name, await namesIn(app, cwd));
}

/** The names in a folder, from one listing (asking for each file would log a 404 for each
 * name that is free); empty when the folder cannot be listed. */
async function namesIn(app: JupyterFrontEnd, folder: string): Promise<Set<string>> {
  try {
    const listing = await app.serviceManager.contents.get(folder, { content: true });
    return new Set((listing.content as { name: string }[]).map(item => item.name));
  } catch {
    return new Set();
  }
}
