"""The Runs side panel in Chromium: a finished, a failed and a running run; Cancel with confirmation.

The running run's job is real: ARI's reproduce job (``ari-ors``, ``--chdir`` in the checkpoint's
repro_sandbox) submitted to the test bed with ARI's argv by a waiting parent. The panel's answers
are compared with ``ari-jupyter runs|status --json`` run in the same environment.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ari_jupyter.ari.contracts import LEDGER_FILE
from ari_jupyter.ari.sbatch import ReproduceArgs, build_sbatch_argv, wrapper_script

from runs_support import copy_case, finished_with_success, live_ari, live_handoff

from .conftest import ARTIFACTS, LAB_ARGS, LAB_SETTINGS, assert_no_console_errors, lab_env
from .jupyter_process import REPO, start_jupyter
from .lab_helpers import THEMES, execute_command, measure_laid_out, open_lab, set_theme

pytestmark = [pytest.mark.e2e]

TICKS = "#!/usr/bin/env bash\nfor i in $(seq 1 600); do echo tick $i; sleep 1; done\n"
PANEL = "#ari-jupyter-runs"


def _workspace(tmp):
    ws = tmp / "ws"
    failed = copy_case("failed", ws)
    finished = copy_case("interrupted-paper", tmp / "other")  # a second real run id
    target = ws / "checkpoints" / finished.name
    finished.rename(target)
    # The interrupted run becomes a finished one: successful nodes and ARI's completion line.
    (target / ".pipeline_started").unlink()
    finished_with_success(target)
    running = ws / "checkpoints" / "20261201100000_running_triad"
    copy_case("exploring", tmp / "third").rename(running)
    (running / ".ari_pid").unlink()
    (running / ".pipeline_started").touch()
    return ws, {"failed": failed, "finished": target, "running": running}


@pytest.fixture
def runs_lab(testbed_nogres, tmp_path):
    bed = testbed_nogres
    ws, runs = _workspace(tmp_path)
    repo = runs["running"] / "repro_sandbox"
    repo.mkdir()
    (repo / "reproduce.sh").write_text(TICKS)
    (repo / ".slurm_wrap.sh").write_text(wrapper_script(repo))
    env = {"ARI_SLURM_PARTITION": bed.default_partition, "ARI_SLURM_CPUS": "1",
           "ARI_SLURM_WALLTIME": "00:05:00"}
    argv = build_sbatch_argv(ReproduceArgs(), env, repo, has_gres=False, bind_flags=False)
    waiter = subprocess.Popen(argv, env=bed.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "ari_jupyter_config.json").write_text(
        json.dumps({"AriWizard": {"workspace_template": str(ws)}}))
    server_env = lab_env(tmp_path, bed.env)
    server = start_jupyter(tmp_path, app="lab", env=server_env, settings=LAB_SETTINGS, args=LAB_ARGS)
    try:
        yield server, bed, ws, runs, waiter
    finally:
        server.stop()
        if waiter.poll() is None:
            waiter.kill()
        bed.run(["scancel", "--name", "ari-ors"])


def cli(bed, *args) -> dict:
    done = bed.run([sys.executable, "-m", "ari_jupyter", *args], timeout=60)
    return json.loads(done.stdout)


def wait_for_run_shown(page, run_id: str, timeout: float = 30_000) -> None:
    """The run's own view shows ``run_id`` (its text, whatever break opportunities split it)."""
    page.wait_for_function(
        "([selector, id]) => document.querySelector(selector)?.textContent === id",
        arg=[f"{PANEL}[data-view='status'] .ari-RunsPanel-runid", run_id], timeout=timeout)


def open_run(page, run_id: str) -> None:
    page.locator(f"{PANEL} [data-run-id='{run_id}']").click()
    wait_for_run_shown(page, run_id)
    # the id is read whole: it wraps in the side panel rather than being cut at its edge
    cut = page.eval_on_selector(f"{PANEL} .ari-RunsPanel-runid",
                                "el => el.scrollWidth > el.clientWidth + 1")
    assert not cut, run_id
    # ... between its words: a break may follow each "_", so "5e13e118" is never split
    breaks = page.eval_on_selector(f"{PANEL} .ari-RunsPanel-runid",
                                   "el => el.querySelectorAll('wbr').length")
    assert breaks == run_id.count("_"), run_id


def back_to_list(page) -> None:
    page.locator(f"{PANEL} button", has_text="All runs").click()
    page.wait_for_selector(f"{PANEL}[data-view='list']")


