/**
 * What the Runs panel shows, decided without the DOM: each row of the run list, the groups of
 * several workspaces, the notes under the list, a job's line, what ARI's submission ledger
 * recorded of a job and the log's heading. runs.ts
 * only turns these into elements and binds their clicks. Nothing here imports JupyterLab, so
 * ../test checks it under node alone.
 */
import {
  IJob,
  IJobsView,
  IPhaseEntry,
  ILedger,
  ILedgerEntry,
  IRequestResources,
  IRunRow,
  IRunsList,
  IRunStatus,
  SCHEDULER_CUT
} from './payloads';
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

/** Why no job count is known (squeue absent, failed, or its answer cut); '' when the counts
 * are known. */
export function jobsUnknownText(trans: IWords, scheduler: string): string {
  if (scheduler === SCHEDULER_CUT) {
    return trans.__('unknown: the scheduler’s answer was cut');
  }
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

/** The paragraphs under the list: the search nodes' legend (seen without hovering: a tooltip is lost
 * on a touch screen) when there are runs, then why the job counts are unknown. */
export function listNotes(trans: IWords, list: Pick<IRunsList, 'scheduler' | 'problem'>, hasRows: boolean): INoteView[] {
  const notes: INoteView[] = [];
  if (hasRows) {
    notes.push({ kind: 'legend', text: trans.__('Search nodes: done/failed/running/total') });
  }
  if (list.scheduler === 'absent') {
    notes.push({
      kind: 'jobsnote',
      text: trans.__('Jobs ?: unknown, squeue is not available here (no SLURM on this machine).')
    });
  } else if (list.scheduler === 'error') {
    notes.push({ kind: 'jobserror', text: trans.__('Jobs ?: unknown, squeue did not answer: %1', list.problem ?? '') });
  } else if (list.scheduler === SCHEDULER_CUT) {
    notes.push({ kind: 'jobsnote', text: jobsCutText(trans, list.problem ?? '') });
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

/** The sentence for a scheduler's answer that was cut, with why (`problem`, the server's). */
export function jobsCutText(trans: IWords, problem: string): string {
  return trans.__('Jobs ?: unknown, the scheduler’s answer was cut (jobs of a run may be missing): %1', problem);
}

/** A job's state as its line shows it: the state, or '?' when the scheduler's answer was cut
 * (`title` says so, the line's tooltip); null `title` when the state is as squeue said it. */
export function jobStateView(
  trans: IWords,
  job: Pick<IJob, 'state' | 'source'>,
  scheduler: string
): { state: string; title: string | null } {
  if (scheduler === SCHEDULER_CUT && job.source !== 'ledger' && job.source !== 'recording') {
    return {
      state: '?',
      title: trans.__('State unknown: the scheduler’s answer was cut, so this job’s state is not shown and other jobs of the run may be missing.')
    };
  }
  return { state: job.state, title: null };
}

/** A job's line after its id and name: "RUNNING · 0:42 · 3 nodes n[1-3] · bfts" ("?" for the
 * state when the scheduler's answer was cut: jobStateView); for a job known only from the
 * ledger (no time, no nodes of its own), "state unknown · bfts". */
export function jobLine(
  trans: IWords,
  job: Pick<IJob, 'nodes' | 'state' | 'elapsed' | 'where' | 'kind' | 'source'>,
  scheduler = 'ok'
): string {
  if (job.source === 'ledger') {
    return trans.__('state unknown · %1', job.kind);
  }
  const line = trans._n('%2 · %3 · %1 node %4 · %5', '%2 · %3 · %1 nodes %4 · %5', Number(job.nodes) || 0,
    jobStateView(trans, job, scheduler).state, job.elapsed, job.where, job.kind);
  // a field the job does not have (a recorded job's time) is left out, not shown as "· ·"
  return line.split(' · ').map(part => part.trim()).filter(Boolean).join(' · ');
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

/** What ARI's submission ledger recorded of a job, as the panel shows it under the job's line. */
export interface IRecordedView {
  /** "Recorded request:", before the request's parts */
  requestLabel: string;
  /** the request's few fields a user checks, one phrase each: "partition small", "2 nodes", …
   * (the panel keeps each phrase on one line) */
  request: string[];
  /** the handle ARI got back from sbatch: "Handle: SLURM job 4102" */
  handle: string;
  /** the mark of a job SLURM has forgotten (known only from the ledger); null while SLURM lists it */
  forgotten: string | null;
}

/** The ledger's record of job `jobId` (a claim that never got a job id matches none). */
export function ledgerEntryOf(ledger: ILedger | undefined, jobId: string): ILedgerEntry | undefined {
  return jobId ? ledger?.entries.find(entry => entry.job_id === jobId) : undefined;
}

function given(value: number | null | undefined): value is number {
  return typeof value === 'number';
}

/** A recorded request's partition, nodes, CPUs, GPUs, time limit and launcher, each as ARI
 * recorded it (a field ARI left null is left out; no GPU is said). */
export function requestParts(trans: IWords, res: IRequestResources): string[] {
  const parts: string[] = [];
  if (res.partition) {
    parts.push(trans.__('partition %1', res.partition));
  }
  if (given(res.nodes)) {
    parts.push(trans._n('%1 node', '%1 nodes', res.nodes));
  }
  if (given(res.cpus_per_task)) {
    parts.push(trans._n('%1 CPU per task', '%1 CPUs per task', res.cpus_per_task));
  }
  if (given(res.gpus_per_node) && res.gpus_per_node > 0) {
    parts.push(trans._n('%1 GPU per node', '%1 GPUs per node', res.gpus_per_node));
  } else if (given(res.gpus_per_task) && res.gpus_per_task > 0) {
    parts.push(trans._n('%1 GPU per task', '%1 GPUs per task', res.gpus_per_task));
  } else {
    parts.push(trans.__('no GPU'));
  }
  if (res.walltime) {
    parts.push(trans.__('time limit %1', res.walltime));
  }
  if (res.launcher) {
    parts.push(trans.__('launcher %1', res.launcher));
  }
  return parts;
}

/** What the run's ledger recorded of `job`; null when the ledger holds no record of it. */
export function recordedView(
  trans: IWords,
  job: Pick<IJob, 'job_id' | 'source'>,
  ledger: ILedger | undefined
): IRecordedView | null {
  const entry = ledgerEntryOf(ledger, job.job_id);
  if (!entry) {
    return null;
  }
  return {
    requestLabel: trans.__('Recorded request:'),
    request: requestParts(trans, entry.request.resources ?? {}),
    handle: trans.__('Handle: SLURM job %1', entry.job_id),
    forgotten:
      job.source === 'ledger'
        ? trans.__('Known only from ARI’s submission ledger: SLURM no longer lists this job.')
        : null
  };
}

/** The jobs a run's view lists: all SLURM and the ledger gave; with SLURM absent or not
 * answering, the ledger's still (what ARI recorded needs no SLURM to be read). */
export function shownJobs<J extends Pick<IJob, 'source'>>(view: { jobs: J[]; scheduler: IJobsView['scheduler'] }): J[] {
  return jobCountsKnown(view.scheduler) ? view.jobs : view.jobs.filter(job => job.source === 'ledger');
}

/** A span of time as people say it: `19 s`, `4 min`, `1 h 30 min` (as `status` says it). */
export function durationText(trans: IWords, seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 120) {
    return trans.__('%1 s', s);
  }
  const total = Math.round(s / 60);
  const hours = Math.floor(total / 60);
  const minutes = total % 60;
  if (!hours) {
    return trans.__('%1 min', minutes);
  }
  return minutes ? trans.__('%1 h %2 min', hours, minutes) : trans.__('%1 h', hours);
}

/** One line of a run's phase history. */
export interface IPhaseRowView {
  phase: string;
  /** the day it began (this browser's time) on the first line and where the day changes; else null */
  day: string | null;
  /** when it began, in this browser's time (HH:MM:SS) */
  at: string;
  /** the ISO time (the `<time>` element's datetime) */
  iso: string;
  /** how long it lasted; the current phase of a live run: since when; '' for an end */
  lasted: string;
  /** where the time was read (the line's tooltip) */
  title: string;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

function dayOf(d: Date): string {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** The run's phase history (``phase_history``) as lines, oldest first; entries whose time
 * cannot be read are left out. ``active``: the run goes on (its last phase lasts until now). */
export function phaseHistoryView(trans: IWords, history: IPhaseEntry[], active: boolean, now: Date): IPhaseRowView[] {
  const entries = history
    .map(entry => ({ entry, when: new Date(entry.at) }))
    .filter(({ when }) => !Number.isNaN(when.getTime()));
  let day = '';
  return entries.map(({ entry, when }, i) => {
    const at = `${pad(when.getHours())}:${pad(when.getMinutes())}:${pad(when.getSeconds())}`;
    const newDay = dayOf(when) === day ? null : dayOf(when);
    day = dayOf(when);
    const next = entries[i + 1];
    let lasted = '';
    if (next) {
      lasted = trans.__('for %1', durationText(trans, (next.when.getTime() - when.getTime()) / 1000));
    } else if (active) {
      lasted = trans.__('since %1 ago', durationText(trans, (now.getTime() - when.getTime()) / 1000));
    }
    return { phase: entry.phase, day: newDay, at, iso: entry.at, lasted, title: trans.__('read from %1', entry.source) };
  });
}
