"""slurmctld goes away WHILE the probes run, on the real two-node test bed.

"Mid-way" is made deterministic with stand-ins first on PATH for sinfo / squeue / sbatch: each
call is classified by a plan (a table below). ``before`` calls run against the live controller
and leave a marker; the ``trigger`` call waits for those markers, stops (or SIGSTOPs) the real
slurmctld through the test bed's own script, then execs the real program; ``after`` calls wait
until the controller is out, then exec the real program. So some probes answered from a live
controller and the rest meet a dead or hung one - every time, not by luck of scheduling.

The probes run with the environment of a real ``salloc -N2 -n4`` allocation (a JupyterLab
started inside it sees exactly this), from the CLI and from the wizard on an asyncio loop.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from testbed.cluster import SCRIPT, SYSTEM_PATH

slurm = pytest.mark.slurm

HICCUP = re.compile(r"^the SLURM controller did not answer \(.*Unable to contact slurm controller")
TIMED_OUT = re.compile(r"^`\w+` did not answer within \d+\.\ds: ")
WRAPPED = ("sinfo", "squeue", "sbatch")
GATE_S = 8.0  # how long a gated stand-in waits for its markers before giving up (and saying so)


@dataclass(frozen=True)
class Plan:
    """Which controller calls happen before the outage, which one causes it, which meet it."""

    outage: str  # "stop" (connection refused) or "pause" (SIGSTOP: connections hang)
    calls: tuple[tuple[str, str, str], ...]  # (glob over "program args", role, key)
    expect: dict  # probe id -> "live" | "hiccup" | "timeout"


# stopped: sinfo fails after ~9 s with "Unable to contact slurm controller" (partitions says
# so, and gres, which reads the partition's GRES from the same listing), squeue and sbatch
# --test-only need ~18 s, past the timeout (time_left, sbatch time out)
STOPPED = Plan("stop", (
    ("sinfo -h -o %G", "before", "gres-cluster"),
    ("squeue *", "trigger", "time_left"),
    ("sinfo --noheader -o *", "after", "partitions"),
    ("sbatch --test-only *", "after", "sbatch-test"),
), {"partitions": "hiccup", "time_left": "timeout", "sbatch": "timeout",
    "gres": "hiccup", "gpus": "live", "mpi": "live", "modules": "live", "shared_fs": "live", "ari": "live"})
STOPPED_TIMEOUT = 13.0

# paused: the controller accepts connections and never answers - everything after waits out T
PAUSED = Plan("pause", (
    ("sinfo --noheader -o *", "before", "partitions"),
    ("sinfo -h -o %G", "before", "gres-cluster"),
    ("squeue *", "trigger", "time_left"),
    ("sbatch --test-only *", "after", "sbatch-test"),
), {"time_left": "timeout", "sbatch": "timeout",
    "partitions": "live", "gres": "live", "gpus": "live", "mpi": "live", "modules": "live",
    "shared_fs": "live", "ari": "live"})
PAUSED_TIMEOUT = 5.0


def _case_pattern(glob: str) -> str:
    """A sh ``case`` pattern: literal text quoted, ``*`` left as the wildcard."""
    return "*".join(shlex.quote(part) if part else "" for part in glob.split("*"))


def write_stand_ins(bin_dir: Path, state_dir: Path, plan: Plan, real_path: str, lab_dir: Path) -> None:
    """One sh stand-in per wrapped program (sh, not Python: it must start in milliseconds)."""
    bin_dir.mkdir()
    state_dir.mkdir()
    befores = " ".join(f"done.{key}" for _, role, key in plan.calls if role == "before")
    clean = " ".join(["env", "-i", f"PATH={':'.join(SYSTEM_PATH)}", f"ARI_TESTBED_DIR={lab_dir}",
                      "HOME=/root", "bash", shlex.quote(str(SCRIPT)), f"ctld-{plan.outage}"])
    for program in WRAPPED:
        real = shutil.which(program, path=real_path)
        assert real, f"{program} not found on the test bed's PATH"
        cases = "\n".join(f"  {_case_pattern(glob)}) role={role} key={key} ;;" for glob, role, key in plan.calls)
        script = f"""#!/bin/sh
