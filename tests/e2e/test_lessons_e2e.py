"""The lessons' placement pictures in real JupyterLab: drawn as in the wizard (rank slots in
their colours), and the srun line's ``$SLURM_...`` left as text, not typeset as maths."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import ARTIFACTS, assert_no_console_errors
from .lab_helpers import WIDGET_OUTPUT, execute_command, open_lab

pytestmark = pytest.mark.e2e

LESSONS = Path(__file__).resolve().parents[2] / "ari_jupyter" / "notebooks" / "teaching"
FIGURE = f"{WIDGET_OUTPUT} .ari-figure"


@pytest.mark.parametrize("lesson", ["01_allocation_and_hostlists", "04_failure_modes"])
def test_a_lessons_placement_picture_is_drawn_as_in_the_wizard(lab, page, lesson):
    name = f"{lesson}.ipynb"
    shutil.copy(LESSONS / name, lab.root_dir / name)
    open_lab(page, lab)
    execute_command(page, "docmanager:open", {"path": name})
    page.wait_for_selector(".jp-NotebookPanel:visible .jp-Notebook", timeout=60_000)
    page.wait_for_function(  # the kernel is ready before the cells are run
        "() => window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel"
        "?.connectionStatus === 'connected'", timeout=90_000)
    execute_command(page, "notebook:run-all-cells")
    page.locator(FIGURE).nth(1).wait_for(timeout=120_000)  # each lesson draws two

    slot = page.locator(f"{FIGURE} [class*='ari-rank-']").first
    background = slot.evaluate("e => getComputedStyle(e).backgroundColor")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent"), background  # the sheet applies
    assert page.locator(f"{FIGURE} mjx-container, {FIGURE} .MathJax").count() == 0
    if lesson == "04_failure_modes":  # the fanned-out picture names its srun line
        text = " ".join(page.locator(FIGURE).all_inner_texts())
        assert "srun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS" in text
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.locator(FIGURE).nth(1).screenshot(path=str(ARTIFACTS / f"lesson-{lesson}-figure.png"))
    assert_no_console_errors(page)


def test_lab_lessons_opens_lesson_1_in_a_workspace_of_its_own(tmp_path, page):
    """What `ari-jupyter lab --lessons` runs: JupyterLab on the lessons, lesson 1 open, in the
    "ari-lessons" workspace (the wizard's lab, open beside it, keeps its own layout)."""
    from ari_jupyter.cli.lab import plan_lessons
    from ari_jupyter.wizard.lesson_copies import place_lessons

    from .conftest import LAB_ARGS, require_browser
    from .jupyter_process import start_jupyter

    require_browser()
    folder = place_lessons("zh", env={"HOME": str(tmp_path / "home")}).folder
    plan = plan_lessons(folder, [])
    # the harness roots the lab in its own folder: the lessons are copied there
    assert f"--ServerApp.root_dir={folder}" in plan.argv
    ours = [arg for arg in plan.argv if arg.startswith("--LabApp.default_url")]
    server = start_jupyter(tmp_path, app="lab", args=[*LAB_ARGS, *ours])
    for lesson in folder.glob("*.ipynb"):
        shutil.copy(lesson, server.root_dir / lesson.name)
    try:
        page.goto(server.url("/"), timeout=120_000)
        page.wait_for_selector(".jp-NotebookPanel:visible .jp-Notebook", timeout=90_000)
        assert "/lab/workspaces/ari-lessons/" in page.url, page.url
        page.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget?.context?.path === "
            "'01_allocation_and_hostlists.ipynb'", timeout=30_000)
        # the Chinese lesson, once its cells have rendered (they follow the panel, not with it)
        page.wait_for_function(
            "() => document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook')"
            "?.innerText.includes('资源分配')", timeout=60_000)
        assert_no_console_errors(page)
    finally:
        server.stop()
