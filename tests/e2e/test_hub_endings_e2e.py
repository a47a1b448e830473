"""Restarts and endings of a hosted JupyterLab, with an ``ari run`` going in its terminal.

One hub on the test bed, set up as docs/admin.md tells a site: it keeps servers over a restart
(``cleanup_servers=False``), jupyterhub-idle-culler stops servers idle for 90 s, and the servers
are told that timeout. Two users at once, each in Chromium:

- **restart and cull** (``ari-hubkeep``, English, light): the status bar and step 4 say how long
  the run has; the hand-off starts ``ari run`` (ARI's own code, the scripted LLM) in a terminal of
  the server; the hub restarts and the user gets the same server (same job, same process) and
  the Runs panel follows the run on (its root node's metric arrives after the restart). The open
  tab keeps the server in use past the timeout; closed, the server is culled with the run.
- **walltime** (``ari-hubwall``, 日本語, dark): a server whose job has 7 minutes; the same
  warnings in Japanese; the job reaches its time limit with the run inside.

Afterwards each user's new server shows the run as interrupted in the Runs panel, with the exact
lines that continue it, the lines ``ari-jupyter status`` gives. ARI stays alive at a chosen point
because the scripted LLM holds its answers (``httpd.gate``), as a model taking its time would.
"""
from __future__ import annotations

import json
import os
import pwd
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, require_browser
from .jupyter_process import REPO
from .lab_helpers import LAUNCHER_CARD, STATUS_ITEM, execute_command
from .test_hub_e2e import (HUB_SCRIPT, SPAWNER_JOB_NAME, USER_SETTINGS, _as_user, _clock_seconds,
                           _env_file, _hub_errors, in_job, submit_login, wait_for_lab)
from .test_other_frontends_e2e import STEP_BUTTONS

sys.path.insert(0, str(REPO / "tests" / "ari_real"))
sys.path.insert(0, str(REPO / "tests"))
from scripted_llm.server import serve  # noqa: E402
from wholerun_support import ari_for_users, phase_models_args, wait_for  # noqa: E402,F401  (a fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.slurm, pytest.mark.ari, pytest.mark.slow]

KEEP, WALL = "ari-hubkeep", "ari-hubwall"
CULL_SECONDS = 90
WALLTIME = "00:07:00"
PANEL = "#ari-jupyter-runs"
OPEN_PAGES: dict = {}  # name -> page, for screenshots when the test fails
OPEN_TERMINAL = "ari-jupyter:open-terminal"
KEY = "sk-hubend-" + "4c1d" * 8
GOAL = "Measure the bandwidth of a triad loop in a SLURM job and how it changes with the array length."
# the looks: the restart-and-cull user in English and the light theme, the walltime user in
# 日本語 and the dark theme
LOOKS = {KEEP: {}, WALL: {
    "@jupyterlab/translation-extension/plugin.jupyterlab-settings": {"locale": "ja_JP"},
    "@jupyterlab/apputils-extension/themes.jupyterlab-settings": {"theme": "JupyterLab Dark"}}}
# what each says before the end comes: the time left, the idle timeout (status bar, step 4)
TOLD = {KEEP: {"bar": rf"\d+:\d\d:\d\d left · stops after {CULL_SECONDS} s idle",
               "step4": r"The run has ((?:about )?[\d.]+ (?:min|hours?)) at most \(this job's time left\), "
                        rf"and the hub stops this server after {CULL_SECONDS} s without use"},
        WALL: {"bar": rf"残り \d+:\d\d · {CULL_SECONDS} 秒操作なしで停止",
               "step4": r"実行に使える時間は最大 ((?:約 )?[\d.]+ (?:分|時間))（このジョブの残り時間）です。さらに "
                        rf"JupyterHub は {CULL_SECONDS} 秒以上使われないとこのサーバーを停止し"}}
