/**
 * Enter adds the typed entry in the wizard's tag boxes (Metrics, Modules).
 *
 * ipywidgets' TagsInput adds an entry on the input's `change` event, which a browser fires on
 * Enter as the key's default action; inside a JupyterLab notebook that default action does not
 * happen (the key reaches JupyterLab's own key handling first), so the entry was only added when
 * the box lost the focus, while its placeholder says "then Enter". This listener, in the
 * capturing phase and only for those boxes, fires the `change` the widget waits for.
 */
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
    target.dispatchEvent(new Event('change', { bubbles: true }));
  };
  root.addEventListener('keydown', onKeydown, true);
  return () => root.removeEventListener('keydown', onKeydown, true);
}
