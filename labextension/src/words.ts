/**
 * What the pure modules (runs_text, status_text, settings_values) need of a
 * TranslationBundle: its two lookups. Declared here so those modules import nothing from
 * JupyterLab and run under node alone (their unit tests in ../test); a TranslationBundle is one.
 */
export interface IWords {
  __(msgid: string, ...args: unknown[]): string;
  _n(msgid: string, msgidPlural: string, n: number, ...args: unknown[]): string;
}
