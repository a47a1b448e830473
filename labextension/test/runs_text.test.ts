import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';

import {
  activeRun,
  bestShort,
  bestText,
  codePieces,
  breakableId,
  firstFreeName,
  cancellable,
  isActiveJobState,
  isOutsideEnvelope,
  jobCountsKnown,
  jobToCancel,
  newestNewRun,
  nextDelay,
  nodesText,
  phaseText,
  pollDelay,
  runLabel,
  runPhaseText,
  runPhaseTitle,
  severalWorkspaces,
  severityText,
  sharedTitles,
  startedAt,
  wizardNotebookName,
  wizardSource,
  groupByWorkspace,
  workspaceName,
  workspacesText
} from '../src/runs_text';
import { IJob, IRunRow, OUTSIDE_ENVELOPE_RULE } from '../src/payloads';
import { english, marked, withFakeDocument } from './helpers';

describe('nextDelay: start fast, double while nothing changes, reset on a change', () => {
  const cases: [number, boolean, number | undefined, number][] = [
    [2000, false, undefined, 4000],
    [4000, false, undefined, 8000],
    [16000, false, undefined, 30000], // capped at POLL_MAX_MS
    [30000, false, undefined, 30000],
    [30000, true, undefined, 2000], // a change: POLL_FIRST_MS again
    [2000, true, undefined, 2000],
    [4000, false, 8000, 8000], // capped at the given most
    [8000, false, 8000, 8000],
    [8000, true, 8000, 2000]
  ];
  for (const [current, changed, most, expected] of cases) {
    test(`nextDelay(${current}, ${changed ? 'changed' : 'same'}, most ${most ?? 'default'}) = ${expected}`, () => {
      assert.equal(nextDelay(current, changed, most), expected);
    });
  }
});

describe('pollDelay: how soon a run is looked at again, by what it is doing', () => {
  const cases: [number, boolean, string, boolean, number][] = [
    // active: doubles up to 30 s
    [2000, false, 'exploring', true, 4000],
    [16000, false, 'exploring', true, 30000],
    [30000, true, 'exploring', true, 2000],
    // active wins over the phase word
    [16000, false, 'not-started', true, 30000],
    // written, not started: never more than 8 s (the hand-off types `ari run` any moment)
    [2000, false, 'not-started', false, 4000],
    [4000, false, 'not-started', false, 8000],
    [8000, false, 'not-started', false, 8000],
    [8000, true, 'not-started', false, 2000],
    // ended: still looked at (`ari resume`), as seldom as 30 s
    [8000, false, 'failed', false, 16000],
    [16000, false, 'finished', false, 30000],
    [30000, false, 'interrupted', false, 30000],
    [30000, true, 'finished', false, 2000]
  ];
  for (const [current, changed, phase, active, expected] of cases) {
    const what = `${current}, ${changed ? 'changed' : 'same'}, ${phase}, ${active ? 'active' : 'inactive'}`;
    test(`pollDelay(${what}) = ${expected}`, () => {
      assert.equal(pollDelay(current, changed, phase, active), expected);
    });
  }
});

describe('newestNewRun: the newest id not seen before', () => {
  const old = '20261204231355_old_1a2b';
  const newer = '20261205080000_newer_3c4d';
  const newest = '20261205093000_newest_5e6f';
  const cases: [string, ReadonlySet<string> | null, string[], string][] = [
    ['the first answer is what was there already', null, [old, newer], ''],
    ['nothing new', new Set([old, newer]), [old, newer], ''],
    ['no runs', new Set<string>(), [], ''],
    ['one new run', new Set([old]), [old, newer], newer],
    ['the newest of several new runs, whatever their order', new Set([old]), [newest, old, newer], newest],
    ['a run that went away is no new run', new Set([old, newer]), [newer], ''],
    ['an old id not seen before, the newest seen already', new Set([newest]), [old, newest], old]
  ];
  for (const [what, known, ids, expected] of cases) {
    test(`${what}: '${expected}'`, () => {
      assert.equal(newestNewRun(known, ids), expected);
    });
  }
});

