import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { TranslationBundle } from '@jupyterlab/translation';

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

export function readSettings(
  settings: ISettingRegistry.ISettings | null
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

/** The schema keys whose values a person reads in the Settings Editor. */
const READ_KEYS = ['title', 'description', 'jupyter.lab.setting-icon-label'];

type Words = { [key: string]: unknown };

function translateWords(node: Words, trans: TranslationBundle): Words {
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
 * The plugin with its schema in the user's language (Settings Editor: its name, each
 * setting's title and description, each choice's title). JupyterLab's server translates a
 * schema only from catalogues inside a language pack, never from an extension's own, so the
 * plugin translates it when the registry fetches it (schema/plugin.json sets
 * "jupyter.lab.transform"). Only words change: keys, types and defaults stay as they are.
 */
export function translatedPlugin(
  plugin: ISettingRegistry.IPlugin,
  trans: TranslationBundle
): ISettingRegistry.IPlugin {
  const schema = translateWords(plugin.schema as Words, trans);
  const properties: Words = {};
  for (const [key, value] of Object.entries(plugin.schema.properties ?? {})) {
    const property = translateWords(value as Words, trans);
    const choices = (value as Words).oneOf;
    if (Array.isArray(choices)) {
      property.oneOf = choices.map(choice => translateWords(choice as Words, trans));
    }
    properties[key] = property;
  }
  schema.properties = properties;
  return { ...plugin, schema: schema as ISettingRegistry.ISchema };
}
