/**
 * What the server extension's Runs routes answer, as the lab extension reads it: the rule ids
 * and the wire shapes, in this one file (as jupyterlab-git keeps its tokens.ts). Each shape is
 * an interface and a runtime guard declared against it, so the compiler holds the guard to
 * every key of the interface. A real answer of the routes is recorded by the Python tests
 * (tests/unit/server/test_runs_payload.py writes tests/fixtures/runs_payload.json from a running jupyter
 * server); test/payloads.test.ts checks that recording against these guards and rule ids.
 * Nothing here imports JupyterLab.
 */

/** The rule of the finding about a job outside the envelope the user approved. */
export const OUTSIDE_ENVELOPE_RULE = 'run-job-outside-envelope';

/** The run-level findings' rules (ari_jupyter/runs/findings.py); the doctor's catalog adds its
 * own rules to a run's findings too. */
export const RUN_RULES: readonly string[] = [
  'run-interrupted',
  'run-no-successful-node',
  'run-pipeline-ended',
  OUTSIDE_ENVELOPE_RULE,
  'run-time-limit',
  'run-jobs-unknown'
];

/** The scheduler's answer that was cut (`scheduler` of the list and of a run's jobs): squeue's
 * output was longer than the output cap, or held rows that could not be read; the jobs listed
 * are the ones read, others may be missing (ari_jupyter/runs/jobs.py, JobsView). */
export const SCHEDULER_CUT = 'partial';

/** What of a value does not have its shape: one line each, naming where (empty: it has it). */
export type Guard<T> = ((value: unknown, at: string) => string[]) & { readonly shape?: T };

/** The problems `guard` finds in `value` (the whole answer is `$`). */
export function problemsOf<T>(guard: Guard<T>, value: unknown): string[] {
  return guard(value, '$');
}

/** Whether `value` has the shape `guard` checks. */
export function isShaped<T>(guard: Guard<T>, value: unknown): value is T {
  return problemsOf(guard, value).length === 0;
}

function typed<T>(name: string, test: (value: unknown) => boolean): Guard<T> {
  return (value, at) => (test(value) ? [] : [`${at}: not ${name} (${JSON.stringify(value)})`]);
}

const str = typed<string>('a string', v => typeof v === 'string');
const num = typed<number>('a number', v => typeof v === 'number' && Number.isFinite(v));
const bool = typed<boolean>('true or false', v => typeof v === 'boolean');
const anything = typed<unknown>('anything', () => true);

function nullable<T>(guard: Guard<T>): Guard<T | null> {
  return (value, at) => (value === null ? [] : guard(value, at));
}

/** A key the answer may leave out. */
function optional<T>(guard: Guard<T>): Guard<T> {
  return (value, at) => (value === undefined ? [] : guard(value, at));
}

function oneOf<T extends string>(...values: T[]): Guard<T> {
  return typed<T>(`one of ${values.join(', ')}`, v => values.includes(v as T));
}

function arrayOf<T>(guard: Guard<T>): Guard<T[]> {
  return (value, at) =>
    Array.isArray(value) ? value.flatMap((item, i) => guard(item, `${at}[${i}]`)) : [`${at}: not a list`];
}

