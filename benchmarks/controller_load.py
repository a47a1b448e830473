"""The controller's load: slurmctld RPCs per user per minute with the status bar and the Runs
panel open, next to what a peer's squeue poll every 30 s per open panel costs.

    python -m benchmarks.controller_load                  # N = 1, 5, 20, 50; 60 s each
    python -m benchmarks.controller_load --users 1,5 --seconds 60
    python -m benchmarks.controller_load --users 1,5,20,50 --seconds 60 --hub   # and with the hub's queue service

On the SLURM test bed (under its lock, as a test session takes it): one real allocation
(``salloc --no-shell``, 2 nodes) and one run going (ARI's reproduce job, submitted with ARI's
argv less its ``--wait``, in a checkpoint of the workspace: a waiting ``sbatch`` polls its job,
the benchmark's fixture's cost and not the tool's, so nothing polls it and every figure is the
tool's own; ``run_alone`` shows it, the window with no tab open). Each user is a Jupyter server with the ari-jupyter
server extension, inside that allocation (its SLURM_* variables), and one open tab that polls
it as the lab extension does: the status bar every 30 s, the Runs panel's watch for new runs
every 4 s, and the run it follows at the panel's schedule (2 s, doubling to 30 s while nothing
changes), each read from the lab extension's own constants (``lab_schedule``). The tabs were
open before the case (``measure``'s ``rest`` and ``lead``: the case starts when every 30 s answer,
a server's and the hub's service's, is older than 30 s; the tabs poll for ``lead`` seconds
before the window opens, so their first reads, the allocation's time left among them, 3 RPCs a
server read once then counted down, and the hub's start-up are not counted, and each 30 s query
falls in a window of whole periods at its steady rate, never once more or less by the window's
phase). ``sdiag -r`` when the window opens, ``sdiag`` when it closes: RPCs per minute by type and
per user per minute. The peers' way for the same N: each open panel runs ``squeue -u USER``
every 30 s.
A hidden tab polls nothing (tests/e2e/test_hidden_tab_polls_e2e.py), so it costs nothing here.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = Path(__file__).resolve().parent / "controller_load.md"
RESULTS = Path(__file__).resolve().parent / "results" / "controller_load.json"
PEER_S = 30.0
PHASE_S = 15.0
"""Seconds the tabs poll before the window opens: half the 30 s period of every query that
repeats (a server's queue cache, the hub's service, a peer's panel), so that each falls in a
window of whole periods exactly at its rate."""
REST_S = 32.0
"""Seconds between two cases of the same servers: every 30 s answer is stale when the next starts."""
STARTERS = 3
"""Servers started at once (each waits for its own ``/api/status``)."""
LAB_SRC = ROOT / "labextension" / "src" / "runs_text.ts"
LAB_SCHEMA = ROOT / "labextension" / "schema" / "plugin.json"


def lab_schedule() -> dict[str, float]:
    """The tab's schedule in seconds, read from the lab extension's own constants (one source):
    the Runs panel's ``WATCH_MS``, ``POLL_FIRST_MS``, ``POLL_MAX_MS`` (runs_text.ts) and the
    status bar's ``refreshInterval`` default (its settings schema)."""
    source = LAB_SRC.read_text(encoding="utf-8")
    found = {name: float(value) / 1000 for name, value in
             re.findall(r"^export const ([A-Z_]+_MS) = ([0-9]+);", source, re.M)}
    schema = json.loads(LAB_SCHEMA.read_text(encoding="utf-8"))
    return {"status": float(schema["properties"]["refreshInterval"]["default"]),
            "watch": found["WATCH_MS"], "run_first": found["POLL_FIRST_MS"],
            "run_max": found["POLL_MAX_MS"]}


def _get(url: str, token: str) -> None:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        answer.read()


def tab(server, run_id: str, stop: threading.Event) -> None:
    """One open tab of one user: the lab extension's three polls, on their schedules."""
    token = server.token
    every = lab_schedule()
    due = {"status": 0.0, "watch": 0.0, "run": 0.0}
    run_delay = every["run_first"]
    last_run = None
    while not stop.is_set():
        now = time.monotonic()
        if now >= due["status"]:
            _get(server.url("/ari-jupyter/allocation"), token)
            due["status"] = now + every["status"]
        if now >= due["watch"]:
            _get(server.url("/ari-jupyter/runs/ids"), token)
            due["watch"] = now + every["watch"]
        if now >= due["run"]:
            request = urllib.request.Request(server.url(f"/ari-jupyter/runs/{run_id}"),
                                             headers={"Authorization": f"token {token}"})
            with urllib.request.urlopen(request, timeout=60) as answer:
                body = answer.read()
            run_delay = every["run_first"] if body != last_run else min(run_delay * 2, every["run_max"])
            last_run = body
            due["run"] = now + run_delay
        stop.wait(max(0.05, min(due.values()) - time.monotonic()))


def peer_panel(slurm_env: dict, user: str, stop: threading.Event) -> None:
    while not stop.is_set():
        subprocess.run(["squeue", "-h", "-u", user], capture_output=True, env=slurm_env, timeout=60)
        stop.wait(PEER_S)


def measure(slurm_env: dict, workers: list, seconds: float, *, rest: float = 0.0,
            lead: float = 0.0) -> dict:
    """slurmctld's RPCs while ``workers`` run: after ``rest`` seconds of quiet, they start,
    and ``lead`` seconds later the window of ``seconds`` opens (``sdiag -r``) and closes
    (``sdiag``, before they stop)."""
    from benchmarks.class_hub import parse_sdiag, sdiag

    time.sleep(rest)
    stop = threading.Event()
    threads = [threading.Thread(target=fn, args=(*args, stop), daemon=True) for fn, args in workers]
    for thread in threads:
        thread.start()
    time.sleep(lead)
    sdiag(slurm_env, reset=True)
    time.sleep(seconds)
    counts = parse_sdiag(sdiag(slurm_env))
    stop.set()
    for thread in threads:
        thread.join(timeout=90)
    counts["by_type"].pop("REQUEST_STATS_INFO", None)  # sdiag's own
    minutes = seconds / 60
    total = sum(counts["by_type"].values())
    return {"total": total,
            "by_type_per_min": {k: round(v / minutes, 1) for k, v in sorted(counts["by_type"].items())},
            "per_min": round(total / minutes, 1),
            "per_user_per_min": round(total / minutes / max(1, len(workers)), 2)}


@contextlib.contextmanager
def followed_run(slurm_env: dict, users: int, work: Path, *,
                 hub_users: list[dict] | None = None, **start):
    """``(servers, run_id, user)``: one real allocation (``salloc --no-shell``, 2 nodes), one run
    going (ARI's reproduce job, submitted with ARI's argv less its ``--wait``, in a checkpoint
    of the workspace: no ``sbatch`` polls the job, the fixture's cost, and what slurmctld
    serves is the servers' alone; the job runs until it is cancelled here),
    and ``users`` Jupyter servers with the ari-jupyter server extension inside that allocation
    (its SLURM_* variables; with ``hub_users``, server n is given ``hub_users[n]``'s environment:
    the hub's user, token and queue service), started with ``start`` (``start_jupyter``'s options: ``app="lab"``
    for a browser); all of it stopped and cancelled afterwards."""
    sys.path.insert(0, str(ROOT / "tests"))
    from e2e.jupyter_process import start_jupyter
    from runs_support import copy_case
    from ari_jupyter.ari.sbatch import ReproduceArgs, build_sbatch_argv, wrapper_script

    servers, job = [], None
    try:
        granted = subprocess.run(["salloc", "--no-shell", "-p", "large", "-N2", "-n4", "-t", "60",
                                  "-J", "ari-load-lab"], capture_output=True, text=True,
                                 env=slurm_env, timeout=120)
        job = re.search(r"Granted job allocation (\d+)", granted.stderr + granted.stdout).group(1)
        ws = work / "ws"
        run = copy_case("exploring", ws)
        (run / ".ari_pid").unlink(missing_ok=True)
        (run / ".pipeline_started").touch()
        repo = run / "repro_sandbox"
        repo.mkdir(exist_ok=True)
        (repo / "reproduce.sh").write_text("#!/usr/bin/env bash\nsleep 3000\n")
        (repo / ".slurm_wrap.sh").write_text(wrapper_script(repo))
        submit = build_sbatch_argv(ReproduceArgs(), {"ARI_SLURM_PARTITION": "small", "ARI_SLURM_CPUS": "1",
                                                     "ARI_SLURM_WALLTIME": "00:50:00"},
                                   repo, has_gres=False, bind_flags=False)
        submitted = subprocess.run([arg for arg in submit if arg != "--wait"], env=slurm_env,
                                   capture_output=True, text=True, timeout=120)
        if submitted.returncode != 0:
            raise RuntimeError(f"the run's job was not submitted: {submitted.stderr[-2000:]}")
        allocation = {"SLURM_JOB_ID": job, "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_JOB_NUM_NODES": "2",
                      "SLURM_NTASKS": "4", "SLURM_TASKS_PER_NODE": "2(x2)",
                      "SLURM_JOB_CPUS_PER_NODE": "4(x2)", "SLURM_JOB_PARTITION": "large"}
        user = subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
        lock = threading.Lock()

        def start_one(n: int):
            home = work / f"user{n}"
            (home / "config").mkdir(parents=True)
            (home / "config" / "ari_jupyter_config.json").write_text(
                json.dumps({"AriWizard": {"workspace_template": str(ws)}}))
            server = start_jupyter(home, **{"app": "server", **start},
                                   env={**slurm_env, **allocation, **(hub_users or [{}] * users)[n]})
            with lock:
                servers.append(server)
            return server

        with concurrent.futures.ThreadPoolExecutor(max_workers=STARTERS) as pool:
            ordered = list(pool.map(start_one, range(users)))
        time.sleep(5)
        yield ordered, run.name, user
    finally:
        for server in servers:
            server.stop()
        subprocess.run(["scancel", "--name", "ari-ors"], env=slurm_env, timeout=60)
        if job:
            subprocess.run(["scancel", job], env=slurm_env, timeout=60)


HUB_SCRIPT = ROOT / "tests" / "testbed" / "hub.sh"
HUB_CONFIG = Path(__file__).resolve().parent / "controller_load_hub_config.py"
SERVICE_URL = "http://127.0.0.1:18095"


def hub_users(slurm_env: dict, hub_env: dict, count: int) -> list[dict]:
    """A real JupyterHub (tests/testbed/hub.sh) with ``count`` users (ari-class01...) and the
    queue service (controller_load_hub_config.py); for each user, the environment the hub gives
    that user's server: the user, a token carrying the service's scope (made through the hub's
    REST API) and the service's URL. ``USER`` too: a server asks for its own user's queue."""
    from ari_jupyter.hubservice.config import ACCESS_SCOPE
    from ari_jupyter.runs.queue_service import SERVICE_NAME, URL_ENV

    started = subprocess.run(["bash", str(HUB_SCRIPT), "start", str(ROOT)], capture_output=True,
                             text=True, timeout=1500, stdin=subprocess.DEVNULL, env=hub_env)
    if started.returncode != 0:
        raise RuntimeError(f"the hub did not start:\n{started.stderr[-4000:]}")
    hub = {}
    for line in Path(started.stdout.strip().splitlines()[-1]).read_text().splitlines():
        if line.startswith("export ") and "=" in line:
            key, _, value = line[len("export "):].partition("=")
            hub[key] = value.strip('"')
    found = []
    for n in range(1, count + 1):
        name = f"ari-class{n:02d}"
        body = json.dumps({"auth": {"username": name, "password": hub["ARI_HUB_PASSWORD"]},
                           "scopes": [ACCESS_SCOPE], "expires_in": 7200}).encode()
        request = urllib.request.Request(f"{hub['ARI_HUB_URL']}/hub/api/users/{name}/tokens", data=body,
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=60) as answer:
            token = json.loads(answer.read())["token"]
        found.append({"JUPYTERHUB_USER": name, "JUPYTERHUB_API_TOKEN": token, "USER": name, "LOGNAME": name,
                      URL_ENV: f"{SERVICE_URL}/services/{SERVICE_NAME}/"})
    return found


def with_service(slurm_env: dict, hub_env: dict, counts: list[int], work: Path, seconds: float) -> list[dict]:
    """Each N measured with the servers taking their queue from the hub's queue service."""
    cases = []
    users = hub_users(slurm_env, hub_env, max(counts))
    with followed_run(slurm_env, max(counts), work, hub_users=users) as (servers, run_id, _user):
        for n in counts:
            cases.append({"users": n, **measure(slurm_env, [(tab, (servers[i], run_id)) for i in range(n)],
                                                seconds, rest=REST_S, lead=PHASE_S)})
            print(f"N={n} with the hub's queue service: {cases[-1]['per_min']}/min, whole hub "
                  f"({cases[-1]['by_type_per_min']})", file=sys.stderr)
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.controller_load",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--users", default="1,5,20,50")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--hub", action="store_true", help="also measure each N with the servers "
                        "taking their queue from the hub's queue service (tests/testbed/hub.sh)")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.users.split(",")]
    sys.path.insert(0, str(ROOT / "tests"))
    from testbed.cluster import Testbed  # the test bed's own lock and start

    bed = Testbed()
    running = bed.ensure("nogres")
    slurm_env = {**os.environ, **running.env}
    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"ari-controller-load-{os.getpid()}"
    results: dict = {"seconds": args.seconds, "schedule": lab_schedule(), "cases": []}
    hub_env = {**slurm_env, "ARI_HUB_CLASS_USERS": str(max(counts)), "ARI_HUB_CONFIG_EXTRA": str(HUB_CONFIG)}
    try:
        if args.hub:
            results["with_service"] = with_service(slurm_env, hub_env, counts, work / "hub", args.seconds)
        with followed_run(slurm_env, max(counts), work) as (servers, run_id, user):
            results["run_alone"] = measure(slurm_env, [], args.seconds)  # the run, no tab open: nothing
            for n in counts:
                ours = measure(slurm_env, [(tab, (servers[i], run_id)) for i in range(n)], args.seconds,
                               rest=REST_S, lead=PHASE_S)
                peers = measure(slurm_env, [(peer_panel, (slurm_env, user)) for _ in range(n)], args.seconds,
                                lead=PHASE_S)
                results["cases"].append({"users": n, "ari_jupyter": ours, "squeue_every_30s": peers})
                print(f"N={n}: ari-jupyter {ours['per_user_per_min']}/user/min "
                      f"({ours['by_type_per_min']}); squeue {peers['per_user_per_min']}/user/min",
                      file=sys.stderr)
    finally:
        if args.hub:
            subprocess.run(["bash", str(HUB_SCRIPT), "stop"], capture_output=True, timeout=300,
                           stdin=subprocess.DEVNULL, env=hub_env)
        try:
            bed.stop()
        finally:
            bed.release_lock()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    REPORT.write_text(report(results, args.seconds))
    print(table(results))
    return 0


