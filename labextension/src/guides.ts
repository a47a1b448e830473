import { JupyterFrontEnd } from '@jupyterlab/application';
import { PageConfig, URLExt } from '@jupyterlab/coreutils';
import { TranslationBundle } from '@jupyterlab/translation';

/**
 * The user guides shipped with ari-jupyter, as the server extension shows them
 * (`<base_url>ari-jupyter/guides/<name>?lang=<lang>`: the translation where there is one).
 * The Help menu lists them (schema/plugin.json, "jupyter.lab.menus").
 */
export function guideUrl(guide: string, lang: string): string {
  const url = URLExt.join(PageConfig.getBaseUrl(), 'ari-jupyter', 'guides', guide);
  return lang ? `${url}?lang=${encodeURIComponent(lang)}` : url;
}

/** Add the command that opens guide `args.guide` in a new browser tab, in the wizard's language. */
export function addGuideCommand(
  app: JupyterFrontEnd,
  id: string,
  trans: TranslationBundle,
  lang: () => string
): void {
  const labels: Record<string, string> = {
    wizard: trans.__('ARI guide: the setup wizard'),
    runs: trans.__('ARI guide: following a run (Runs panel)'),
    teaching: trans.__('ARI guide: teaching with the lessons')
  };
  app.commands.addCommand(id, {
    label: args => labels[String(args['guide'] ?? 'wizard')] ?? labels.wizard,
    caption: trans.__('Open this guide, shipped with ari-jupyter, in a new browser tab'),
    execute: args => {
      const guide = String(args['guide'] ?? 'wizard');
      window.open(guideUrl(guide in labels ? guide : 'wizard', lang()), '_blank', 'noopener');
    }
  });
}
