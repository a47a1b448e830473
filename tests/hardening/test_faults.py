"""Commands that hang, fail, flood, print invalid UTF-8 or vanish from PATH mid-run.

Each fault is real: a script on PATH (or removed from it) run by ``LocalHost`` and by the
probes. Each must end in a verdict within its timeout, and nothing the test started may still
run afterwards — checked by scanning /proc for a marker variable every child inherits, not
by trusting the code's own bookkeeping. (A slurmctld stopped or hung while the probes ask it
is covered on the real test bed: tests/testbed/test_testbed_slurm.py::
test_probes_unknown_while_controller_is_out.)
"""
from __future__ import annotations

import asyncio
import asyncio.base_subprocess
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ari_jupyter.slurm.allocation import Allocation
from ari_jupyter.hosts.host import LocalHost
from ari_jupyter.probes import PROBE_IDS, STATUSES, ProbeContext, run_probes_sync
from ari_jupyter.probes.runner import SAFETY_MARGIN

from ._support import kill_marked, marked_env, processes_with_mark, wait_until_gone, write_command
from .figures import record

REPO = Path(__file__).resolve().parents[2]
SLACK = 2.5
"""Seconds allowed beyond a timeout on a loaded 2-core machine."""

FAULTS = {
    # name: (sh body, what the command result must show)
    "hangs": ("exec sleep 1000", "timed_out"),
    "hangs ignoring SIGTERM, with a child": ("trap '' TERM\nsleep 1000 &\nsleep 1000\nwait", "timed_out"),
    "exits, leaving a child holding the pipes": ("sleep 1000 &\necho started\nexit 0", "ok"),
    "exits 1": ("echo 'error: something broke' >&2\nexit 1", "returncode"),
    "exits 255 silently": ("exit 255", "returncode"),
    "dies of SIGSEGV": ("kill -SEGV $$", "returncode"),
    "prints 20 MB": ("head -c 20000000 /dev/zero | tr '\\0' 'x'", "ok"),
    "prints forever": ("exec yes 'flood flood flood'", "timed_out"),
    "prints invalid UTF-8": ("printf 'sinfo\\377\\376 \\200\\300\\n|up|\\355\\240\\200\\n' ; printf '\\377' >&2", "ok"),
    "is not an executable format": (None, "returncode"),
}
COMMANDS = ("sbatch", "sinfo", "squeue", "srun", "mpirun", "mpiexec", "nvidia-smi", "ari")


def _install(bin_dir: Path, name: str, fault: str) -> None:
    body, _ = FAULTS[fault]
    if body is None:
        bin_dir.mkdir(parents=True, exist_ok=True)
        path = bin_dir / name
        path.write_bytes(b"\x7fELF\x02\x01\x01garbage, not a program")
        path.chmod(0o755)
    else:
        write_command(bin_dir, name, body)


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_faulty_command_ends_in_a_result_within_its_timeout(tmp_path, fault):
    bin_dir = tmp_path / "bin"
    _install(bin_dir, "faulty", fault)
    env, mark = marked_env(bin_dir)
    host = LocalHost(env, output_cap=1 << 20)
    timeout = 1.0
    try:
        started = time.monotonic()
        result = asyncio.run(host.run(["faulty", "--flag"], timeout=timeout))
        elapsed = time.monotonic() - started
        left = wait_until_gone(mark, timeout=2.0)
    finally:
        kill_marked(mark)
    expect = FAULTS[fault][1]
    assert elapsed <= timeout + SLACK, f"{fault}: took {elapsed:.2f}s"
    if expect == "timed_out":
        assert result.timed_out and result.returncode is None
    elif expect == "ok":
        assert result.returncode == 0 and not result.timed_out
    else:
        assert result.returncode not in (0, None) and not result.timed_out
    assert len(result.stdout.encode()) <= (1 << 20) + 200 and len(result.stderr.encode()) <= (1 << 20) + 200
    if fault == "prints 20 MB":
        assert "[truncated:" in result.stdout
    assert left == [], f"{fault}: still running: {left}"
    record("Faults", "single command under LocalHost.run", cases=1, survived=1, lost=len(left),
           unit="faults", fault=fault)


