"""The main notebook's wizard renders in Notebook 7 and in Voilà, not only in JupyterLab.

A plain jupyter_server on 127.0.0.1 (token, hermetic config dirs) serves both front ends, as
their pip packages enable them as server extensions: ``/notebooks/<nb>`` is Notebook 7 and
``/voila/render/<nb>`` is Voilà. Outside an allocation the wizard starts on a demo site; the
checks assert on the real widget DOM (step buttons, probe rows), never on "Loading widget".
"""
from __future__ import annotations

import re
import shutil

import pytest

from .conftest import lab_env, require_browser
from .jupyter_process import REPO, _stage_labextension, installed_labextension, start_jupyter

pytestmark = pytest.mark.e2e

NOTEBOOK = REPO / "notebooks" / "ari_multinode_wizard.ipynb"
STEP_LABELS = ["1. Allocation", "2. Site checks", "3. Partition & profile",
               "4. Experiment & checkpoint", "5. Doctor"]
BROKEN_TEXT = ("Loading widget", "Error displaying widget", "Model not found",
               "Failed to load model class", "Traceback")
STEP_BUTTONS = ".ari-wizard .ari-steps button"

FRONTEND_NOISE = [
    # Notebook 7 itself, on opening any notebook, before a cell runs (its collaborative model)
    re.compile(r"^Cannot read properties of undefined \(reading 'schema'\)$"),
    # Voilà's page asks a CDN for fonts/MathJax; the test machine has no DNS
    re.compile(r"^Failed to load resource: net::ERR_NAME_NOT_RESOLVED$"),
    # Voilà 0.5 shares JupyterLab 4.2 modules; lab extensions built for a newer JupyterLab
    # (Notebook 7's own, and ari-jupyter's launcher/terminal plugin, useless in Voilà) fail to load
    re.compile(r"^Error: Shared module @jupyterlab/\S+ doesn't exist in shared scope default$"),
    re.compile(r"^Error: The getter for the shared module is not a function\..*#RUNTIME-012$"),
]
"""Console errors of the front ends themselves, seen with no wizard on the page. Anything
else - a widget or comm error above all - fails the test."""


def assert_no_wizard_errors(page) -> None:
    errors = [text for text in page.console_log.errors()
              if not any(pattern.match((text.splitlines() or [""])[0]) for pattern in FRONTEND_NOISE)]
    assert not errors, "browser console errors:\n" + "\n".join(errors)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """jupyter_server with the notebook and voila extensions, outside any allocation."""
    require_browser()
    for module in ("notebook", "voila"):
        pytest.importorskip(module)
    tmp = tmp_path_factory.mktemp("frontends")
    if installed_labextension() is None:  # an editable install: stage what pip would install
        _stage_labextension(tmp / "data")
    env = lab_env(tmp, {"ARI_JUPYTER_DEMO_SITE": "rccs-cloud", "LANG": "C.UTF-8"})
    server = start_jupyter(tmp, app="server", env=env, args=[
        "--JupyterNotebookApp.expose_app_in_browser=True",
        "--VoilaConfiguration.show_tracebacks=True"])
    shutil.copyfile(NOTEBOOK, server.root_dir / NOTEBOOK.name)
    yield server
    server.stop()


def wizard_text(page) -> str:
    return page.locator(".ari-wizard").first.inner_text()


def assert_rendered(page) -> None:
    """The real widget DOM: five labelled step buttons, the site header, the allocation facts."""
    page.wait_for_selector(STEP_BUTTONS, timeout=90_000)
    labels = [text.strip() for text in page.locator(STEP_BUTTONS).all_inner_texts()]
    assert labels == STEP_LABELS
    page.wait_for_selector(".ari-wizard .ari-site", timeout=30_000)
    assert "rccs-cloud" in page.locator(".ari-wizard .ari-site").first.inner_text()
    page.wait_for_selector(".ari-wizard .ari-alloc-facts", timeout=30_000)
    # the wizard's stylesheet reached this front end: its rules apply to the wizard
    styled = page.evaluate("""() => {
        const wizard = document.querySelector('.ari-wizard');
        const badge = getComputedStyle(wizard).getPropertyValue('--ari-error').trim();
        const facts = getComputedStyle(document.querySelector('.ari-alloc-facts th'));
        return {badge, align: facts.textAlign};
    }""")
    assert styled["badge"] and styled["align"] == "left", styled
    body = page.locator("body").inner_text()
    for broken in BROKEN_TEXT:
        assert broken not in body, broken


def click_through(page) -> None:
    """The widgets are live: clicking a step shows that panel, its probe rows included."""
    page.locator(STEP_BUTTONS).nth(1).click()
    page.wait_for_function(
        "document.querySelectorAll('.ari-probe-row').length === 9 && "
        "document.querySelectorAll('.ari-probe-row .fa-spin').length === 0", timeout=60_000)
    assert "sbatch" in page.locator(".ari-probe-sbatch").first.inner_text()
    page.locator(STEP_BUTTONS).nth(4).click()
    page.wait_for_selector(".ari-wizard .ari-doctor-context", state="visible", timeout=30_000)


def test_the_wizard_renders_in_notebook_7(server, page):
    page.goto(server.url(f"/notebooks/{NOTEBOOK.name}"))
    page.wait_for_selector(".jp-NotebookPanel", timeout=60_000)
    page.wait_for_function(
        "() => { const app = window.jupyterapp; const nb = app && app.shell.currentWidget;"
        " return !!(nb && nb.sessionContext && nb.sessionContext.session"
        " && nb.sessionContext.session.kernel); }", timeout=60_000)
    assert "/notebooks/" in page.url  # Notebook 7's own page, not JupyterLab
    page.evaluate("""async () => {
        const app = window.jupyterapp;
        const panel = app.shell.currentWidget;
        await panel.sessionContext.ready;
        panel.content.activeCellIndex = 1;
        await app.commands.execute('notebook:run-cell');
    }""")
    assert_rendered(page)
    click_through(page)
    assert_no_wizard_errors(page)


def test_the_wizard_renders_in_voila(server, page):
    page.goto(server.url(f"/voila/render/{NOTEBOOK.name}"), timeout=120_000)
    assert_rendered(page)
    # Voilà ran every cell: the printed verdicts follow the wizard, in its words
    page.wait_for_function("document.body.innerText.includes('Shared filesystem:')", timeout=60_000)
    assert "In [" not in page.locator("body").inner_text()  # no notebook chrome, only outputs
    click_through(page)
    assert_no_wizard_errors(page)
