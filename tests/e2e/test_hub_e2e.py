"""Hosted JupyterLab for real: JupyterHub + batchspawner on the SLURM test bed.

A real unprivileged user logs in to a JupyterHub whose SlurmSpawner starts the single-user
server as a 2-node sbatch job (tests/testbed/hub.sh). In Chromium, as that user: the lab under
/user/<name>/lab, the status bar shows the batch job, the launcher card opens the wizard on
the live allocation, Write puts a checkpoint on the network home, "Open in terminal" opens a
terminal inside the job, the hand-off starts ARI (from the snapshot; its LLM endpoint is
127.0.0.1, where nothing listens), check-handoff passes, and stopping the server from the hub
ends the job with nothing of the user left running. The site layout is the one docs/admin.md
describes, and its checks run here.
"""
from __future__ import annotations

import json
import os
import pwd
import re
import stat
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import ARTIFACTS, assert_no_console_errors
from .jupyter_process import REPO
from .test_other_frontends_e2e import NOTEBOOK, STEP_BUTTONS, assert_no_wizard_errors
from .lab_helpers import (LAUNCHER_CARD, STATUS_ITEM, execute_command, fill_experiment_and_press_write,
                          focus_visible_terminal,
                          visible_terminal_text, wait_terminal_contains, wizard_button)

pytestmark = [pytest.mark.e2e, pytest.mark.slurm]

HUB_SCRIPT = REPO / "tests" / "testbed" / "hub.sh"
DOCS_SCREENSHOTS = REPO / "docs" / "screenshots"
TITLE = "Stencil scaling under the hub"
GOAL = "Measure how the 3D stencil scales from one to two nodes."
METRIC = "GFlops"
PARTITION = "large"  # the server's job runs there: the wizard probes it
REFUSAL = ("sbatch refuses a test job on partition large: allocation failure: "
           "User's group not permitted to use this partition")
OPEN_TERMINAL = "ari-jupyter:open-terminal"
USER_KEY = "sk-hubuser-" + "7f3a9c" * 6   # a key-shaped value of the user's own
# what the user has in Settings: terminal rows in the DOM (xterm draws on a canvas)
USER_SETTINGS = {
    "@jupyterlab/terminal-extension/plugin.jupyterlab-settings": {"screenReaderMode": True},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False},
}


def _env_file(path: Path) -> dict[str, str]:
    env = {}
    for line in path.read_text().splitlines():
        if line.startswith("export ") and "=" in line:
            name, _, value = line[len("export "):].partition("=")
            env[name] = value
    return env


def _as_user(user: str, *argv: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["/usr/sbin/runuser", "-u", user, "--", *argv], capture_output=True,
                          text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)


def _user_jobs(slurm_env: dict, user: str) -> list[str]:
    out = subprocess.run(["squeue", "-h", "-u", user, "-o", "%i %T %D %N"], capture_output=True,
                         text=True, env=slurm_env, timeout=30)
    return [line for line in out.stdout.splitlines() if line.strip()]