def test_a_command_removed_between_which_and_exec_is_not_found(tmp_path):
    """The race itself: ``which`` saw the program, then it vanished before the exec."""
    bin_dir = tmp_path / "bin"
    write_command(bin_dir, "sinfo", "echo never")
    env, mark = marked_env(bin_dir)

    class VanishingHost(LocalHost):
        def which(self, program, env=None):
            found = super().which(program, env)
            if found:
                os.unlink(found)
            return found

    result = asyncio.run(VanishingHost(env).run(["sinfo"], timeout=2.0))
    assert result.not_found and result.returncode == 127 and "not found" in result.stderr
    assert processes_with_mark(mark) == []
    record("Faults", "command vanishes between `which` and exec", cases=1, survived=1, unit="faults")


def _probe_env(bin_dir: Path) -> tuple[dict, str]:
    return marked_env(bin_dir, {"SLURM_JOB_ID": "77", "SLURM_JOB_PARTITION": "small",
                                "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_JOB_NUM_NODES": "2"})


def _run_all_probes(env: dict, timeout: float):
    host = LocalHost(env)
    ctx = ProbeContext(allocation=Allocation.from_env(env), partition="small", timeout=timeout,
                       workspace=str(Path(env["HOME"]) / "ws"))
    arrivals = {}
    started = time.monotonic()
    results = run_probes_sync(host, ctx, on_result=lambda r: arrivals.setdefault(r.id, time.monotonic() - started))
    return results, arrivals, time.monotonic() - started


@pytest.mark.parametrize("fault", list(FAULTS))
def test_every_probe_ends_in_a_verdict_when_every_command_misbehaves(tmp_path, fault):
    bin_dir = tmp_path / "bin"
    for name in COMMANDS:
        _install(bin_dir, name, fault)
    env, mark = _probe_env(bin_dir)
    timeout = 1.5
    try:
        results, arrivals, elapsed = _run_all_probes(env, timeout)
        left = wait_until_gone(mark, timeout=2.0)
    finally:
        kill_marked(mark)
    late = {pid: round(t, 2) for pid, t in arrivals.items() if t > timeout + SAFETY_MARGIN + SLACK}
    escaped = [r.id for r in results if r.summary.startswith("probe error")]
    assert sorted(r.id for r in results) == sorted(PROBE_IDS)
    assert all(r.status in STATUSES for r in results)
    record("Faults", "all 9 probes, every site command faulty", cases=len(results),
           survived=len(results) - len(late) - len(escaped), lost=len(left), unit="probe verdicts",
           fault=fault)
    assert not late, f"{fault}: verdicts after the timeout: {late}"
    assert not escaped, f"{fault}: exceptions escaped: {escaped}"
    assert left == [], f"{fault}: still running: {left}"
    if FAULTS[fault][1] == "timed_out":
        slurm = {r.id: r.status for r in results if r.id in ("sbatch", "partitions", "gres", "time_left")}
        assert set(slurm.values()) <= {"unknown"}, slurm  # a hang is no answer, not a "fail"


def test_commands_disappearing_from_path_mid_run(tmp_path):
    """sinfo deletes the whole PATH directory when it starts; every other probe then meets
    commands that `which` may or may not still see: each still ends in a verdict."""
    bin_dir = tmp_path / "bin"
    for name in COMMANDS:
        write_command(bin_dir, name, "sleep 0.3\necho 'version 1.2.3'")
    write_command(bin_dir, "sinfo", f"rm -rf {bin_dir}\nsleep 0.2\necho 'small*|up|1:00:00|2|4|1000|(null)'")
    env, mark = _probe_env(bin_dir)
    try:
        results, arrivals, elapsed = _run_all_probes(env, 2.0)
        left = wait_until_gone(mark, timeout=2.0)
    finally:
        kill_marked(mark)
    assert not bin_dir.exists()
    assert sorted(r.id for r in results) == sorted(PROBE_IDS)
    assert not [r.id for r in results if r.summary.startswith("probe error")]
    assert max(arrivals.values()) <= 2.0 + SAFETY_MARGIN + SLACK
    assert left == []
    record("Faults", "PATH directory deleted while the probes run", cases=len(results),
           survived=len(results), lost=len(left), unit="probe verdicts")


def test_probe_command_line_with_hanging_commands_exits_in_time(tmp_path):
    """The real CLI process: ``ari-jupyter probe --json --timeout 1`` with every command hung."""
    bin_dir = tmp_path / "bin"
    for name in COMMANDS:
        _install(bin_dir, name, "hangs ignoring SIGTERM, with a child")
    env, mark = _probe_env(bin_dir)
    env["PYTHONPATH"] = str(REPO)
    started = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "probe", "--json", "--timeout", "1",
                               "--partition", "small", "--checkpoint-dir", str(tmp_path)],
                              env=env, capture_output=True, text=True, timeout=30, cwd=tmp_path)
        elapsed = time.monotonic() - started
        left = wait_until_gone(mark, timeout=2.0)
    finally:
        kill_marked(mark)
    payload = json.loads(proc.stdout)
    assert {p["id"] for p in payload["probes"]} == set(PROBE_IDS)
    assert payload["elapsed_s"] <= 1 + SAFETY_MARGIN + SLACK
    assert elapsed <= 1 + SAFETY_MARGIN + SLACK + 5  # + interpreter start-up
    assert left == []
    record("Faults", "`ari-jupyter probe --json` with every command hung", cases=1, survived=1,
           lost=len(left), unit="runs")


