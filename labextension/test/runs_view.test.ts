import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { ILedger, ILedgerEntry, IRequestResources, IRunRow, IRunsList, IRunStatus } from '../src/payloads';
import {
  durationText,
  groupViews,
  jobLine,
  jobsCutText,
  jobStateView,
  jobsUnknownText,
  listNotes,
  listView,
  logHeading,
  ledgerEntryOf,
  noLogText,
  phaseHistoryView,
  recordedView,
  requestParts,
  rowView,
  shownJobs
} from '../src/runs_view';
import { english, marked } from './helpers';

function run(id: string, changes: Partial<IRunRow> = {}): IRunRow {
  return {
    run_id: id,
    checkpoint_dir: `/w/checkpoints/${id}`,
    title: 'Stream triad',
    phase: 'exploring',
    nodes: { total: 5, done: 2, failed: 1, running: 1 },
    best_metric: { name: 'GFlops', value: 12.5, node_id: 'node_3' },
    updated_at: '2026-12-04T23:13:00+00:00',
    jobs: 2,
    workspace: '/w',
    ...changes
  };
}

function list(changes: Partial<IRunsList> = {}): IRunsList {
  return { workspace: '/w', workspaces: ['/w'], runs: [], scheduler: 'ok', accounting: 'yes', ...changes };
}

describe('rowView: what a run row shows', () => {
  const cases: [string, IRunRow, Set<string>, string, Record<string, unknown>][] = [
    ['counts known', run('20261204231300_a'), new Set(), '',
      { label: 'Stream triad', started: null, nodes: '2/1/1/5', best: 'GFlops 12.5',
        bestTitle: 'GFlops 12.5 (node_3)', jobs: '2', jobsTitle: null }],
    ['a title another run shares: when it started, under it', run('20261204231300_a'), new Set(['Stream triad']), '',
      { started: '2026-12-04 23:13' }],
    ['no title: the id, never a shared title', run('20261204231300_a', { title: '' }), new Set(['Stream triad']), '',
      { label: '20261204231300_a', started: null }],
    ['no best metric yet', run('20261204231300_a', { best_metric: null }), new Set(), '',
      { best: '–', bestTitle: '–' }],
    ['squeue did not answer: ?, never 0, and why as its tooltip', run('20261204231300_a', { jobs: 0 }), new Set(),
      'unknown: squeue did not answer', { jobs: '?', jobsTitle: 'unknown: squeue did not answer' }],
    ['no jobs, and that is known', run('20261204231300_a', { jobs: 0 }), new Set(), '', { jobs: '0', jobsTitle: null }]
  ];
  for (const [name, row, shared, unknown, expected] of cases) {
    test(name, () => {
      const view = rowView(row, shared, unknown) as unknown as Record<string, unknown>;
      for (const [key, value] of Object.entries(expected)) {
        assert.deepEqual(view[key], value, key);
      }
      assert.equal(view.run, row);
      assert.equal(view.workspace, row.workspace);
    });
  }
});

describe('jobsUnknownText: why no job count is known', () => {
  const cases: [string, string][] = [
    ['ok', ''],
    ['recording', ''],
    ['not-asked', ''],
    ['absent', '⟨unknown: squeue is not available here⟩'],
    ['error', '⟨unknown: squeue did not answer⟩'],
    ['partial', '⟨unknown: the scheduler’s answer was cut⟩']
  ];
  for (const [scheduler, expected] of cases) {
    test(`${scheduler} → ${JSON.stringify(expected)}`, () => assert.equal(jobsUnknownText(marked, scheduler), expected));
  }
});

