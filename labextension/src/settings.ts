import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { TranslationBundle } from '@jupyterlab/translation';

import { translatedSchema, Words } from './settings_values';

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
  const schema = translatedSchema(plugin.schema as Words, trans);
  return { ...plugin, schema: schema as ISettingRegistry.ISchema };
}
