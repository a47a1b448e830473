/**
 * What the Runs panel shows, decided without the DOM: each row of the run list, the groups of
 * several workspaces, the notes under the list, a job's line and the log's heading. runs.ts
 * only turns these into elements and binds their clicks. Nothing here imports JupyterLab, so
 * ../test checks it under node alone.
 */
import { IJob, IRunRow, IRunsList, IRunStatus } from './payloads';
import {
  bestShort,
  bestText,
  groupByWorkspace,
  jobCountsKnown,
  nodesText,
  runLabel,
  severalWorkspaces,
  sharedTitles,
  startedAt,
  workspaceName
} from './runs_text';
import { IWords } from './words';

/** One row of the run list. */
export interface IRowView {
  run: IRunRow;
  /** the workspace the run is in */
  workspace: string;
  /** the run's title, else its id */
  label: string;
  /** when the run started, shown only under a title another run of the list shares */
  started: string | null;
  nodes: string;
  /** the best metric's name and value; its node is the tooltip */
  best: string;
  bestTitle: string;
  /** the run's jobs in the queue, '?' when squeue did not answer (never 0) */
  jobs: string;
  /** why the count is unknown (the '?' cell's tooltip); null when it is known */
  jobsTitle: string | null;
}

/** A workspace's group in a list of several workspaces. */
export interface IGroupView {
  workspace: string;
  /** its path as headed, marked when it is not on this machine */
  name: string;
  count: string;
  /** Forget takes it off the list: every one but the default workspace */
  forgettable: boolean;
  rows: IRowView[];
}

/** A paragraph under the list: `kind` is its class (a note, or an error). */
export interface INoteView {
  kind: 'legend' | 'jobsnote' | 'jobserror';
  text: string;
}

export interface IListView {
  rows: IRowView[];
  /** the rows by workspace when several are listed; null: one list */
  groups: IGroupView[] | null;
  /** whether the table is shown (rows, or the groups of several workspaces, even empty) */
  table: boolean;
  /** the sentence for a list without runs; null when there are runs */
  empty: string | null;
  notes: INoteView[];
}

/** Why no job count is known (squeue absent or failed); '' when the counts are known. */
export function jobsUnknownText(trans: IWords, scheduler: string): string {
  if (jobCountsKnown(scheduler)) {
    return '';
  }
  return scheduler === 'absent'
    ? trans.__('unknown: squeue is not available here')
    : trans.__('unknown: squeue did not answer');
}

/**
 * A run's row: two runs with one title (a title whose words cannot go into its run id) differ
 * by the time their id starts with, shown under such titles only (the side panel is narrow).
 */
export function rowView(run: IRunRow, shared: ReadonlySet<string>, jobsUnknown: string): IRowView {
  const label = runLabel(run);
  return {
    run,
    workspace: run.workspace,
    label,
    started: shared.has(label) ? startedAt(run.run_id) : null,
    nodes: nodesText(run.nodes),
    best: bestShort(run.best_metric),
    bestTitle: bestText(run.best_metric),
    jobs: jobsUnknown ? '?' : String(run.jobs),
    jobsTitle: jobsUnknown || null
  };
}

/** The groups of several workspaces, in the list's order; each keeps its rows' order. */
export function groupViews(trans: IWords, list: IRunsList, rows: IRowView[]): IGroupView[] {
  return groupByWorkspace(list.workspaces, rows).map(([workspace, members]) => ({
    workspace,
    name: workspaceName(trans, list, workspace),
    count: trans._n('%1 run', '%1 runs', members.length),
    forgettable: workspace !== list.workspace,
    rows: members
  }));
}

/** The paragraphs under the list: the Nodes legend (seen without hovering: a tooltip is lost
 * on a touch screen) when there are runs, then why the job counts are unknown. */
export function listNotes(trans: IWords, list: Pick<IRunsList, 'scheduler' | 'problem'>, hasRows: boolean): INoteView[] {
  const notes: INoteView[] = [];
  if (hasRows) {
    notes.push({ kind: 'legend', text: trans.__('Nodes: done/failed/running/total') });
  }
  if (list.scheduler === 'absent') {
    notes.push({
      kind: 'jobsnote',
      text: trans.__('Jobs ?: unknown, squeue is not available here (no SLURM on this machine).')
    });
  } else if (list.scheduler === 'error') {
    notes.push({ kind: 'jobserror', text: trans.__('Jobs ?: unknown, squeue did not answer: %1', list.problem ?? '') });
  }
  return notes;
}

/** Everything the run list shows. */
export function listView(trans: IWords, list: IRunsList): IListView {
  const shared = sharedTitles(list.runs);
  const jobsUnknown = jobsUnknownText(trans, list.scheduler);
  const rows = list.runs.map(run => rowView(run, shared, jobsUnknown));
  const several = severalWorkspaces(list);
  const none = several
    ? trans.__('No runs in these workspaces yet.')
    : trans.__('No runs in this workspace yet.');
  return {
    rows,
    groups: several ? groupViews(trans, list, rows) : null,
    table: rows.length > 0 || several,
    empty: rows.length ? null : none,
    notes: listNotes(trans, list, rows.length > 0)
  };
}

/** A job's line after its id and name: "RUNNING · 0:42 · 3 nodes n[1-3] · bfts". */
export function jobLine(trans: IWords, job: Pick<IJob, 'nodes' | 'state' | 'elapsed' | 'where' | 'kind'>): string {
  return trans._n('%2 · %3 · %1 node %4 · %5', '%2 · %3 · %1 nodes %4 · %5', Number(job.nodes) || 0,
    job.state, job.elapsed, job.where, job.kind);
}

/** The heading above the run's log: its file name when there is one. */
export function logHeading(trans: IWords, logFile: string): string {
  return logFile ? trans.__('Log (%1)', logFile.split('/').pop() ?? '') : trans.__('Log');
}

/** What stands where the log would be when there is none yet: a sentence, not an empty box. */
export function noLogText(trans: IWords, status: Pick<IRunStatus, 'phase' | 'active'>): string {
  return status.phase === 'not-started' || status.active
    ? trans.__('No log yet: ARI writes one when the run starts.')
    : trans.__('This run left no log in its checkpoint.');
}
