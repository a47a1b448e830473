"""JupyterLab in Debian's Chromium: launcher card, terminal hand-off, comm, status bar.

The server is a real ``jupyter lab`` on 127.0.0.1 with a token and hermetic config dirs
(``jupyter_process.start_jupyter``); a stand-in ``ari`` on its PATH records argv and env.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from .conftest import assert_no_console_errors
from .jupyter_process import LABEXTENSION_NAME
from .lab_helpers import (LAUNCHER_CARD, NOTEBOOK_NAME, PACKAGED_NOTEBOOK, STATUS_ITEM,
                          WIDGET_OUTPUT, current_notebook_path, execute_command,
                          execute_command_error, focus_visible_terminal, open_lab,
                          visible_terminal_text, wait_saved_with_outputs,
                          wait_terminal_contains)

pytestmark = pytest.mark.e2e

OPEN_TERMINAL = "ari-jupyter:open-terminal"
TRACEBACK = f"{WIDGET_OUTPUT}[data-mime-type='application/vnd.jupyter.stderr']"


def test_labextension_is_listed_enabled_and_ok(lab):
    """What the running lab sees: the pip-installed copy, or the staged build when editable."""
    env = {"JUPYTER_DATA_DIR": str(lab.root_dir.parent / "data"),
           "JUPYTER_CONFIG_DIR": str(lab.root_dir.parent / "config"), "NO_COLOR": "1"}
    listing = subprocess.run([sys.executable, "-m", "jupyterlab.labextensions", "list"],
                             env={**os.environ, **env}, capture_output=True, text=True,
                             timeout=60)
    lines = [line for line in (listing.stdout + listing.stderr).splitlines()
             if LABEXTENSION_NAME in line]
    assert lines, listing.stdout + listing.stderr
    assert "enabled" in lines[0] and "OK" in lines[0], lines[0]


def _files(folder) -> list[str]:
    """What a user sees in ``folder`` (JupyterLab's own checkpoint folder aside)."""
    # ".~<name>": jupyter_server's copy while it saves a notebook atomically, there for a moment
    return sorted(p.name for p in folder.iterdir()
                  if p.name != ".ipynb_checkpoints" and not p.name.startswith(".~"))


def test_launcher_card_opens_the_explained_wizard_notebook(lab, page):
    """Outside the reach of the workspace (HOME is beside the root here) the card uses the
    browsed folder: the packaged notebook with its explanations, once, never Untitled.ipynb."""
    project = lab.root_dir / "project"
    project.mkdir(exist_ok=True)
    open_lab(page, lab, tree="project")
    assert "ari-jupyter extension activated" in page.console_log.texts()

    page.click(LAUNCHER_CARD)
    # The widget, or a traceback (fail fast with the error text instead of a timeout).
    page.wait_for_selector(f"{WIDGET_OUTPUT} .jupyter-widgets, {TRACEBACK}", timeout=60_000)
    tracebacks = page.locator(TRACEBACK)
    assert tracebacks.count() == 0, tracebacks.first.inner_text()[-3000:]
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-NotebookPanel .jp-OutputArea-output "
        ".jupyter-widgets').length >= 3", timeout=30_000)
    output = page.locator(WIDGET_OUTPUT).first.inner_text()
    assert "Loading widget" not in output
    assert "Error displaying widget" not in output
    assert current_notebook_path(page) == f"project/{NOTEBOOK_NAME}"
    explanation = page.locator(".jp-NotebookPanel:visible .jp-MarkdownCell").first.inner_text()
    assert "This notebook prepares a multi-node" in explanation, explanation

    saved = wait_saved_with_outputs(project / NOTEBOOK_NAME)
    packaged = json.loads(PACKAGED_NOTEBOOK.read_text())["cells"]
    assert [c["source"] for c in saved["cells"]] == [c["source"] for c in packaged]
    assert _files(project) == [NOTEBOOK_NAME]
    assert not list(lab.root_dir.glob("*.ipynb")), "the notebook belongs in the browsed folder"

    # Once more (the card's command, as the launcher runs it): the same file, no copy.
    execute_command(page, "ari-jupyter:multi-node-setup", {"cwd": "project"})
    assert current_notebook_path(page) == f"project/{NOTEBOOK_NAME}"
    assert _files(project) == [NOTEBOOK_NAME]
    assert_no_console_errors(page)