describe('listNotes: the paragraphs under the list', () => {
  const cases: [string, Partial<IRunsList>, boolean, [string, string][]][] = [
    ['runs, squeue answered: the legend only', { scheduler: 'ok' }, true,
      [['legend', 'Search nodes: done/failed/running/total']]],
    ['no runs: no legend', { scheduler: 'ok' }, false, []],
    ['no SLURM here', { scheduler: 'absent' }, true,
      [['legend', 'Search nodes: done/failed/running/total'],
        ['jobsnote', 'Jobs ?: unknown, squeue is not available here (no SLURM on this machine).']]],
    ['squeue failed: why, as an error', { scheduler: 'error', problem: 'timed out' }, false,
      [['jobserror', 'Jobs ?: unknown, squeue did not answer: timed out']]],
    ['squeue’s answer cut: said so, with why', { scheduler: 'partial', problem: 'cut after 9000 rows' }, true,
      [['legend', 'Search nodes: done/failed/running/total'],
        ['jobsnote', 'Jobs ?: unknown, the scheduler’s answer was cut (jobs of a run may be missing): cut after 9000 rows']]]
  ];
  for (const [name, changes, hasRows, expected] of cases) {
    test(name, () =>
      assert.deepEqual(listNotes(english, list(changes), hasRows).map(n => [n.kind, n.text]), expected));
  }
});

describe('a cut scheduler answer: "?" where a count or a state would be, and why as its tooltip', () => {
  test('each row of the list: "?", never the count of the jobs that were read', () => {
    const view = listView(marked, list({ scheduler: 'partial', problem: 'cut', runs: [run('20261204231300_a', { jobs: 1 })] }));
    assert.deepEqual(view.rows.map(r => [r.jobs, r.jobsTitle]), [['?', '⟨unknown: the scheduler’s answer was cut⟩']]);
  });
  const cut = '⟨State unknown: the scheduler’s answer was cut, so this job’s state is not shown and other jobs of the run may be missing.⟩';
  const cases: [string, string, string | undefined, { state: string; title: string | null }][] = [
    ['squeue answered: the state as it said it', 'ok', 'squeue', { state: 'RUNNING', title: null }],
    ['a recording: the state it recorded', 'recording', 'recording', { state: 'RUNNING', title: null }],
    ['the answer was cut: "?"', 'partial', 'squeue', { state: '?', title: cut }],
    ['the answer was cut, a job accounting listed: "?"', 'partial', 'sacct', { state: '?', title: cut }],
    ['the answer was cut, a job from the ledger: as the ledger says it', 'partial', 'ledger', { state: 'RUNNING', title: null }]
  ];
  for (const [name, scheduler, source, expected] of cases) {
    test(name, () => assert.deepEqual(jobStateView(marked, { state: 'RUNNING', source }, scheduler), expected));
  }
  test('a job’s line says "?" for its state', () =>
    assert.equal(jobLine(english, { nodes: '3', state: 'RUNNING', elapsed: '0:42', where: 'n[1-3]', kind: 'bfts' }, 'partial'),
      '? · 0:42 · 3 nodes n[1-3] · bfts'));
  test('the run’s jobs: the sentence with why', () =>
    assert.equal(jobsCutText(marked, 'cut'), '⟨Jobs ?: unknown, the scheduler’s answer was cut (jobs of a run may be missing): cut⟩'));
});

describe('listView: the list as a whole', () => {
  test('one workspace: one list, the table, no empty sentence', () => {
    const view = listView(english, list({ runs: [run('20261204231300_b'), run('20261204231200_a')] }));
    assert.equal(view.groups, null);
    assert.equal(view.table, true);
    assert.equal(view.empty, null);
    assert.deepEqual(view.rows.map(r => r.started), ['2026-12-04 23:13', '2026-12-04 23:12']); // one title
  });
  test('one workspace without runs: no table, the sentence', () => {
    const view = listView(english, list());
    assert.deepEqual([view.table, view.empty, view.notes], [false, 'No runs in this workspace yet.', []]);
  });
  test('several workspaces without runs: the groups stay, each empty', () => {
    const view = listView(english, list({ workspaces: ['/w', '/scratch'] }));
    assert.deepEqual([view.table, view.empty], [true, 'No runs in these workspaces yet.']);
    assert.deepEqual(view.groups?.map(g => [g.workspace, g.count, g.rows.length]), [['/w', '0 runs', 0], ['/scratch', '0 runs', 0]]);
  });
});

