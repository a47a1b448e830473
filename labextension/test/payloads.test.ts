import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import {
  cancelAnswer,
  Guard,
  isShaped,
  IRunStatus,
  OUTSIDE_ENVELOPE_RULE,
  problemsOf,
  RUN_RULES,
  runIds,
  runsList,
  runStatus,
  SCHEDULER_CUT
} from '../src/payloads';
import { isOutsideEnvelope, jobToCancel } from '../src/runs_text';
import { jobStateView, listView } from '../src/runs_view';
import { english } from './helpers';

/**
 * A real answer of the Runs routes, recorded by the Python tests from a running jupyter server
 * (tests/unit/server/test_runs_payload.py): the same file the server is held to there. The tests run from
 * lib-test/test.
 */
const RECORDED = JSON.parse(
  readFileSync(join(__dirname, '..', '..', '..', 'tests', 'fixtures', 'runs_payload.json'), 'utf-8')
);

describe('the recorded server answer has the payload types’ shapes', () => {
  const cases: [string, Guard<unknown>, unknown][] = [
    ['GET /ari-jupyter/runs', runsList, RECORDED.runs],
    ['GET /ari-jupyter/runs/ids', runIds, RECORDED.run_ids],
    ['GET /ari-jupyter/runs/<id>', runStatus, RECORDED.status],
    ['POST /ari-jupyter/runs/<id>/cancel', cancelAnswer, RECORDED.cancel]
  ];
  for (const [route, guard, answer] of cases) {
    test(route, () => assert.deepEqual(problemsOf(guard, answer), []));
  }
});

describe('the recorded findings use the rule ids of payloads.ts', () => {
  const status = RECORDED.status as IRunStatus;
  test('every run-level rule is known', () => {
    const runLevel = status.findings.map(f => f.rule).filter(rule => rule.startsWith('run-'));
    assert.ok(runLevel.length > 0);
    assert.deepEqual(runLevel.filter(rule => !RUN_RULES.includes(rule)), []);
  });
  test('the job outside the envelope is flagged, and its finding offers its cancel', () => {
    const [flag] = status.findings.filter(f => f.rule === OUTSIDE_ENVELOPE_RULE);
    assert.ok(flag, 'no finding with the outside-envelope rule');
    assert.equal(jobToCancel(flag, status.jobs.jobs)?.job_id, '61');
    // the queue's 61 and 62, then the ledger's 4101, 4102 (asking more than approved), 4107
    assert.deepEqual(status.jobs.jobs.map(isOutsideEnvelope), [true, false, false, true, false]);
    assert.equal(status.envelope?.bfts.nodes, 2);
  });
});

/** The recorded answer with one change made by `change` (on a deep copy). */
function changed(answer: unknown, change: (copy: any) => void): unknown {
  const copy = JSON.parse(JSON.stringify(answer));
  change(copy);
  return copy;
}