def test_open_terminal_types_without_enter_unless_run_is_true(lab, page):
    workdir = lab.root_dir / "handoff dir"
    workdir.mkdir(exist_ok=True)
    open_lab(page, lab)

    name = execute_command(page, OPEN_TERMINAL,
                           {"command": "echo ARI_TYPED_$((6*7))", "cwd": str(workdir)})
    assert name
    wait_terminal_contains(page, "echo ARI_TYPED_$((6*7))")
    time.sleep(1.5)
    assert "ARI_TYPED_42" not in visible_terminal_text(page), "Enter was pressed without run"

    # Anything but the boolean true types only.
    execute_command(page, OPEN_TERMINAL, {"command": "echo ARI_STR_$((6*7))", "run": "true"})
    wait_terminal_contains(page, "echo ARI_STR_$((6*7))")
    time.sleep(1.5)
    assert "ARI_STR_42" not in visible_terminal_text(page)

    execute_command(page, OPEN_TERMINAL, {"command": 'echo "ARI_CWD=$(pwd)"',
                                          "cwd": str(workdir), "run": True})
    wait_terminal_contains(page, f"ARI_CWD={workdir}")
    assert_no_console_errors(page)


def _terminal_tabs(page) -> int:
    return page.evaluate("""() => [...window.jupyterapp.shell.widgets('main')]
        .filter(w => w.hasClass('jp-TerminalPanel') || (w.content && w.content.hasClass
        && w.content.hasClass('jp-Terminal'))).length""")


def test_open_terminal_again_reuses_its_terminal_while_the_shell_is_idle(lab, page):
    """Each "Open in terminal" typed into a new terminal; now the one it opened for that
    folder is used again, the earlier words cleared, unless a command runs there."""
    workdir = lab.root_dir / "reuse dir"
    workdir.mkdir(exist_ok=True)
    open_lab(page, lab)
    first = execute_command(page, OPEN_TERMINAL, {"command": "echo REUSE_ONE", "cwd": str(workdir)})
    wait_terminal_contains(page, "echo REUSE_ONE")
    tabs = _terminal_tabs(page)
    again = execute_command(page, OPEN_TERMINAL, {"command": 'echo "REUSE_$((6*7))"',
                                                  "cwd": str(workdir), "run": True})
    assert again == first
    assert _terminal_tabs(page) == tabs
    wait_terminal_contains(page, "REUSE_42")
    assert "REUSE_ONEecho" not in visible_terminal_text(page).replace(" ", "")

    # a command holds that terminal now: the next hand-off gets a terminal of its own
    execute_command(page, OPEN_TERMINAL, {"command": "sleep 60", "cwd": str(workdir), "run": True})
    time.sleep(1.0)
    busy = execute_command(page, OPEN_TERMINAL, {"command": "echo REUSE_NEW", "cwd": str(workdir)})
    assert busy != first
    assert _terminal_tabs(page) == tabs + 1
    assert_no_console_errors(page)


@pytest.mark.parametrize("lang, file, heading", [
    ("en", "wizard.md", "Partition &amp; profile"),
    ("ja", "wizard.ja.md", "パーティションとプロファイル"),
])
def test_the_help_menu_opens_the_shipped_guide_in_the_wizard_language(lab, page, lang, file,
                                                                       heading):
    open_lab(page, lab)
    page.evaluate("""async (lang) => { await window.jupyterapp.restored;
        await window.jupyterapp.serviceManager.settings.save('ari-jupyter-labextension:plugin',
            JSON.stringify({wizardLanguage: lang})); }""", lang)  # Settings > ARI, as a user sets it
    page.reload()
    open_lab(page, lab)
    page.locator(".lm-MenuBar-itemLabel", has_text="Help").click()
    with page.context.expect_page() as opened:
        page.locator(".lm-Menu-itemLabel", has_text="ARI guide: the setup wizard").click()
    guide = opened.value
    guide.wait_for_load_state()
    assert guide.url.split("?")[0].endswith(f"/ari-jupyter/guides/{file}")
    assert heading in guide.content()
    guide.close()
    assert_no_console_errors(page)


@pytest.mark.parametrize("command", ["echo one\necho two", "echo one\rx", "printf \x1b[2J",
                                     "", "   "])
def test_open_terminal_refuses_multi_line_or_control_characters(lab, page, command):
    open_lab(page, lab)
    error = execute_command_error(page, OPEN_TERMINAL, {"command": command})
    assert error and ("single line" in error or "non-empty" in error), error
    assert page.locator(".jp-Terminal").count() == 0
    assert_no_console_errors(page)


