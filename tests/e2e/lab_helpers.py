"""Small Playwright helpers for JupyterLab pages (selectors in one place)."""
from __future__ import annotations

import json
import time
from pathlib import Path

from ari_jupyter.wizard.notebooks import NOTEBOOK_NAME, packaged_notebook  # noqa: F401 (re-exported)

LAUNCHER_CARD = '.jp-LauncherCard:has-text("ARI multi-node setup")'
WIDGET_OUTPUT = ".jp-NotebookPanel:visible .jp-OutputArea-output"
STATUS_ITEM = ".ari-AllocationStatus"
PACKAGED_NOTEBOOK = packaged_notebook()

VISIBLE_TERMINAL_CONTAINS = """([needle]) => [...document.querySelectorAll(
    '.jp-Terminal .xterm-accessibility-tree')].some(
    el => el.offsetParent !== null && el.textContent.includes(needle))"""


def open_lab(page, lab, tree: str = "") -> None:
    """Load /lab (optionally at a folder) with a fresh workspace and wait for the launcher."""
    path = f"/lab/tree/{tree}" if tree else "/lab"
    page.goto(lab.url(path + "?reset"))
    page.wait_for_selector(LAUNCHER_CARD, timeout=60_000)


# The chain of an element's ancestors with their display, to say which one hid it.
_ANCESTORS = "sel => { const out = []; let e = document.querySelector(sel); while (e) {" \
    " out.push(e.tagName + '#' + e.id + '.' + e.className + ' ' + getComputedStyle(e).display);" \
    " e = e.parentElement; } return out; }"


# Who hid a widget of the shell's left area since the page loaded (installed by
# measure_laid_out): the widget, the time and the caller, for a failure message.
_WATCH_HIDES = """() => { const app = window.jupyterapp; window.__ariHides = window.__ariHides || [];
  for (const w of app.shell.widgets('left')) { for (const t of [w, w.parent]) {
    if (!t || t.__ariWatched) { continue; } t.__ariWatched = true; const hide = t.hide.bind(t);
    t.hide = () => { window.__ariHides.push([t.id || t.node.className, Math.round(performance.now()),
      (new Error().stack || '').split('\\n').slice(2, 8).join(' < ')]); return hide(); }; } } }"""


def measure_laid_out(page, measure: str, selector: str, timeout: float = 15_000):
    """The result of ``measure(element)``, a JS function that returns null until the element is
    on screen, taken in the same turn as its visibility check. Hides of the left area's widgets
    are recorded meanwhile and named when it never comes on screen."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.evaluate(_WATCH_HIDES)
    try:
        handle = page.wait_for_function(
            f"sel => {{ const e = document.querySelector(sel); return e ? ({measure})(e) : null; }}",
            arg=selector, timeout=timeout)
    except PlaywrightTimeout:
        raise AssertionError(f"{selector} is not rendered: {page.evaluate(_ANCESTORS, selector)};"
                             f" hidden by: {page.evaluate('() => window.__ariHides')}") from None
    return handle.json_value()


def visible_terminal_text(page) -> str:
    return page.evaluate("""() => [...document.querySelectorAll(
        '.jp-Terminal .xterm-accessibility-tree')].filter(el => el.offsetParent !== null)
        .map(el => el.textContent).join('\\n')""")


def wait_terminal_contains(page, needle: str, timeout: float = 30_000) -> None:
    page.wait_for_function(VISIBLE_TERMINAL_CONTAINS, arg=[needle], timeout=timeout)


# A command run before JupyterLab has restored its layout can be undone by the restore: a side
# panel it shows is hidden again when the restore activates the file browser.
_AFTER_RESTORE = "const app = window.jupyterapp; await app.restored; "


def execute_command(page, command: str, args: dict | None = None):
    """Run a JupyterLab command through the exposed app (expose_app_in_browser), once the
    layout is restored."""
    return page.evaluate(
        "async ([id, args]) => { " + _AFTER_RESTORE + "const r = await app.commands.execute(id, args);"
        " return typeof r === 'string' ? r : null; }", [command, args or {}])


def execute_command_error(page, command: str, args: dict) -> str | None:
    """The error message a command rejects with, or None when it succeeded."""
    return page.evaluate(
        "async ([id, args]) => { " + _AFTER_RESTORE + "try { await app.commands.execute(id, args); "
        "return null; } catch (e) { return String(e && e.message || e); } }", [command, args])


def wizard_button(page, text: str):
    """A button of the wizard (toggle buttons included) by its visible label."""
    return page.locator(".ari-wizard button", has_text=text).first


def focus_visible_terminal(page) -> None:
    page.locator(".jp-Terminal:visible .xterm").first.click()


def fill_experiment_and_press_write(page, *, title: str, goal: str, metric: str, workspace,
                                    timeout: float = 30_000) -> None:
    """Step 4 as a user fills it (title, goal, one metric, workspace), then press Write once it
    is enabled; what follows (a confirmation, the written block) is the caller's to wait for."""
    wizard_button(page, "Experiment & checkpoint").click()
    page.get_by_label("Title", exact=True).fill(title)
    page.get_by_label("Research goal", exact=True).fill(goal)
    tag = page.locator(".ari-wizard .jupyter-widget-tagsinput .jupyter-widget-tag", has_text=metric)
    if not tag.count():  # the wizard's cell run again in the same kernel keeps the metrics typed
        tag_input = page.locator(".ari-wizard .jupyter-widget-tagsinput input").first
        tag_input.click()
        tag_input.type(metric)
        tag_input.press("Enter")
        # Enter itself adds the metric (the box still has the focus: no blur has added it)
        tag.first.wait_for(timeout=10_000)
        assert page.evaluate("() => document.activeElement?.tagName") == "INPUT"
    workspace_input = page.get_by_label("Workspace", exact=True)
    workspace_input.fill(str(workspace))
    workspace_input.press("Enter")
    page.wait_for_selector(f'.ari-wizard .ari-shared-fs:has-text("{workspace}")')
    write = page.get_by_role("button", name="Write checkpoint")
    write.wait_for()
    page.wait_for_function("(b) => !b.disabled", arg=write.element_handle(), timeout=timeout)
    write.click()


def current_notebook_path(page) -> str:
    """The contents path of the notebook in the main area's current tab."""
    return page.evaluate("() => window.jupyterapp.shell.currentWidget.context.path")


def wait_saved_with_outputs(path: Path, timeout: float = 20) -> dict:
    """The notebook at ``path`` once it was saved with the wizard cell's output."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if path.is_file():
            try:
                last = json.loads(path.read_text())
            except ValueError:  # being written
                last = None
            if last and any(c.get("outputs") for c in last["cells"] if c["cell_type"] == "code"):
                return last
        time.sleep(0.25)
    raise AssertionError(f"{path} was not saved with outputs: {last}")


THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}


def set_theme(page, theme: str, settle_ms: int = 500) -> None:
    """Switch JupyterLab to ``theme`` ("light" or "dark") and wait until it is applied."""
    page.evaluate("(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})",
                  THEMES[theme])
    page.wait_for_function("(light) => document.body.dataset.jpThemeLight === light",
                           arg="true" if theme == "light" else "false", timeout=30_000)
    page.wait_for_timeout(settle_ms)
