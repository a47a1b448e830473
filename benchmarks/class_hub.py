"""A class of learners on one hub: time to a ready lesson, memory, and the controller's load.

    python -m benchmarks.class_hub              # 30 learners; writes benchmarks/class_hub.md
    python -m benchmarks.class_hub --users 10   # fewer

On the SLURM test bed (taken under its lock, as a test session takes it), the hub of
tests/testbed/hub.sh starts with ARI_HUB_CLASS_USERS learners and the class configuration
tests/testbed/class_config.py: each learner's server is a local process serving the learner's
own copy of the student lessons, with no SLURM job. All learners then log in at once, through
the hub's login form as a browser does (no page rendering), and open lesson 1: the lab page,
the lesson's file and a kernel for it, idle. Measured: the time from the login to that ready
lesson (p50, p95, max), each learner's memory (PSS of their server and kernel) and the hub's
(hub and proxy), and the slurmctld RPCs during the class by user and by type (``sdiag -r``
before, ``sdiag`` after): the demo sites never call SLURM, so the learners cause none.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import pwd
import re
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import requests
import websocket

ROOT = Path(__file__).resolve().parent.parent
HUB_SCRIPT = ROOT / "tests" / "testbed" / "hub.sh"
CLASS_CONFIG = ROOT / "tests" / "testbed" / "class_config.py"
LESSON = "01_allocation_and_hostlists.ipynb"
REPORT = Path(__file__).resolve().parent / "class_hub.md"
RESULTS = Path(__file__).resolve().parent / "results" / "class_hub.json"
READY_TIMEOUT_S = 600


@dataclass
class Learner:
    name: str
    ready_s: float | None = None
    lesson_path: str | None = None
    kernel_state: str | None = None
    pss_mb: float | None = None
    error: str | None = None
    steps: dict = field(default_factory=dict)


def _xsrf(session: requests.Session, url: str) -> str:
    page = session.get(url, timeout=60)
    page.raise_for_status()
    match = re.search(r'name="_xsrf"\s+value="([^"]+)"', page.text)
    return match.group(1) if match else session.cookies.get("_xsrf", "")


def open_lesson(base: str, name: str, password: str, lesson: str = LESSON) -> Learner:
    """One learner: log in, wait for the lab, read the lesson, start its kernel and wait for its
    answer."""
    learner = Learner(name)
    session = requests.Session()
    started = time.monotonic()

    def mark(step: str) -> None:
        learner.steps[step] = round(time.monotonic() - started, 2)

    try:
        token = _xsrf(session, f"{base}/hub/login")
        session.post(f"{base}/hub/login?next=", timeout=60, allow_redirects=True,
                     data={"username": name, "password": password, "_xsrf": token})
        mark("logged_in")
        deadline = started + READY_TIMEOUT_S
        lab = f"{base}/user/{name}/lab"
        while True:  # the spawn-pending page until the server is up, then the lab (OAuth hop)
            page = session.get(lab, timeout=60)
            if page.status_code == 200 and urlparse(page.url).path.startswith(f"/user/{name}/lab"):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"no lab after {READY_TIMEOUT_S} s (last {page.status_code} {page.url})")
            time.sleep(1.0)
        mark("lab")
        api = f"{base}/user/{name}/api"
        headers = {"X-XSRFToken": session.cookies.get("_xsrf", path=f"/user/{name}/") or
                   session.cookies.get("_xsrf", "")}
        content = session.get(f"{api}/contents/{lesson}", params={"content": "0"}, timeout=60)
        content.raise_for_status()
        learner.lesson_path = content.json()["path"]
        mark("lesson")
        made = session.post(f"{api}/sessions", headers=headers, timeout=120, json={
            "path": lesson, "name": lesson, "type": "notebook", "kernel": {"name": "python3"}})
        made.raise_for_status()
        kernel = made.json()["kernel"]["id"]
        learner.kernel_state = kernel_info(base, name, kernel, session, deadline - time.monotonic())
        learner.ready_s = round(time.monotonic() - started, 2)
    except Exception as exc:  # one learner's failure is reported, the class goes on
        learner.error = f"{type(exc).__name__}: {exc}"
    return learner


def kernel_info(base: str, name: str, kernel: str, session: requests.Session, timeout: float) -> str:
    """Connect to the kernel as the lab does (its websocket) and ask for its info: the kernel
    answers once it is ready to run a cell. Returns the status it reports."""
    url = f"ws{base[len('http'):]}/user/{name}/api/kernels/{kernel}/channels"
    cookie = "; ".join(f"{c.name}={c.value}" for c in session.cookies)
    ws = websocket.create_connection(url, cookie=cookie, origin=base, timeout=max(1.0, timeout))
    try:
        msg_id = uuid.uuid4().hex
        ws.send(json.dumps({"header": {"msg_id": msg_id, "username": name, "session": uuid.uuid4().hex,
                                       "msg_type": "kernel_info_request", "version": "5.3"},
                            "parent_header": {}, "metadata": {}, "content": {}, "channel": "shell",
                            "buffers": []}))
        while True:
            reply = json.loads(ws.recv())
            if reply.get("parent_header", {}).get("msg_id") == msg_id \
                    and reply["header"]["msg_type"] == "kernel_info_reply":
                return reply["content"].get("status", "")
    finally:
        ws.close()


def open_lessons_at_once(base: str, names: list[str], password: str) -> list[Learner]:
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(names)) as pool:
        return list(pool.map(lambda name: open_lesson(base, name, password), names))


# ---- memory ---------------------------------------------------------------------------------

def _pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _processes() -> list[tuple[int, int, int]]:
    """(pid, ppid, uid) of every live process."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
                found.append((int(proc.name), ppid, proc.stat().st_uid))
            except (OSError, IndexError, ValueError):
                continue
    return found


