/**
 * The Runs panel's pure helpers: when it looks again, and the text and names it shows (the
 * JSON it reads is typed in payloads.ts). Nothing here imports JupyterLab, so ../test checks
 * it under node alone.
 */
import { IFinding, IJob, IRunRow, IRunsList, OUTSIDE_ENVELOPE_RULE } from './payloads';
import { IWords } from './words';

/** squeue states of a job that is still queued or running: it can be cancelled. */
export const ACTIVE_JOB_STATES = new Set([
  'PENDING',
  'RUNNING',
  'CONFIGURING',
  'COMPLETING',
  'SUSPENDED',
  'REQUEUED',
  'RESIZING',
  'SIGNALING',
  'STAGE_OUT'
]);

/** Poll intervals: start fast, double while nothing changes, reset on a change. */
export const POLL_FIRST_MS = 2000;
export const POLL_MAX_MS = 30000;

export function nextDelay(current: number, changed: boolean, most = POLL_MAX_MS): number {
  return changed ? POLL_FIRST_MS : Math.min(current * 2, most);
}

/**
 * The longest wait between two looks at a run written but not started: the hand-off's
 * `ari run` is typed in a terminal any moment now, and the panel and the status bar should
 * say so within seconds, not at the next click.
 */
export const POLL_WAITING_MAX_MS = 8000;

/** How long to wait before looking at the run again, by what it is doing. */
export function pollDelay(current: number, changed: boolean, phase: string, active: boolean): number {
  if (active) {
    return nextDelay(current, changed);
  }
  // not started yet: soon; ended (failed, interrupted, finished): `ari resume` may start it
  // again, so it is still looked at, as seldom as an active run at its quietest
  return nextDelay(current, changed, phase === 'not-started' ? POLL_WAITING_MAX_MS : POLL_MAX_MS);
}

/** How often the panel asks for the run ids (a folder listing, no squeue) to see a new run. */
export const WATCH_MS = 4000;

/** The newest of the ids not seen before (ARI's run ids start with their time); '' if none. */
export function newestNewRun(known: ReadonlySet<string> | null, ids: string[]): string {
  if (!known) {
    return ''; // the first answer is what was there already
  }
  return ids.filter(id => !known.has(id)).sort().pop() ?? '';
}

export function nodesText(n: IRunRow['nodes']): string {
  return `${n.done}/${n.failed}/${n.running}/${n.total}`;
}

export function bestText(best: IRunRow['best_metric']): string {
  return best ? `${best.name} ${best.value} (${best.node_id})` : '–';
}

/** The best metric without its node, for the list's narrow column. */
export function bestShort(best: IRunRow['best_metric']): string {
  return best ? `${best.name} ${best.value}` : '–';
}

/**
 * A run id with a line-break opportunity after each `_`: a narrow panel wraps it between its
 * words (`..._experiment_` / `5e13e118`), not inside one.
 */
export function breakableId(text: string): (Node | string)[] {
  return text.split(/(?<=_)/).flatMap((part, i) => (i ? [document.createElement('wbr'), part] : [part]));
}

/** A path that may wrap after each "/" or "_" (a workspace heading in the narrow side panel). */
export function breakablePath(text: string): (Node | string)[] {
  return text.split(/(?<=[/_])/).flatMap((part, i) => (i ? [document.createElement('wbr'), part] : [part]));
}

/**
 * The runs grouped by workspace, in the list's order of workspaces (the default one first, a
 * missing one last); a workspace without runs keeps its group, empty.
 */
export function groupByWorkspace<R extends { workspace: string }>(
  workspaces: string[],
  runs: R[]
): [string, R[]][] {
  const groups = new Map<string, R[]>(workspaces.map(w => [w, [] as R[]]));
  for (const run of runs) {
    const group = groups.get(run.workspace);
    if (group) {
      group.push(run);
    } else {
      groups.set(run.workspace, [run]);
    }
  }
  return Array.from(groups.entries());
}

/** When a run started, from its id (`YYYYmmddHHMMSS_slug`): "2026-12-04 23:13"; else the id. */
export function startedAt(runId: string): string {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})\d{2}_/.exec(runId);
  return m ? `${m[1]}-${m[2]}-${m[3]} ${m[4]}:${m[5]}` : runId;
}

/** A finding's severity in the panel's language (the badge class keeps the English word). */
export function severityText(trans: IWords, severity: string): string {
  const words: Record<string, string> = {
    error: trans.__('error'),
    warning: trans.__('warning'),
    info: trans.__('info')
  };
  return words[severity] ?? severity;
}

/** A run phase in the UI language (the JSON keeps ARI-jupyter's own word, e.g. `not-started`). */
export function phaseText(trans: IWords, phase: string): string {
  const words: Record<string, string> = {
    'not-started': trans.__('not started'),
    starting: trans.__('starting'),
    exploring: trans.__('exploring'),
    paper: trans.__('paper'),
    reproduce: trans.__('reproduce'),
    finished: trans.__('finished'),
    failed: trans.__('failed'),
    interrupted: trans.__('interrupted')
  };
  return words[phase] ?? phase;
}

/** The file name of the notebook that reopens or clones a run: it says which run it is for. */
export function wizardNotebookName(runId: string, clone: boolean): string {
  return `${clone ? 'clone' : 'reopen'}-${runId.replace(/[^A-Za-z0-9_.-]/g, '_')}.ipynb`;
}

