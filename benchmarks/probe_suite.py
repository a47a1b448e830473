"""P1 (the probe suite runs concurrently) and P2 (a hung controller costs one timeout).

The probes are the real ones (``ari_jupyter.probes.run_probes``) on a real ``LocalHost``;
only the site commands are stand-ins: /bin/sh scripts on PATH that sleep, then print what
the real command prints (formats taken from a live SLURM 22.05 test bed).
"""
from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

from .common import Figure, alive, fmt_seconds, median, not_measured, write_program

SUITE = ("sbatch", "partitions", "gres", "mpi", "modules", "gpus", "ari", "time_left")
"""Eight probes that run site commands (shared_fs only reads the mount table)."""

SINFO_PARTITIONS = "small*|up|1:00:00|2|4|4000|gpu:v100:4\nlarge|up|infinite|2|4|4000|gpu:v100:4\n"
OUTPUTS = {
    "sbatch": dict(stdout="slurm 22.05.8\n", dispatch={
        "--help": "      --cpu-bind=...\n      --mem-bind=...\n",
        "--test-only": "sbatch: Job 3 to start at 2026-01-01T00:00:00 using 4 processors on nodes n1 in partition small\n"}),
    "squeue": dict(stdout="      58:12\n"),
    "srun": dict(stdout="slurm 22.05.8\n", dispatch={"--mpi=list": "srun: MPI types are...\nsrun: none\nsrun: pmix\nsrun: pmi2\n"}),
    "mpirun": dict(stdout="mpirun (Open MPI) 4.1.4\n\nReport bugs to http://www.open-mpi.org/community/help/\n"),
    "mpiexec": dict(stdout="mpiexec (Open MPI) 4.1.4\n"),
    "nvidia-smi": dict(stdout="".join(
        f"GPU {i}: Tesla V100-SXM2-32GB (UUID: GPU-0000000{i}-1111-2222-3333-444444444444)\n"
        for i in range(4))),
    "ari": dict(stdout="ari 0.9.0\n"),
    "lmod": dict(stderr="/opt/modulefiles:\ncuda/12.2\nopenmpi/4.1.4\npython/3.11\n"),
}

SEED_GUIDE_SCRIPT = """\
module() { eval "$($LMOD_CMD bash "$@")"; }
# 1. sbatch on PATH?
which sbatch && echo OK
# 2. GRES configured?
sinfo -h -o '%G' | head
# 3. shared FS: is $HOME really on shared storage?
df -hT $HOME
# 4. MPI available?
which srun mpirun
module avail openmpi 2>&1 | head
"""
"""The site-validation commands of the setup guide this project starts from, verbatim, run
one after another by bash (``module`` is Lmod's shell function)."""


