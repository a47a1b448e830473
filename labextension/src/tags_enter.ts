/**
 * Enter adds the typed entry in the wizard's tag boxes (Metrics, Modules), and an entry the
 * wizard refuses comes back into the box to be corrected.
 *
 * ipywidgets' TagsInput adds an entry on the input's `change` event, which a browser fires on
 * Enter as the key's default action; inside a JupyterLab notebook that default action does not
 * happen (the key reaches JupyterLab's own key handling first), so the entry was only added when
 * the box lost the focus, while its placeholder says "then Enter". This listener, in the
 * capturing phase and only for those boxes, fires the `change` the widget waits for.
 *
 * The widget empties its box as it adds the entry; the kernel then judges it and, for a module
 * the site does not offer, takes it out again and says why (an element with the class
 * `ari-module-refused` whose `data-typed` is the entry). Without help the user would type the
 * whole name again to fix one letter: the entry is put back in the box, selected, when that
 * refusal arrives and the box is still empty.
 */

/** How long a refusal of the entry just added is waited for (the kernel answers in ms). */
const REFUSAL_WAIT_MS = 10_000;

export function enterAddsTags(root: Document = document): () => void {
  const onKeydown = (event: KeyboardEvent): void => {
    const target = event.target;
    if (
      event.key !== 'Enter' ||
      event.isComposing || // an IME (Japanese, Chinese) confirming its text, not a submit
      !(target instanceof HTMLInputElement) ||
      !target.closest('.ari-wizard .jupyter-widget-tagsinput') ||
      !target.value.trim()
    ) {
      return;
    }
    event.preventDefault();
    const wizard = target.closest('.ari-wizard');
    const typed = target.value;
    target.dispatchEvent(new Event('change', { bubbles: true }));
    if (wizard) {
      restoreWhenRefused(wizard, target, typed);
    }
  };
  root.addEventListener('keydown', onKeydown, true);
  return () => root.removeEventListener('keydown', onKeydown, true);
}

/** Put `typed` back into `input` once the wizard refuses it (see the module's doc). */
function restoreWhenRefused(
  wizard: Element,
  input: HTMLInputElement,
  typed: string
): void {
  const refused = (): boolean =>
    Array.from(wizard.querySelectorAll('.ari-module-refused')).some(
      element => element.getAttribute('data-typed') === typed
    );
  const observer = new MutationObserver(() => {
    if (!refused()) {
      return;
    }
    stop();
    if (input.isConnected && input.value === '') {
      input.value = typed;
      input.select();
    }
  });
  const timer = window.setTimeout(() => stop(), REFUSAL_WAIT_MS);
  const stop = (): void => {
    observer.disconnect();
    window.clearTimeout(timer);
  };
  observer.observe(wizard, { childList: true, subtree: true });
}