@pytest.mark.slurm
def test_runs_panel(runs_lab, page):
    server, bed, ws, runs, waiter = runs_lab
    deadline = time.monotonic() + 90
    while cli(bed, "status", "--json", str(runs["running"]))["jobs"]["jobs"][:1] == [] or \
            cli(bed, "status", "--json", str(runs["running"]))["jobs"]["jobs"][0]["state"] != "RUNNING":
        assert time.monotonic() < deadline, "the ari-ors job never ran"
        time.sleep(1)

    failed_requests = []
    page.on("response", lambda r: failed_requests.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    open_lab(page, server)
    # Before anything is opened, the status bar follows the active run.
    page.wait_for_selector(".ari-RunPhaseStatus:text-matches('^ARI run: reproduce')", timeout=60_000)
    execute_command(page, "ari-jupyter:runs")
    page.wait_for_selector(f"{PANEL}[data-view='status'][data-phase='reproduce']")
    back_to_list(page)
    page.wait_for_selector(f"{PANEL}[data-view='list'] .ari-RunsPanel-row")
    listed = cli(bed, "runs", "--json", "--workspace", str(ws))
    shown = page.eval_on_selector_all(
        f"{PANEL} .ari-RunsPanel-row",
        "rows => rows.map(r => [r.dataset.runId, r.querySelector('[data-phase]').dataset.phase,"
        " r.children[1].textContent, r.children[3].textContent])")
    expected = [[r["run_id"], r["phase"],
                 f"{r['nodes']['done']}/{r['nodes']['failed']}/{r['nodes']['running']}/{r['nodes']['total']}",
                 str(r["jobs"])] for r in listed["runs"]]
    assert shown == expected
    assert {row[1] for row in shown} == {"finished", "failed", "reproduce"}

    # A finished run: its best metric; no Cancel anywhere.
    open_run(page, runs["finished"].name)
    assert page.locator(f"{PANEL}[data-phase='finished']").count() == 1
    assert page.locator(f"{PANEL} [data-field='best']").inner_text() == "GBps 57.25 (node_b)"
    assert page.locator(f"{PANEL} button", has_text="Cancel").count() == 0
    assert page.locator(f"{PANEL} button", has_text="Reopen in the wizard").count() == 1
    back_to_list(page)

    # A failed run: the doctor's verdict, the same as the CLI's.
    open_run(page, runs["failed"].name)
    rules = page.eval_on_selector_all(f"{PANEL} [data-rule]", "els => els.map(e => e.dataset.rule)")
    assert rules == [f["rule"] for f in cli(bed, "status", "--json", str(runs["failed"]))["findings"]]
    assert "run-no-successful-node" in rules
    back_to_list(page)

    # The running run: its real job, the output tail, the phase in the status bar.
    open_run(page, runs["running"].name)
    assert page.locator(f"{PANEL}[data-phase='reproduce']").count() == 1
    job = page.locator(f"{PANEL} .ari-RunsPanel-job[data-state='RUNNING']")
    job.wait_for()
    job_id = job.get_attribute("data-job-id")
    line = job.locator("div").first.inner_text()  # its state, time, nodes (a plural), where
    assert re.search(r"RUNNING · \S+ · (1 node|\d+ nodes) ", line), line
    page.wait_for_function(
        "() => /tick \\d+/.test(document.querySelector('#ari-jupyter-runs .ari-RunsPanel-jobtail')"
        "?.textContent || '')", timeout=60_000)
    assert page.locator(".ari-RunPhaseStatus").inner_text().startswith("ARI run: reproduce")
    assert page.locator(PANEL).get_attribute("data-polling") == "yes"

    # Cancel asks first; "Keep running" keeps it.
    job.locator("button", has_text="Cancel").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    assert job_id in dialog.inner_text()
    dialog.locator("button", has_text="Keep running").click()
    dialog.wait_for(state="detached")
    assert cli(bed, "status", "--json", str(runs["running"]))["jobs"]["jobs"][0]["state"] == "RUNNING"

    job.locator("button", has_text="Cancel").click()
    page.locator(".jp-Dialog button", has_text="Cancel jobs").click()
    page.wait_for_selector(f"{PANEL}[data-phase='interrupted']", timeout=60_000)
    assert page.locator(f"{PANEL} .ari-RunsPanel-job").count() == 0
    assert waiter.wait(timeout=60) != 0  # sbatch --wait came back: the job ended
    answer = cli(bed, "status", "--json", str(runs["running"]))
    assert answer["phase"] == "interrupted" and answer["jobs"]["jobs"] == []
    page.wait_for_selector(f"{PANEL}[data-polling='waiting']")
    assert page.locator(".ari-RunPhaseStatus").inner_text() == "ARI run: interrupted"
    assert "ari-ors" not in bed.run(["squeue", "-h", "-o", "%j"]).stdout

    # JupyterLab's own LSP plugin polls /lsp/status, which this hermetic server does not serve.
    ours = [r for r in failed_requests if "/lsp/status" not in r]
    assert ours == []
    if failed_requests and not ours:
        page.console_log.messages = [m for m in page.console_log.messages
                                     if not m[1].startswith("Failed to load resource: the server "
                                                            "responded with a status of 404")]
    assert_no_console_errors(page)


def _plain_lab(tmp_path):
    """JupyterLab outside the test bed (the wizard's own e2e setting) on a finished run."""
    ws, runs = _workspace(tmp_path)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "ari_jupyter_config.json").write_text(
        json.dumps({"AriWizard": {"workspace_template": str(ws)}}))
    server = start_jupyter(tmp_path, app="lab", env=lab_env(tmp_path), settings=LAB_SETTINGS,
                           args=LAB_ARGS)
    return server, runs


@pytest.fixture
def plain_lab(tmp_path):
    server, runs = _plain_lab(tmp_path)
    yield server, runs
    server.stop()


@pytest.fixture(params=["en", "ja"])
def lab_in_each_language(request, tmp_path):
    """The plain lab, in English and in 日本語."""
    server, runs = (_plain_lab if request.param == "en" else _japanese_lab)(tmp_path)
    yield request.param, server, runs
    server.stop()


@pytest.mark.parametrize("button,call", [("Clone as a new run", "clone_state"),
                                         ("Reopen in the wizard", "Wizard.from_checkpoint")])
def test_reopen_and_clone_open_the_wizard(plain_lab, page, button, call):
    server, runs = plain_lab
    open_lab(page, server)
    execute_command(page, "ari-jupyter:runs")
    page.wait_for_selector(f"{PANEL}[data-view='list'] .ari-RunsPanel-row")
    open_run(page, runs["finished"].name)
    page.locator(f"{PANEL} button", has_text=button).click()
    output = page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output").first
    output.wait_for(timeout=90_000)
    cell = page.locator(".jp-NotebookPanel:visible .jp-Cell .cm-content").first.inner_text()
    assert f'{call}("{runs["finished"]}")' in cell
    # The kernel built the wizard from the checkpoint: a widget (or its text form), no error.
    # How the widget then renders is the wizard's own e2e tests' business.
    assert output.get_attribute("data-mime-type") != "application/vnd.jupyter.stderr"
    # the notebook is named after the run it reopens or clones, not Untitled
    kind = "clone" if call == "clone_state" else "reopen"
    page.wait_for_function(
        "name => [...document.querySelectorAll('.lm-DockPanel-tabBar .lm-TabBar-tabLabel')]"
        ".some(label => label.textContent === name)",
        arg=f"{kind}-{runs['finished'].name}.ipynb", timeout=30_000)
    assert "Traceback" not in output.inner_text() and "Error" not in output.inner_text()
    assert page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output.jp-RenderedText"
                        "[data-mime-type='application/vnd.jupyter.error']").count() == 0
    # the same button again: Clone makes a notebook of its own, numbered, and keeps the first;
    # Reopen shows the run's notebook again, as the user left it, and makes no second one
    page.locator(f"{PANEL} button", has_text=button).click()
    if kind == "clone":
        page.wait_for_function(
            "name => [...document.querySelectorAll('.lm-DockPanel-tabBar .lm-TabBar-tabLabel')]"
            ".some(label => label.textContent === name)",
            arg=f"{kind}-{runs['finished'].name}-2.ipynb", timeout=90_000)
    else:
        page.wait_for_timeout(3000)
        labels = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tabLabel").all_inner_texts()
        assert [label for label in labels if label.startswith("reopen-")] == \
            [f"reopen-{runs['finished'].name}.ipynb"], labels
        assert page.evaluate("() => window.jupyterapp.shell.currentWidget.context.path") == \
            f"reopen-{runs['finished'].name}.ipynb"


def test_reopen_then_clone_each_keep_their_own_notebook_and_kernel(plain_lab, page):
    """Reopen, then Clone at once: two tabs, each on its own file with its own kernel session
    (a new notebook must not take over the session of the one made before it)."""
    server, runs = plain_lab
    run = runs["finished"].name
    open_lab(page, server)
    execute_command(page, "ari-jupyter:runs")
    page.wait_for_selector(f"{PANEL}[data-view='list'] .ari-RunsPanel-row")
    open_run(page, run)
    page.locator(f"{PANEL} button", has_text="Reopen in the wizard").click()
    page.locator(f"{PANEL} button", has_text="Clone as a new run").click()
    notebooks = """() => [...window.jupyterapp.shell.widgets('main')]
        .filter(w => w.context && w.sessionContext)
        .map(w => [w.context.path, w.sessionContext.session?.path || '',
                   w.sessionContext.session?.kernel?.id || ''])"""
    wanted = {f"reopen-{run}.ipynb", f"clone-{run}.ipynb"}
    page.wait_for_function(
        f"want => {{ const seen = ({notebooks})(); return want.every(p => seen.some("
        f"([path, session, kernel]) => path === p && session === p && kernel)); }}",
        arg=sorted(wanted), timeout=120_000)
    seen = [row for row in page.evaluate(notebooks) if row[0] in wanted]
    assert sorted(path for path, _, _ in seen) == sorted(wanted), seen
    assert all(path == session for path, session, _ in seen), seen
    assert len({kernel for _, _, kernel in seen}) == 2, seen