def make_site(directory: Path, delay: float, *, hang: tuple[str, ...] = (),
              pid_file: Path | None = None, log: Path | None = None) -> dict[str, str]:
    """Write the stand-ins and return the environment of a notebook inside job 1. With
    ``log``, every stand-in appends its command line there (to count what a run asked)."""
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    for name, output in OUTPUTS.items():
        write_program(bin_dir, name, delay=delay, hang=name in hang,
                      pid_file=pid_file if name in hang else None, log=log, **output)
    write_program(bin_dir, "sinfo", delay=delay, hang="sinfo" in hang,
                  pid_file=pid_file if "sinfo" in hang else None, log=log,
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


def _timed_process(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, timeout=120)
    return time.perf_counter() - start


def p1_probe_suite(repeats: int, delay: float) -> list[Figure]:
    from ari_jupyter.slurm.allocation import Allocation
    from ari_jupyter.hosts.host import LocalHost

    with tempfile.TemporaryDirectory(prefix="ari-bench-p1-") as tmp:
        log = Path(tmp) / "commands.log"
        env = make_site(Path(tmp), delay, log=log)
        shell_env = {**env, "PATH": f"{env['PATH']}{os.pathsep}/usr/bin{os.pathsep}/bin"}
        host, allocation = LocalHost(env), Allocation.from_env(env)
        log.write_text("")
        _run(host, _context(allocation, SUITE, 10.0))
        commands = [line for line in log.read_text().splitlines() if line.strip()]
        bash = shutil.which("bash") or "/bin/bash"
        ari = ari_sequence(Path(tmp), shell_env)
        suite, singles, script, ari_runs = [], {probe: [] for probe in SUITE}, [], []
        slowest_command = []
        statuses = {}
        for _ in range(repeats):
            for probe in SUITE:  # each probe alone: its own commands, nothing shared
                start = time.perf_counter()
                _run(host, _context(allocation, [probe], 10.0))
                singles[probe].append(time.perf_counter() - start)
            slowest_command.append(max(_timed_process([str(Path(env["PATH"]) / name)], env)
                                       for name in ("sinfo", "sbatch", "lmod")))
            script.append(_timed_process([bash, "-c", SEED_GUIDE_SCRIPT], shell_env))
            if ari is not None:
                ari_runs.append(ari())
            start = time.perf_counter()
            results = _run(host, _context(allocation, SUITE, 10.0))
            suite.append(time.perf_counter() - start)
            statuses = {r.id: r.status for r in results}
    single_medians = {probe: median(samples) for probe, samples in singles.items()}
    wall, slowest = median(suite), median(slowest_command)
    common = dict(repeats=repeats, samples=suite, extra={
        "command_delay_s": delay, "single_probe_s": single_medians, "statuses": statuses,
        "commands": commands})
    alone = ", ".join(f"{p} {fmt_seconds(v)}" for p, v in single_medians.items())
    figures = [
        Figure("P1", f"probe suite (8 probes, {len(commands)} stand-in commands of {delay:g} s) "
               "vs the slowest command alone", wall, "s", slowest,
               "slowest stand-in command run alone", "≤ 1.2×", wall <= 1.2 * slowest,
               note=f"each probe alone (no command shared with another probe): {alone}", **common),
        Figure("P1g", "probe suite vs the setup guide's site-validation commands (bash script)",
               wall, "s", median(script), "the guide's 5 checks run one after another",
               "report", None, repeats=repeats, samples=suite,
               note="the guide's script checks less (no partitions, test submission, GPUs, "
                    "time left, ARI) and still asks sinfo and Lmod one after another",
               extra={"script_samples": script, "script": SEED_GUIDE_SCRIPT}),
    ]
    if ari is None:
        figures.append(not_measured("P1a", "probe suite vs ARI's own pre-submission probes",
                                    "ARI's source snapshot not found (set ARI_SRC)"))
    else:
        figures.append(Figure(
            "P1a", "probe suite vs ARI's own pre-submission probes (real ARI code, in sequence)",
            wall, "s", median(ari_runs), "ARI: which sbatch, _is_shared_fs, _slurm_has_gres, "
            "_sbatch_supports x2", "report", None, repeats=repeats, samples=suite,
            note="ARI's functions loaded from its source snapshot and run in the order "
                 "_run_reproduce_slurm calls them; they answer fewer questions",
            extra={"ari_samples": ari_runs}))
    return figures


ARI_FUNCTIONS = ("_has_bin", "_is_shared_fs", "_slurm_has_gres", "_sbatch_supports")
ARI_SEQUENCE = """\
import ast, json, sys, time, os, shutil, subprocess
from pathlib import Path
source = Path(sys.argv[1]).read_text()
tree = ast.parse(source)
keep = [n for n in tree.body if (isinstance(n, ast.FunctionDef) and n.name in {names!r})
        or (isinstance(n, (ast.Assign, ast.AnnAssign)) and any(
            getattr(t, "id", "") in ("_SHARED_FS_PREFIXES", "_SBATCH_HELP_CACHE")
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])))]
space = {{"subprocess": subprocess, "shutil": shutil, "Path": Path, "os": os}}
exec(compile(ast.Module(body=keep, type_ignores=[]), sys.argv[1], "exec"), space)
start = time.perf_counter()
shutil.which("sbatch")                       # 1. sbatch on PATH (precondition 1)
space["_is_shared_fs"](Path(sys.argv[2]))    # 4. shared filesystem (warning only)
space["_slurm_has_gres"]()                   # 5. GRES, when a GPU is requested
space["_sbatch_supports"]("--cpu-bind")      # bind flags, sbatch --help once per process
space["_sbatch_supports"]("--mem-bind")
print(time.perf_counter() - start)
"""


def _ari_server_source() -> Path | None:
    """ARI's ari-skill-paper-re/src/server.py: $ARI_SRC, else the source snapshot beside the
    repository (unpacked once into a temporary directory)."""
    root = os.environ.get("ARI_SRC")
    if root and (Path(root) / "ari-skill-paper-re" / "src" / "server.py").is_file():
        return Path(root) / "ari-skill-paper-re" / "src" / "server.py"
    repo = Path(__file__).resolve().parent.parent
    for snapshots in (repo.parent / "shared" / "ari-snapshot", repo.parent.parent / "shared" / "ari-snapshot"):
        for tarball in sorted(snapshots.glob("ARI-*.tar.gz")):
            target = Path(tempfile.gettempdir()) / f"ari-bench-{tarball.stem}"
            server = next(target.glob("*/ari-skill-paper-re/src/server.py"), None)
            if server is None:
                with tarfile.open(tarball) as archive:
                    members = [m for m in archive.getmembers()
                               if m.name.endswith("ari-skill-paper-re/src/server.py")]
                    archive.extractall(target, members=members, filter="data")
                server = next(target.glob("*/ari-skill-paper-re/src/server.py"), None)
            if server is not None:
                return server
    return None


def ari_sequence(directory: Path, env: dict[str, str]):
    """A function timing ARI's own probes (in a child Python, on the stand-ins' PATH), or
    None without ARI's source."""
    server = _ari_server_source()
    if server is None:
        return None
    code = ARI_SEQUENCE.format(names=set(ARI_FUNCTIONS))
    repo_dir = directory / "repo"
    repo_dir.mkdir(exist_ok=True)

    def run() -> float:
        done = subprocess.run([sys.executable, "-c", code, str(server), str(repo_dir)], env=env,
                              capture_output=True, text=True, timeout=120)
        return float(done.stdout.strip().splitlines()[-1])

    return run


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
    from ari_jupyter.slurm.allocation import Allocation
    from ari_jupyter.hosts.host import LocalHost
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
