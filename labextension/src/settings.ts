import { ISettingRegistry } from '@jupyterlab/settingregistry';

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