# stand-in for {program}: see tests/testbed/test_testbed_midway.py
dir={shlex.quote(str(state_dir))}
call="{program} $*"
log() {{ printf '%s %s %s %s\\n' "$(date +%s.%N)" "$$" "$1" "$call" >>"$dir/calls.log"; }}
wait_for() {{
  i=0
  while :; do
    missing=0; for f in "$@"; do [ -e "$dir/$f" ] || missing=1; done
    [ $missing = 0 ] && return 0
    [ $i -ge {int(GATE_S / 0.05)} ] && return 1
    sleep 0.05; i=$((i+1))
  done
}}
role=pass key=
case "$call" in
{cases}
esac
log "$role"
case $role in
  before) {shlex.quote(real)} "$@"; rc=$?; : >"$dir/done.$key"; log "done-$rc"; exit $rc ;;
  trigger)
    wait_for {befores} || log gate-timeout
    if mkdir "$dir/trigger.lock" 2>/dev/null; then
      {clean} >>"$dir/outage.log" 2>&1 || log outage-failed
      : >"$dir/outage"; log outage
    fi ;;
  after) wait_for outage || log gate-timeout; log go ;;
esac
exec {shlex.quote(real)} "$@"
"""
        path = bin_dir / program
        path.write_text(script)
        path.chmod(0o755)


def leftovers(token: str) -> list[str]:
    """Live processes carrying the run's marker variable (zombies have no environ)."""
    needle = f"ARI_MIDWAY_RUN={token}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                found.append(f"{entry.name}: {cmdline}")
        except OSError:
            continue
    return found