def test_reopen_puts_the_notebook_in_the_runs_workspace_and_reuses_it(tmp_path, page):
    """The workspace is below JupyterLab's root: the reopen notebook goes there, beside the
    wizard's own, not into the folder the file browser shows; closed and reopened from the
    panel, the same file comes back (no reopen-*-2), with what the user added kept."""
    root = tmp_path / "root"
    ws = root / "ws"
    run = copy_case("failed", ws)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "ari_jupyter_config.json").write_text(
        json.dumps({"AriWizard": {"workspace_template": str(ws)}}))
    server = start_jupyter(tmp_path, app="lab", env=lab_env(tmp_path), settings=LAB_SETTINGS,
                           args=LAB_ARGS)
    current = "() => window.jupyterapp.shell.currentWidget?.context?.path || ''"
    name = f"ws/reopen-{run.name}.ipynb"
    try:
        open_lab(page, server)
        execute_command(page, "ari-jupyter:runs")
        page.wait_for_selector(f"{PANEL}[data-view='list'] .ari-RunsPanel-row")
        open_run(page, run.name)
        page.locator(f"{PANEL} button", has_text="Reopen in the wizard").click()
        page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output").first.wait_for(timeout=90_000)
        page.wait_for_function(f"() => ({current})() === {json.dumps(name)}", timeout=30_000)
        assert (ws / f"reopen-{run.name}.ipynb").is_file()
        assert not list(root.glob("reopen-*"))  # not in the root the file browser shows
        # the reopen saves the notebook once its cell ran: closing before that asks to save;
        # and its kernel is left to settle (JupyterLab's debugger asks it for its state)
        page.wait_for_function("() => { const w = window.jupyterapp.shell.currentWidget;"
                               " const k = w.sessionContext.session?.kernel;"
                               " return !w.context.model.dirty && k && k.status === 'idle'; }",
                               timeout=30_000)
        page.wait_for_timeout(1000)
        # the user closes it; Reopen again opens that file, no second one
        execute_command(page, "application:close-all")
        page.wait_for_function(f"() => ({current})() === ''", timeout=30_000)
        page.locator(f"{PANEL} button", has_text="Reopen in the wizard").click()
        page.wait_for_function(f"() => ({current})() === {json.dumps(name)}", timeout=60_000)
        assert sorted(p.name for p in ws.glob("reopen-*")) == [f"reopen-{run.name}.ipynb"]
        # JupyterLab's debugger logs this when a notebook closes while it asks the kernel for
        # its state: its own message about its own request, not ari-jupyter's
        errors = [e for e in page.console_log.errors()
                  if not e.startswith("Could not restore the debugger state")]
        assert not errors, errors
    finally:
        server.stop()


def test_a_run_written_to_another_workspace_is_listed_and_opens(plain_lab, page, tmp_path):
    """Step 4's Workspace set to a shared folder: the run written there is in the list, under a
    heading naming both workspaces, and opens like the others."""
    from ari_jupyter.checkpoint.known_workspaces import record_workspace

    server, runs = plain_lab
    default = runs["failed"].parent.parent
    shared = tmp_path / "shared"
    elsewhere = copy_case("not-started", shared)
    elsewhere = elsewhere.rename(elsewhere.parent / "20261202080000_shared_triad")
    record_workspace(shared)  # what Write does
    open_lab(page, server)
    execute_command(page, "ari-jupyter:runs")
    row = page.locator(f"{PANEL}[data-view='list'] .ari-RunsPanel-row[data-run-id='{elsewhere.name}']")
    row.wait_for()
    assert row.get_attribute("data-workspace") == str(shared)
    assert _groups(page) == [[str(default), len(runs)], [str(shared), 1]]
    assert page.locator(f"{PANEL} .ari-RunsPanel-row").count() == len(runs) + 1
    open_run(page, elsewhere.name)
    assert page.locator(f"{PANEL}[data-phase='not-started']").count() == 1
    # no log yet: a sentence says so, no empty log box
    assert page.locator(f"{PANEL} .ari-RunsPanel-log").count() == 0
    assert page.locator(f"{PANEL} .ari-RunsPanel-nolog").inner_text() == \
        "No log yet: ARI writes one when the run starts."
    assert_no_console_errors(page)


def _groups(page) -> list:
    """The list's workspace groups: [workspace, number of runs] each, in order."""
    return page.eval_on_selector_all(
        f"{PANEL} .ari-RunsPanel-group",
        "gs => gs.map(g => [g.dataset.workspace, g.querySelectorAll('.ari-RunsPanel-row').length])")


def test_all_runs_are_grouped_by_workspace_and_a_workspace_can_be_forgotten(plain_lab, page,
                                                                             tmp_path):
    """Runs from three workspaces: each under its workspace's heading, the default one first;
    "Forget" on another takes it off the list (its runs stay on disk), and the default one has
    no such button."""
    from ari_jupyter.checkpoint.known_workspaces import record_workspace, recorded_workspaces

    server, runs = plain_lab
    default = runs["failed"].parent.parent
    others = []
    for name in ("project-a", "scratch-b"):
        run = copy_case("not-started", tmp_path / name)
        run.rename(run.parent / f"20261203090000_{name.replace('-', '_')}")
        record_workspace(tmp_path / name)
        others.append(tmp_path / name)
    open_lab(page, server)
    execute_command(page, "ari-jupyter:runs")
    page.wait_for_selector(f"{PANEL}[data-view='list'] .ari-RunsPanel-group")
    assert _groups(page) == [[str(default), len(runs)], *[[str(o), 1] for o in reversed(others)]]
    first = page.locator(f"{PANEL} .ari-RunsPanel-group").first
    assert first.locator(".ari-RunsPanel-forget").count() == 0  # the default is always listed
    shots = Path(os.environ.get("ARI_SCREENSHOTS_DIR") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    for theme in THEMES:
        set_theme(page, theme)
        page.locator(PANEL).screenshot(path=str(shots / f"runs-grouped-en-{theme}.png"))
    set_theme(page, "light")
    page.locator(f"{PANEL} .ari-RunsPanel-group[data-workspace='{others[0]}'] .ari-RunsPanel-forget").click()
    page.wait_for_function(
        "([sel, ws]) => !document.querySelector(`${sel} .ari-RunsPanel-group[data-workspace='${ws}']`)",
        arg=[PANEL, str(others[0])], timeout=15_000)
    assert _groups(page) == [[str(default), len(runs)], [str(others[1]), 1]]
    assert str(others[0]) not in recorded_workspaces() and (others[0] / "checkpoints").is_dir()
    assert_no_console_errors(page)


def test_a_default_workspace_that_does_not_exist_is_listed_last_and_marked(tmp_path, page):
    """The site's workspace template names a folder this machine does not have: the workspace
    that holds runs is named first, the missing one last, marked as not there."""
    from ari_jupyter.checkpoint.known_workspaces import record_workspace

    missing = tmp_path / "work" / "root" / "ari"
    shared = tmp_path / "shared"
    run = copy_case("not-started", shared)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "ari_jupyter_config.json").write_text(
        json.dumps({"AriWizard": {"workspace_template": str(missing)}}))
    record_workspace(shared)
    server = start_jupyter(tmp_path, app="lab", env=lab_env(tmp_path), settings=LAB_SETTINGS,
                           args=LAB_ARGS)
    try:
        open_lab(page, server)
        execute_command(page, "ari-jupyter:runs")
        page.wait_for_selector(f"{PANEL}[data-view='list'] .ari-RunsPanel-row[data-run-id='{run.name}']")
        heads = page.locator(f"{PANEL} .ari-RunsPanel-groupname").all_inner_texts()
        assert [h.replace("\u200b", "") for h in heads] == [str(shared), f"{missing} (does not exist here)"]
        assert_no_console_errors(page)
    finally:
        server.stop()


