import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

/** The modules these tests run under node: each imports only others of this list. */
const PURE = ['payloads', 'runs_text', 'runs_view', 'status_text', 'terminal_request', 'settings_values', 'words', 'visibility'];

/** The extension's sources (the tests run from lib-test/test). */
const SRC = join(__dirname, '..', '..', 'src');

describe('the pure modules import nothing from JupyterLab, Lumino or the DOM-bound modules', () => {
  for (const name of PURE) {
    const source = readFileSync(join(SRC, `${name}.ts`), 'utf-8');
    const imported = [...source.matchAll(/\bfrom\s+'([^']+)'|\bimport\s+'([^']+)'|\brequire\(\s*'([^']+)'/g)].map(
      m => m[1] ?? m[2] ?? m[3]
    );
    test(`${name}.ts imports only ${JSON.stringify(PURE)}: ${JSON.stringify(imported)}`, () => {
      assert.deepEqual(
        imported.filter(spec => !PURE.map(p => `./${p}`).includes(spec)),
        []
      );
    });
  }
});