def memory_of_user(uid: int) -> float:
    """MB of proportional set size of every process of ``uid``."""
    return sum(_pss_kb(pid) for pid, _, owner in _processes() if owner == uid) / 1024


def memory_of_tree(root_pids: list[int]) -> float:
    """MB of PSS of these processes and their descendants owned by root (the hub, the proxy;
    a learner's server is a child of the hub but runs as the learner)."""
    procs = _processes()
    children: dict[int, list[int]] = {}
    owner = {pid: uid for pid, _, uid in procs}
    for pid, ppid, _ in procs:
        children.setdefault(ppid, []).append(pid)
    seen, todo = set(), list(root_pids)
    while todo:
        pid = todo.pop()
        if pid in seen or owner.get(pid) != 0:
            continue
        seen.add(pid)
        todo.extend(children.get(pid, []))
    return sum(_pss_kb(pid) for pid in seen) / 1024


# ---- the controller -------------------------------------------------------------------------

_RPC_LINE = re.compile(r"^\s*(?P<name>\S+)\s+\(\s*(?P<id>\d+)\)\s+count:(?P<count>\d+)")


def parse_sdiag(text: str) -> dict[str, dict[str, int]]:
    """sdiag's RPC counts: ``{"by_type": {TYPE: n}, "by_user": {USER: n}}``."""
    found: dict[str, dict[str, int]] = {"by_type": {}, "by_user": {}}
    section = None
    for line in text.splitlines():
        if line.startswith("Remote Procedure Call statistics by message type"):
            section = "by_type"
        elif line.startswith("Remote Procedure Call statistics by user"):
            section = "by_user"
        elif line and not line[0].isspace():
            section = None
        elif section:
            match = _RPC_LINE.match(line)
            if match:
                found[section][match["name"]] = found[section].get(match["name"], 0) + int(match["count"])
    return found


def sdiag(slurm_env: dict, reset: bool = False) -> str:
    argv = ["sdiag", "-r"] if reset else ["sdiag"]
    return subprocess.run(argv, capture_output=True, text=True, env=slurm_env, timeout=60,
                          check=True).stdout


# ---- the whole class ------------------------------------------------------------------------

