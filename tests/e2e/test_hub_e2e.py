"""Hosted JupyterLab for real: JupyterHub + batchspawner on the SLURM test bed.

A real unprivileged user logs in to a JupyterHub whose SlurmSpawner starts the single-user
server as a 2-node sbatch job (tests/testbed/hub.sh). In Chromium, as that user: the lab under
/user/<name>/lab, the status bar shows the batch job, the launcher card opens the wizard on
the live allocation, Write puts a checkpoint on the network home, "Open in terminal" opens a
terminal inside the job, the hand-off starts ARI (from the snapshot; its LLM endpoint is
127.0.0.1, where nothing listens), check-handoff passes, and stopping the server from the hub
ends the job with nothing of the user left running. The site layout is the one docs/admin.md
describes, and its checks run here.

One hub serves the module, with two users on the same 2 nodes: the first user's server runs in
the batch script (``req_srun=''``), the second's in a one-task job step (batchspawner's srun).
Each value a user sees is checked against SLURM's own answer for that user's job (``squeue``,
``scontrol show job``), never against text that any job id would match.
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
USERS = ("ari-hubuser", "ari-hubuser2")  # the second user's server runs in a job step
SPAWNER_JOB_NAME = "spawner-jupyterhub"
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


def _scontrol_job(slurm_env: dict, job_id: str) -> dict[str, str]:
    """``scontrol -d show job``'s KEY=value pairs, plus ``cpus_on:<node>`` per node (the
    count of its CPU_IDs): SLURM's own answer for the job, to compare what a user is shown."""
    out = subprocess.run(["scontrol", "-d", "show", "job", job_id], capture_output=True, text=True,
                         env=slurm_env, timeout=30, check=True).stdout
    fields: dict[str, str] = {}
    for token in out.split():
        key, _, value = token.partition("=")
        fields.setdefault(key, value)
    for nodes, ids in re.findall(r"\bNodes=(\S+) CPU_IDs=(\S+)", out):
        count = sum(int(b) - int(a) + 1 if "-" in part else 1
                    for part in ids.split(",") for a, _, b in [part.partition("-")])
        for node in _expand_nodes(nodes):
            fields[f"cpus_on:{node}"] = str(count)
    return fields


def _expand_nodes(nodes: str) -> list[str]:
    from ari_jupyter.slurm import hostlist
    return list(hostlist.expand(nodes))


def _clock_seconds(text: str) -> int:
    """``[D-]H:MM:SS`` (squeue's %L) in seconds."""
    days, _, clock = text.rpartition("-")
    parts = [int(x) for x in clock.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    return int(days or 0) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]


def _alloc_facts(page) -> dict[str, str]:
    """Step 1's table as the user reads it: row heading -> cell text."""
    return page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('.ari-wizard .ari-alloc-facts tr')]"
        ".map(r => [r.querySelector('th').textContent.trim(), r.querySelector('td').textContent.trim()]))")


def assert_step1_is_the_job(page, slurm_env: dict, job_id: str) -> dict[str, str]:
    """Step 1 shows this job: its id and name, its nodes and their names, its CPUs per node
    and its time left, each as SLURM answers for the job (not a step of it)."""
    page.wait_for_function(
        "() => { const rows = [...document.querySelectorAll('.ari-wizard .ari-alloc-facts tr')];"
        " const left = rows.find(r => r.querySelector('th').textContent.trim() === 'Time left');"
        " return left && /\\d+:\\d\\d:\\d\\d/.test(left.textContent); }", timeout=120_000)
    facts = _alloc_facts(page)
    job = _scontrol_job(slurm_env, job_id)
    nodes = _expand_nodes(job["NodeList"])
    assert facts["Job"] == f"{job_id} ({job['JobName']})", facts
    assert job["JobName"] == SPAWNER_JOB_NAME
    assert facts["Nodes"] == f"{job['NumNodes']} — {job['NodeList']}", facts
    assert (job["NumNodes"], nodes) == ("2", ["n1", "n2"]), job
    names = page.locator(".ari-wizard .ari-node-names").first.text_content().split()
    assert names == nodes, names
    assert facts["Partition"] == job["Partition"], facts
    per_node = [int(job[f"cpus_on:{node}"]) for node in nodes]
    shown = facts["CPUs allocated per node"]
    assert shown.split(" ·")[0] == (f"{per_node[0]}(x{len(per_node)})" if len(set(per_node)) == 1
                                    else ",".join(map(str, per_node))), (shown, per_node)
    left_cell = facts["Time left"]
    assert f"job {job_id} has " in left_cell, left_cell
    shown_left = _clock_seconds(re.search(r"(?:\d+-)?\d+:\d\d:\d\d", left_cell).group(0))
    squeue_left = _clock_seconds(subprocess.run(
        ["squeue", "-h", "-j", job_id, "-o", "%L"], capture_output=True, text=True, env=slurm_env,
        timeout=30, check=True).stdout.strip())
    # the probe ran a little before squeue answers here: the same clock, counted down since
    assert 0 <= shown_left - squeue_left <= 180, (left_cell, squeue_left)
    return job