describe('groupViews: each workspace a group, in the list’s order', () => {
  const runs = [run('3_c', { workspace: '/scratch' }), run('2_b'), run('1_a', { workspace: '/scratch' })];
  const all = list({ workspaces: ['/w', '/scratch', '/gone'], missing_workspaces: ['/gone'], runs });
  const groups = groupViews(english, all, runs.map(r => rowView(r, new Set(), '')));
  test('the rows by workspace, each group keeping the list’s order', () =>
    assert.deepEqual(groups.map(g => [g.workspace, g.rows.map(r => r.run.run_id)]),
      [['/w', ['2_b']], ['/scratch', ['3_c', '1_a']], ['/gone', []]]));
  test('named, counted, forgettable but for the default one; a missing one marked', () =>
    assert.deepEqual(groups.map(g => [g.name, g.count, g.forgettable]), [
      ['/w', '1 run', false],
      ['/scratch', '2 runs', true],
      ['/gone (does not exist here)', '0 runs', true]
    ]));
});

describe('a job’s line, the log’s heading and the sentence without a log', () => {
  const job = { nodes: '3', state: 'RUNNING', elapsed: '0:42', where: 'n[1-3]', kind: 'bfts' };
  const cases: [string, string, string][] = [
    ['a job on 3 nodes', jobLine(english, job), 'RUNNING · 0:42 · 3 nodes n[1-3] · bfts'],
    ['a job on one node', jobLine(english, { ...job, nodes: '1', where: 'n1' }), 'RUNNING · 0:42 · 1 node n1 · bfts'],
    ['nodes not a number: 0', jobLine(english, { ...job, nodes: 'N/A' }), 'RUNNING · 0:42 · 0 nodes n[1-3] · bfts'],
    ['a recorded job has no time: no empty field', jobLine(english, { ...job, elapsed: '', nodes: '1', where: '' }),
      'RUNNING · 1 node · bfts'],
    ['no kind, no node list', jobLine(english, { ...job, kind: '', where: '' }), 'RUNNING · 0:42 · 3 nodes'],
    ['known only from the ledger: no time, no nodes of its own',
      jobLine(english, { nodes: '2', state: 'UNKNOWN', elapsed: '', where: '', kind: 'reproduce', source: 'ledger' }),
      'state unknown · reproduce'],
    ['the log file by its name', logHeading(english, '/w/c/ari_run_20261204.log'), 'Log (ari_run_20261204.log)'],
    ['no log file', logHeading(english, ''), 'Log'],
    ['not started', noLogText(english, { phase: 'not-started', active: false }),
      'No log yet: ARI writes one when the run starts.'],
    ['active', noLogText(english, { phase: 'exploring', active: true }), 'No log yet: ARI writes one when the run starts.'],
    ['ended', noLogText(english, { phase: 'failed', active: false }), 'This run left no log in its checkpoint.']
  ];
  for (const [name, actual, expected] of cases) {
    test(name, () => assert.equal(actual, expected));
  }
});

/** ARI's bridge request as the ledger fixture records it (tests/fixtures/ari_typed_hpc_v1). */
const BRIDGE: IRequestResources = {
  partition: 'small',
  nodes: 2,
  tasks: 1,
  tasks_per_node: null,
  cpus_per_task: 8,
  gpus_per_node: 0,
  gpus_per_task: 0,
  walltime: '02:00:00',
  launcher: 'auto'
};

function entry(jobId: string, resources: IRequestResources = BRIDGE): ILedgerEntry {
  return {
    request_digest: `sha256:${jobId || 'claim'}`,
    state: jobId ? 'submitted' : 'claim',
    job_id: jobId,
    kind: 'bfts',
    claimed_at: '2026-12-06T10:31:00Z',
    committed_at: jobId ? '2026-12-06T10:31:02Z' : '',
    request: { schema_version: 'ari.hpc.script-bridge/v1', job_name: 'triad_n2', resources },
    handle: jobId ? { schema_version: 'ari.hpc.job-handle/v1', job_id: jobId } : null
  };
}

function ledgerOf(...entries: ILedgerEntry[]): ILedger {
  return { path: '/w/c/hpc-jobs-v1.json', schema_version: 'ari.hpc.submission-ledger/v1', problem: null, entries };
}