def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def run_class(hub: dict, slurm_env: dict) -> dict:
    """The class on a started hub (hub.sh's env file as ``hub``): every figure and learner."""
    names = [n for n in hub["ARI_HUB_CLASS"].split(",") if n]
    sdiag(slurm_env, reset=True)
    started = time.monotonic()
    learners = open_lessons_at_once(hub["ARI_HUB_URL"], names, hub["ARI_HUB_PASSWORD"])
    wall = time.monotonic() - started
    rpcs = parse_sdiag(sdiag(slurm_env))
    for learner in learners:
        learner.pss_mb = round(memory_of_user(pwd.getpwnam(learner.name).pw_uid), 1)
    hub_dir = Path(hub["ARI_HUB_LOG"]).parent
    roots = [int((hub_dir / f"{name}.pid").read_text()) for name in ("hub", "proxy")
             if (hub_dir / f"{name}.pid").is_file()]
    ready = [l.ready_s for l in learners if l.ready_s is not None]
    memory = [l.pss_mb for l in learners if l.pss_mb]
    return {
        "learners": [asdict(l) for l in learners],
        "count": len(names), "ready": len(ready), "wall_s": round(wall, 1),
        "ready_p50_s": round(statistics.median(ready), 1) if ready else None,
        "ready_p95_s": round(percentile(ready, 0.95), 1) if ready else None,
        "ready_max_s": round(max(ready), 1) if ready else None,
        "learner_mb_median": round(statistics.median(memory), 1) if memory else None,
        "learner_mb_max": round(max(memory), 1) if memory else None,
        "learners_mb_total": round(sum(memory), 1),
        "hub_mb": round(memory_of_tree(roots), 1),
        "rpcs": rpcs,
        "rpcs_by_learners": {u: n for u, n in rpcs["by_user"].items() if u in names},
    }


def table(result: dict) -> str:
    other = ", ".join(f"{user} {count}" for user, count in sorted(result["rpcs"]["by_user"].items()))
    return "\n".join([
        "| figure | value |",
        "| --- | --- |",
        f"| learners who logged in at once | {result['count']} |",
        f"| learners with lesson 1 ready (its file, and its kernel answering) | {result['ready']} |",
        f"| time from login to a ready lesson, p50 / p95 / max | {result['ready_p50_s']} s / "
        f"{result['ready_p95_s']} s / {result['ready_max_s']} s |",
        f"| memory per learner (PSS of server and kernel), median / max | "
        f"{result['learner_mb_median']} MB / {result['learner_mb_max']} MB |",
        f"| memory of all learners | {result['learners_mb_total']} MB |",
        f"| memory of the hub (hub and proxy) | {result['hub_mb']} MB |",
        f"| slurmctld RPCs from the learners (sdiag by user) | "
        f"{sum(result['rpcs_by_learners'].values())} |",
        f"| slurmctld RPCs from anyone during the class | {other or 'none'} |",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.class_hub", description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=30)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))
    from testbed.cluster import Testbed  # the test bed's own lock and start

    bed = Testbed()
    running = bed.ensure("nogres")
    slurm_env = {**os.environ, **running.env}
    env = {**slurm_env, "ARI_HUB_CLASS_USERS": str(args.users),
           "ARI_HUB_CONFIG_EXTRA": str(CLASS_CONFIG)}
    try:
        started = subprocess.run(["bash", str(HUB_SCRIPT), "start", str(ROOT)], capture_output=True,
                                 text=True, timeout=1500, stdin=subprocess.DEVNULL, env=env)
        if started.returncode != 0:
            print(started.stderr[-4000:], file=sys.stderr)
            return 1
        hub = {}
        for line in Path(started.stdout.strip().splitlines()[-1]).read_text().splitlines():
            if line.startswith("export ") and "=" in line:
                key, _, value = line[len("export "):].partition("=")
                hub[key] = value
        result = run_class(hub, slurm_env)
    finally:
        subprocess.run(["bash", str(HUB_SCRIPT), "stop"], capture_output=True, timeout=300,
                       stdin=subprocess.DEVNULL, env=env)
        try:
            bed.stop()
        finally:
            bed.release_lock()
    result["machine"] = {"cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d")}
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    REPORT.write_text(
        f"# A class of {result['count']} on one hub\n\n"
        "Written by `python -m benchmarks.class_hub` (see its docstring for what is measured); "
        f"{result['machine']['cpus']} CPUs, {result['machine']['date']}. Every learner's figures: "
        "`benchmarks/results/class_hub.json`.\n\n" + table(result) + "\n")
    print(table(result))
    failed = [l for l in result["learners"] if l["error"]]
    for learner in failed:
        print(f"{learner['name']}: {learner['error']}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
