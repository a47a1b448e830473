import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  allocationTitle,
  describe as describeAllocation,
  IAllocationStatus,
  pollMs,
  withoutCodeMarks
} from '../src/status_text';
import { english, japaneseQuotes } from './helpers';

/** An allocation as GET /ari-jupyter/allocation answers it, with `allocation` and `timeLeft` instead of its parts. */
function status(
  allocation: Partial<IAllocationStatus['allocation']> = {},
  timeLeft: IAllocationStatus['time_left'] | undefined = undefined
): IAllocationStatus {
  return {
    allocation: {
      inside_allocation: true,
      job_id: '1234',
      job_name: 'train',
      nodelist: 'n[1-2]',
      num_nodes: 2,
      partition: 'gpu',
      ...allocation
    },
    time_left:
      timeLeft === undefined
        ? { status: 'ok', summary: 'ends in 59 min; run `ari resume` after', data: { raw: '59:10', seconds: 3550 } }
        : timeLeft
  };
}

describe('pollMs: the refreshInterval setting in ms, 5 s at least', () => {
  const cases: [number, number][] = [
    [30, 30000],
    [5, 5000],
    [7.5, 7500],
    [4, 5000],
    [0, 5000],
    [-3, 5000],
    [600, 600000]
  ];
  for (const [seconds, expected] of cases) {
    test(`pollMs(${seconds}) = ${expected}`, () => {
      assert.equal(pollMs(seconds), expected);
    });
  }
});

describe('withoutCodeMarks: code spans become quoted phrases for a tooltip', () => {
  const cases: [string, string, typeof english, string][] = [
    ['English quotes', 'Run `ari run` now', english, 'Run “ari run” now'],
    ['two spans', '`a` then `b c`', english, '“a” then “b c”'],
    ['no span', 'nothing to quote', english, 'nothing to quote'],
    ['an empty span stays', 'empty `` span', english, 'empty `` span'],
    ['full-width quotes take the spaces around the span', 'Run `ari run` now', japaneseQuotes, 'Run「ari run」now'],
    ['full-width, no spaces around', '実行`ari run`して', japaneseQuotes, '実行「ari run」して'],
    ['full-width, two spans', '`a` と `b`', japaneseQuotes, '「a」と「b」']
  ];
  for (const [what, text, trans, expected] of cases) {
    test(`${what}: '${expected}'`, () => {
      assert.equal(withoutCodeMarks(text, trans), expected);
    });
  }
});

describe('describe: the status item text', () => {
  const cases: [string, IAllocationStatus, string][] = [
    ['job, nodes, node list, time left', status(), 'SLURM 1234 · 2 nodes n[1-2] · 59:10 left'],
    ['one node', status({ num_nodes: 1, nodelist: 'n1' }), 'SLURM 1234 · 1 node n1 · 59:10 left'],
    ['node count unknown', status({ num_nodes: null }), 'SLURM 1234 · ? nodes n[1-2] · 59:10 left'],
    ['no node list', status({ nodelist: null }), 'SLURM 1234 · 2 nodes · 59:10 left'],
    ['no job id', status({ job_id: null }), 'SLURM ? · 2 nodes n[1-2] · 59:10 left'],
    [
      'no time limit (even with a raw time)',
      status({}, { status: 'ok', summary: 'no limit', data: { raw: 'UNLIMITED', unlimited: true } }),
      'SLURM 1234 · 2 nodes n[1-2] · no time limit'
    ],
    ['time left unknown', status({}, null), 'SLURM 1234 · 2 nodes n[1-2]'],
    ['time left without data', status({}, { status: 'unknown', summary: 'squeue did not answer' }), 'SLURM 1234 · 2 nodes n[1-2]'],
    ['an empty raw time', status({}, { status: 'ok', summary: '', data: { raw: '' } }), 'SLURM 1234 · 2 nodes n[1-2]'],
    ['days left', status({}, { status: 'ok', summary: '', data: { raw: '1-02:03:04' } }), 'SLURM 1234 · 2 nodes n[1-2] · 1-02:03:04 left']
  ];
  for (const [what, given, expected] of cases) {
    test(`${what}: '${expected}'`, () => {
      assert.equal(describeAllocation(given, english), expected);
    });
  }
});

describe('allocationTitle: the status item tooltip', () => {
  const cases: [string, IAllocationStatus, string][] = [
    [
      'everything known',
      status(),
      'Job 1234\nname train\npartition gpu\ntime left: ends in 59 min; run “ari resume” after'
    ],
    ['no name, no partition', status({ job_name: null, partition: undefined }), 'Job 1234\ntime left: ends in 59 min; run “ari resume” after'],
    ['no time left', status({}, null), 'Job 1234\nname train\npartition gpu'],
    ['no job id', status({ job_id: null, job_name: '', partition: '' }, null), 'Job ']
  ];
  for (const [what, given, expected] of cases) {
    test(`${what}: ${JSON.stringify(expected)}`, () => {
      assert.equal(allocationTitle(given, english), expected);
    });
  }
});

describe('the status item under a hub that stops idle servers', () => {
  test('the item says when the server stops, after the time left, in the server\'s words', () => {
    const culled = { ...status(), idle_cull: { seconds: 5400, text: '1 h 30 min' } };
    assert.equal(
      describeAllocation(culled, english),
      'SLURM 1234 · 2 nodes n[1-2] · 59:10 left · stops after 1 h 30 min idle'
    );
    assert.match(allocationTitle(culled, english), /stops this server after 1 h 30 min without use/);
  });
  test('no word of it when the site says no idle timeout, or on a demo site', () => {
    assert.doesNotMatch(describeAllocation(status(), english), /idle/);
    const demo = { ...status(), idle_cull: { seconds: 90, text: '90 s' }, demo: { site: 'rccs-cloud' } };
    assert.doesNotMatch(describeAllocation(demo, english), /idle/);
    assert.doesNotMatch(allocationTitle(demo, english), /without use/);
  });
});