# a duration as step 4 says it (time_fit.hours): minutes under an hour, else hours to a tenth
DURATION = re.compile(r"(?:about |約 )?([\d.]+) (min|分|hours?|時間)")


def _said_seconds(said: str) -> tuple[float, float]:
    """The seconds a sentence's duration says, and how far its rounding may be off."""
    number, unit = DURATION.fullmatch(said).groups()
    if unit in ("min", "分"):
        return float(number) * 60, 30
    return float(number) * 3600, 180 if float(number) < 10 else 1800


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"hub-{name}.png"))


def _squeue(env: dict, *args: str) -> list[str]:
    out = subprocess.run(["squeue", "-h", *args], capture_output=True, text=True, env=env, timeout=30)
    return [line for line in out.stdout.splitlines() if line.strip()]


def server_job(env: dict, user: str) -> str | None:
    """The id of the user's server job in the queue (the hub's batch job), or None."""
    found = _squeue(env, "-u", user, "-n", SPAWNER_JOB_NAME, "-o", "%i %T")
    return next((line.split()[0] for line in found if line.split()[1] in ("RUNNING", "PENDING")), None)


def processes(uid: int, needle: str) -> list[int]:
    """Pids of the user's live processes whose command line holds ``needle``."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and proc.stat().st_uid == uid and \
                    needle in (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                pids.append(int(proc.name))
        except OSError:
            continue
    return sorted(pids)


@pytest.fixture(scope="module")
def hub(_testbed, ari_for_users):
    """The hub as docs/admin.md sets it up for endings: servers kept over a restart, idle ones
    culled after 90 s; the walltime user's server job has 7 minutes. Stopped at the end."""
    testbed = _testbed.ensure("nogres")
    env = {**os.environ, **testbed.env}
    subprocess.run(["bash", str(HUB_SCRIPT), "stop"], capture_output=True, text=True, timeout=300,
                   stdin=subprocess.DEVNULL, env=env, check=True)
    setup = {"ARI_HUB_USERS": f"{KEEP} {WALL}", "ARI_HUB_KEEP_SERVERS": "1",
             "ARI_HUB_CULL_IDLE": str(CULL_SECONDS), "ARI_HUB_RUNTIME_OF": f"{WALL}={WALLTIME}",
             # one CPU per node for a server: ARI's BFTS jobs (2 CPUs) of both users fit beside them
             "ARI_HUB_OPTIONS": "--nodes=2 --ntasks=2"}
    started = subprocess.run(["bash", str(HUB_SCRIPT), "start", str(REPO)], capture_output=True,
                             text=True, timeout=1500, stdin=subprocess.DEVNULL, env={**env, **setup})
    assert started.returncode == 0, f"the hub did not start:\n{started.stderr[-4000:]}"
    hub = _env_file(Path(started.stdout.strip().splitlines()[-1]))
    hub.update(slurm_env=env, setup=setup, ari=str(ari_for_users))
    yield hub
    stopped = subprocess.run(["bash", str(HUB_SCRIPT), "stop"], capture_output=True, text=True,
                             timeout=300, stdin=subprocess.DEVNULL, env={**env, **setup})
    assert stopped.returncode == 0, stopped.stderr


@pytest.fixture(scope="module")
def browser():
    """Chromium with a window per user (each its own cookies), none of them slowed down as a
    window in the back: both users look at their own screen."""
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=[
            *CHROMIUM_ARGS, "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
            "--disable-backgrounding-occluded-windows"])
        yield chromium
        chromium.close()