def _shown_run(page) -> str:
    return page.eval_on_selector(PANEL, "p => p.dataset.view === 'status' ? "
                                        "p.querySelector('.ari-RunsPanel-runid').textContent : ''")


def test_a_new_run_becomes_the_shown_one_unless_the_user_opened_another(plain_lab, page):
    """A run written while JupyterLab is open (the wizard's Write) is shown, and the status bar
    follows it; a run the user opened themselves stays shown until they go back to the list."""
    server, runs = plain_lab
    checkpoints = runs["failed"].parent
    open_lab(page, server)
    execute_command(page, "ari-jupyter:runs")
    page.wait_for_selector(f"{PANEL}[data-view='list'] .ari-RunsPanel-row")

    def write(run_id: str):
        copy_case("not-started", checkpoints.parent.parent / run_id).rename(checkpoints / run_id)

    # the list shown: the new run replaces it, and the status bar names its phase
    write("20261203080000_new_one")
    page.wait_for_function(f"() => document.querySelector('{PANEL}').dataset.view === 'status'",
                           timeout=30_000)
    assert _shown_run(page) == "20261203080000_new_one"
    page.wait_for_selector(".ari-RunPhaseStatus:text-is('ARI run: not started')", timeout=10_000)

    # `ari run` starts in the hand-off terminal: the panel and the status bar say so by
    # themselves (nobody clicks), within the wait for a run written but not started
    with live_ari(checkpoints / "20261203080000_new_one"):
        page.wait_for_selector(".ari-RunPhaseStatus:text-is('ARI run: exploring')", timeout=20_000)
        page.wait_for_selector(f"{PANEL}[data-phase='exploring'][data-polling='yes']", timeout=5_000)

    # the user opens a run: a run written now does not take its place
    back_to_list(page)
    open_run(page, runs["failed"].name)
    write("20261203090000_newer_one")
    page.wait_for_timeout(3 * 4000)  # three watches (WATCH_MS)
    assert _shown_run(page) == runs["failed"].name

    # back to the list: the next new run is shown again
    back_to_list(page)
    write("20261203100000_newest_one")
    page.wait_for_function(f"() => document.querySelector('{PANEL}').dataset.view === 'status'",
                           timeout=30_000)
    assert _shown_run(page) == "20261203100000_newest_one"
    assert_no_console_errors(page)


def test_runs_with_one_title_show_when_each_started(plain_lab, page):
    """Two runs of one title (a Japanese title whose run ids keep one word): each row says when
    its run started, so they can be told apart; a title of its own gets no extra line."""
    server, runs = plain_lab
    checkpoints = runs["failed"].parent
    for run_id in ("20261203080000_2", "20261204091500_2"):
        copy_case("not-started", checkpoints.parent.parent / run_id).rename(checkpoints / run_id)
    open_lab(page, server)
    execute_command(page, "ari-jupyter:runs")
    page.wait_for_selector(f"{PANEL}[data-view='list'] [data-run-id='20261204091500_2']")
    rows = page.eval_on_selector_all(
        f"{PANEL} .ari-RunsPanel-row",
        """rows => rows.map(r => [r.dataset.runId, r.querySelector('.ari-RunsPanel-title div').textContent,
                             [...r.querySelectorAll('.ari-RunsPanel-started')].map(e => e.textContent)])""")
    titles = [title for _, title, _ in rows]
    for run_id, title, started in rows:
        stamp = f"{run_id[:4]}-{run_id[4:6]}-{run_id[6:8]} {run_id[8:10]}:{run_id[10:12]}"
        assert started == ([stamp] if titles.count(title) > 1 else []), (run_id, title, started)
    assert titles.count(titles[[r[0] for r in rows].index("20261204091500_2")]) >= 2
    assert_no_console_errors(page)


LIST_URL = re.compile(r"/ari-jupyter/runs/?(\?[^/]*)?$")  # the list, not one run's status


def _settled(page) -> None:
    """Every answer the page has so far is rendered: a frame, then the tasks it queued."""
    for _ in range(2):
        page.evaluate("() => new Promise(done => requestAnimationFrame(() => setTimeout(done, 0)))")


def _answer_late(page, held, click) -> None:
    """``click``s, holding back the list request it makes until it is answered by the caller."""
    before = len(held)
    click()
    deadline = time.monotonic() + 30
    while len(held) == before:
        assert time.monotonic() < deadline, "the panel never asked for the list"
        page.wait_for_timeout(50)


def test_a_list_that_answers_late_never_replaces_the_run_opened_since(plain_lab, page):
    server, runs = plain_lab
    open_lab(page, server)
    execute_command(page, "ari-jupyter:runs")
    page.wait_for_selector(f"{PANEL}[data-view='list'] .ari-RunsPanel-row")
    held = []
    page.route(LIST_URL, lambda route: held.append(route))

    # Control: with nothing chosen meanwhile, the late list is shown when it comes.
    open_run(page, runs["finished"].name)
    _answer_late(page, held, lambda: page.locator(f"{PANEL} button", has_text="All runs").click())
    assert page.locator(f"{PANEL}[data-view='status']").count() == 1  # still waiting for it
    with page.expect_response(LIST_URL):
        held[-1].continue_()
    _settled(page)
    assert page.locator(f"{PANEL}[data-view='list'] .ari-RunsPanel-row").count() == 3

    # The user opens a run while the list is on its way: the list comes late and is not shown.
    _answer_late(page, held, lambda: page.locator(f"{PANEL} button", has_text="Refresh").click())
    open_run(page, runs["failed"].name)
    with page.expect_response(LIST_URL):
        held[-1].continue_()
    _settled(page)
    page.unroute(LIST_URL)
    shown = page.locator(f"{PANEL} .ari-RunsPanel-runid")
    assert page.locator(f"{PANEL}[data-view='status']").count() == 1
    assert shown.inner_text() == runs["failed"].name
    assert_no_console_errors(page)


def _japanese_lab(tmp_path):
    """JupyterLab in 日本語 (Settings → Language) on the same runs, outside the test bed."""
    from .test_lab_conventions_e2e import _has_language_pack

    if not _has_language_pack("ja_JP"):
        pytest.skip("the JupyterLab language pack ja_JP is not installed")
    ws, runs = _workspace(tmp_path)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "ari_jupyter_config.json").write_text(
        json.dumps({"AriWizard": {"workspace_template": str(ws)}}))
    settings = {**LAB_SETTINGS, "@jupyterlab/translation-extension/plugin": {"locale": "ja_JP"}}
    server = start_jupyter(tmp_path, app="lab", env=lab_env(tmp_path, {"LANG": "C.UTF-8"}),
                           settings=settings, args=LAB_ARGS)
    return server, runs