describe('a guard names what does not have its shape', () => {
  const status = RECORDED.status;
  const cases: [string, Guard<unknown>, unknown, string[]][] = [
    ['a run row without its phase', runsList, changed(RECORDED.runs, a => delete a.runs[0].phase),
      ['$.runs[0].phase: not a string (undefined)']],
    ['a job count as text', runsList, changed(RECORDED.runs, a => (a.runs[0].jobs = '2')),
      ['$.runs[0].jobs: not a number ("2")']],
    ['a best metric without its value', runsList,
      changed(RECORDED.runs, a => (a.runs[0].best_metric = { name: 'GFlops', node_id: 'n1' })),
      ['$.runs[0].best_metric.value: not a number (undefined)']],
    ['ids not a list', runIds, { run_ids: 'x' }, ['$.run_ids: not a list']],
    ['a severity the panel has no word for', runStatus,
      changed(status, s => (s.findings[0].severity = 'fatal')),
      ['$.findings[0].severity: not one of error, warning, info ("fatal")']],
    ['an envelope without its reproduce job', runStatus, changed(status, s => delete s.envelope.reproduce),
      ['$.envelope.reproduce: not an object']],
    ['approved nodes as text', runStatus, changed(status, s => (s.envelope.bfts.nodes = '2')),
      ['$.envelope.bfts.nodes: not a number ("2")']],
    ['an unknown thing outside', runStatus,
      changed(status, s => (s.jobs.jobs[0].outside[0].what = 'memory')),
      ['$.jobs.jobs[0].outside[0].what: not one of partition, nodes, cpus, gpus, walltime ("memory")']],
    ['a job tail that is not lines', runStatus, changed(status, s => (s.jobs.jobs[1].tail = [1])),
      ['$.jobs.jobs[1].tail[0]: not a string (1)']],
    ['an unknown cancel result', cancelAnswer, changed(RECORDED.cancel, c => (c.outcomes[0].result = 'done')),
      ['$.outcomes[0].result: not one of cancelled, gone, refused, invalid, recording, error ("done")']],
    ['a job source the panel has no word for', runStatus, changed(status, s => (s.jobs.jobs[2].source = 'memory')),
      ['$.jobs.jobs[2].source: not one of squeue, sacct, recording, ledger ("memory")']],
    ['a recorded request asking nodes as text', runStatus,
      changed(status, s => (s.ledger.entries[0].request.resources.nodes = '2')),
      ['$.ledger.entries[0].request.resources.nodes: not a number ("2")']],
    ['a ledger record without its job id', runStatus, changed(status, s => delete s.ledger.entries[1].job_id),
      ['$.ledger.entries[1].job_id: not a string (undefined)']],
    ['a handle that is not an object', runStatus, changed(status, s => (s.ledger.entries[0].handle = '4101')),
      ['$.ledger.entries[0].handle: not an object']],
    ['no answer at all', runStatus, null, ['$: not an object']]
  ];
  for (const [name, guard, answer, problems] of cases) {
    test(name, () => {
      assert.deepEqual(problemsOf(guard, answer), problems);
      assert.equal(isShaped(guard, answer), false);
    });
  }
  test('left out where the server may leave it out: lab_folder, params, source', () => {
    const older = changed(status, s => {
      delete s.lab_folder;
      delete s.findings[0].params;
      delete s.jobs.jobs[0].source;
    });
    assert.deepEqual(problemsOf(runStatus, older), []);
  });
  test('a run without a ledger (ARI e41c806 keeps none) has none in its answer', () => {
    assert.equal(isShaped(runStatus, changed(status, s => delete s.ledger)), true);
  });
  test('the recording holds the ledger’s jobs SLURM no longer lists', () => {
    const fromLedger = (status as IRunStatus).jobs.jobs.filter(j => j.source === 'ledger').map(j => j.job_id);
    assert.deepEqual(fromLedger, ['4101', '4102', '4107']);
  });
  test('a run the wizard did not write has no envelope', () => {
    assert.equal(isShaped(runStatus, changed(status, s => (s.envelope = null))), true);
  });
});

describe('a cut scheduler answer, as the server words it, is shaped and shown as "?"', () => {
  // ari_jupyter/runs/jobs.py: JobsView's scheduler 'partial' (squeue's output cut at the cap)
  const jobsModule = readFileSync(join(__dirname, '..', '..', '..', 'ari_jupyter', 'runs', 'jobs.py'), 'utf-8');
  test('the server names a cut answer so', () => assert.match(jobsModule, new RegExp(`return kept, "${SCHEDULER_CUT}"`)));
  const list = changed(RECORDED.runs, copy => {
    copy.scheduler = SCHEDULER_CUT;
    copy.problem = 'squeue\'s answer was cut after 8,000 rows';
  });
  const status = changed(RECORDED.status, copy => {
    copy.jobs.scheduler = SCHEDULER_CUT;
  }) as IRunStatus;
  test('both answers keep their shapes', () =>
    assert.deepEqual([problemsOf(runsList, list), problemsOf(runStatus, status)], [[], []]));
  test('the list: every run’s job count "?"', () => {
    const rows = listView(english, list as never).rows;
    assert.ok(rows.length > 0);
    assert.deepEqual([...new Set(rows.map(r => r.jobs))], ['?']);
  });
  test('the run: the queue’s jobs "?", the ledger’s as recorded', () =>
    assert.deepEqual(status.jobs.jobs.map(j => jobStateView(english, j, status.jobs.scheduler).state),
      status.jobs.jobs.map(j => (j.source === 'ledger' ? j.state : '?'))));
});
