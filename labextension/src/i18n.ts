import {
  ITranslator,
  nullTranslator,
  TranslationBundle,
  TranslationManager
} from '@jupyterlab/translation';

import { wizardLanguageOf } from './settings_values';

/** The gettext domain of the extension's strings (ari_jupyter/locale/<lang>/LC_MESSAGES). */
export const DOMAIN = 'ari_jupyter';

export function bundle(translator: ITranslator | null): TranslationBundle {
  return (translator ?? nullTranslator).load(DOMAIN);
}

/**
 * The wizard's language: the setting when one is chosen, else JupyterLab's own
 * (Settings > Language, e.g. "ja-JP" -> "ja"); "" when the wizard does not speak it.
 */
export function wizardLanguage(
  setting: string,
  translator: ITranslator | null
): string {
  const code =
    (translator as { languageCode?: string } | null)?.languageCode ||
    document.documentElement.lang ||
    '';
  return wizardLanguageOf(setting, code);
}

/** JupyterLab's locale of each language pack the wizard's languages come with (setup.cfg). */
const PACK_LOCALES: Record<string, string> = { ja: 'ja_JP', zh: 'zh_CN' };

/**
 * The extension's strings in the wizard language `lang`, whatever JupyterLab's own language:
 * the same translations JupyterLab's server serves it (`api/translations/<locale>`), read
 * through JupyterLab's own TranslationManager. English when `lang` is 'en' or '' or the
 * server cannot answer.
 */
export async function bundleIn(
  lang: string,
  translator: ITranslator | null
): Promise<TranslationBundle> {
  if (lang === wizardLanguage('', translator)) {
    return bundle(translator);
  }
  const locale = PACK_LOCALES[lang];
  if (!locale) {
    return nullTranslator.load(DOMAIN);
  }
  try {
    const manager = new TranslationManager();
    await manager.fetch(locale);
    return manager.load(DOMAIN);
  } catch (reason) {
    console.warn(`ari-jupyter: no ${locale} strings, English instead`, reason);
    return nullTranslator.load(DOMAIN);
  }
}