@pytest.fixture
def japanese_lab(tmp_path):
    server, runs = _japanese_lab(tmp_path)
    yield server, runs
    server.stop()


# The list's layout, measured in one go while the panel is on screen (null while it is not):
# a panel hidden between a visibility check and the measurements would measure nothing.
_LIST_LAYOUT = """panel => {
  const badges = [...panel.querySelectorAll('.ari-RunsPanel-row [data-phase]')];
  if (!badges.length || badges.some(e => e.getClientRects().length === 0)) { return null; }
  const edge = panel.getBoundingClientRect().right;
  return {
    badge_boxes: badges.map(e => e.getClientRects().length),
    split_headers: [...panel.querySelectorAll('.ari-RunsPanel-table thead th')].filter(th => {
      const range = document.createRange();
      range.selectNodeContents(th);
      const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top))).size;
      return lines > th.textContent.trim().split(/\\s+/).length;  // a line break inside a word
    }).map(e => e.textContent),
    past_edge: [...panel.querySelectorAll('*')].filter(e => e.getBoundingClientRect().right > edge + 0.5)
      .map(e => e.tagName + '.' + e.className + ' ' + (e.getBoundingClientRect().right - edge)),
  };
}"""


def test_runs_panel_shows_findings_and_the_process_in_the_ui_language(japanese_lab, page):
    """The panel asks the server for JupyterLab's language: no English sentence in a finding."""

    from widget_text import english_sentences

    server, runs = japanese_lab
    refused = []  # (JupyterLab's LSP plugin polls /lsp/status, which this server does not serve)
    page.on("response", lambda r: refused.append(r.url) if r.status >= 400 and "/ari-jupyter/" in r.url
            else None)
    page.goto(server.url("/lab?reset"))
    page.wait_for_selector('.jp-LauncherCard:has-text("ARI マルチノード設定")', timeout=60_000)
    execute_command(page, "ari-jupyter:runs")
    page.wait_for_selector(f"{PANEL}[data-view='list'] .ari-RunsPanel-row")
    phases = page.locator(f"{PANEL} .ari-RunsPanel-row [data-phase]").all_inner_texts()
    assert phases and all(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", p) for p in phases), phases
    try:
        layout = measure_laid_out(page, _LIST_LAYOUT, PANEL)
    except AssertionError as hidden:  # the lab's start-up hid the panel again (3 of 52 runs)
        print(hidden)  # who hid it, for the log; a user would open the panel again, and so do we
        execute_command(page, "ari-jupyter:runs")
        layout = measure_laid_out(page, _LIST_LAYOUT, PANEL)
    assert set(layout["badge_boxes"]) == {1}, layout  # one line box each: never wrapped
    # "ジョブ" on one line, never one character per line; "Search nodes" may take two
    assert layout["split_headers"] == [], layout
    assert layout["past_edge"] == [], layout  # every column fits the side panel: nothing hides at its edge
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.locator(PANEL).screenshot(path=str(ARTIFACTS / "runs-panel-list-ja.png"))
    run_id = runs["failed"].name
    # One click: a list that answers late (the start-up's, or the panel's own) never replaces it.
    page.locator(f"{PANEL} [data-run-id='{run_id}']").click()
    wait_for_run_shown(page, run_id)
    page.wait_for_selector(f"{PANEL} .ari-RunsPanel-findings li")
    findings = page.locator(f"{PANEL} .ari-RunsPanel-findings li").all_inner_texts()
    process = page.locator(f"{PANEL} dt:text-is('ARI') + dd").inner_text()
    assert len(findings) >= 2, findings
    for text in [*findings, process]:
        assert re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text), text
    page.locator(PANEL).screenshot(path=str(ARTIFACTS / "runs-panel-status-ja.png"))
    lines = [line for text in findings for line in text.splitlines()]
    assert english_sentences(lines + [process]) == [], lines + [process]
    assert refused == []


JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def _choose_wizard_language(page, label: str) -> None:
    """Settings Editor → ARI multi-node setup → Wizard language, as a user sets it."""
    execute_command(page, "settingeditor:open", {"query": "ARI multi-node setup"})
    page.locator(".jp-PluginList-entry", has_text="ARI multi-node setup").first.click()
    select = page.locator(".jp-SettingsPanel select[id$='wizardLanguage']")
    select.wait_for(timeout=30_000)
    select.select_option(label=label)


def test_the_panel_speaks_the_wizard_language_setting_in_an_english_lab(plain_lab, page):
    """JupyterLab in English, "Wizard language" 日本語: the panel (its headings, phases and the
    server's findings) is in Japanese, and follows the setting back to JupyterLab's language
    without a reload, on the run it shows."""
    from widget_text import english_sentences

    server, runs = plain_lab
    open_lab(page, server)
    execute_command(page, "ari-jupyter:runs")
    page.wait_for_selector(f"{PANEL}[data-view='list'] h2:text-is('ARI runs')")
    _choose_wizard_language(page, "日本語")
    page.wait_for_selector(f"{PANEL}[data-view='list'] h2:text-is('ARI 実行一覧')", timeout=30_000)
    phases = page.locator(f"{PANEL} .ari-RunsPanel-row [data-phase]").all_inner_texts()
    assert phases and all(JAPANESE.search(p) for p in phases), phases
    assert page.get_attribute(PANEL, "aria-label") == "ARI 実行一覧"
    open_run(page, runs["failed"].name)
    page.wait_for_selector(f"{PANEL} .ari-RunsPanel-findings li")
    findings = page.locator(f"{PANEL} .ari-RunsPanel-findings li").all_inner_texts()
    assert findings and all(JAPANESE.search(f) for f in findings), findings
    assert english_sentences([line for f in findings for line in f.splitlines()]) == [], findings
    page.locator(PANEL).screenshot(path=str(ARTIFACTS / "runs-panel-status-ja-setting.png"))
    # back to "Follow JupyterLab": English again, still on the run
    _choose_wizard_language(page, "Follow JupyterLab (Settings > Language)")
    page.wait_for_function(
        f"() => document.querySelector('{PANEL} h2').textContent === 'ARI runs'", timeout=30_000)
    page.wait_for_function(
        f"""() => [...document.querySelectorAll('{PANEL} .ari-RunsPanel-findings li')]
                  .every(li => !/[\u3040-\u30ff\u4e00-\u9fff]/.test(li.textContent))""",
        timeout=30_000)
    assert page.locator(f"{PANEL} .ari-RunsPanel-runid").inner_text() == runs["failed"].name
    # the status bar's phase stays in JupyterLab's language throughout
    assert_no_console_errors(page)