def assert_checkpoint_is_the_job(checkpoint: Path, job: dict[str, str]) -> None:
    """The written checkpoint's partition, CPUs (per ARI job: the job's CPUs on the node the
    server runs on) and node count are the job's."""
    env = dict(line.split("=", 1) for line in (checkpoint / ".env").read_text().splitlines()
               if "=" in line and not line.startswith("#"))
    config = json.loads((checkpoint / "launch_config.json").read_text())
    state = config["ari_jupyter"]["state"]
    first = _expand_nodes(job["NodeList"])[0]
    assert env["ARI_SLURM_PARTITION"].strip("'\"") == job["Partition"], env
    assert config["partition"] == job["Partition"], config["partition"]
    assert env["ARI_SLURM_CPUS"].strip("'\"") == job[f"cpus_on:{first}"], (env, job)
    assert config["hpc_cpus"] == int(job[f"cpus_on:{first}"]), config["hpc_cpus"]
    assert state["nodes"] == int(job["NumNodes"]), state["nodes"]
    assert state["allocation"]["job_id"] == job["JobId"], state["allocation"]


def _hub_errors(hub: dict) -> list[str]:
    """The hub log's error lines (``[E ...``, a 5xx answer, a traceback)."""
    log = Path(hub["ARI_HUB_LOG"]).read_text(errors="replace")
    return [line for line in log.splitlines()
            if line.startswith("[E ") or re.search(r"\] 5\d\d [A-Z]+ ", line) or "Traceback" in line]


def _hub_api(page, base: str, path: str) -> dict:
    """GET the hub's REST API as the logged-in user (its cookie, with the XSRF token the hub's
    own pages send)."""
    xsrf = next((c["value"] for c in page.context.cookies(base) if c["name"] == "_xsrf"), "")
    answer = page.request.get(f"{base}/hub/api/{path}", headers={"X-XSRFToken": xsrf})
    assert answer.ok, (answer.status, answer.text())
    return answer.json()


def stop_from_the_hub(page, hub: dict, user: str, job_id: str) -> None:
    """Stop My Server on the hub's home page, as a user does; returns once the hub says the
    server is gone, then: the job ended, nothing of the user runs, the hub logged no error."""
    base, slurm_env = hub["ARI_HUB_URL"], hub["slurm_env"]
    page.goto(f"{base}/hub/home")
    page.click("#stop")
    page.wait_for_selector("#stop", state="hidden", timeout=180_000)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        model = _hub_api(page, base, "user")
        if not model.get("servers") and model.get("server") is None and model.get("pending") is None:
            break
        time.sleep(0.5)
    assert not model.get("servers") and model.get("pending") is None, model
    squeue = subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%T"], capture_output=True, text=True,
                            env=slurm_env, timeout=30).stdout.strip()
    assert squeue in ("", "COMPLETING", "COMPLETED", "CANCELLED"), squeue
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _user_jobs(slurm_env, user):
        time.sleep(0.5)
    assert _user_jobs(slurm_env, user) == []
    uid = pwd.getpwnam(user).pw_uid
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _user_processes(uid):
        time.sleep(0.5)
    assert _user_processes(uid) == []
    assert _hub_errors(hub) == []