def _user_processes(uid: int) -> list[str]:
    """The user's live processes but the server side of its network home (the test bed's
    sshd session serving SFTP as the user, which is the file server, not the user's work)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if proc.stat().st_uid != uid:
                continue
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if state != "Z" and not cmdline.startswith(f"sshd: {pwd.getpwuid(uid).pw_name}@"):
                found.append(f"{proc.name} {cmdline}")
        except (OSError, IndexError):
            continue
    return found


@pytest.fixture
def hub(testbed_nogres):
    """The hub on the no-GRES test bed, as a site runs it; stopped (and checked) at the end."""
    testbed = testbed_nogres
    started = subprocess.run(["bash", str(HUB_SCRIPT), "start", str(REPO)], capture_output=True,
                             text=True, timeout=1500, stdin=subprocess.DEVNULL,
                             env={**os.environ, **testbed.env})
    assert started.returncode == 0, f"the hub did not start:\n{started.stderr[-4000:]}"
    env = _env_file(Path(started.stdout.strip().splitlines()[-1]))
    env["slurm_env"] = {**os.environ, **testbed.env}
    env["testbed"] = testbed
    user = env["ARI_HUB_USER"]
    home = Path(env["ARI_HUB_HOME"])
    for name, values in USER_SETTINGS.items():
        path = home / ".jupyter" / "lab" / "user-settings" / name
        _as_user(user, "mkdir", "-p", str(path.parent)).check_returncode()
        subprocess.run(["/usr/sbin/runuser", "-u", user, "--", "tee", str(path)], input=json.dumps(values),
                       capture_output=True, text=True, timeout=30, check=True)
    # the user's login profile puts the site's ARI on PATH, as ARI's install tells users to, and
    # holds the LLM key ARI's packaged backend (openai) needs; the endpoint is 127.0.0.1, where
    # nothing listens. The key must never reach a file the wizard writes.
    profile = (f'export PATH="{env["ARI_HUB_SITE"]}/bin:{Path(env["ARI_HUB_SITE"]).parent}/ari/bin:$PATH"\n'
               f'export OPENAI_API_KEY={USER_KEY}\n'
               'export ARI_LLM_API_BASE=http://127.0.0.1:9/v1\n')
    subprocess.run(["/usr/sbin/runuser", "-u", user, "--", "tee", str(home / ".bash_profile")],
                   input=profile, capture_output=True, text=True, timeout=30, check=True)
    yield env
    stopped = subprocess.run(["bash", str(HUB_SCRIPT), "stop"], capture_output=True, text=True,
                             timeout=300, stdin=subprocess.DEVNULL, env=env["slurm_env"])
    assert stopped.returncode == 0, stopped.stderr


def _rerun_checks(page, expect: str):
    """Press Re-run in step 2 and wait until the sbatch row's verdict matches ``expect``
    (a regular expression) and no row says "checking…" any more; the sbatch row."""
    wizard_button(page, "Re-run").click()
    page.wait_for_function(
        "([expect]) => { const rows = [...document.querySelectorAll('.ari-wizard .ari-probe-row')];"
        " const sbatch = document.querySelector('.ari-wizard .ari-probe-sbatch .ari-probe-summary');"
        " return sbatch && new RegExp(expect).test(sbatch.textContent)"
        " && !rows.some(r => /^checking…$/.test("
        "(r.querySelector('.ari-probe-summary') || {textContent: ''}).textContent.trim())); }",
        arg=[expect], timeout=120_000)
    return page.locator(".ari-wizard .ari-probe-sbatch").first


def _shot(page, name: str, docs: bool = False) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"hub-{name}.png"))
    if docs:
        page.screenshot(path=str(DOCS_SCREENSHOTS / f"hub-{name}.png"))


def test_hub_user_sets_up_and_hands_off_a_run_inside_their_batch_job(hub, page, tmp_path):
    user, home, base = hub["ARI_HUB_USER"], Path(hub["ARI_HUB_HOME"]), hub["ARI_HUB_URL"]
    uid = pwd.getpwnam(user).pw_uid
    slurm_env = hub["slurm_env"]

    # docs/admin.md's check, in the site's environment: both extensions installed and enabled
    site_bin = Path(hub["ARI_HUB_SITE"]) / "bin"
    for argv, needle in ((["labextension", "list"], "ari-jupyter-labextension"),
                         (["server", "extension", "list"], "ari_jupyter.server")):
        listing = subprocess.run([str(site_bin / "jupyter"), *argv], capture_output=True, text=True,
                                 timeout=120, env={"PATH": f"{site_bin}:/usr/bin:/bin", "HOME": str(tmp_path)})
        line = next((l for l in (listing.stdout + listing.stderr).splitlines() if needle in l), "")
        assert "enabled" in line, listing.stdout + listing.stderr

    # log in -> spawn -> JupyterLab under the hub prefix
    page.goto(f"{base}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", hub["ARI_HUB_PASSWORD"])
    _shot(page, "login")
    page.click("#login_submit")
    page.wait_for_url(re.compile(rf".*/user/{user}/lab.*"), timeout=240_000)
    assert not list(home.glob("*.ipynb")), "a new user's home holds no notebook yet"
    page.wait_for_selector(LAUNCHER_CARD, timeout=120_000)
    assert f"/user/{user}/lab" in page.url

    jobs = _user_jobs(slurm_env, user)
    assert len(jobs) == 1, jobs
    job_id, state, nodes, nodelist = jobs[0].split()
    assert (state, nodes, nodelist) == ("RUNNING", "2", "n[1-2]"), jobs

    # the status bar: the batch job the server runs in, through the hub's proxy and auth
    item = page.locator(f"{STATUS_ITEM}:visible")
    item.wait_for(timeout=60_000)
    page.wait_for_function("(el) => /left/.test(el.textContent)", arg=item.element_handle(),
                           timeout=60_000)
    text = item.inner_text()
    assert f"SLURM {job_id}" in text, text
    assert "2 nodes n[1-2]" in text, text
    assert re.search(r"\b1:(2\d|30):\d\d left", text), text
    _shot(page, "lab-status-bar", docs=True)

    # the launcher card -> the wizard on the live allocation (no demo site)
    page.click(LAUNCHER_CARD)
    page.wait_for_selector(".ari-wizard", timeout=120_000)
    wizard = page.locator(".ari-wizard").first
    page.wait_for_function("([el, job]) => el.textContent.includes(job)",
                           arg=[wizard.element_handle(), job_id], timeout=60_000)
    notebooks = sorted(p for p in home.glob("*.ipynb"))
    assert notebooks, list(home.iterdir())
    assert notebooks[0].stat().st_uid == uid

    # probes run on the live site, from inside the job; first with the job's partition closed
    # to the user's group: the scheduler's refusal, as the wizard and the CLI say it
    wizard_button(page, "Site checks").click()
    page.wait_for_selector(".ari-wizard .ari-probe-row", timeout=120_000)
    with hub["testbed"].partition_settings(PARTITION, AllowGroups="staff"):
        sbatch_row = _rerun_checks(page, "refuses a test job")
        assert sbatch_row.locator(".ari-probe-summary").inner_text().strip() == REFUSAL, \
            sbatch_row.inner_text()
        sbatch_row.locator("button", has_text="Details").click()
        fix = sbatch_row.locator(".ari-fix").inner_text()
        assert "ask the site's administrators to let you use large" in fix, fix
        # sinfo no longer lists the partition to this user: the partitions row says so
        partitions = page.locator(".ari-wizard .ari-probe-partitions .ari-probe-summary").first.inner_text()
        assert "partition large (from SLURM_JOB_PARTITION) is not among small" in partitions, partitions
        assert "Traceback" not in page.locator(".ari-wizard").first.inner_text()
        sbatch_row.scroll_into_view_if_needed()
        _shot(page, "sbatch-refused", docs=True)
        # the command line in the same job, as the same user: the same verdict and fix
        # the user's own environment: none of the test session's folders (its HOME, XDG, Jupyter)
        user_env = {k: v for k, v in slurm_env.items()
                    if not k.startswith(("PYTHON", "XDG_", "JUPYTER_")) and k != "IPYTHONDIR"}
        user_env.update(PATH=f"{site_bin}:{slurm_env['PATH']}", HOME=str(home), USER=user, LOGNAME=user)
        cli = _as_user(user, "srun", f"--jobid={job_id}", "--overlap", "-N1", "-n1", f"--chdir={home}",
                       "ari-jupyter", "probe", "--only", "sbatch", "--json", env=user_env, timeout=120)
        report = json.loads(cli.stdout)
        probed, = report["probes"]
        assert (probed["status"], probed["summary"]) == ("fail", REFUSAL), cli.stdout + cli.stderr
        assert probed["data"]["test_only"]["refusal"] == "not_permitted"
        assert probed["data"]["partition_source"] == "SLURM_JOB_PARTITION"  # the job's, as the wizard
        assert probed["fix"] in fix, (probed["fix"], fix)
        sbatch_row.locator("button", has_text="Details").click()
    # the partition open again: the same checks pass
    sbatch_row = _rerun_checks(page, "may submit to large")
    assert "may submit to large" in sbatch_row.locator(".ari-probe-summary").inner_text()
    checks = page.locator(".ari-wizard").first.inner_text()
    assert "sbatch" in checks

    # Write into a workspace on the network home
    workspace = home / "ari-ws"
    fill_experiment_and_press_write(page, title=TITLE, goal=GOAL, metric=METRIC,
                                    workspace=workspace, timeout=60_000)
    page.wait_for_selector(".ari-write-ok", timeout=60_000)
    assert page.locator(".ari-confirm:visible").count() == 0, "a network home needs no confirmation"
    _shot(page, "wizard-written")

    checkpoints = sorted((workspace / "checkpoints").iterdir())
    assert len(checkpoints) == 1
    checkpoint = checkpoints[0]
    for name in ("experiment.md", "launch_config.json", ".env"):
        path = checkpoint / name
        assert path.is_file(), name
        assert path.stat().st_uid == uid, f"{name} is not the user's own"
    assert stat.S_IMODE((checkpoint / ".env").stat().st_mode) & 0o077 == 0, ".env readable by others"
    scripts = sorted((workspace / "launch").glob("*.sh"))
    assert len(scripts) == 1

    # Open in terminal: the hand-off waits for Enter, then starts ARI in the job
    page.get_by_role("button", name="Open in terminal").click()
    wait_terminal_contains(page, str(scripts[0]))
    focus_visible_terminal(page)
    page.keyboard.press("Enter")
    # ARI starts in the job and adopts the checkpoint: the run id is the directory's name and
    # its log goes into the checkpoint, nothing into a workspace/ of its own. (What ARI then
    # writes there is checked against ARI's own code in tests/ari_real; here it would wait on
    # an LLM that is not there.)
    deadline = time.monotonic() + 300
    ari_log = checkpoint / "ari.log"
    while time.monotonic() < deadline and checkpoint.name not in (
            ari_log.read_text(errors="replace") if ari_log.exists() else ""):
        time.sleep(0.5)
    logs = list(checkpoint.glob("ari_run_*.log"))
    assert logs, visible_terminal_text(page)
    header = logs[0].read_text(errors="replace")
    assert f"id={checkpoint.name}" in header, header[-3000:]
    assert f'"run_id": "{checkpoint.name}"' in ari_log.read_text(errors="replace")
    assert not (home / "workspace").exists() and not (workspace / "workspace").exists()
    _shot(page, "handoff-terminal", docs=True)

    # a terminal opened from the lab runs inside the server's job
    probe_file = home / "terminal-job.txt"
    execute_command(page, OPEN_TERMINAL, {"command": f'echo "$SLURM_JOB_ID $SLURM_JOB_NUM_NODES '
                                                     f'$(id -un)" > {probe_file}', "run": True})
    deadline = time.monotonic() + 60
    while not (probe_file.exists() and probe_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert probe_file.read_text().split() == [job_id, "2", user]

    # check-handoff in the job's own environment passes every item
    report = home / "check-handoff.txt"
    execute_command(page, OPEN_TERMINAL, {
        "command": f"ari-jupyter check-handoff {checkpoint} > {report} 2>&1; echo rc=$? >> {report}",
        "run": True})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and "rc=" not in (report.read_text() if report.exists() else ""):
        time.sleep(0.5)
    result = report.read_text()
    assert "rc=0" in result, result
    # the terminal's ARI uses its packaged backend (openai): the key is said to be set, never shown
    key_line = next(line for line in result.splitlines() if "api_key:" in line)
    assert "OPENAI_API_KEY" in key_line and USER_KEY not in result, result
    ours = [checkpoint / name for name in ("experiment.md", "launch_config.json", ".env", "workflow.yaml")]
    for path in [*ours, *(workspace / "launch").glob("*.sh")]:
        if path.is_file():
            assert USER_KEY not in path.read_text(errors="replace"), f"the user's key reached {path}"
    assert "[fail]" not in result and "[error]" not in result, result
    assert_no_console_errors(page)

    # Voilà's app mode of the wizard notebook, through the hub's proxy and login
    subprocess.run(["/usr/sbin/runuser", "-u", user, "--", "tee", str(home / NOTEBOOK.name)],
                   input=NOTEBOOK.read_text(), capture_output=True, text=True, timeout=30, check=True)
    voila = page.context.new_page()
    voila.console_log = type(page.console_log)(voila)
    voila.goto(f"{base}/user/{user}/voila/render/{NOTEBOOK.name}", timeout=180_000)
    voila.wait_for_selector(STEP_BUTTONS, timeout=120_000)
    voila.wait_for_selector(".ari-wizard .ari-alloc-facts", timeout=60_000)
    voila.wait_for_function("([job]) => document.querySelector('.ari-wizard').innerText.includes(job)",
                            arg=[job_id], timeout=60_000)
    assert "In [" not in voila.locator("body").inner_text()  # app mode: outputs only
    _shot(voila, "voila")
    assert_no_wizard_errors(voila)
    voila.close()

    # stop the server from the hub: the job ends, nothing of the user is left running
    page.goto(f"{base}/hub/home")
    page.click("#stop")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _user_jobs(slurm_env, user):
        time.sleep(0.5)
    assert _user_jobs(slurm_env, user) == []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _user_processes(uid):
        time.sleep(0.5)
    assert _user_processes(uid) == []