/** Python for a notebook cell that reopens or clones a checkpoint in the wizard. */
export function wizardSource(path: string, clone: boolean): string {
  const literal = JSON.stringify(path); // a JSON string is a valid Python string literal
  return clone
    ? 'from ari_jupyter import Wizard\nfrom ari_jupyter.runs.reopen import clone_state\n' +
        `Wizard(state=clone_state(${literal}))`
    : `from ari_jupyter import Wizard\nWizard.from_checkpoint(${literal})`;
}

/** Whether a job in squeue state `state` ("RUNNING", "PENDING (Resources)"…) is still active. */
export function isActiveJobState(state: string): boolean {
  return ACTIVE_JOB_STATES.has(state.split(' ')[0]);
}

/** Whether the panel offers Cancel for `job`: still active, and not a recording (a demo site's
 * recorded run shows each job as it was last seen; none of them is in a queue). */
export function cancellable(job: Pick<IJob, 'state' | 'source'>): boolean {
  return job.source !== 'recording' && isActiveJobState(job.state);
}

/** Whether the job asks more than the user approved (squeue's partition, nodes, CPUs, GPUs
 * or time limit against the wizard's). */
export function isOutsideEnvelope(job: Pick<IJob, 'outside'>): boolean {
  return (job.outside ?? []).length > 0;
}

/** The job a finding offers to cancel: the flagged job when it is still active in `jobs` (and
 * in a queue: never a recording's); undefined for any other finding, or a job that has ended. */
export function jobToCancel<J extends Pick<IJob, 'job_id' | 'state' | 'source'>>(
  finding: Pick<IFinding, 'rule' | 'params'>,
  jobs: J[]
): J | undefined {
  if (finding.rule !== OUTSIDE_ENVELOPE_RULE) {
    return undefined;
  }
  const id = String(finding.params?.job ?? '');
  return jobs.find(j => j.job_id === id && cancellable(j));
}

/** Phases of a run that ARI is working on. */
export const ACTIVE_PHASES = ['starting', 'exploring', 'paper', 'reproduce'];

/** The first run of `runs` that ARI is working on; undefined if none. */
export function activeRun<R extends Pick<IRunRow, 'phase'>>(runs: R[]): R | undefined {
  return runs.find(r => ACTIVE_PHASES.includes(r.phase));
}

/** Whether the list knows how many jobs each run has in the queue (squeue answered). */
export function jobCountsKnown(scheduler: string): boolean {
  return scheduler !== 'absent' && scheduler !== 'error';
}

/** A run's name in the list: its title, else its id. */
export function runLabel(run: Pick<IRunRow, 'title' | 'run_id'>): string {
  return run.title || run.run_id;
}

/**
 * The names (runLabel) two or more runs of the list share: two runs with one title (a title
 * whose words cannot go into its run id) differ by the time their id starts with.
 */
export function sharedTitles(runs: Pick<IRunRow, 'title' | 'run_id'>[]): Set<string> {
  const titles = runs.map(runLabel);
  return new Set(titles.filter((title, i) => titles.indexOf(title) !== i));
}

/** The run-phase status item's text: "ARI run: exploring · stage 2", in the panel's language. */
export function runPhaseText(trans: IWords, run: Pick<IRunRow, 'phase'> & { stage: string }): string {
  return trans.__('ARI run: %1', phaseText(trans, run.phase)) + (run.stage ? ' · ' + run.stage : '');
}

/** The run-phase status item's tooltip: the run's title, then its id. */
export function runPhaseTitle(run: Pick<IRunRow, 'title' | 'run_id'>): string {
  return `${runLabel(run)}\n${run.run_id}`;
}

/** Whether the list names several workspaces (runs written to another one are listed too). */
export function severalWorkspaces(list: Pick<IRunsList, 'workspaces'>): boolean {
  return (list.workspaces ?? []).length > 1;
}

/** A workspace as the list heads it: marked when it is not on this machine. */
export function workspaceName(
  trans: IWords,
  list: Pick<IRunsList, 'missing_workspaces'>,
  workspace: string
): string {
  return (list.missing_workspaces ?? []).includes(workspace)
    ? trans.__('%1 (does not exist here)', workspace)
    : workspace;
}

/**
 * The line above the run list: the workspace whose runs it lists, or how many workspaces there
 * are (each then heads a group of its own, ``groupByWorkspace``).
 */
export function workspacesText(
  trans: IWords,
  list: Pick<IRunsList, 'workspace' | 'workspaces' | 'missing_workspaces'>
): string {
  return severalWorkspaces(list)
    ? trans.__('Runs of %1 workspaces, each under its own heading', String(list.workspaces.length))
    : trans.__('Workspace: %1', workspaceName(trans, list, list.workspace));
}

/** How many numbered names (`reopen-<run id>-2.ipynb`, …) are tried before Untitled. */
export const MAX_NUMBERED = 50;

/** `name`, else `<stem>-2.ipynb`, `-3`, …: the first that `taken` does not hold
 * (a second Reopen of a run opens a notebook of its own; '' when all are taken). */
export function firstFreeName(name: string, taken: ReadonlySet<string>, most = MAX_NUMBERED): string {
  const stem = name.replace(/\.ipynb$/, '');
  for (let n = 1; n <= most; n++) {
    const candidate = n === 1 ? name : `${stem}-${n}.ipynb`;
    if (!taken.has(candidate)) {
      return candidate;
    }
  }
  return '';
}

/**
 * A sentence of the server's catalog cut at its `code spans`: the pieces in order, each marked
 * code or not, so a command shows as code (not between backticks) where the panel shows it.
 */
export function codePieces(text: string): { code: boolean; text: string }[] {
  return text
    .split(/`([^`]+)`/)
    .map((piece, i) => ({ code: i % 2 === 1, text: piece }))
    .filter(piece => piece.text !== '');
}