@pytest.mark.parametrize("scheduler, why, note", [
    ("error", "unknown: squeue did not answer",
     "Jobs ?: unknown, squeue did not answer: slurm_load_jobs error"),
    ("absent", "unknown: squeue is not available here",
     "Jobs ?: unknown, squeue is not available here (no SLURM on this machine)."),
])
def test_the_list_shows_unknown_job_counts_when_squeue_did_not_answer(plain_lab, page, scheduler,
                                                                      why, note):
    """The server's list as it comes when squeue failed or is missing: every Jobs cell is '?'
    (the run's own view says unknown), never 0; the cell's tooltip and a note under the table
    say what '?' means and why."""
    server, runs = plain_lab

    def as_without_squeue(route):
        response = route.fetch()
        answer = response.json()
        answer["scheduler"] = scheduler
        if scheduler == "error":
            answer["problem"] = "slurm_load_jobs error: Unable to contact slurm controller"
        route.fulfill(response=response, json=answer)

    page.route(LIST_URL, as_without_squeue)
    open_lab(page, server)
    execute_command(page, "ari-jupyter:runs")
    page.wait_for_selector(f"{PANEL}[data-view='list'] .ari-RunsPanel-row")
    jobs = page.locator(f"{PANEL} .ari-RunsPanel-row td:last-child").all_inner_texts()
    assert jobs == ["?"] * len(runs)
    titles = page.eval_on_selector_all(f"{PANEL} .ari-RunsPanel-row td:last-child", "tds => tds.map(td => td.title)")
    assert titles == [why] * len(runs)
    assert page.locator(f"{PANEL} .ari-RunsPanel-jobsnote").inner_text().startswith(note)
    page.unroute_all(behavior="wait")  # the panel polls: let a list on its way be answered
    assert_no_console_errors(page)


def _unknown_jobs(route):
    """The server's list as it comes when squeue failed: every Jobs cell is '?'."""
    response = route.fetch()
    answer = response.json()
    answer["scheduler"] = "error"
    answer["problem"] = "slurm_load_jobs error: Unable to contact slurm controller"
    route.fulfill(response=response, json=answer)


def _unknown_jobs_and_a_long_metric_name(route):
    """As _unknown_jobs, with the best metric named as the recorded demo run names its own
    (``triad_mbps``): a name with a '_' that a narrow column used to cut as "triad_mb ps"."""
    response = route.fetch()
    answer = response.json()
    answer["scheduler"] = "error"
    answer["problem"] = "slurm_load_jobs error: Unable to contact slurm controller"
    for run in answer.get("runs", []):
        if run.get("best_metric"):
            run["best_metric"]["name"] = "triad_mbps"
    route.fulfill(response=response, json=answer)


# WCAG's contrast ratio of each phase badge's text on its own background.
_BADGE_CONTRAST = """panel => [...panel.querySelectorAll('.ari-RunsPanel-row [data-phase]')].map(e => {
  const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = c => { const [r, g, b] = rgb(c).map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const s = getComputedStyle(e);
  const [a, b] = [lum(s.color), lum(s.backgroundColor)].sort((x, y) => y - x);
  return [e.dataset.phase, Math.round((a + 0.05) / (b + 0.05) * 10) / 10];
})"""


def _list_fits(page) -> dict:
    try:
        return measure_laid_out(page, _LIST_LAYOUT, PANEL)
    except AssertionError as hidden:  # the lab's start-up hid the panel again
        print(hidden)
        execute_command(page, "ari-jupyter:runs")
        return measure_laid_out(page, _LIST_LAYOUT, PANEL)


def test_the_whole_list_fits_the_side_panel_in_light_and_dark(lab_in_each_language, page):
    """At the side panel's default width every column is seen, the Jobs column too, with a run
    that has a best metric and with squeue failed ('?'); each phase badge is readable; pictured
    in Light and Dark."""
    lang, server, runs = lab_in_each_language
    # a run whose hand-off is loading ARI: its 'starting' badge is measured too
    starting = runs["failed"].parent / "20261201110000_starting_triad"
    copy_case("not-started", starting.parent.parent / "fourth").rename(starting)
    with live_handoff(starting):
        runs = {**runs, "starting": starting}
        page.route(LIST_URL, _unknown_jobs_and_a_long_metric_name)
        page.goto(server.url("/lab?reset"))
        page.wait_for_selector(".jp-LauncherCard", timeout=60_000)
        # at start-up the panel follows the starting run, and the status bar says it starts
        page.wait_for_selector(f"{PANEL}[data-view='status'][data-phase='starting']", state="attached",
                               timeout=60_000)
        assert page.locator(".ari-RunPhaseStatus").inner_text() == {
            "en": "ARI run: starting", "ja": "ARI の実行: 起動中"}[lang]
        execute_command(page, "ari-jupyter:runs")
        page.locator(f"{PANEL} .ari-RunsPanel-header button").click()  # All runs
        page.wait_for_selector(f"{PANEL}[data-view='list'] .ari-RunsPanel-row[data-run-id='{starting.name}'] "
                               "[data-phase='starting']")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for theme in THEMES:
            set_theme(page, theme)
            layout = _list_fits(page)
            assert layout["past_edge"] == [], (theme, layout)  # nothing hides at the panel's edge
            assert layout["split_headers"] == [], (theme, layout)
            faint = [badge for badge in page.eval_on_selector(PANEL, _BADGE_CONTRAST) if badge[1] < 4.5]
            assert faint == [], (theme, faint)  # every phase word readable on its badge
            jobs = page.locator(f"{PANEL} .ari-RunsPanel-row td:last-child").all_inner_texts()
            assert jobs == ["?"] * len(runs)
            # a metric name wraps after its '_' or between words, never inside one ("triad_mb ps")
            assert page.eval_on_selector(PANEL, _WORDS_SPLIT) == [], theme
            legend = {"en": "Search nodes: done/failed/running/total",
                      "ja": "探索ノード: 完了/失敗/実行中/全体"}[lang]
            assert page.locator(f"{PANEL} .ari-RunsPanel-legend").inner_text() == legend
            page.locator(PANEL).screenshot(path=str(ARTIFACTS / f"runs-panel-list-{lang}-{theme}.png"))
        set_theme(page, "light")
        page.unroute_all(behavior="wait")
        assert_no_console_errors(page)


# The words of the best-metric cells that a line break cuts (a word: up to and with a '_').
_WORDS_SPLIT = """panel => { const cut = [];
  for (const cell of panel.querySelectorAll('td.ari-RunsPanel-best')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.textContent.matchAll(/[^\\s_]+_?/g)) {
        const range = document.createRange();
        range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (lines.size > 1) cut.push(m[0]);
      }
    }
  }
  return cut; }"""
LEDGER = REPO / "tests" / "fixtures" / "ari_typed_hpc_v1" / "hpc-jobs-v1.json"
# What of the jobs' section is cut at the panel's edge (its width at the side panel's default).
_PAST_EDGE = """panel => { const edge = panel.getBoundingClientRect().right;
  return [...panel.querySelectorAll('.ari-RunsPanel-jobs *')]
    .filter(e => e.getBoundingClientRect().right > edge + 0.5 || e.scrollWidth > e.clientWidth + 1)
    .map(e => e.tagName + '.' + e.className); }"""
LEDGER_SHOWN = {
    "en": ("Recorded request: partition small · 2 nodes · 4 CPUs per task · no GPU · "
           "time limit 01:00:00 · launcher srun", "Handle: SLURM job 4107",
           "Known only from ARI’s submission ledger: SLURM no longer lists this job."),
    "ja": ("記録された要求: パーティション small · 2 ノード · タスクあたり 4 CPU · GPU なし · "
           "時間制限 01:00:00 · ランチャー srun", "ハンドル: SLURM ジョブ 4107",
           "ARI の投入台帳でのみ分かるジョブです: SLURM はこのジョブをもう表示しません。"),
}


