"""P1 (the probe suite runs concurrently) and P2 (a hung controller costs one timeout).

The probes are the real ones (``ari_jupyter.probes.run_probes``) on a real ``LocalHost``;
only the site commands are stand-ins: /bin/sh scripts on PATH that sleep, then print what
the real command prints (formats taken from a live SLURM 22.05 test bed).
"""
from __future__ import annotations

import asyncio
import tempfile
import threading
import time
from pathlib import Path

from .common import Figure, alive, median, write_program

SUITE = ("sbatch", "partitions", "gres", "mpi", "modules", "gpus", "ari", "time_left")
"""Eight probes that run site commands (shared_fs only reads the mount table)."""

SINFO_PARTITIONS = "small*|up|1:00:00|2|4|4000|gpu:v100:4\nlarge|up|infinite|2|4|4000|gpu:v100:4\n"
OUTPUTS = {
    "sbatch": dict(stdout="slurm 22.05.8\n"),
    "squeue": dict(stdout="      58:12\n"),
    "mpirun": dict(stdout="mpirun (Open MPI) 4.1.4\n\nReport bugs to http://www.open-mpi.org/community/help/\n"),
    "nvidia-smi": dict(stdout="".join(
        f"GPU {i}: Tesla V100-SXM2-32GB (UUID: GPU-0000000{i}-1111-2222-3333-444444444444)\n"
        for i in range(4))),
    "ari": dict(stdout="ari 0.9.0\n"),
    "lmod": dict(stderr="/opt/modulefiles:\ncuda/12.2\nopenmpi/4.1.4\npython/3.11\n"),
}


def make_site(directory: Path, delay: float, *, hang: tuple[str, ...] = (),
              pid_file: Path | None = None) -> dict[str, str]:
    """Write the stand-ins and return the environment of a notebook inside job 1."""
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    for name, output in OUTPUTS.items():
        write_program(bin_dir, name, delay=delay, hang=name in hang,
                      pid_file=pid_file if name in hang else None, **output)
    write_program(bin_dir, "sinfo", delay=delay, hang="sinfo" in hang,
                  pid_file=pid_file if "sinfo" in hang else None,
                  stdout="gpu:v100:4\n", dispatch={"%P|": SINFO_PARTITIONS})
    return {
        "PATH": str(bin_dir),
        "HOME": str(directory),
        "SLURM_JOB_ID": "1",
        "SLURM_JOB_NODELIST": "n[1-2]",
        "SLURM_JOB_NUM_NODES": "2",
        "LMOD_CMD": str(bin_dir / "lmod"),
        "MODULEPATH": "/opt/modulefiles",
    }


def _run(host, ctx) -> list:
    from ari_jupyter.probes import run_probes_sync

    return run_probes_sync(host, ctx)


def _context(allocation, only, timeout: float):
    from ari_jupyter.probes import ProbeContext

    return ProbeContext(allocation=allocation, only=list(only), timeout=timeout, module_cache=False)


def p1_probe_suite(repeats: int, delay: float) -> list[Figure]:
    from ari_jupyter.allocation import Allocation
    from ari_jupyter.host import LocalHost

    with tempfile.TemporaryDirectory(prefix="ari-bench-p1-") as tmp:
        env = make_site(Path(tmp), delay)
        host, allocation = LocalHost(env), Allocation.from_env(env)
        suite, singles = [], {probe: [] for probe in SUITE}
        statuses = {}
        for _ in range(repeats):
            # The way ARI and its peers check a site: one probe after another.
            for probe in SUITE:
                elapsed = time.perf_counter()
                _run(host, _context(allocation, [probe], 10.0))
                singles[probe].append(time.perf_counter() - elapsed)
            start = time.perf_counter()
            results = _run(host, _context(allocation, SUITE, 10.0))
            suite.append(time.perf_counter() - start)
            statuses = {r.id: r.status for r in results}
    single_medians = {probe: median(samples) for probe, samples in singles.items()}
    slowest_probe = max(single_medians, key=single_medians.get)
    slowest, sequential = single_medians[slowest_probe], sum(single_medians.values())
    wall = median(suite)
    common = dict(repeats=repeats, samples=suite, extra={
        "command_delay_s": delay, "single_probe_s": single_medians, "statuses": statuses})
    critical = ("the suite's critical path is two commands in series (gres: sinfo -h -o %G, "
                "then sinfo -h -p DEFAULT -o %G); alone, gres also waits for the partition "
                f"list that the suite shares with the partitions probe; against that path "
                f"({2 * delay:g} s) the suite takes {median(suite) / (2 * delay):.2f}×")
    return [
        Figure("P1", f"probe suite (8 probes, {delay:g} s commands) vs slowest single probe",
               wall, "s", slowest, f"slowest probe alone ({slowest_probe})", "≤ 1.2×",
               wall <= 1.2 * slowest, note=critical, **common),
        Figure("P1s", "probe suite vs the same probes one after another (as ARI does)",
               wall, "s", sequential, "sum of the probes alone", "report (≈ 1/8 expected)",
               None, **common),
    ]