describe('requestParts: the recorded request’s fields a user checks', () => {
  const cases: [string, IRequestResources, string][] = [
    ['partition, nodes, CPUs, no GPU, time limit, launcher', BRIDGE,
      'partition small · 2 nodes · 8 CPUs per task · no GPU · time limit 02:00:00 · launcher auto'],
    ['GPUs per node, one node, one CPU', { ...BRIDGE, nodes: 1, cpus_per_task: 1, gpus_per_node: 4 },
      'partition small · 1 node · 1 CPU per task · 4 GPUs per node · time limit 02:00:00 · launcher auto'],
    ['GPUs per task when none per node', { ...BRIDGE, gpus_per_task: 1, launcher: 'srun' },
      'partition small · 2 nodes · 8 CPUs per task · 1 GPU per task · time limit 02:00:00 · launcher srun'],
    ['what ARI left null is left out (the default partition, no time limit)',
      { ...BRIDGE, partition: null, walltime: null, launcher: null, cpus_per_task: null },
      '2 nodes · no GPU'],
    ['nothing recorded', {}, 'no GPU']
  ];
  for (const [name, resources, expected] of cases) {
    test(name, () => assert.equal(requestParts(english, resources).join(' · '), expected));
  }
  test('each field goes through the translation', () => {
    assert.deepEqual(requestParts(marked, BRIDGE),
      ['⟨partition small⟩', '⟨2 nodes⟩', '⟨8 CPUs per task⟩', '⟨no GPU⟩', '⟨time limit 02:00:00⟩', '⟨launcher auto⟩']);
  });
});

describe('recordedView: what the ledger recorded of a job', () => {
  const requestLabel = 'Recorded request:';
  const request = ['partition small', '2 nodes', '8 CPUs per task', 'no GPU', 'time limit 02:00:00', 'launcher auto'];
  const forgotten = 'Known only from ARI’s submission ledger: SLURM no longer lists this job.';
  const cases: [string, { job_id: string; source?: string }, ILedger | undefined, unknown][] = [
    ['a job SLURM forgot: its request, its handle, and marked', { job_id: '4102', source: 'ledger' },
      ledgerOf(entry('4101'), entry('4102')), { requestLabel, request, handle: 'Handle: SLURM job 4102', forgotten }],
    ['a job squeue still lists: its request and handle, not marked', { job_id: '61', source: 'squeue' },
      ledgerOf(entry('61')), { requestLabel, request, handle: 'Handle: SLURM job 61', forgotten: null }],
    ['a job the ledger does not hold', { job_id: '62', source: 'squeue' }, ledgerOf(entry('61')), null],
    ['a run without a ledger (ARI e41c806)', { job_id: '61', source: 'squeue' }, undefined, null],
    ['a claim without a job id matches no job', { job_id: '', source: 'squeue' }, ledgerOf(entry('')), null]
  ];
  for (const [name, job, ledger, expected] of cases) {
    test(name, () => assert.deepEqual(recordedView(english, job, ledger), expected));
  }
  test('through the translation', () => {
    const view = recordedView(marked, { job_id: '4102', source: 'ledger' }, ledgerOf(entry('4102')));
    assert.equal(view?.handle, '⟨Handle: SLURM job 4102⟩');
    assert.equal(view?.requestLabel, '⟨Recorded request:⟩');
    assert.equal(view?.request[0], '⟨partition small⟩');
    assert.equal(view?.forgotten, `⟨${forgotten}⟩`);
  });
  test('ledgerEntryOf finds the record by its handle’s job id', () => {
    assert.equal(ledgerEntryOf(ledgerOf(entry('4101'), entry('4102')), '4102')?.request_digest, 'sha256:4102');
  });
});

describe('the recorded server answer’s ledger jobs, as the panel shows them', () => {
  const status: IRunStatus = JSON.parse(
    readFileSync(join(__dirname, '..', '..', '..', 'tests', 'fixtures', 'runs_payload.json'), 'utf-8')
  ).status;
  const shown = status.jobs.jobs.map(job => [job.job_id, recordedView(english, job, status.ledger)]);
  test('the queue’s jobs have no record; each ledger job its request, handle and mark', () => {
    assert.deepEqual(shown.map(([id, view]) => [id, view !== null]),
      [['61', false], ['62', false], ['4101', true], ['4102', true], ['4107', true]]);
  });
  test('the reproduce job: its srun launcher and time limit as recorded', () => {
    const view = recordedView(english, { job_id: '4107', source: 'ledger' }, status.ledger);
    assert.deepEqual(view?.request.slice(-2), ['time limit 01:00:00', 'launcher srun']);
    assert.equal(view?.handle, 'Handle: SLURM job 4107');
    assert.ok(view?.forgotten);
  });
});