def run_cell(page, panel_id: str, index: int, source: str) -> str:
    """Put ``source`` into cell ``index`` of notebook ``panel_id``, run it, return its text output.

    Reads the output model, not the DOM: the cell may open a terminal that hides the notebook.
    """
    return page.evaluate(
        """async ([panelId, index, source]) => {
             const app = window.jupyterapp;
             const panel = [...app.shell.widgets('main')].find(w => w.id === panelId);
             app.shell.activateById(panelId);
             await new Promise(resolve => setTimeout(resolve, 200));
             const model = panel.content.model;
             while (model.cells.length <= index) {
               model.sharedModel.insertCell(model.cells.length, {cell_type: 'code', source: ''});
             }
             model.cells.get(index).sharedModel.setSource(source);
             panel.content.activeCellIndex = index;
             await app.commands.execute('notebook:run-cell');
             const outputs = model.cells.get(index).outputs.toJSON();
             return outputs.map(o => o.text ?? (o.data && o.data['text/plain']) ??
                                     (o.traceback ? o.traceback.join('\\n') : '')).join('');
           }""", [panel_id, index, source])


def test_kernel_comm_opens_a_terminal_and_gets_the_reply(lab, page):
    """The wizard's "Open in terminal" path, driven by the kernel-side bridge itself."""
    workdir = lab.root_dir / "comm"
    workdir.mkdir(exist_ok=True)
    open_lab(page, lab)
    execute_command(page, "notebook:create-new", {"kernelName": "python3", "cwd": ""})
    page.wait_for_selector(".jp-NotebookPanel:visible .jp-Notebook")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext"
                           ".session?.kernel?.status === 'idle'", timeout=60_000)
    notebook_id = page.evaluate("() => [...window.jupyterapp.shell.widgets('main')]"
                                ".find(w => w.hasClass('jp-NotebookPanel')).id")
    run_cell(page, notebook_id, 0,
             "from ari_jupyter.widgets.terminal_bridge import TerminalBridge\n"
             "bridge = TerminalBridge(); bridge.connect(); print('connecting')")
    ready = ""
    for _ in range(20):
        ready = run_cell(page, notebook_id, 1, "print('available', bridge.available)")
        if "available True" in ready:
            break
        time.sleep(0.5)
    assert "available True" in ready, "the extension never answered the hello"

    run_cell(page, notebook_id, 2,
             f"print(bridge.open_terminal('echo COMM_$((6*7))', cwd={str(workdir)!r}))")
    wait_terminal_contains(page, "echo COMM_$((6*7))")
    time.sleep(1.0)
    assert "COMM_42" not in visible_terminal_text(page), "Enter was pressed with run=False"
    result = run_cell(page, notebook_id, 3, "print(sorted(bridge.last_result.items()))")
    assert "('ok', True)" in result and "('terminal'," in result, result

    run_cell(page, notebook_id, 4, "print(bridge.open_terminal('echo \"COMM_CWD=$(pwd)\"', "
                                   f"cwd={str(workdir)!r}, run=True))")
    wait_terminal_contains(page, f"COMM_CWD={workdir}")
    assert_no_console_errors(page)


def test_status_bar_item_is_hidden_outside_an_allocation(lab, page):
    with page.expect_response(lambda r: "/ari-jupyter/allocation" in r.url) as response:
        open_lab(page, lab)
    assert response.value.status == 200
    assert json.loads(response.value.body())["allocation"]["inside_allocation"] is False
    page.wait_for_timeout(500)
    assert page.locator(f"{STATUS_ITEM}:visible").count() == 0
    assert_no_console_errors(page)


def run_from_palette(page, label: str) -> None:
    page.keyboard.press("Control+Shift+C")
    search = page.locator(".lm-CommandPalette-input")
    search.wait_for()
    search.fill(label)
    page.locator(".lm-CommandPalette-item", has_text=label).first.click()


def test_palette_entries_create_the_wizard_here_and_type_into_a_terminal(lab, page):
    folder = lab.root_dir / "from-palette"
    folder.mkdir(exist_ok=True)
    open_lab(page, lab, tree="from-palette")

    run_from_palette(page, "ARI multi-node setup")
    page.wait_for_selector(".jp-NotebookPanel:visible .ari-wizard", timeout=60_000)
    deadline = time.monotonic() + 20
    while not list(folder.glob("*.ipynb")) and time.monotonic() < deadline:
        time.sleep(0.25)
    assert list(folder.glob("*.ipynb")), "the palette must create the notebook in the browsed folder"

    run_from_palette(page, "ARI: type a command into a new terminal")
    dialog_input = page.locator(".jp-Dialog input")
    dialog_input.fill('echo "PALETTE_$((6*7)) $(pwd)"')
    dialog_input.press("Enter")
    wait_terminal_contains(page, 'echo "PALETTE_$((6*7)) $(pwd)"')
    time.sleep(1.5)
    assert "PALETTE_42" not in visible_terminal_text(page), "typed from the palette, not run"
    # The user presses Enter: the shell runs it, in the folder the file browser shows.
    focus_visible_terminal(page)
    page.keyboard.press("Enter")
    wait_terminal_contains(page, f"PALETTE_42 {folder}")
    assert_no_console_errors(page)
