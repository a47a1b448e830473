"""The launcher card opens the explained wizard notebook where ``ari-jupyter lab`` keeps it.

The server's root holds a git work tree and the demo workspace (configured below the root, as
when JupyterLab is rooted at the home that holds it). Browsing the work tree and clicking the
card must open the workspace's notebook, with its explanations and a live wizard, and leave the
work tree exactly as it was (``git status`` empty, no Untitled.ipynb anywhere).
"""
from __future__ import annotations

import json
import subprocess

import pytest

from .conftest import LAB_ARGS, LAB_SETTINGS, assert_no_console_errors, lab_env, require_browser
from .jupyter_process import start_jupyter
from .lab_helpers import (LAUNCHER_CARD, NOTEBOOK_NAME, WIDGET_OUTPUT, current_notebook_path,
                          open_lab, wait_saved_with_outputs)

pytestmark = pytest.mark.e2e

TRACEBACK = f"{WIDGET_OUTPUT}[data-mime-type='application/vnd.jupyter.stderr']"


def _git(repo, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True, timeout=30).stdout


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Named ``lab`` so that conftest's ``page`` fixture saves this server's log on failure."""
    require_browser()
    tmp = tmp_path_factory.mktemp("lab-card")
    root = tmp / "root"
    repo = root / "repo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "README.md").write_text("a project\n")
    _git(repo, "add", "README.md")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "init")
    (tmp / "config").mkdir()
    (tmp / "config" / "ari_jupyter_config.json").write_text(json.dumps(
        {"AriWizard": {"demo_workspace_template": str(root / "ari-demo" / "{site}")}}))
    server = start_jupyter(tmp, app="lab", env=lab_env(tmp), settings=LAB_SETTINGS,
                           args=LAB_ARGS)
    server.extra["repo"] = repo
    yield server
    server.stop()


def test_card_opens_the_workspace_notebook_and_leaves_the_work_tree_alone(lab, page):
    repo = lab.extra["repo"]
    open_lab(page, lab, tree="repo")
    page.click(LAUNCHER_CARD)
    page.wait_for_selector(f"{WIDGET_OUTPUT} .ari-wizard, {TRACEBACK}", timeout=90_000)
    tracebacks = page.locator(TRACEBACK)
    assert tracebacks.count() == 0, tracebacks.first.inner_text()[-3000:]

    expected = f"ari-demo/rccs-cloud/{NOTEBOOK_NAME}"
    assert current_notebook_path(page) == expected
    assert page.locator(".jp-NotebookPanel:visible .jp-MarkdownCell").count() >= 2
    wait_saved_with_outputs(lab.root_dir / expected)
    # JupyterLab's save keeps the fingerprint of the placed cells: a later version can still
    # tell this notebook unedited and bring its text up to date
    from ari_jupyter.wizard.notebooks import _read_notebook, _sources_of, cells_fingerprint

    saved = _read_notebook(lab.root_dir / expected)
    assert saved["metadata"]["ari_jupyter"] == {"placed_cells": cells_fingerprint(_sources_of(saved))}

    assert _git(repo, "status", "--porcelain", "--ignored") == ""
    notebooks = sorted(str(p.relative_to(lab.root_dir)) for p in lab.root_dir.rglob("*.ipynb")
                       if ".ipynb_checkpoints" not in p.parts
                       and not p.name.startswith(".~"))  # jupyter_server's copy while saving
    assert notebooks == [expected]
    assert_no_console_errors(page)


def test_a_freshly_placed_notebook_opens_unmodified(lab, page):
    """Opening the placed notebook and starting its kernel is not an edit: the tab has no
    unsaved-changes dot, and closing it asks nothing (JupyterLab writes the kernel's
    language_info into the notebook when it differs from the file's)."""
    from ari_jupyter.wizard.notebooks import packaged_notebook
    from ari_jupyter.wizard.notebooks import place_in

    target = lab.root_dir / "fresh" / NOTEBOOK_NAME
    assert place_in(packaged_notebook("en"), target, "en")
    page.goto(lab.url(f"/lab/tree/fresh/{NOTEBOOK_NAME}?reset"))
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel;"
        " return k && k.status === 'idle' && w.context.model.metadata.language_info"
        " && w.context.model.metadata.language_info.version; }", timeout=60_000)
    page.wait_for_timeout(1500)  # whatever JupyterLab does after the kernel's info reply
    dirty = page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty")
    assert dirty is False, json.dumps(page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.context.model.metadata"))


def test_the_card_leaves_an_open_notebook_as_it_is_in_another_language(lab, page):
    """The notebook is open (in English) when the wizard language becomes Japanese and the card
    is clicked again: the server would place the Japanese notebook over an unedited English
    one, but not under an open tab - JupyterLab would find the file changed on disk and ask
    to overwrite or revert it, and a revert loses the running wizard."""
    expected = f"ari-demo/rccs-cloud/{NOTEBOOK_NAME}"
    open_lab(page, lab)
    page.click(LAUNCHER_CARD)
    page.wait_for_selector(f"{WIDGET_OUTPUT} .ari-wizard", timeout=90_000)
    assert current_notebook_path(page) == expected
    wait_saved_with_outputs(lab.root_dir / expected)
    english = _markdown(lab.root_dir / expected)

    page.evaluate("async () => { await window.jupyterapp.serviceManager.settings.save("
                  "'ari-jupyter-labextension:plugin', JSON.stringify({wizardLanguage: 'ja'})); }")
    page.goto(lab.url(f"/lab/tree/{expected}"))  # the lab again, the notebook's tab open
    page.wait_for_function("(p) => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.context"
                           " && window.jupyterapp.shell.currentWidget.context.path === p",
                           arg=expected, timeout=60_000)
    try:
        # not awaited: with a conflict the command would wait for the dialog's answer
        page.evaluate("() => { void window.jupyterapp.commands.execute("
                      "'ari-jupyter:multi-node-setup'); }")
        page.wait_for_function("(p) => document.querySelector('.jp-Dialog') || ("
                               "window.jupyterapp.shell.currentWidget.context.path === p"
                               " && !window.jupyterapp.shell.currentWidget.context.model.dirty"
                               " && document.querySelector('.ari-wizard'))",
                               arg=expected, timeout=90_000)
        page.wait_for_timeout(3000)  # the run's save, and a conflict dialog if any
        assert page.locator(".jp-Dialog").count() == 0, page.locator(".jp-Dialog").inner_text()
        assert _markdown(lab.root_dir / expected) == english
    finally:
        page.evaluate("async () => { await window.jupyterapp.serviceManager.settings.save("
                      "'ari-jupyter-labextension:plugin', '{}'); }")
    assert_no_console_errors(page)


def _markdown(path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