describe('shownJobs: the jobs a run’s view lists', () => {
  const queued = { job_id: '61', source: 'squeue' };
  const forgotten = { job_id: '4102', source: 'ledger' };
  const cases: [string, string, { job_id: string; source: string }[], string[]][] = [
    ['squeue answered: every job', 'ok', [queued, forgotten], ['61', '4102']],
    ['a recording: every job', 'recording', [queued], ['61']],
    ['no SLURM here: the ledger’s jobs still', 'absent', [forgotten], ['4102']],
    ['squeue did not answer: the ledger’s jobs still, nothing else', 'error', [queued, forgotten], ['4102']],
    ['no SLURM and no ledger: none', 'absent', [], []]
  ];
  for (const [name, scheduler, jobs, expected] of cases) {
    test(name, () => assert.deepEqual(shownJobs({ jobs, scheduler }).map(j => j.job_id), expected));
  }
});

describe('durationText: a span as people say it (as `status` says it)', () => {
  const cases: [number, string][] = [
    [0, '0 s'], [19, '19 s'], [119, '119 s'], [120, '2 min'], [225, '4 min'], [3599, '1 h'],
    [3600, '1 h'], [5400, '1 h 30 min'], [-5, '0 s']
  ];
  for (const [seconds, expected] of cases) {
    test(`${seconds} s`, () => assert.equal(durationText(english, seconds), expected));
  }
  test('through the bundle', () => assert.equal(durationText(marked, 5400), '⟨1 h 30 min⟩'));
});

describe('phaseHistoryView: when the run entered each phase', () => {
  // local times, so the lines read the same in any time zone the test runs in
  const at = (day: number, h: number, m: number, s: number) => new Date(2026, 11, day, h, m, s).toISOString();
  const history = [
    { phase: 'not-started', at: at(5, 22, 43, 20), source: 'experiment.md' },
    { phase: 'starting', at: at(5, 22, 43, 39), source: 'ari_run_20261205224339.log' },
    { phase: 'exploring', at: at(5, 22, 44, 59), source: 'tree.json' },
    { phase: 'paper', at: at(5, 23, 59, 0), source: '.pipeline_started' },
    { phase: 'reproduce', at: at(6, 0, 3, 0), source: 'ari.log' }
  ];
  const now = new Date(2026, 11, 6, 0, 10, 0);
  const cases: [string, typeof history, boolean, [string, string | null, string, string][]][] = [
    ['a live run: each lasted until the next; the last since when; the date where it changes', history, true, [
      ['not-started', '2026-12-05', '22:43:20', 'for 19 s'],
      ['starting', null, '22:43:39', 'for 80 s'],
      ['exploring', null, '22:44:59', 'for 1 h 14 min'],
      ['paper', null, '23:59:00', 'for 4 min'],
      ['reproduce', '2026-12-06', '00:03:00', 'since 7 min ago']
    ]],
    ['an ended run: its end says no duration', [...history.slice(0, 2),
      { phase: 'finished', at: at(5, 22, 52, 27), source: 'ari.log' }], false, [
      ['not-started', '2026-12-05', '22:43:20', 'for 19 s'],
      ['starting', null, '22:43:39', 'for 9 min'],
      ['finished', null, '22:52:27', '']
    ]],
    ['a time that cannot be read is left out', [{ phase: 'paper', at: 'soon', source: 'x' }, history[0]], false, [
      ['not-started', '2026-12-05', '22:43:20', '']
    ]],
    ['no history: no lines', [], true, []]
  ];
  for (const [name, entries, active, expected] of cases) {
    test(name, () => {
      const rows = phaseHistoryView(english, entries, active, now);
      assert.deepEqual(rows.map(r => [r.phase, r.day, r.at, r.lasted]), expected);
    });
  }
  test('each line says where its time was read, in the panel language', () => {
    const rows = phaseHistoryView(marked, history.slice(0, 2), true, now);
    assert.equal(rows[0].title, '⟨read from experiment.md⟩');
    assert.equal(rows[0].lasted, '⟨for ⟨19 s⟩⟩');
    assert.equal(rows[0].iso, history[0].at);
  });
});
