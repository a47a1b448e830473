/**
 * The plugin's settings as values: their defaults, reading them, the wizard's language, the
 * schema's words in the user's language. Nothing here imports JupyterLab, so ../test checks it
 * under node alone.
 */
import { IWords } from './words';

/** schema/plugin.json, as the plugin uses it. */
export interface IAriSettings {
  statusBar: boolean;
  refreshInterval: number;
  wizardLanguage: string;
}

export const DEFAULT_SETTINGS: IAriSettings = {
  statusBar: true,
  refreshInterval: 30,
  wizardLanguage: ''
};

/** What readSettings needs of JupyterLab's ISettingRegistry.ISettings. */
export interface ISettingsValues {
  get(key: string): { composite?: unknown };
}

export function readSettings(
  settings: ISettingsValues | null
): IAriSettings {
  if (!settings) {
    return { ...DEFAULT_SETTINGS };
  }
  const get = <T>(key: keyof IAriSettings, fallback: T): T => {
    const value = settings.get(key).composite;
    return value === undefined || value === null ? fallback : (value as T);
  };
  return {
    statusBar: get('statusBar', DEFAULT_SETTINGS.statusBar),
    refreshInterval: get('refreshInterval', DEFAULT_SETTINGS.refreshInterval),
    wizardLanguage: get('wizardLanguage', DEFAULT_SETTINGS.wizardLanguage)
  };
}

/** Languages the wizard speaks. */
export const WIZARD_LANGUAGES = ['en', 'ja', 'zh'];

/**
 * The wizard's language: the setting when one is chosen, else the one of JupyterLab's language
 * `code` (Settings > Language, e.g. "ja-JP" -> "ja"); "" when the wizard does not speak it.
 */
export function wizardLanguageOf(setting: string, code: string): string {
  if (WIZARD_LANGUAGES.includes(setting)) {
    return setting;
  }
  const lang = code.split(/[-_]/)[0].toLowerCase();
  return WIZARD_LANGUAGES.includes(lang) ? lang : '';
}

/** The schema keys whose values a person reads in the Settings Editor. */
const READ_KEYS = ['title', 'description', 'jupyter.lab.setting-icon-label'];

export type Words = { [key: string]: unknown };

function translateWords(node: Words, trans: IWords): Words {
  const out: Words = { ...node };
  for (const key of READ_KEYS) {
    const text = node[key];
    if (typeof text === 'string') {
      out[key] = trans.__(text);
    }
  }
  return out;
}

/**
 * The settings schema in the user's language (Settings Editor: the plugin's name, each
 * setting's title and description, each choice's title). Only words change: keys, types and
 * defaults stay as they are.
 */
export function translatedSchema(schema: Words, trans: IWords): Words {
  const out = translateWords(schema, trans);
  const properties: Words = {};
  for (const [key, value] of Object.entries((schema.properties as Words | undefined) ?? {})) {
    const property = translateWords(value as Words, trans);
    const choices = (value as Words).oneOf;
    if (Array.isArray(choices)) {
      property.oneOf = choices.map(choice => translateWords(choice as Words, trans));
    }
    properties[key] = property;
  }
  out.properties = properties;
  return out;
}