describe('the run list cells', () => {
  const nodes = { total: 8, done: 3, failed: 1, running: 2 };
  const best = { name: 'accuracy', value: 0.93, node_id: 'node_7' };
  const cases: [string, () => string, string][] = [
    ['nodesText: done/failed/running/total', () => nodesText(nodes), '3/1/2/8'],
    ['nodesText: nothing yet', () => nodesText({ total: 0, done: 0, failed: 0, running: 0 }), '0/0/0/0'],
    ['bestText: metric, value and node', () => bestText(best), 'accuracy 0.93 (node_7)'],
    ['bestText: none yet', () => bestText(null), '–'],
    ['bestShort: metric and value', () => bestShort(best), 'accuracy 0.93'],
    ['bestShort: none yet', () => bestShort(null), '–'],
    ['bestShort: a negative value', () => bestShort({ ...best, value: -1.5 }), 'accuracy -1.5']
  ];
  for (const [what, call, expected] of cases) {
    test(`${what} = '${expected}'`, () => {
      assert.equal(call(), expected);
    });
  }
});

describe('breakableId: a line-break opportunity after each _', () => {
  const wbr = { tag: 'wbr' };
  const cases: [string, unknown[]][] = [
    ['plain', ['plain']],
    ['', ['']],
    ['20261204231355_experiment_5e13e118', ['20261204231355_', wbr, 'experiment_', wbr, '5e13e118']],
    ['a__b', ['a_', wbr, '_', wbr, 'b']],
    ['trailing_', ['trailing_']],
    ['_leading', ['_', wbr, 'leading']],
    ['with-dash.and.dots', ['with-dash.and.dots']]
  ];
  for (const [id, expected] of cases) {
    test(`breakableId('${id}') = ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(withFakeDocument(() => breakableId(id)), expected);
    });
  }
});

describe('startedAt: when a run started, from its id', () => {
  const cases: [string, string][] = [
    ['20261204231355_experiment_5e13e118', '2026-12-04 23:13'],
    ['20260101000000_x', '2026-01-01 00:00'],
    ['20261204231355', '20261204231355'], // no slug: not a run id
    ['2026120423135_x', '2026120423135_x'], // 13 digits
    ['my_run', 'my_run'],
    ['', '']
  ];
  for (const [id, expected] of cases) {
    test(`startedAt('${id}') = '${expected}'`, () => {
      assert.equal(startedAt(id), expected);
    });
  }
});

describe('severityText and phaseText: words through the translation, unknown ones as they are', () => {
  const cases: [string, () => string, string][] = [
    ['severityText error', () => severityText(marked, 'error'), '⟨error⟩'],
    ['severityText warning', () => severityText(marked, 'warning'), '⟨warning⟩'],
    ['severityText info', () => severityText(marked, 'info'), '⟨info⟩'],
    ['severityText unknown', () => severityText(marked, 'fatal'), 'fatal'],
    ['phaseText unknown', () => phaseText(marked, 'paused'), 'paused'],
    ['phaseText empty', () => phaseText(marked, ''), '']
  ];
  for (const phase of ['not-started', 'starting', 'exploring', 'paper', 'reproduce', 'finished', 'failed', 'interrupted']) {
    // the words are English phrases (ARI-jupyter's own word `not-started` reads "not started")
    const words = phase === 'not-started' ? 'not started' : phase;
    cases.push([`phaseText ${phase}`, () => phaseText(marked, phase), `⟨${words}⟩`]);
  }
  for (const [what, call, expected] of cases) {
    test(`${what} = '${expected}'`, () => {
      assert.equal(call(), expected);
    });
  }
});

describe('wizardNotebookName: the notebook that reopens or clones a run', () => {
  const cases: [string, boolean, string][] = [
    ['20261204231355_experiment_5e13e118', false, 'reopen-20261204231355_experiment_5e13e118.ipynb'],
    ['20261204231355_experiment_5e13e118', true, 'clone-20261204231355_experiment_5e13e118.ipynb'],
    ['x.y-z', true, 'clone-x.y-z.ipynb'],
    ['a b/c:d', false, 'reopen-a_b_c_d.ipynb'],
    ['../up', false, 'reopen-.._up.ipynb'],
    ['実験', false, 'reopen-__.ipynb']
  ];
  for (const [runId, clone, expected] of cases) {
    test(`wizardNotebookName('${runId}', ${clone ? 'clone' : 'reopen'}) = '${expected}'`, () => {
      assert.equal(wizardNotebookName(runId, clone), expected);
    });
  }
});

describe('wizardSource: the notebook cell that reopens or clones a checkpoint', () => {
  const cases: [string, boolean, string][] = [
    [
      '/work/ws/checkpoints/20261204231355_exp',
      false,
      'from ari_jupyter import Wizard\nWizard.from_checkpoint("/work/ws/checkpoints/20261204231355_exp")'
    ],
    [
      '/work/ws/checkpoints/20261204231355_exp',
      true,
      'from ari_jupyter import Wizard\nfrom ari_jupyter.runs.reopen import clone_state\n' +
        'Wizard(state=clone_state("/work/ws/checkpoints/20261204231355_exp"))'
    ],
    ['/w/a "quoted" \\ dir', false, 'from ari_jupyter import Wizard\nWizard.from_checkpoint("/w/a \\"quoted\\" \\\\ dir")'],
    ['/w/line\nbreak', false, 'from ari_jupyter import Wizard\nWizard.from_checkpoint("/w/line\\nbreak")']
  ];
  for (const [path, clone, expected] of cases) {
    test(`wizardSource(${JSON.stringify(path)}, ${clone ? 'clone' : 'reopen'}) = ${JSON.stringify(expected)}`, () => {
      assert.equal(wizardSource(path, clone), expected);
    });
  }

  const python = spawnSync('python3', ['-c', 'pass']).status === 0;
  test('Python reads back each path the cell names', { skip: python ? false : 'no python3' }, () => {
    const paths = ['/plain/path', '/w/a "quoted" \\ dir', "/w/it's", '/w/tab\there\nline', '/w/日本語 ü €', '/w/\u2028sep'];
    const cells = paths.map(p => wizardSource(p, false));
    const read = spawnSync(
      'python3',
      [
        '-c',
        'import ast, json, sys\n' +
          'cells = json.load(sys.stdin)\n' +
          'print(json.dumps([ast.literal_eval(c.split("from_checkpoint(", 1)[1][:-1]) for c in cells]))'
      ],
      { input: JSON.stringify(cells), encoding: 'utf-8' }
    );
    assert.equal(read.status, 0, read.stderr);
    assert.deepEqual(JSON.parse(read.stdout), paths);
  });
});

describe('isActiveJobState: a job still queued or running (Cancel is offered)', () => {
  const cases: [string, boolean][] = [
    ['RUNNING', true],
    ['PENDING', true],
    ['PENDING (Resources)', true],
    ['COMPLETING', true],
    ['STAGE_OUT', true],
    ['COMPLETED', false],
    ['CANCELLED by 0', false],
    ['FAILED', false],
    ['running', false],
    ['', false]
  ];
  for (const [state, expected] of cases) {
    test(`isActiveJobState('${state}') = ${expected}`, () => {
      assert.equal(isActiveJobState(state), expected);
    });
  }
});

describe('cancellable: Cancel is offered for an active job, never for a recorded one', () => {
  test('a running job from squeue can be cancelled', () => {
    assert.equal(cancellable({ state: 'RUNNING', source: 'squeue' }), true);
    assert.equal(cancellable({ state: 'PENDING (Resources)' }), true);
  });
  test("a demo site's recorded job, last seen running, cannot", () => {
    assert.equal(cancellable({ state: 'RUNNING', source: 'recording' }), false);
  });
  test('a finished job cannot', () => {
    assert.equal(cancellable({ state: 'COMPLETED', source: 'sacct' }), false);
  });
});

describe('the run list: which run to follow, names shown twice, job counts', () => {
  const run = (run_id: string, phase: string, title = ''): Pick<IRunRow, 'run_id' | 'phase' | 'title'> => ({
    run_id,
    phase,
    title
  });
  const activeCases: [string, ReturnType<typeof run>[], string | undefined][] = [
    ['the first active one', [run('a', 'finished'), run('b', 'exploring'), run('c', 'paper')], 'b'],
    ['starting counts', [run('a', 'starting')], 'a'],
    ['reproduce counts', [run('a', 'failed'), run('b', 'reproduce')], 'b'],
    ['not started is not active', [run('a', 'not-started'), run('b', 'interrupted')], undefined],
    ['no runs', [], undefined]
  ];
  for (const [what, runs, expected] of activeCases) {
    test(`activeRun: ${what} = ${expected ?? 'none'}`, () => {
      assert.equal(activeRun(runs)?.run_id, expected);
    });
  }

  const sharedCases: [string, ReturnType<typeof run>[], string[]][] = [
    ['all different', [run('1', 'x', 'A'), run('2', 'x', 'B')], []],
    ['one title twice', [run('1', 'x', 'A'), run('2', 'x', 'B'), run('3', 'x', 'A')], ['A']],
    ['one title three times', [run('1', 'x', 'A'), run('2', 'x', 'A'), run('3', 'x', 'A')], ['A']],
    ['an untitled run named as another run is titled', [run('x', 'x'), run('2', 'x', 'x')], ['x']],
    ['untitled runs go by their ids', [run('p', 'x'), run('q', 'x')], []]
  ];
  for (const [what, runs, expected] of sharedCases) {
    test(`sharedTitles: ${what} = ${JSON.stringify(expected)}`, () => {
      assert.deepEqual([...sharedTitles(runs)].sort(), expected);
    });
  }

  const labelCases: [ReturnType<typeof run>, string][] = [
    [run('20261204231355_x', 'x', 'My run'), 'My run'],
    [run('20261204231355_x', 'x', ''), '20261204231355_x']
  ];
  for (const [r, expected] of labelCases) {
    test(`runLabel(title '${r.title}', id '${r.run_id}') = '${expected}'`, () => {
      assert.equal(runLabel(r), expected);
    });
  }

  const schedulerCases: [string, boolean][] = [
    ['slurm', true],
    ['absent', false],
    ['error', false]
  ];
  for (const [scheduler, expected] of schedulerCases) {
    test(`jobCountsKnown('${scheduler}') = ${expected}`, () => {
      assert.equal(jobCountsKnown(scheduler), expected);
    });
  }
});

describe('the run-phase status item', () => {
  const cases: [string, () => string, string][] = [
    ['runPhaseText with a stage', () => runPhaseText(marked, { phase: 'exploring', stage: 'stage 2' }), '⟨ARI run: ⟨exploring⟩⟩ · stage 2'],
    ['runPhaseText without a stage', () => runPhaseText(marked, { phase: 'finished', stage: '' }), '⟨ARI run: ⟨finished⟩⟩'],
    ['runPhaseText of an unknown phase', () => runPhaseText(marked, { phase: 'paused', stage: '' }), '⟨ARI run: paused⟩'],
    ['runPhaseText in English', () => runPhaseText(english, { phase: 'not-started', stage: '' }), 'ARI run: not started'],
    ['runPhaseTitle with a title', () => runPhaseTitle({ title: 'My run', run_id: '2026_x' }), 'My run\n2026_x'],
    ['runPhaseTitle without a title', () => runPhaseTitle({ title: '', run_id: '2026_x' }), '2026_x\n2026_x']
  ];
  for (const [what, call, expected] of cases) {
    test(`${what} = ${JSON.stringify(expected)}`, () => {
      assert.equal(call(), expected);
    });
  }
});

describe('workspacesText: the line above the run list', () => {
  const cases: [string, { workspace: string; workspaces: string[]; missing_workspaces?: string[] }, boolean, string][] = [
    ['one workspace', { workspace: '/w/ws', workspaces: ['/w/ws'] }, false, 'Workspace: /w/ws'],
    ['no list of workspaces', { workspace: '/w/ws', workspaces: [] }, false, 'Workspace: /w/ws'],
    ['one that does not exist here', { workspace: '/w/ws', workspaces: ['/w/ws'], missing_workspaces: ['/w/ws'] }, false, 'Workspace: /w/ws (does not exist here)'],
    ['several', { workspace: '/w/a', workspaces: ['/w/a', '/w/b'] }, true, 'Runs of 2 workspaces, each under its own heading'],
    [
      'several, the last not on this machine',
      { workspace: '/w/a', workspaces: ['/w/a', '/w/b', '/gone'], missing_workspaces: ['/gone'] },
      true,
      'Runs of 3 workspaces, each under its own heading'
    ]
  ];
  for (const [what, list, several, expected] of cases) {
    test(`${what}: '${expected}'`, () => {
      assert.equal(workspacesText(english, list), expected);
    });
    test(`${what}: severalWorkspaces = ${several}`, () => {
      assert.equal(severalWorkspaces(list), several);
    });
  }
  test("the words go through the translation: '⟨Workspace: ⟨/x (does not exist here)⟩⟩'", () => {
    assert.equal(
      workspacesText(marked, { workspace: '/x', workspaces: ['/x'], missing_workspaces: ['/x'] }),
      '⟨Workspace: ⟨/x (does not exist here)⟩⟩'
    );
  });
  test("a group's heading marks a workspace not on this machine", () => {
    const list = { missing_workspaces: ['/gone'] };
    assert.equal(workspaceName(english, list, '/gone'), '/gone (does not exist here)');
    assert.equal(workspaceName(english, list, '/w/a'), '/w/a');
  });
});

describe('groupByWorkspace: the runs under each workspace, in the list order', () => {
  const run = (id: string, workspace: string) => ({ run_id: id, workspace });
  test('each run under its workspace, an empty workspace kept, an unlisted one last', () => {
    const groups = groupByWorkspace(['/a', '/b', '/c'], [run('1', '/b'), run('2', '/a'), run('3', '/b'), run('4', '/z')]);
    assert.deepEqual(
      groups.map(([w, runs]) => [w, runs.map(r => r.run_id)]),
      [['/a', ['2']], ['/b', ['1', '3']], ['/c', []], ['/z', ['4']]]
    );
  });
  test('no workspaces listed: the runs make the groups', () => {
    assert.deepEqual(groupByWorkspace([], [run('1', '/a')]).map(([w]) => w), ['/a']);
  });
});

describe("firstFreeName: a run's notebook name no file of the folder has", () => {
  const name = 'reopen-20261204231355_exp.ipynb';
  const numbered = (n: number) => `reopen-20261204231355_exp-${n}.ipynb`;
  const upTo = (n: number) => [name, ...Array.from({ length: n - 1 }, (_, i) => numbered(i + 2))];
  const cases: [string, string, string[], number | undefined, string][] = [
    ['free', name, [], undefined, name],
    ['other files only', name, ['Untitled.ipynb', 'reopen-other.ipynb'], undefined, name],
    ['taken once', name, [name], undefined, numbered(2)],
    ['taken up to -3', name, upTo(3), undefined, numbered(4)],
    ['a gap is used', name, [name, numbered(3)], undefined, numbered(2)],
    ['-50 is the last tried', name, upTo(49), undefined, numbered(50)],
    ['all 50 taken', name, upTo(50), undefined, ''],
    ['a smaller limit', name, upTo(2), 2, ''],
    ['a name without .ipynb', 'notes', ['notes'], undefined, 'notes-2.ipynb']
  ];
  for (const [what, given, taken, most, expected] of cases) {
    test(`${what}: '${expected}'`, () => {
      assert.equal(firstFreeName(given, new Set(taken), most), expected);
    });
  }
});


describe('the envelope: a job outside what the user approved, and the cancel its finding offers', () => {
  const jobs: Pick<IJob, 'job_id' | 'state' | 'outside'>[] = [
    { job_id: '41', state: 'RUNNING', outside: [] },
    { job_id: '42', state: 'PENDING (Resources)', outside: [{ what: 'nodes', asked: '3', approved: '2' }] },
    { job_id: '43', state: 'TIMEOUT', outside: [{ what: 'nodes', asked: '3', approved: '2' }] }
  ];
  const cases: [string, { rule: string; params?: Record<string, unknown> }, string | undefined][] = [
    ['the flagged active job', { rule: OUTSIDE_ENVELOPE_RULE, params: { job: '42' } }, '42'],
    ['a flagged job that ended: nothing to cancel', { rule: OUTSIDE_ENVELOPE_RULE, params: { job: '43' } }, undefined],
    ['a job not of this run', { rule: OUTSIDE_ENVELOPE_RULE, params: { job: '99' } }, undefined],
    ['no job named', { rule: OUTSIDE_ENVELOPE_RULE }, undefined],
    ['another finding naming a job', { rule: 'run-time-limit', params: { job: '41' } }, undefined]
  ];
  for (const [name, finding, expected] of cases) {
    test(name, () => assert.equal(jobToCancel(finding, jobs)?.job_id, expected));
  }
  test('outside or not', () => {
    assert.deepEqual(jobs.map(isOutsideEnvelope), [false, true, true]);
    assert.equal(isOutsideEnvelope({}), false); // an older answer without the field
  });
});

describe('codePieces: a finding cut at its code spans', () => {
  const cases: [string, string, { code: boolean; text: string }[]][] = [
    ['no span', 'nothing to mark', [{ code: false, text: 'nothing to mark' }]],
    [
      'a command in a sentence',
      'Run `ari resume /w/c` in a new allocation',
      [
        { code: false, text: 'Run ' },
        { code: true, text: 'ari resume /w/c' },
        { code: false, text: ' in a new allocation' }
      ]
    ],
    [
      'two commands, one at the start',
      '`a` then `b c`',
      [
        { code: true, text: 'a' },
        { code: false, text: ' then ' },
        { code: true, text: 'b c' }
      ]
    ],
    ['an empty span stays text', 'empty `` span', [{ code: false, text: 'empty `` span' }]]
  ];
  for (const [name, text, pieces] of cases) {
    test(name, () => {
      assert.deepEqual(codePieces(text), pieces);
    });
  }
});