def test_a_run_with_a_ledger_shows_each_jobs_recorded_request_and_handle(lab_in_each_language, page):
    """A checkpoint of the newer ARI keeps its submission ledger; on a machine without SLURM the
    run's view still lists every job the ledger holds a handle for, each with the request ARI
    recorded and its job id, marked as known only from the ledger; the claim that never got a
    job id is not listed. Pictured: English in Light, 日本語 in Dark."""
    lang, server, runs = lab_in_each_language
    theme = {"en": "light", "ja": "dark"}[lang]
    run = runs["failed"]
    (run / LEDGER_FILE).write_bytes(LEDGER.read_bytes())  # ARI's default place for it
    open_run_in_fresh_lab(page, server, run)
    reproduce = page.locator(f"{PANEL} .ari-RunsPanel-job[data-job-id='4107']")
    reproduce.locator(".ari-RunsPanel-recorded").wait_for(timeout=30_000)
    jobs = page.locator(f"{PANEL} .ari-RunsPanel-job")
    assert jobs.evaluate_all("js => js.map(j => [j.dataset.jobId, j.dataset.source])") == \
        [["4101", "ledger"], ["4102", "ledger"], ["4107", "ledger"]]
    request, handle, forgotten = LEDGER_SHOWN[lang]
    assert reproduce.locator(".ari-RunsPanel-recorded").inner_text() == request
    assert reproduce.locator(".ari-RunsPanel-handle").inner_text() == handle
    assert page.locator(f"{PANEL} .ari-RunsPanel-forgotten").all_inner_texts() == [forgotten] * 3
    set_theme(page, theme)
    section = page.locator(f"{PANEL} .ari-RunsPanel-jobs")
    section.scroll_into_view_if_needed()
    assert page.eval_on_selector(PANEL, _PAST_EDGE) == []  # nothing cut at the panel's edge
    shots = Path(os.environ.get("ARI_SCREENSHOTS_DIR") or ARTIFACTS)
    shots.mkdir(parents=True, exist_ok=True)
    section.screenshot(path=str(shots / f"runs-panel-ledger-{lang}-{theme}.png"))
    set_theme(page, "light")
    assert_no_console_errors(page)


def open_run_in_fresh_lab(page, server, run) -> None:
    """A fresh lab, the Runs panel opened, then the run's view."""
    page.goto(server.url("/lab?reset"))
    page.wait_for_selector(".jp-LauncherCard", timeout=60_000)
    execute_command(page, "ari-jupyter:runs")
    page.wait_for_selector(f"{PANEL}[data-view='list'] .ari-RunsPanel-row[data-run-id='{run.name}']",
                           timeout=60_000)
    open_run(page, run.name)


def picture_run_view(page, theme: str, top, bottom, shown, name: str) -> None:
    """In ``theme``, with ``shown`` scrolled into view and nothing cut at the panel's edge, a
    picture of the run's view from ``top`` to ``bottom`` (README screenshots); Light after."""
    set_theme(page, theme)
    shown.scroll_into_view_if_needed()
    assert page.eval_on_selector(PANEL, _PAST_EDGE) == []  # nothing cut at the panel's edge
    shots = Path(os.environ.get("ARI_SCREENSHOTS_DIR") or ARTIFACTS)
    shots.mkdir(parents=True, exist_ok=True)
    first, last = top.bounding_box(), bottom.bounding_box()
    page.screenshot(path=str(shots / name), clip={
        "x": first["x"], "y": first["y"], "width": max(first["width"], last["width"]),
        "height": last["y"] + last["height"] - first["y"]})
    set_theme(page, "light")


CHAIN_AND_COST_SHOWN = {
    "en": ("Follow-up allocations: 1 of 2 submitted", "Cost so far", "123,456 tokens"),
    "ja": ("2 個中 1 個を投入済み", "これまでのコスト", "123,456"),
}


def test_a_run_with_follow_ups_and_llm_use_shows_the_chain_and_the_cost(lab_in_each_language, page):
    """A run whose Write approved two follow-up allocations, one submitted, and whose ARI
    recorded its LLM use: the run's view says the chain link by link (the allocation before →
    the follow-up, and its state) and what the run has cost so far (node-hours, tokens and
    dollars per phase and model). Pictured for the README: English in Light, 日本語 in Dark."""
    lang, server, runs = lab_in_each_language
    theme = {"en": "light", "ja": "dark"}[lang]
    run = runs["failed"]
    config = json.loads((run / "launch_config.json").read_text())
    config["ari_jupyter"]["state"]["followups"] = 2
    (run / "launch_config.json").write_text(json.dumps(config))
    (run / "followups.json").write_text(json.dumps(
        {"links": [{"job_id": "4108", "after": "4100", "submitted_at": "2026-12-01T10:05:00"}]}))
    (run / "cost_summary.json").write_text(json.dumps({
        "total_cost_usd": 1.234567, "total_tokens": 123456, "call_count": 42,
        "by_phase": {"bfts": {"cost_usd": 1.0, "tokens": 100000}, "paper": {"cost_usd": 0.234567, "tokens": 23456}},
        "by_model": {"gpt-4o": {"cost_usd": 1.234567, "tokens": 123456}}}))
    open_run_in_fresh_lab(page, server, run)
    chain = page.locator(f"{PANEL} .ari-RunsPanel-chain")
    chain.wait_for(timeout=30_000)
    cost = page.locator(f"{PANEL} .ari-RunsPanel-cost")
    summary, heading, tokens = CHAIN_AND_COST_SHOWN[lang]
    lines = chain.locator("p").all_inner_texts()
    assert len(lines) == 2 and summary in lines[0] and "4100 → 4108" in lines[1], lines
    assert cost.locator("h4").inner_text() == heading
    assert any(tokens in line for line in cost.locator("p").all_inner_texts()), cost.inner_text()
    picture_run_view(page, theme, page.locator(f"{PANEL} .ari-RunsPanel-jobs"), cost, chain,
                     f"runs-panel-chain-cost-{lang}-{theme}.png")
    assert_no_console_errors(page)


HISTORY_SHOWN = {
    "en": ("Phase history", "for 30 s", "for 1 h 30 min"),
    "ja": ("フェーズの履歴", "30 秒間", "1 時間 30 分間"),
}