def no_leftovers(token: str, grace: float = 1.0) -> list[str]:
    deadline = time.monotonic() + grace
    while (left := leftovers(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


class Allocation:
    """``salloc -N2 -n4 -t 30`` holding an allocation; ``env`` is what its shell sees.

    The explicit 30 minutes keep the live time_left verdict fixed ("warn": under an hour left);
    with the partition's 60-minute default it would flip to "warn" one second after the start.
    """

    def __init__(self, bed, workdir: Path):
        self.bed, self.workdir = bed, workdir
        self.release = workdir / "release"
        env_file = workdir / "alloc.env"
        script = f'env -0 > {shlex.quote(str(env_file))}.tmp && mv {shlex.quote(str(env_file))}.tmp ' \
                 f'{shlex.quote(str(env_file))}; while [ ! -e {shlex.quote(str(self.release))} ]; do sleep 0.1; done'
        self.log = open(workdir / "salloc.log", "w")
        self.proc = subprocess.Popen(["salloc", "-N2", "-n4", "-t", "30", "sh", "-c", script], env=bed.env, cwd=workdir,
                                     stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not env_file.exists():
            assert self.proc.poll() is None, (workdir / "salloc.log").read_text()
            assert time.monotonic() < deadline, "salloc did not start its shell in 30 s"
            time.sleep(0.05)
        self.env = dict(item.split("=", 1) for item in env_file.read_text().split("\0") if "=" in item)
        assert self.env.get("SLURM_JOB_NUM_NODES") == "2" and self.env.get("SLURM_JOB_PARTITION") == "small"

    def close(self) -> None:
        self.release.touch()
        try:
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.log.close()


def restore(bed, plan: Plan) -> None:
    """The controller back (idempotent), and proof that it answers."""
    bed.testbed.controller("start" if plan.outage == "stop" else "resume")
    assert "is UP" in bed.run(["scontrol", "ping"]).stdout
    assert bed.run(["sinfo", "-h", "-o", "%P"]).stdout.split() == ["small*", "large"]


def midway_env(alloc_env: dict, tmp_path: Path, plan: Plan, bed) -> tuple[dict, Path, str]:
    bin_dir, state_dir, token = tmp_path / "stand-ins", tmp_path / "midway", uuid.uuid4().hex
    write_stand_ins(bin_dir, state_dir, plan, alloc_env["PATH"], bed.lab_dir)
    env = dict(alloc_env, PATH=f"{bin_dir}:{alloc_env['PATH']}", ARI_MIDWAY_RUN=token)
    return env, state_dir, token


def calls_log(state_dir: Path) -> list[list[str]]:
    path = state_dir / "calls.log"
    return [line.split(" ", 3) for line in path.read_text().splitlines()] if path.exists() else []


def check_gates(state_dir: Path, plan: Plan) -> float:
    """Every gate opened by its markers (none by giving up); returns when the outage began."""
    events = calls_log(state_dir)
    assert not [e for e in events if e[2] in ("gate-timeout", "outage-failed")], events
    outage = [float(e[0]) for e in events if e[2] == "outage"]
    assert len(outage) == 1, (events, (state_dir / "outage.log").read_text())
    outage_marker = (state_dir / "outage").stat().st_mtime
    for _, role, key in plan.calls:
        if role == "before":  # answered by the live controller, before it went away
            assert (state_dir / f"done.{key}").stat().st_mtime <= outage_marker, events
    return outage[0]


def probe_cli(env: dict, timeout: float, cwd: Path) -> tuple[dict, float]:
    argv = [sys.executable, "-m", "ari_jupyter", "probe", "--json", "--timeout", str(timeout),
            "--checkpoint-dir", str(cwd)]
    started = time.monotonic()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout * 3,
                          stdin=subprocess.DEVNULL)
    wall = time.monotonic() - started
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout), wall


def assert_verdicts(results: dict, baseline: dict, plan: Plan, timeout: float) -> None:
    assert sorted(results) == sorted(plan.expect), "every probe must answer"
    for probe_id, kind in plan.expect.items():
        got = results[probe_id]
        if kind == "live":
            assert got["status"] == baseline[probe_id]["status"], (probe_id, got, baseline[probe_id])
            if probe_id != "time_left":
                assert got["summary"] == baseline[probe_id]["summary"], probe_id
            continue
        assert got["status"] == "unknown", (probe_id, got)
        assert (HICCUP if kind == "hiccup" else TIMED_OUT).search(got["summary"]), (probe_id, got["summary"])
        assert got["fix"] and got["command"], got
        if kind == "timeout":
            seconds = float(re.search(r"within (\d+\.\d)s", got["summary"]).group(1))
            assert seconds <= timeout + 0.2, got["summary"]


@slurm
@pytest.mark.parametrize("plan, timeout, variant", [
    pytest.param(STOPPED, STOPPED_TIMEOUT, "gres", id="stopped"),
    pytest.param(PAUSED, PAUSED_TIMEOUT, "nogres", id="paused"),
])
def test_cli_probes_when_the_controller_goes_away_midway(plan, timeout, variant, request, tmp_path):
    bed = request.getfixturevalue(f"testbed_{variant}")
    alloc = Allocation(bed, tmp_path)
    try:
        baseline, _ = probe_cli(alloc.env, 30.0, tmp_path)
        live = {p["id"]: p for p in baseline["probes"]}
        assert {live[i]["status"] for i in ("sbatch", "partitions")} == {"ok"}, live
        assert live["time_left"]["status"] == "warn", live["time_left"]  # 30 min < the 1 h threshold
        assert 25 * 60 < live["time_left"]["data"]["seconds"] <= 30 * 60, live["time_left"]
        env, state_dir, token = midway_env(alloc.env, tmp_path, plan, bed)
        try:
            report, wall = probe_cli(env, timeout, tmp_path)
            left = no_leftovers(token)
            outage_at = check_gates(state_dir, plan)
        finally:
            restore(bed, plan)
    finally:
        alloc.close()
    assert not left, f"probe subprocesses still running: {left}"
    results = {p["id"]: p for p in report["probes"]}
    assert_verdicts(results, live, plan, timeout)
    assert report["allocation"]["num_nodes"] == 2 and report["allocation"]["partition"] == "small"
    assert report["elapsed_s"] <= timeout + 0.5, report["elapsed_s"]
    assert wall <= timeout + 3.0, wall  # interpreter start and exit included
    assert outage_at > 0
    assert alloc.proc.returncode == 0, (tmp_path / "salloc.log").read_text()


@slurm
def test_wizard_stays_responsive_while_probes_hang_on_a_paused_controller(testbed_gres, tmp_path):
    from ari_jupyter.wizard.config import AriWizard
    from ari_jupyter.widgets.wizard import Wizard
    from test_widgets_support import fake_bridge

    plan, timeout = PAUSED, PAUSED_TIMEOUT
    hung = sorted(pid for pid, kind in plan.expect.items() if kind != "live")
    alloc = Allocation(testbed_gres, tmp_path)
    try:
        env, state_dir, token = midway_env(alloc.env, tmp_path, plan, testbed_gres)

        async def scenario():
            started = time.monotonic()
            wizard = Wizard(site=None, env=env, bridge=fake_bridge()[0],
                            config=AriWizard(probe_timeout=timeout))
            assert time.monotonic() - started < 1.0  # constructing never waits for a probe
            while not (state_dir / "outage").exists() or sorted(wizard.ctx.runner.running) != hung:
                assert time.monotonic() - started < timeout, (wizard.ctx.runner.running, calls_log(state_dir))
                await asyncio.sleep(0.02)
            # the controller is paused and two probes wait on it: the user keeps typing
            # filled in earlier: what the experiment.md preview needs besides the title
            wizard.state.max_cpus, wizard.state.metrics = 4, ["throughput"]
            wizard.state.goal = "Measure throughput on two nodes."
            changed_at = time.monotonic()
            wizard.experiment_panel.title.value = "Typed while slurmctld hangs"
            assert wizard.state.title == "Typed while slurmctld hangs"
            assert "Typed while slurmctld hangs" in wizard.experiment_panel.previews.children[0].value
            tick = time.monotonic()
            await asyncio.sleep(0.05)
            assert time.monotonic() - tick < 0.5  # the loop is not blocked by the hung commands
            assert time.monotonic() - changed_at < 1.0
            assert sorted(wizard.ctx.runner.running) == hung  # still out
            rows = wizard.checks_panel.rows
            assert all("spin" in rows[pid].icon.icon for pid in hung)
            await wizard.wait()
            return wizard, time.monotonic() - started

        try:
            wizard, elapsed = asyncio.run(scenario())
            left = no_leftovers(token)
            check_gates(state_dir, plan)
        finally:
            restore(testbed_gres, plan)
    finally:
        alloc.close()
    assert not left, f"probe subprocesses still running: {left}"
    assert elapsed <= timeout + 1.0, elapsed
    results = wizard.state.probe_results
    assert sorted(results) == sorted(plan.expect)
    for pid in hung:
        assert results[pid].status == "unknown" and TIMED_OUT.search(results[pid].summary), results[pid]
        assert wizard.checks_panel.rows[pid].icon.icon == "question"
    assert results["partitions"].status == "ok" and results["gres"].status == "ok"
    assert wizard.ctx.runner.running == []


def test_case_patterns_quote_literals_and_keep_wildcards():
    assert _case_pattern("sinfo -h -o %G") == "'sinfo -h -o %G'"
    assert _case_pattern("sinfo -h -p * -o %G") == "'sinfo -h -p '*' -o %G'"
    assert _case_pattern("squeue *") == "'squeue '*"