def prepare(hub: dict, user: str) -> None:
    """The user's Lab settings (their look) and login profile: the site's ARI on PATH (with the
    library path its relocated Python needs), the key for its openai backend."""
    home = Path("/home") / user
    for name, values in {**USER_SETTINGS, **LOOKS[user]}.items():
        path = home / ".jupyter" / "lab" / "user-settings" / name
        _as_user(user, "mkdir", "-p", str(path.parent)).check_returncode()
        subprocess.run(["/usr/sbin/runuser", "-u", user, "--", "tee", str(path)], input=json.dumps(values),
                       capture_output=True, text=True, timeout=30, check=True)
    ari = Path(hub["ari"])
    profile = (f'export PATH="{ari}/venv/bin:{hub["ARI_HUB_SITE"]}/bin:$PATH"\n'
               f'export LD_LIBRARY_PATH="{ari}/python/lib"\n'
               f'export OPENAI_API_KEY={KEY}\nexport NO_PROXY=127.0.0.1,localhost\n')
    subprocess.run(["/usr/sbin/runuser", "-u", user, "--", "tee", str(home / ".bash_profile")],
                   input=profile, capture_output=True, text=True, timeout=30, check=True)


def log_in(browser, hub: dict, user: str):
    """A new window logged in as ``user``, on the lab the hub spawned; (page, server job id)."""
    page = browser.new_context(viewport={"width": 1400, "height": 950}).new_page()
    page.set_default_timeout(30_000)
    OPEN_PAGES[f"{user}-{len(OPEN_PAGES)}"] = page
    submit_login(page, hub, user)
    job = wait_for(f"{user}'s server job", lambda: server_job(hub["slurm_env"], user), timeout=60)
    return page, job


def wait_until_shown(locator, pattern: str, timeout: float) -> str:
    """The locator's text once ``pattern`` is found in it; failing, what it showed instead."""
    deadline, shown = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        shown = locator.inner_text()
        if re.search(pattern, shown):
            return shown
        time.sleep(1)
    pytest.fail(f"not shown within {timeout:.0f} s: {pattern!r}\nshown: {shown[-3000:]}")


def assert_told_how_long(page, hub: dict, user: str, job_id: str) -> None:
    """Before the end: the status bar says the time left and the idle timeout; step 4 says how
    long the run has (the job's time left, as squeue counts it) and that the hub stops the idle
    server with the run."""
    item = page.locator(f"{STATUS_ITEM}:visible")
    item.wait_for(timeout=60_000)
    shown = wait_until_shown(item, TOLD[user]["bar"], 90)
    assert f"SLURM {job_id}" in shown, shown
    page.click(LAUNCHER_CARD if user == KEEP else '.jp-LauncherCard:has-text("ARI マルチノード設定")',
               timeout=120_000)
    page.wait_for_selector(".ari-wizard .ari-alloc-facts", timeout=120_000)
    page.locator(STEP_BUTTONS).nth(3).click()
    wizard = page.locator(".ari-wizard").first
    said, rounding = _said_seconds(
        re.search(TOLD[user]["step4"], wait_until_shown(wizard, TOLD[user]["step4"], 120)).group(1))
    left = _clock_seconds(_squeue(hub["slurm_env"], "-j", job_id, "-o", "%L")[0])
    # the probe ran a little before squeue answers here; the sentence rounds
    assert -rounding <= said - left <= 180 + rounding, (said, left)
    wizard.get_by_text(re.compile(TOLD[user]["step4"])).first.scroll_into_view_if_needed()


def start_run(page, hub: dict, user: str, job_id: str, api_base: str) -> Path:
    """The checkpoint written in the user's job (ARI's openai backend at the scripted LLM), and
    its hand-off run in a terminal of the server, as "Open in terminal" runs it."""
    emitted = in_job(hub, user, job_id, "ari-jupyter", "emit", "--json", "--title", "Triad under the hub",
                     "--goal", GOAL, "--metric", "triad_mbps", "--partition", "large", "--max-cpus", "2",
                     "--walltime", "00:10:00", "--workspace", f"/home/{user}/ari-end", "--no-probes",
                     *phase_models_args(api_base), "--max-nodes", "3", "--max-depth", "2",
                     "--parallel", "1", "--max-react", "20", "--node-timeout-min", "10", "--no-review")
    assert emitted.returncode == 0, emitted.stderr[-3000:]
    out = json.loads(emitted.stdout)
    execute_command(page, OPEN_TERMINAL, {"command": out["handoff_command"], "run": True})
    return Path(out["checkpoint_dir"])