def test_a_run_shows_when_it_entered_each_phase(lab_in_each_language, page):
    """The run's view says when the run entered each phase, read from the files it left (the
    wizard's, the hand-off log's name, the paper pipeline's marker, ari.log's end), each with
    how long it lasted, in the panel's language; no SLURM is asked for it. Pictured: English
    in Light, 日本語 in Dark."""
    lang, server, runs = lab_in_each_language
    theme = {"en": "light", "ja": "dark"}[lang]
    run = runs["finished"]
    start = time.time() - 3 * 3600
    for name in ("experiment.md", "launch_config.json"):
        os.utime(run / name, (start, start))
    for log in run.glob("ari_run_*.log"):
        log.unlink()
    handoff = run / f"ari_run_{time.strftime('%Y%m%d%H%M%S', time.localtime(start + 30))}.log"
    handoff.write_text("[Paper Pipeline] Complete: ['write_paper']\n")
    (run / ".pipeline_started").touch()
    os.utime(run / ".pipeline_started", (start + 30 + 5400, start + 30 + 5400))
    open_run_in_fresh_lab(page, server, run)
    history = page.locator(f"{PANEL} .ari-RunsPanel-history")
    history.wait_for(timeout=30_000)
    heading, first, paper = HISTORY_SHOWN[lang]
    assert history.locator("h4").inner_text() == heading
    rows = history.locator(".ari-RunsPanel-phase")
    phases = rows.evaluate_all("items => items.map(i => i.dataset.phase)")
    # the copied run's tree began days before this start: left out, never "for 138 h"
    assert phases == ["not-started", "starting", "paper", "finished"], phases
    lines = rows.all_inner_texts()
    assert first in lines[0] and paper in lines[2], lines
    days = history.locator(".ari-RunsPanel-day").all_inner_texts()
    assert days[0] == time.strftime("%Y-%m-%d", time.localtime(start)), days
    assert rows.first.get_attribute("title").endswith(
        {"en": "read from experiment.md", "ja": "experiment.md から読んだ時刻"}[lang])
    picture_run_view(page, theme, page.locator(f"{PANEL} .ari-RunsPanel-facts"), history, history,
                     f"runs-panel-history-{lang}-{theme}.png")
    assert_no_console_errors(page)


def test_without_the_server_extension_the_panel_says_how_to_enable_it(tmp_path, page):
    """The lab extension without its server half (an install that skipped the server config):
    the list's 404 is not left as "404 Not Found" but says which extension to enable."""
    server = start_jupyter(tmp_path, app="lab", env=lab_env(tmp_path), settings=LAB_SETTINGS,
                           args=[*LAB_ARGS, "--ServerApp.jpserver_extensions=ari_jupyter.server=False"])
    try:
        open_lab(page, server)
        execute_command(page, "ari-jupyter:runs")
        error = page.locator(f"{PANEL} .ari-RunsPanel-error")
        error.wait_for(timeout=30_000)
        assert "jupyter server extension enable ari_jupyter.server" in error.inner_text()
    finally:
        server.stop()


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_on_a_demo_site_the_panel_follows_the_recorded_run_and_slurm_is_never_called(tmp_path, page, lang):
    """``ari-jupyter lab`` off-cluster (its demo site in ARI_JUPYTER_DEMO_SITE), with SLURM
    commands on PATH that note every call: the panel lists the recorded 2-node run, opens it with
    its phase, best metric, jobs (the reproduce job's ranks on both nodes) and the note that it is
    a recording; nothing calls SLURM."""
    from ari_jupyter.hosts.recorded_run import RecordedRun
    from ari_jupyter.hosts.recorded_site import RecordedSite

    calls, bin_dir = tmp_path / "slurm-calls.log", tmp_path / "fake-slurm"
    bin_dir.mkdir()
    for name in ("squeue", "sacct", "scancel", "sinfo", "sbatch", "srun", "scontrol"):
        (bin_dir / name).write_text(f'#!/bin/sh\necho "{name} $*" >> "{calls}"\nexit 1\n')
        (bin_dir / name).chmod(0o755)
    (run_id,) = RecordedSite.load("rccs-cloud").runs
    env = lab_env(tmp_path)
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", ARI_JUPYTER_DEMO_SITE="rccs-cloud",
               LANG="C.UTF-8")
    settings = {**LAB_SETTINGS}
    if lang == "ja":
        settings["@jupyterlab/translation-extension/plugin"] = {"locale": "ja_JP"}
    server = start_jupyter(tmp_path, app="lab", env=env, settings=settings, args=LAB_ARGS)
    try:
        if lang == "ja":
            page.goto(server.url("/lab?reset"))
            page.wait_for_selector('.jp-LauncherCard:has-text("ARI マルチノード設定")', timeout=60_000)
        else:
            open_lab(page, server)
        execute_command(page, "ari-jupyter:runs")
        page.wait_for_selector(f"{PANEL}[data-view='list'] .ari-RunsPanel-row[data-run-id='{run_id}']",
                               timeout=60_000)
        open_run(page, run_id)
        page.wait_for_selector(f"{PANEL}[data-phase='finished']")
        assert page.locator(f"{PANEL} [data-field='best']").inner_text().strip()
        jobs = page.locator(f"{PANEL} .ari-RunsPanel-job")
        assert jobs.count() >= 3
        assert page.locator(f"{PANEL} .ari-RunsPanel-job button").count() == 0  # nothing to cancel
        tails = "\n".join(page.locator(f"{PANEL} .ari-RunsPanel-jobtail").all_inner_texts())
        assert re.search(r"rank \d of \d on n1", tails) and re.search(r"rank \d of \d on n2", tails), tails
        note = {"en": "A recorded run", "ja": "記録された実行"}[lang]
        assert note in page.locator(PANEL).inner_text()
        # each job as accounting recorded its end: the ones the panel's Cancel ended CANCELLED
        # and flagged as outside what was approved, the others COMPLETED; none still running
        cancelled = RecordedRun.load(run_id).cancelled_from_panel
        states = {job.get_attribute("data-job-id"): job.get_attribute("data-state") for job in jobs.all()}
        assert {j: states.get(j) for j in cancelled} == {j: "CANCELLED" for j in cancelled}, states
        assert {s for j, s in states.items() if j not in cancelled} == {"COMPLETED"}, states
        flagged = page.locator(f"{PANEL} .ari-RunsPanel-job[data-outside='yes']")
        assert sorted(flagged.evaluate_all("els => els.map(e => e.dataset.jobId)")) == sorted(cancelled)
        assert page.locator(f"{PANEL} .ari-RunsPanel-exit").count() == len(states)  # exit codes, from sacct
        said = {"en": "cancelled job {}", "ja": "ジョブ {} をキャンセルしました"}[lang]  # who: the cancel record
        assert [page.locator(f"{PANEL} .ari-RunsPanel-job[data-job-id='{j}'] .ari-RunsPanel-cancelledby").inner_text()
                .count(said.format(j)) for j in cancelled] == [1] * len(cancelled)
        assert page.locator(f"{PANEL} .ari-RunsPanel-cancelledby").count() == len(cancelled)
        facts = page.locator(PANEL).inner_text()
        assert {"en": "SLURM accounting", "ja": "SLURM アカウンティング"}[lang] in facts, facts[-2000:]
        theme = {"en": "light", "ja": "dark"}[lang]  # pictured: English in Light, 日本語 in Dark
        set_theme(page, theme)
        assert page.eval_on_selector(PANEL, _PAST_EDGE) == []  # nothing cut at the panel's edge
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.set_viewport_size({"width": 1400, "height": 3200})  # the whole run's view, jobs and cost too
        page.locator(PANEL).screenshot(path=str(ARTIFACTS / f"runs-panel-recorded-run-{lang}-{theme}.png"))
        assert_no_console_errors(page)
    finally:
        server.stop()
    assert not calls.exists(), f"the lab called SLURM on a demo site: {calls.read_text()}"