async def _suite_with_message_waits(host, ctx) -> tuple[float, float, int, list]:
    """Run the suite on this loop while a thread posts a message every 10 ms, the way the
    kernel's I/O thread hands widget messages to the loop; return the wall time and the
    longest wait of a message."""
    from ari_jupyter.probes import run_probes

    loop = asyncio.get_running_loop()
    waits: list[float] = []
    stop = threading.Event()

    def handle(posted: float) -> None:
        waits.append(time.perf_counter() - posted)

    def post() -> None:
        while not stop.is_set():
            loop.call_soon_threadsafe(handle, time.perf_counter())
            time.sleep(0.01)

    poster = threading.Thread(target=post, daemon=True)
    start = time.perf_counter()
    poster.start()
    results = [result async for result in run_probes(host, ctx)]
    wall = time.perf_counter() - start
    stop.set()
    poster.join()
    await asyncio.sleep(0.02)  # deliver the last posted messages
    return wall, max(waits, default=0.0), len(waits), results


def p2_hung_controller(repeats: int, timeout: float) -> list[Figure]:
    from ari_jupyter.allocation import Allocation
    from ari_jupyter.host import LocalHost
    from ari_jupyter.probes import PROBE_IDS

    walls, longest_waits, messages, leftover, started, statuses = [], [], 0, 0, 0, {}
    with tempfile.TemporaryDirectory(prefix="ari-bench-p2-") as tmp:
        pid_file = Path(tmp) / "hung.pids"
        env = make_site(Path(tmp), 0.05, hang=("sinfo", "squeue"), pid_file=pid_file)
        host, allocation = LocalHost(env), Allocation.from_env(env)
        for _ in range(repeats):
            pid_file.write_text("")
            ctx = _context(allocation, PROBE_IDS, timeout)
            wall, longest, count, results = asyncio.run(_suite_with_message_waits(host, ctx))
            walls.append(wall)
            longest_waits.append(longest)
            messages += count
            statuses = {r.id: r.status for r in results}
            time.sleep(0.05)
            pids = [int(p) for p in pid_file.read_text().split()]
            started += len(pids)
            leftover += sum(alive(pid) for pid in pids)
    wall = median(walls)
    longest = median(longest_waits)  # each repeat's longest wait; the worst is in the note
    hung_status = {probe: statuses.get(probe) for probe in ("partitions", "gres", "time_left")}
    note = (f"hung processes started: {started}, left behind: {leftover}; "
            f"hung probes ended as {hung_status}")
    return [
        Figure("P2", f"all 9 probes, sinfo and squeue never answer (timeout {timeout:g} s)",
               wall, "s", timeout, "probe timeout", f"≤ timeout + 0.5 s ({timeout + 0.5:g} s)",
               wall <= timeout + 0.5 and leftover == 0, note=note, repeats=repeats,
               samples=walls, extra={"statuses": statuses, "processes_started": started,
                                     "processes_left": leftover}),
        Figure("P2m", "longest wait of a widget message while those probes run",
               longest, "s", 0.010, "message interval (10 ms)", "≤ 50 ms", longest <= 0.050,
               note=f"{messages} messages posted from another thread; median of each repeat's "
                    f"longest wait, worst {max(longest_waits) * 1e3:.1f} ms",
               repeats=repeats, samples=longest_waits),
    ]
