/**
 * Shared by the unit tests of the lab extension's pure modules (src/runs_text.ts,
 * src/status_text.ts, src/terminal_request.ts, src/settings_values.ts).
 *
 * Runner: node's own `node:test` and `node:assert` on the tests compiled by the TypeScript
 * the build already pins (`npm test`: tsc -p test, then node --test). Nothing to add but
 * Node's type declarations (@types/node): no test framework to install or keep up to date,
 * the tests are type-checked like the extension, and the run takes about a second. The pure
 * modules import nothing from JupyterLab, so they run under node without a browser.
 */
import { IWords } from '../src/words';

/**
 * `%1`, `%2`… replaced by the arguments, as JupyterLab's Gettext.strfmt does (`%%` is a
 * percent sign).
 */
export function strfmt(fmt: string, ...args: unknown[]): string {
  return fmt
    .replace(/%%/g, '%% ')
    .replace(/%(\d+)/g, (_, n: string) => String(args[Number(n) - 1]))
    .replace(/%% /g, '%');
}

/** English, as JupyterLab's nullTranslator speaks it (its NullLanguageBundle). */
export const english: IWords = {
  __: (msgid, ...args) => strfmt(msgid, ...args),
  _n: (msgid, plural, n, ...args) => strfmt(n == 1 ? msgid : plural, n, ...args)
};

/**
 * A "translation" that marks each message it is asked for: `⟨name %1⟩` shows that the text
 * went through the bundle, and which msgid it asked for.
 */
export const marked: IWords = {
  __: (msgid, ...args) => `⟨${strfmt(msgid, ...args)}⟩`,
  _n: (msgid, plural, n, ...args) => `⟨${strfmt(n == 1 ? msgid : plural, n, ...args)}⟩`
};

/** Japanese quotes for a code span, the rest English (withoutCodeMarks' full-width case). */
export const japaneseQuotes: IWords = {
  __: (msgid, ...args) => strfmt(msgid === '“%1”' ? '「%1」' : msgid, ...args),
  _n: english._n
};

/** A stand-in for the DOM's `document` where only createElement is used: a node is its tag. */
export function withFakeDocument<T>(body: () => T): T {
  const had = Object.getOwnPropertyDescriptor(globalThis, 'document');
  Object.defineProperty(globalThis, 'document', {
    configurable: true,
    value: { createElement: (tag: string) => ({ tag }) }
  });
  try {
    return body();
  } finally {
    if (had) {
      Object.defineProperty(globalThis, 'document', had);
    } else {
      delete (globalThis as { document?: unknown }).document;
    }
  }
}
