import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';

/** The gettext domain of the extension's strings (ari_jupyter/locale/<lang>/LC_MESSAGES). */
export const DOMAIN = 'ari_jupyter';

/** Languages the wizard speaks. */
export const WIZARD_LANGUAGES = ['en', 'ja', 'zh'];

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
  if (WIZARD_LANGUAGES.includes(setting)) {
    return setting;
  }
  const code =
    (translator as { languageCode?: string } | null)?.languageCode ||
    document.documentElement.lang ||
    '';
  const lang = code.split(/[-_]/)[0].toLowerCase();
  return WIZARD_LANGUAGES.includes(lang) ? lang : '';
}