function recordOf<T>(guard: Guard<T>): Guard<Record<string, T>> {
  return (value, at) =>
    isObject(value)
      ? Object.entries(value).flatMap(([key, item]) => guard(item, `${at}.${key}`))
      : [`${at}: not an object`];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object with every key of `T` checked (keys the server adds beyond them are let be). */
function object<T>(fields: { [K in keyof T]-?: Guard<T[K]> }): Guard<T> {
  return (value, at) => {
    if (!isObject(value)) {
      return [`${at}: not an object`];
    }
    return Object.entries(fields).flatMap(([key, guard]) =>
      (guard as Guard<unknown>)(value[key], `${at}.${key}`)
    );
  };
}

/** A run's node counts. */
export interface INodeCounts {
  total: number;
  done: number;
  failed: number;
  running: number;
}

export interface IBestMetric {
  name: string;
  value: number;
  node_id: string;
}

/** A row of GET /ari-jupyter/runs (the same as `ari-jupyter runs --json`). */
export interface IRunRow {
  run_id: string;
  checkpoint_dir: string;
  title: string;
  phase: string;
  nodes: INodeCounts;
  best_metric: IBestMetric | null;
  updated_at: string;
  jobs: number;
  /** the workspace the run is in (one of the list's `workspaces`) */
  workspace: string;
}

/** The JSON of GET /ari-jupyter/runs. */
export interface IRunsList {
  /** the default workspace */
  workspace: string;
  /** every workspace listed: the default one, then each one a checkpoint was written to; the
   * ones not on this machine last */
  workspaces: string[];
  /** the listed workspaces that do not exist on this machine */
  missing_workspaces?: string[];
  /** what of the workspaces this user cannot read, said once in the panel's language (left out) */
  skipped_text?: string;
  runs: IRunRow[];
  /** 'ok', 'absent' (no squeue here), 'error' (squeue failed), 'partial' (its answer was cut:
   * SCHEDULER_CUT), 'recording' (a demo site), 'not-asked' (no run to ask about) */
  scheduler: string;
  accounting: string;
  /** why squeue failed or was cut (scheduler 'error' or 'partial'): no run's job count is known */
  problem?: string;
}

/** The JSON of GET /ari-jupyter/runs/ids: the panel's cheap watch for a new run. */
export interface IRunIds {
  run_ids: string[];
}

/** One thing a job asks beyond what the user approved. */
export interface IOver {
  what: 'partition' | 'nodes' | 'cpus' | 'gpus' | 'walltime';
  asked: string;
  approved: string;
}

export interface IJob {
  job_id: string;
  name: string;
  state: string;
  elapsed: string;
  nodes: string;
  where: string;
  kind: string;
  output: string;
  tail: string[];
  /** 'squeue', 'sacct', 'recording' (a demo site's recorded run: nothing is in a queue) or
   * 'ledger' (known only from ARI's submission ledger: SLURM no longer lists it) */
  source?: string;
  /** what the job asks beyond what the user approved in the wizard (empty: it fits) */
  outside?: IOver[];
  /** the same, said in the panel's language ('' when it fits) */
  outside_text?: string;
  /** how it ended, as SLURM's accounting recorded it ('<code>:<signal>'; '' where it has not) */
  exit_code?: string;
  /** why a pending job waits, when it may start and what the user can do, in the panel's
   * language ('' when it is not pending) */
  pending_text?: string;
  /** who cancelled it, as the checkpoint's cancel record says, in the panel's language ('' when
   * the record does not hold it) */
  cancelled_text?: string;
}

/** What the run has cost so far: node-hours per job kind, ARI's record of its LLM use. */
export interface IRunCost {
  /** null when SLURM did not answer */
  node_hours: Record<string, number> | null;
  from_accounting: boolean;
  /** the sentences to show, in the panel's language */
  text: string[];
}

export interface IFinding {
  rule: string;
  severity: 'error' | 'warning' | 'info';
  message: string;
  fix: string;
  params?: Record<string, unknown>;
}

/** What the user approved for one kind of job (the checkpoint's decided record); null where
 * nothing was approved. */
export interface IApproved {
  kind: 'bfts' | 'reproduce';
  partition: string;
  nodes: number | null;
  cpus_per_node: number | null;
  gpus_per_node: number | null;
  walltime: string;
}

export interface IEnvelope {
  bfts: IApproved;
  reproduce: IApproved;
}

export interface IJobsView {
  jobs: IJob[];
  scheduler: string;
  problem: string;
  accounting: string;
}

/** What a recorded request asks (``resources`` of ARI's `ari.hpc.job-request/v1`, also in a
 * script-bridge payload): the fields the panel shows; ARI writes null where nothing is asked. */
export interface IRequestResources {
  partition?: string | null;
  nodes?: number | null;
  tasks?: number | null;
  tasks_per_node?: number | null;
  cpus_per_task?: number | null;
  gpus_per_node?: number | null;
  gpus_per_task?: number | null;
  walltime?: string | null;
  /** 'auto', 'srun' or 'none' */
  launcher?: string | null;
}

/** A recorded request: a job request or a script-bridge payload (`schema_version` says which). */
export interface ILedgerRequest {
  schema_version: string;
  job_name?: string;
  resources?: IRequestResources;
}

/** One record of ARI's submission ledger (ari_jupyter/runs/ledger.py, LedgerEntry.to_json). */
export interface ILedgerEntry {
  request_digest: string;
  /** 'claim' (written before sbatch) or 'submitted' */
  state: string;
  /** the handle's job id; '' while only claimed */
  job_id: string;
  kind: string;
  claimed_at: string;
  committed_at: string;
  request: ILedgerRequest;
  /** ARI's `ari.hpc.job-handle/v1`; null while only claimed */
  handle: Record<string, unknown> | null;
}

/** ARI's submission ledger of a run (the newer ARI's; left out when the run has none). */
export interface ILedger {
  path: string;
  schema_version: string;
  /** why it could not be read (a sentence as data); null when it was */
  problem: Record<string, unknown> | null;
  entries: ILedgerEntry[];
}

/** The JSON of GET /ari-jupyter/runs/<id> (the same as `ari-jupyter status --json`). */
export interface IRunStatus extends Omit<IRunRow, 'jobs' | 'workspace'> {
  workspace?: string;
  active: boolean;
  stage: string;
  alive: boolean;
  process: string;
  log_file: string;
  log_tail: string[];
  findings: IFinding[];
  notes: string[];
  wizard: boolean;
  /** the run's workspace as a contents path ('' the lab's root); null: the lab cannot open it */
  lab_folder?: string | null;
  jobs: IJobsView;
  /** what the user approved per job kind; null for a run the wizard did not write */
  envelope: IEnvelope | null;
  /** ARI's submission ledger, when the run keeps one (the newer ARI's) */
  ledger?: ILedger;
  /** node-hours used and LLM use (absent from an older server) */
  cost?: IRunCost | null;
  /** the follow-up allocations approved at Write (left out when none was approved) */
  chain?: IChain;
  /** when the run entered each phase, oldest first (from its files, no SLURM asked) */
  phase_history: IPhaseEntry[];
}

/** When the run entered a phase, read from its files (ari_jupyter/runs/timeline.py). */
export interface IPhaseEntry {
  phase: string;
  /** ISO 8601, UTC */
  at: string;
  /** the file (or log) it was read from */
  source: string;
}

/** A run's chain of follow-up allocations (ari_jupyter/runs/chain.py, chain_json). */
export interface IChain {
  approved: number;
  used: number;
  /** the chain in words, in the panel's language: the count, then each link and its state */
  said: string[];
}

/** One job's outcome of POST /ari-jupyter/runs/<id>/cancel. */
export interface ICancelOutcome {
  job_id: string;
  result: 'cancelled' | 'gone' | 'refused' | 'invalid' | 'recording' | 'error';
  message: string;
}

/** The JSON of POST /ari-jupyter/runs/<id>/cancel: each job's outcome, the run after it. */
export interface ICancelAnswer {
  outcomes: ICancelOutcome[];
  status: IRunStatus;
}

const nodeCounts = object<INodeCounts>({ total: num, done: num, failed: num, running: num });
const bestMetric = object<IBestMetric>({ name: str, value: num, node_id: str });

const runRowFields = {
  run_id: str,
  checkpoint_dir: str,
  title: str,
  phase: str,
  nodes: nodeCounts,
  best_metric: nullable(bestMetric),
  updated_at: str
};

export const runRow = object<IRunRow>({ ...runRowFields, jobs: num, workspace: str });

export const runsList = object<IRunsList>({
  workspace: str,
  workspaces: arrayOf(str),
  missing_workspaces: optional(arrayOf(str)),
  skipped_text: optional(str),
  runs: arrayOf(runRow),
  scheduler: str,
  accounting: str,
  problem: optional(str)
});

export const runIds = object<IRunIds>({ run_ids: arrayOf(str) });

const over = object<IOver>({
  what: oneOf('partition', 'nodes', 'cpus', 'gpus', 'walltime'),
  asked: str,
  approved: str
});

export const job = object<IJob>({
  job_id: str,
  name: str,
  state: str,
  elapsed: str,
  nodes: str,
  where: str,
  kind: str,
  output: str,
  tail: arrayOf(str),
  source: optional(oneOf('squeue', 'sacct', 'recording', 'ledger')),
  outside: optional(arrayOf(over)),
  outside_text: optional(str),
  exit_code: optional(str),
  pending_text: optional(str),
  cancelled_text: optional(str)
});

const runCost = object<IRunCost>({
  node_hours: nullable(recordOf(num)),
  from_accounting: bool,
  text: arrayOf(str)
});

export const finding = object<IFinding>({
  rule: str,
  severity: oneOf('error', 'warning', 'info'),
  message: str,
  fix: str,
  params: optional(recordOf(anything))
});

const approved = object<IApproved>({
  kind: oneOf('bfts', 'reproduce'),
  partition: str,
  nodes: nullable(num),
  cpus_per_node: nullable(num),
  gpus_per_node: nullable(num),
  walltime: str
});

const maybeNum = optional(nullable(num));
const maybeStr = optional(nullable(str));

export const requestResources = object<IRequestResources>({
  partition: maybeStr,
  nodes: maybeNum,
  tasks: maybeNum,
  tasks_per_node: maybeNum,
  cpus_per_task: maybeNum,
  gpus_per_node: maybeNum,
  gpus_per_task: maybeNum,
  walltime: maybeStr,
  launcher: maybeStr
});

export const ledgerEntry = object<ILedgerEntry>({
  request_digest: str,
  state: str,
  job_id: str,
  kind: str,
  claimed_at: str,
  committed_at: str,
  request: object<ILedgerRequest>({
    schema_version: str,
    job_name: optional(str),
    resources: optional(requestResources)
  }),
  handle: nullable(recordOf(anything))
});

export const ledger = object<ILedger>({
  path: str,
  schema_version: str,
  problem: nullable(recordOf(anything)),
  entries: arrayOf(ledgerEntry)
});

export const runStatus = object<IRunStatus>({
  ...runRowFields,
  workspace: optional(str),
  active: bool,
  stage: str,
  alive: bool,
  process: str,
  log_file: str,
  log_tail: arrayOf(str),
  findings: arrayOf(finding),
  notes: arrayOf(str),
  wizard: bool,
  lab_folder: optional(nullable(str)),
  jobs: object<IJobsView>({ jobs: arrayOf(job), scheduler: str, problem: str, accounting: str }),
  envelope: nullable(object<IEnvelope>({ bfts: approved, reproduce: approved })),
  ledger: optional(ledger),
  cost: optional(nullable(runCost)),
  chain: optional(object<IChain>({ approved: num, used: num, said: arrayOf(str) })),
  phase_history: arrayOf(object<IPhaseEntry>({ phase: str, at: str, source: str }))
});

export const cancelAnswer = object<ICancelAnswer>({
  outcomes: arrayOf(
    object<ICancelOutcome>({
      job_id: str,
      result: oneOf('cancelled', 'gone', 'refused', 'invalid', 'recording', 'error'),
      message: str
    })
  ),
  status: runStatus
});