BEFORE = {1: (20.0, 20.0), 5: (99.0, 19.8), 20: (345.0, 17.25)}
"""Whole hub and per user RPCs a minute before the status bar counted its time left down and
the queue answer was shared for 30 s (this benchmark at 60 s per case, issue 52)."""


def table(results: dict) -> str:
    rows = ["| users | before: RPCs/min, whole hub (per user) | now, no service: RPCs/min, whole hub "
            "(by type) | now, no service: per user | with the hub's queue service: RPCs/min, whole "
            "hub (by type) | with the service: per user | peer, squeue every 30 s per panel: "
            "RPCs/min, whole hub (per user) |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    hub = {case["users"]: case for case in results.get("with_service", [])}
    for case in results["cases"]:
        ours, peers = case["ari_jupyter"], case["squeue_every_30s"]
        before = BEFORE.get(case["users"])
        service = hub.get(case["users"])
        rows.append(f"| {case['users']} | {f'{before[0]} ({before[1]})' if before else 'not measured'} | "
                    f"{_whole(ours)} | {ours['per_user_per_min']} | "
                    f"{_whole(service) if service else 'not measured'} | "
                    f"{service['per_user_per_min'] if service else ''} | "
                    f"{peers['per_min']} ({peers['per_user_per_min']}) |")
    return "\n".join(rows)


def _whole(case: dict) -> str:
    kinds = ", ".join(f"{k} {v}" for k, v in case["by_type_per_min"].items()) or "none"
    return f"{case['per_min']} ({kinds})"


def report(results: dict, seconds: float) -> str:
    every = results["schedule"]
    alone = results.get("run_alone", {})
    return ("# The controller's load\n\nWritten by `python -m benchmarks.controller_load` "
            f"({seconds:g} s per case; see its docstring). The tab's schedule, read from the lab "
            f"extension: status bar every {every['status']:g} s, watch for new runs every "
            f"{every['watch']:g} s, the followed run every {every['run_first']:g} s doubling to "
            f"{every['run_max']:g} s. The followed run's job is submitted with ARI's argv less its "
            "`--wait` (a waiting `sbatch` polls its job: the benchmark's fixture, not the tool), so "
            f"the run alone, no tab open, cost {alone.get('per_min', '?')} RPCs/min "
            f"({_whole(alone) if alone else '?'}) and every figure is the tool's own. The tabs were "
            f"open before each case: it starts once every 30 s answer is stale, the tabs poll "
            f"{PHASE_S:g} s before the window opens (their first reads and the hub's start-up are "
            "not counted). With the hub's queue service (`--hub`): a real JupyterHub "
            "(tests/testbed/hub.sh) "
            "with N users and the service (benchmarks/controller_load_hub_config.py, its default "
            "30 s interval); each server is given its user, a token with the service's scope made "
            "through the hub's REST API and the service's URL, as the hub gives them. The followed "
            "run's job is the benchmark's own user's, so each hub user's queue answer is empty; "
            "the service's squeue lists all users' jobs whatever they are.\n\n" + table(results) + "\n")


if __name__ == "__main__":
    sys.exit(main())