def bfts_job(hub: dict, user: str, timeout: float = 300) -> str:
    """The id of the first of ARI's BFTS jobs of the user (a job that is not the server)."""
    def found():
        jobs = _squeue(hub["slurm_env"], "-u", user, "-o", "%i %j")
        return next((line.split()[0] for line in jobs if line.split()[1] != SPAWNER_JOB_NAME), None)
    return wait_for(f"{user}'s first BFTS job", found, timeout=timeout)


def open_panel_on(page, run_id: str) -> None:
    """The Runs panel on this run: already shown (a new run becomes the shown one), or chosen
    from the list."""
    execute_command(page, "ari-jupyter:runs")
    shown = f"{PANEL}[data-view='status'][data-run-id='{run_id}']"
    row = f"{PANEL} .ari-RunsPanel-row[data-run-id='{run_id}']"
    page.wait_for_selector(f"{shown}, {row}", timeout=90_000)
    if not page.locator(shown).count():
        page.click(row)
    page.wait_for_selector(shown, timeout=60_000)


def assert_interrupted_with_its_resume(page, hub: dict, user: str, job_id: str, checkpoint: Path,
                                       shot: str) -> None:
    """The Runs panel of the user's new server: the run interrupted, its finding giving the
    lines ``ari-jupyter status`` gives to continue it."""
    open_panel_on(page, checkpoint.name)
    page.wait_for_selector(f"{PANEL}[data-view='status'][data-phase='interrupted']", timeout=90_000)
    said = json.loads(in_job(hub, user, job_id, "ari-jupyter", "status", "--json", str(checkpoint)).stdout)
    assert said["phase"] == "interrupted", said["phase"]
    finding = next(f for f in said["findings"] if f["rule"] == "run-interrupted")
    lines = [finding["params"]["resume"], *([finding["params"]["requeue"]] if "requeue" in finding["params"] else [])]
    assert f"ARI_CHECKPOINT_DIR={checkpoint}" in finding["params"]["resume"] and "ari resume" in lines[0]
    # each line whole, as code the user copies
    shown = page.locator(f"{PANEL} .ari-RunsPanel-findings li[data-rule='run-interrupted'] code").all_inner_texts()
    for line in lines:
        assert line in shown, (line, shown)
    page.locator(PANEL).screenshot(path=str(ARTIFACTS / f"hub-{shot}.png"))


