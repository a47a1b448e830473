import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ITerminalRequest, parseTerminalRequest, TerminalRequestError } from '../src/terminal_request';

describe('parseTerminalRequest: what may be typed into a terminal', () => {
  const accepted: [string, unknown, ITerminalRequest][] = [
    ['a command alone', { command: 'ari run /w/x.md' }, { command: 'ari run /w/x.md', cwd: undefined, run: false }],
    ['with a cwd', { command: 'ls', cwd: '/work' }, { command: 'ls', cwd: '/work', run: false }],
    ['a relative cwd', { command: 'ls', cwd: 'sub/dir' }, { command: 'ls', cwd: 'sub/dir', run: false }],
    ['an empty cwd is none', { command: 'ls', cwd: '' }, { command: 'ls', cwd: undefined, run: false }],
    ['a null cwd is none', { command: 'ls', cwd: null }, { command: 'ls', cwd: undefined, run: false }],
    ['run: true presses Enter', { command: 'ls', run: true }, { command: 'ls', cwd: undefined, run: true }],
    ['run: "true" does not', { command: 'ls', run: 'true' }, { command: 'ls', cwd: undefined, run: false }],
    ['run: 1 does not', { command: 'ls', run: 1 }, { command: 'ls', cwd: undefined, run: false }],
    ['run: false does not', { command: 'ls', run: false }, { command: 'ls', cwd: undefined, run: false }],
    ['spaces around are kept', { command: '  ls -l ' }, { command: '  ls -l ', cwd: undefined, run: false }],
    ['non-ASCII text', { command: 'echo 日本語 ü' }, { command: 'echo 日本語 ü', cwd: undefined, run: false }],
    ['4096 characters', { command: 'x'.repeat(4096) }, { command: 'x'.repeat(4096), cwd: undefined, run: false }]
  ];
  for (const [what, data, expected] of accepted) {
    test(`accepted, ${what}: ${JSON.stringify(expected).slice(0, 80)}`, () => {
      assert.deepEqual(parseTerminalRequest(data), expected);
    });
  }

  const refused: [string, unknown, string][] = [
    ['null', null, 'terminal request must be an object'],
    ['a string', 'ari run', 'terminal request must be an object'],
    ['a number', 7, 'terminal request must be an object'],
    ['no command', {}, 'command must be a non-empty string'],
    ['an array', [], 'command must be a non-empty string'],
    ['a blank command', { command: '   ' }, 'command must be a non-empty string'],
    ['a command that is no string', { command: 5 }, 'command must be a non-empty string'],
    ['4097 characters', { command: 'x'.repeat(4097) }, 'command is longer than 4096 characters'],
    ['a newline', { command: 'ls\nrm -rf x' }, 'command must be a single line without control characters'],
    ['a carriage return', { command: 'ls\r' }, 'command must be a single line without control characters'],
    ['a tab', { command: 'ls\t-l' }, 'command must be a single line without control characters'],
    ['an escape sequence', { command: '\u001b[31mred' }, 'command must be a single line without control characters'],
    ['DEL', { command: 'ls\u007f' }, 'command must be a single line without control characters'],
    ['a cwd that is no string', { command: 'ls', cwd: 5 }, 'cwd must be a path string'],
    ['a cwd with a newline', { command: 'ls', cwd: '/a\nb' }, 'cwd must be a path string']
  ];
  for (const [what, data, message] of refused) {
    test(`refused, ${what}: '${message}'`, () => {
      assert.throws(
        () => parseTerminalRequest(data),
        (error: unknown) => error instanceof TerminalRequestError && error.message === message
      );
    });
  }
});