def user_env(hub: dict, user: str) -> dict[str, str]:
    """The user's own environment: none of the test session's folders (its HOME, XDG,
    Jupyter, its list of workspaces); the site's bin and ARI on PATH, as the user's login
    profile has them."""
    slurm_env = hub["slurm_env"]
    env = {k: v for k, v in slurm_env.items()
           if not k.startswith(("PYTHON", "XDG_", "JUPYTER_", "ARI_JUPYTER_")) and k != "IPYTHONDIR"}
    site = Path(hub["ARI_HUB_SITE"])
    env.update(PATH=f"{site / 'bin'}:{site.parent / 'ari' / 'bin'}:{slurm_env['PATH']}",
               HOME=f"/home/{user}", USER=user, LOGNAME=user)
    return env


def in_job(hub: dict, user: str, job_id: str, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``argv`` as ``user``, inside that user's job (a step on its first node), as a user's
    command line there runs."""
    return _as_user(user, "srun", f"--jobid={job_id}", "--overlap", "-N1", "-n1", f"--chdir=/home/{user}",
                    *argv, env=user_env(hub, user), timeout=timeout)


def _ari_environ(uid: int, checkpoint: Path, timeout: float = 180) -> dict[str, str]:
    """The environment of the user's ``ari run`` of this checkpoint (what the hand-off gave it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in Path("/proc").iterdir():
            try:
                if not proc.name.isdigit() or proc.stat().st_uid != uid:
                    continue
                argv = (proc / "cmdline").read_bytes().split(b"\0")
                if b"run" in argv and str(checkpoint / "experiment.md").encode() in argv:
                    return dict(item.split("=", 1) for item in
                                (proc / "environ").read_bytes().decode(errors="replace").split("\0")
                                if "=" in item)
            except OSError:
                continue
        time.sleep(0.3)
    raise AssertionError(f"no ari run of {checkpoint} as uid {uid}")


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


@pytest.fixture(scope="module")
def hub(_testbed):
    """One hub on the no-GRES test bed for the module, as a site runs it, with both users;
    stopped at the end (with no error in its log)."""
    testbed = _testbed.ensure("nogres")
    begun = time.monotonic()
    # a clean slate: no user, job or hub record of an earlier start (a stop that never ran)
    subprocess.run(["bash", str(HUB_SCRIPT), "stop"], capture_output=True, text=True, timeout=300,
                   stdin=subprocess.DEVNULL, env={**os.environ, **testbed.env}, check=True)
    started = subprocess.run(["bash", str(HUB_SCRIPT), "start", str(REPO)], capture_output=True,
                             text=True, timeout=1500, stdin=subprocess.DEVNULL,
                             env={**os.environ, **testbed.env, "ARI_HUB_USERS": " ".join(USERS),
                                  "ARI_HUB_STEP_USERS": USERS[1]})
    assert started.returncode == 0, f"the hub did not start:\n{started.stderr[-4000:]}"
    env = _env_file(Path(started.stdout.strip().splitlines()[-1]))
    env["slurm_env"] = {**os.environ, **testbed.env}
    env["testbed"] = testbed
    assert env["ARI_HUB_USERS"].strip('"').split() == list(USERS), env
    for user in USERS:
        _prepare_user(env, user)
    print(f"hub started in {time.monotonic() - begun:.1f} s")
    yield env
    errors = _hub_errors(env)
    stopped = subprocess.run(["bash", str(HUB_SCRIPT), "stop"], capture_output=True, text=True,
                             timeout=300, stdin=subprocess.DEVNULL,
                             env={**env["slurm_env"], "ARI_HUB_USERS": " ".join(USERS)})
    assert stopped.returncode == 0, stopped.stderr
    assert errors == [], errors


def _prepare_user(env: dict, user: str) -> None:
    """The user's Lab settings and login profile, as the user has them."""
    home = Path("/home") / user
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


def wait_for_lab(page, user: str) -> None:
    """The lab the hub spawned for ``user``, once its layout is restored (a user back again
    gets their tabs, not the launcher)."""
    page.wait_for_url(re.compile(rf".*/user/{user}/lab.*"), timeout=240_000)
    page.wait_for_function("() => window.jupyterapp !== undefined", timeout=120_000)
    page.evaluate("async () => { await window.jupyterapp.restored; }")


def submit_login(page, hub: dict, user: str) -> None:
    """The hub's login form, filled and sent as ``user``; returns once their lab is up."""
    page.goto(f"{hub['ARI_HUB_URL']}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", hub["ARI_HUB_PASSWORD"])
    page.click("#login_submit")
    wait_for_lab(page, user)


def log_in(page, hub: dict, user: str) -> str:
    """Log in as ``user`` (out of anyone else first) and wait for the lab the hub spawns;
    the id of the user's one running job."""
    page.goto(f"{hub['ARI_HUB_URL']}/hub/logout")
    submit_login(page, hub, user)
    jobs = _user_jobs(hub["slurm_env"], user)
    assert len(jobs) == 1, jobs
    job_id, state, nodes, nodelist = jobs[0].split()
    assert (state, nodes, nodelist) == ("RUNNING", "2", "n[1-2]"), jobs
    return job_id


def test_hub_user_sets_up_and_hands_off_a_run_inside_their_batch_job(hub, testbed_nogres, page, tmp_path):
    user, home, base = USERS[0], Path("/home") / USERS[0], hub["ARI_HUB_URL"]
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
    assert re.search(rf"SLURM {job_id}\b", text), text
    assert "2 nodes n[1-2]" in text, text
    assert re.search(r"\b1:(2\d|30):\d\d left", text), text
    _shot(page, "lab-status-bar", docs=True)

    # the launcher card -> the wizard on the live allocation (no demo site)
    page.click(LAUNCHER_CARD)
    page.wait_for_selector(".ari-wizard", timeout=120_000)
    job = assert_step1_is_the_job(page, slurm_env, job_id)
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
        cli = in_job(hub, user, job_id, "ari-jupyter", "probe", "--only", "sbatch", "--json")
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
    assert_checkpoint_is_the_job(checkpoint, job)
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
    # in the batch script no step holds the job's CPUs: the hand-off leaves srun as it is
    ari_env = _ari_environ(uid, checkpoint)
    assert "SLURM_STEP_ID" not in ari_env and "SLURM_OVERLAP" not in ari_env, ari_env.get("SLURM_STEP_ID")
    assert ari_env["SLURM_JOB_ID"] == job_id
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

    # stop the server from the hub: the job ends, nothing of the user is left running, and
    # the hub (waited for, not cut short) logged no error
    stop_from_the_hub(page, hub, user, job_id)


def test_hub_server_in_a_job_step_shows_and_hands_off_the_job(hub, testbed_nogres, page):
    """batchspawner's srun mode: the server in a one-task job step on n1. Step 1 and the
    checkpoint are the job's (2 nodes, its CPUs), not the step's (1 node, 1 task); a terminal's
    srun is a step inside the server's step; the hand-off makes ARI's sruns overlap it."""
    user, home = USERS[1], Path("/home") / USERS[1]
    uid, slurm_env = pwd.getpwnam(user).pw_uid, hub["slurm_env"]
    job_id = log_in(page, hub, user)
    steps = subprocess.run(["squeue", "-h", "-s", "-j", job_id, "-o", "%i %N"], capture_output=True,
                           text=True, env=slurm_env, timeout=30, check=True).stdout.split("\n")
    assert f"{job_id}.0 n1" in steps, steps  # the server's step: one node of the two

    page.click(LAUNCHER_CARD, timeout=120_000)
    page.wait_for_selector(".ari-wizard .ari-alloc-facts", timeout=120_000)
    job = assert_step1_is_the_job(page, slurm_env, job_id)
    facts = _alloc_facts(page)
    assert facts["Tasks per node"] == "—", facts  # the job's are in no variable of a step
    warnings = page.locator(".ari-wizard .ari-alloc-facts + ul li").all_inner_texts()
    assert warnings == [], warnings

    workspace = home / "ari-ws"
    fill_experiment_and_press_write(page, title=TITLE, goal=GOAL, metric=METRIC,
                                    workspace=workspace, timeout=60_000)
    page.wait_for_selector(".ari-write-ok", timeout=60_000)
    checkpoint, = (workspace / "checkpoints").iterdir()
    assert_checkpoint_is_the_job(checkpoint, job)

    # the hand-off: ARI runs in the step with SLURM_OVERLAP set, so its sruns do not wait
    page.get_by_role("button", name="Open in terminal").click()
    script, = (workspace / "launch").glob("*.sh")
    wait_terminal_contains(page, str(script))
    focus_visible_terminal(page)
    page.keyboard.press("Enter")
    ari_env = _ari_environ(uid, checkpoint)
    assert (ari_env.get("SLURM_STEP_ID"), ari_env.get("SLURM_OVERLAP")) == ("0", "1"), ari_env
    assert ari_env["SLURM_JOB_ID"] == job_id

    # a terminal of the server: the job's and the step's ids; a job-wide srun is a step inside
    # the server's step and waits for it (SLURM >= 20.11) unless it overlaps
    probe_file = home / "terminal-srun.txt"
    execute_command(page, OPEN_TERMINAL, {"command": (
        f'{{ echo "$SLURM_JOB_ID $SLURM_STEP_ID $SLURM_JOB_NUM_NODES $(id -un)"; '
        f'timeout 15 srun -N2 -n4 true; echo "plain=$?"; '
        f'SLURM_OVERLAP=1 timeout 60 srun -N2 -n4 printenv SLURMD_NODENAME | sort -u | tr "\\n" " "; echo "overlap=${{PIPESTATUS[0]}}"; }}'
        f' > {probe_file} 2>/dev/null'), "run": True})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and "overlap=" not in (probe_file.read_text() if probe_file.exists() else ""):
        time.sleep(0.5)
    first, plain, overlap = probe_file.read_text().splitlines()
    assert first.split() == [job_id, "0", "2", user], first
    assert plain == "plain=124", plain  # waited for the server's step, killed by timeout
    assert overlap == "n1 n2 overlap=0", overlap

    stop_from_the_hub(page, hub, user, job_id)


def _xsrf_post(page, url: str, body: dict):
    """POST to a single-user server's route as the logged-in user (its XSRF cookie)."""
    xsrf = next((c["value"] for c in page.context.cookies(url) if c["name"] == "_xsrf"), "")
    return page.request.post(url, data=json.dumps(body), max_redirects=0,
                             headers={"X-XSRFToken": xsrf, "Content-Type": "application/json"})


def _listener_uid(port: int) -> int | None:
    """The uid owning the TCP socket listening on ``port`` (any address), or None."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                return int(fields[7])
    return None


def test_two_hub_users_at_once_keep_to_their_own(hub, testbed_nogres, page):
    """Both users' servers run at once on the same 2 nodes, each user writes a run in their own
    job, and neither sees, cancels or overwrites the other's runs, workspace list or files, by
    the CLI or by the server's routes; the dashboard port each is told is free, and theirs."""
    slurm_env, base = hub["slurm_env"], hub["ARI_HUB_URL"]
    jobs = {user: log_in(page, hub, user) for user in USERS}  # the browser ends as USERS[1]
    for user, job_id in jobs.items():
        assert _user_jobs(slurm_env, user) == [f"{job_id} RUNNING 2 n[1-2]"]
    ours, theirs = USERS[1], USERS[0]

    # each writes a run into a workspace of their own (the wizard's Write, from the CLI)
    checkpoints = {}
    for user, job_id in jobs.items():
        emitted = in_job(hub, user, job_id, "ari-jupyter", "emit", "--title", f"Scaling by {user}",
                         "--goal", GOAL, "--metric", METRIC, "--workspace", f"/home/{user}/ari-two",
                         "--no-probes", "--json")
        assert emitted.returncode == 0, emitted.stderr
        checkpoints[user] = Path(json.loads(emitted.stdout)["checkpoint_dir"])
    files = {path: path.read_bytes() for path in checkpoints[theirs].parent.parent.rglob("*") if path.is_file()}

    # file modes: the home is the user's alone; nothing in the workspace is writable by others,
    # the secrets file is the user's alone
    for user, checkpoint in checkpoints.items():
        assert stat.S_IMODE(Path(f"/home/{user}").stat().st_mode) == 0o700
        for path in [checkpoint.parent.parent, *checkpoint.parent.parent.rglob("*")]:
            info = path.stat()
            assert info.st_uid == pwd.getpwnam(user).pw_uid and not info.st_mode & 0o022, path
        assert stat.S_IMODE((checkpoint / ".env").stat().st_mode) == 0o600

    # the runs and workspace lists: each sees their own runs (this one, and any an earlier
    # test wrote), nothing of the other's
    for user, job_id in jobs.items():
        listed = in_job(hub, user, job_id, "ari-jupyter", "runs", "--json")
        data = json.loads(listed.stdout)
        other = theirs if user == ours else ours
        assert checkpoints[user].name in [run["run_id"] for run in data["runs"]], data
        assert all(run["checkpoint_dir"].startswith(f"/home/{user}/") for run in data["runs"]), data
        assert not [w for w in data["workspaces"] if w.startswith(f"/home/{other}/")], data["workspaces"]
    route = page.request.get(f"{base}/user/{ours}/ari-jupyter/runs")
    assert route.ok, route.status
    assert checkpoints[ours].name in [run["run_id"] for run in route.json()["runs"]]
    assert all(run["checkpoint_dir"].startswith(f"/home/{ours}/") for run in route.json()["runs"])

    # the other's server answers this user with a refusal, never their runs, and a cancel
    # through it is refused too
    for path in ("ari-jupyter/runs", f"ari-jupyter/runs/{checkpoints[theirs].name}"):
        answer = page.request.get(f"{base}/user/{theirs}/{path}", max_redirects=0)
        assert answer.status in (302, 403, 404), (path, answer.status)
        assert checkpoints[theirs].name not in answer.text()
    cancel = _xsrf_post(page, f"{base}/user/{theirs}/ari-jupyter/runs/{checkpoints[theirs].name}/cancel",
                        {"all": True})
    assert cancel.status in (302, 403, 404), cancel.status
    # ... and by the CLI: the other's checkpoint cannot be read, their job not cancelled,
    # their workspace not written
    refused = in_job(hub, ours, jobs[ours], "ari-jupyter", "cancel", str(checkpoints[theirs]), "--all", "--yes")
    assert refused.returncode != 0, refused.stdout
    scancel = in_job(hub, ours, jobs[ours], "scancel", jobs[theirs])
    assert scancel.returncode != 0 and "denied" in scancel.stderr.lower(), scancel.stderr
    overwrite = in_job(hub, ours, jobs[ours], "ari-jupyter", "emit", "--title", "Scaling by them",
                       "--goal", GOAL, "--metric", METRIC, "--workspace", str(checkpoints[theirs].parent.parent),
                       "--no-probes", "--run-id", checkpoints[theirs].name, "--force")
    assert overwrite.returncode != 0, overwrite.stdout
    assert _user_jobs(slurm_env, theirs) == [f"{jobs[theirs]} RUNNING 2 n[1-2]"]
    assert {path: path.read_bytes() for path in checkpoints[theirs].parent.parent.rglob("*")
            if path.is_file()} == files

    # the dashboard: the port the hand-off tells each user is free; the first user starts
    # `ari viz` there and holds it; the second is then told a free port of their own
    ports = {}
    viz = None
    try:
        for user in (theirs, ours):
            told = in_job(hub, user, jobs[user], "ari-jupyter", "check-handoff", str(checkpoints[user]), "--json")
            command = next(step["command"] for step in json.loads(told.stdout)["steps"] if step["id"] == "dashboard")
            ports[user] = int(command.rsplit("--port", 1)[1])
            assert _listener_uid(ports[user]) is None and _listener_uid(ports[user] + 1) is None, ports
            if viz is None:
                viz = subprocess.Popen(
                    ["/usr/sbin/runuser", "-u", user, "--", "srun", f"--jobid={jobs[user]}", "--overlap",
                     "-N1", "-n1", "ari", "viz", str(checkpoints[user]), "--port", str(ports[user])],
                    env=user_env(hub, user), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL)
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline and _listener_uid(ports[user]) is None:
                    time.sleep(0.5)
                assert _listener_uid(ports[user]) == pwd.getpwnam(user).pw_uid, ports
        assert ports[ours] != ports[theirs] and abs(ports[ours] - ports[theirs]) >= 2, ports
    finally:
        if viz is not None:
            viz.terminate()
            viz.wait(timeout=60)

    for user in (ours, theirs):
        if user != ours:
            log_in(page, hub, user)
        stop_from_the_hub(page, hub, user, jobs[user])