def test_restart_cull_and_walltime_with_a_run_in_the_terminal(hub, browser, tmp_path):
    slurm_env = hub["slurm_env"]
    llm = {user: serve(tmp_path / f"llm-{user}.jsonl") for user in (KEEP, WALL)}
    base = {user: f"http://127.0.0.1:{server.server_address[1]}/v1" for user, server in llm.items()}
    uid = {user: pwd.getpwnam(user).pw_uid for user in (KEEP, WALL)}
    for user in (KEEP, WALL):
        prepare(hub, user)
    try:
        # the walltime user first: their 7 minutes start with the job
        wall, wall_job = log_in(browser, hub, WALL)
        assert_told_how_long(wall, hub, WALL, wall_job)
        _shot(wall, "walltime-told-ja")
        wall_ckpt = start_run(wall, hub, WALL, wall_job, base[WALL])
        bfts_job(hub, WALL)
        llm[WALL].gate.clear()  # ARI waits on its model from now on, alive, until the job ends

        keep, keep_job = log_in(browser, hub, KEEP)
        logged_in = time.monotonic()
        assert_told_how_long(keep, hub, KEEP, keep_job)
        _shot(keep, "idle-cull-told-en")
        keep_ckpt = start_run(keep, hub, KEEP, keep_job, base[KEEP])
        bfts_job(hub, KEEP)
        llm[KEEP].gate.clear()  # the root node waits on its model: running, no metric yet
        open_panel_on(keep, keep_ckpt.name)
        keep.wait_for_selector(f"{PANEL}[data-phase='exploring']", timeout=90_000)
        wait_until_shown(keep.locator(f"{PANEL} [data-field='nodes']"), r"\b1 running", 90)
        assert not re.search(r"\d", keep.locator(f"{PANEL} [data-field='best']").inner_text())

        # the hub restarts: the same server (job and process) and the same ARI run go on
        server_pids = processes(uid[KEEP], "jupyterhub-singleuser")
        ari_pids = processes(uid[KEEP], str(keep_ckpt / "experiment.md"))
        assert server_pids and ari_pids, (server_pids, ari_pids)
        restarted = subprocess.run(["bash", str(HUB_SCRIPT), "restart"], capture_output=True, text=True,
                                   timeout=300, stdin=subprocess.DEVNULL, env={**slurm_env, **hub["setup"]})
        assert restarted.returncode == 0, restarted.stderr[-3000:]
        assert server_job(slurm_env, KEEP) == keep_job
        assert processes(uid[KEEP], "jupyterhub-singleuser") == server_pids
        assert set(ari_pids) <= set(processes(uid[KEEP], str(keep_ckpt / "experiment.md")))
        keep.reload()
        wait_for_lab(keep, KEEP)
        open_panel_on(keep, keep_ckpt.name)
        # the run moves on after the restart, and the panel follows: the root's metric arrives
        llm[KEEP].gate.set()
        wait_until_shown(keep.locator(f"{PANEL} [data-field='best']"), r"triad_mbps \d+(\.\d+)? \(node_", 240)
        llm[KEEP].gate.clear()
        _shot(keep, "restart-followed-en")

        # an open tab is use: the server outlives the idle timeout while the tab is open ...
        time.sleep(max(0.0, CULL_SECONDS + 30 - (time.monotonic() - logged_in)))
        assert server_job(slurm_env, KEEP) == keep_job
        # ... and closed, the server is culled with the run in its terminal
        keep.context.close()
        closed = time.monotonic()
        wait_for("the idle server culled", lambda: server_job(slurm_env, KEEP) is None, timeout=CULL_SECONDS + 150, every=2)
        # idle since the tab's last poll (every 30 s) before it closed, not sooner
        assert time.monotonic() - closed >= CULL_SECONDS - 35
        wait_for("ari run gone with the server",
                 lambda: not processes(uid[KEEP], str(keep_ckpt / "experiment.md")), timeout=60)
        assert "Culling server" in Path(hub["ARI_HUB_LOG"]).read_text(errors="replace")

        # the walltime user's job reaches its time limit with the run inside
        wait_for("the server job at its walltime", lambda: server_job(slurm_env, WALL) is None, timeout=540, every=2)
        assert wall_ckpt.is_dir()
        wait_for("ari run gone with its job",
                 lambda: not processes(uid[WALL], str(wall_ckpt / "experiment.md")), timeout=60)
        wall.context.close()

        # afterwards, in new servers: the run interrupted, with the lines that continue it
        for user, ckpt, shot in ((KEEP, keep_ckpt, "interrupted-after-cull-en"),
                                 (WALL, wall_ckpt, "interrupted-after-walltime-ja")):
            page, job_id = log_in(browser, hub, user)
            assert job_id not in (keep_job, wall_job)
            assert_interrupted_with_its_resume(page, hub, user, job_id, ckpt, shot)
            page.context.close()
        errors = [line for line in _hub_errors(hub) if "Traceback" in line or re.search(r"\] 5\d\d ", line)]
        assert errors == [], errors
    except BaseException:
        for name, page in OPEN_PAGES.items():
            try:
                page.screenshot(path=str(ARTIFACTS / f"hub-endings-failed-{name}.png"))
            except Exception:  # a closed window: nothing to show
                pass
        raise
    finally:
        for server in llm.values():
            server.gate.set()
            server.shutdown()