def test_the_process_scan_sees_a_leftover_process(tmp_path):
    """Control: the /proc scan the fault tests rely on does find a process that outlives its
    command (started here in its own session, out of the host's reach)."""
    bin_dir = tmp_path / "bin"
    env, mark = marked_env(bin_dir)
    escaped = subprocess.Popen(["sleep", "30"], env=env, start_new_session=True)
    try:
        # until the child has exec'd, /proc shows the parent's environment: look again a while
        deadline = time.monotonic() + 5
        while escaped.pid not in processes_with_mark(mark) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert escaped.pid in processes_with_mark(mark)
    finally:
        escaped.kill()
        escaped.wait()
    assert processes_with_mark(mark) == []


@pytest.mark.parametrize("fault", ["hangs", "hangs ignoring SIGTERM, with a child", "prints forever"])
def test_cancelling_a_command_at_any_moment_leaves_nothing_running(tmp_path, fault, monkeypatch):
    """The probe runner cancels a probe at its deadline, wherever its command is: starting,
    running, or inside the TERM-then-KILL grace of its own timeout. Cancel at many moments
    across all three phases; after each, no process of that command may be alive, and its pipes
    are closed on the loop that opened them (left to the garbage collector, they are closed
    after that loop is gone: "Event loop is closed")."""
    transports = []
    made = asyncio.base_subprocess.BaseSubprocessTransport.__init__

    def tracked(self, *args, **kwargs):
        transports.append(self)
        made(self, *args, **kwargs)

    monkeypatch.setattr(asyncio.base_subprocess.BaseSubprocessTransport, "__init__", tracked)
    bin_dir = tmp_path / "bin"
    _install(bin_dir, "faulty", fault)
    env, mark = marked_env(bin_dir)
    host = LocalHost(env)
    moments = [i * 0.02 for i in range(0, 20)]  # 0 .. 0.38 s; the command's timeout is 0.15 s
    left_over, left_open, started = {}, {}, []

    async def cancel_at(moment: float) -> None:
        task = asyncio.ensure_future(host.run(["faulty"], timeout=0.15))
        await asyncio.sleep(moment)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        alive = processes_with_mark(mark)
        if alive:
            left_over[round(moment, 2)] = alive
        unclosed = [t for t in transports if not t.is_closing()]
        if unclosed:
            left_open[round(moment, 2)] = len(unclosed)
        started.append(len(transports))
        transports.clear()

    try:
        for moment in moments:
            asyncio.run(cancel_at(moment))
            kill_marked(mark)
    finally:
        kill_marked(mark)
    record("Faults", "command cancelled at 20 moments (spawn, run, TERM grace)", cases=len(moments),
           survived=len(moments) - len(left_over), lost=len(left_over), unit="cancellations",
           fault=fault)
    assert not left_over, f"processes alive right after cancellation: {left_over}"
    assert started == [1] * len(moments)  # every cancellation met a started command
    assert not left_open, f"pipes left open after cancellation: {left_open}"


def test_control_without_the_group_kill_a_timed_out_command_outlives_its_call(tmp_path, monkeypatch):
    """Control: with process-group signalling disabled, the same hang leaves processes behind
    and the /proc scan reports them — the zero above is a measurement, not a blind spot."""
    import ari_jupyter.base.process as process_module

    monkeypatch.setattr(process_module, "_signal_group", lambda pgid, sig: False)
    bin_dir = tmp_path / "bin"
    _install(bin_dir, "faulty", "hangs ignoring SIGTERM, with a child")
    env, mark = marked_env(bin_dir)

    async def scenario():
        await LocalHost(env).run(["faulty"], timeout=0.3)
        alive = processes_with_mark(mark)
        kill_marked(mark)
        await asyncio.sleep(0.5)  # the loop reaps what it started before it closes
        return alive

    try:
        assert asyncio.run(scenario())
    finally:
        kill_marked(mark)
