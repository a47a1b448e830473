"""Python side of the SLURM test bed: bring the cluster up, hand tests its environment.

The shell script ``slurm-testbed.sh`` next to this file does the real work (install,
daemons, configs). This module decides whether the machine can run it at all, switches
variants, and builds the environment that subprocesses need to talk to the cluster, so
fixtures stay small and every test sees the same thing a user's shell would.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping, Sequence

SCRIPT = Path(__file__).with_name("slurm-testbed.sh")
LAB_DIR = Path(os.environ.get("ARI_TESTBED_DIR", "/tmp/ari-testbed"))
LOCK_PATH = Path(os.environ.get("ARI_TESTBED_LOCK", "/tmp/ari-testbed.lock"))
VARIANTS = ("gres", "nogres")
# Started only by the tests that need it (not in VARIANTS, so ``testbed_any`` skips it): nogres
# with memory a consumable resource (CR_Core_Memory, DefMemPerCPU), for memory refusals.
# acct: nogres with real accounting (slurmdbd on MariaDB, the cluster and root's association
# registered) and MinJobAge=2, so an ended job leaves squeue within seconds as on a site.
EXTRA_VARIANTS = ("mem", "acct")
NODES = ("n1", "n2")
PARTITIONS = ("small", "large")
DEFAULT_PARTITION = "small"

# What the script needs already installed when it cannot install it itself.
REQUIRED_PROGRAMS = ("slurmctld", "slurmd", "sinfo", "sbatch", "srun", "salloc", "munged", "mpirun")
LMOD_INIT = Path("/usr/share/lmod/lmod/init/bash")
SYSTEM_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")

# Inherited variables that would change what SLURM commands do (an outer allocation,
# sbatch/srun input variables) or which modules Lmod thinks are loaded.
_DROPPED_PREFIXES = ("SLURM_", "SBATCH_", "SALLOC_", "SRUN_", "__LMOD_", "_ModuleTable")
_DROPPED_NAMES = frozenset({"MODULEPATH", "LOADEDMODULES", "_LMFILES_", "LMOD_CMD", "MODULESHOME"})

START_TIMEOUT_S = 900.0  # a first start installs packages (apt lock may be held by others)
STOP_TIMEOUT_S = 120.0
LOCK_TIMEOUT_S = float(os.environ.get("ARI_TESTBED_LOCK_TIMEOUT", "1800"))


class TestbedError(RuntimeError):
    """The test bed could not be brought into the wanted state; the message says why."""


def _which_all(names: Sequence[str], path: str) -> list[str]:
    return [n for n in names if shutil.which(n, path=path) is None]


def can_run() -> tuple[bool, str]:
    """Whether this machine can run the real cluster, and if not, the reason to skip with."""
    if os.environ.get("ARI_TESTBED_DISABLE"):
        return False, "disabled by ARI_TESTBED_DISABLE (a CI run with CI=true still fails on it)"
    if not sys.platform.startswith("linux"):
        return False, f"the SLURM test bed needs Linux (this is {sys.platform})"
    if os.geteuid() != 0:
        return False, ("the SLURM test bed needs root (munge user, mknod, unshare --uts, "
                       "daemons as root); run the tests as root")
    path = os.pathsep.join(SYSTEM_PATH)
    if shutil.which("unshare", path=path) is None:
        return False, "the SLURM test bed needs unshare (util-linux) for one UTS namespace per node"
    missing = _which_all(REQUIRED_PROGRAMS, path)
    if not LMOD_INIT.is_file():
        missing.append("lmod")
    if missing and shutil.which("apt-get", path=path) is None:
        return False, (f"SLURM test bed packages are missing ({', '.join(missing)}) "
                       "and there is no apt-get to install them")
    return True, ""


def parse_env_file(text: str) -> dict[str, str]:
    """Read the ``export NAME=VALUE`` lines the script writes (values shell-quoted)."""
    env: dict[str, str] = {}
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if len(words) == 2 and words[0] == "export" and "=" in words[1]:
            name, value = words[1].split("=", 1)
            env[name] = value
    return env


def build_env(testbed_vars: Mapping[str, str], base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The full environment for subprocesses: ours, minus anything that would mislead SLURM."""
    base = os.environ if base is None else base
    env = {k: v for k, v in base.items()
           if not k.startswith(_DROPPED_PREFIXES) and k not in _DROPPED_NAMES}
    env.update(testbed_vars)
    # the interpreter running the tests first (its `ari-jupyter` entry point), then the
    # system directories the daemons and commands live in, then whatever was there
    parts = [str(Path(sys.executable).parent), *SYSTEM_PATH, *base.get("PATH", "").split(os.pathsep)]
    env["PATH"] = os.pathsep.join(dict.fromkeys(p for p in parts if p))
    return env


@dataclass(frozen=True)
class RunningTestbed:
    """What a test gets from the ``testbed_gres`` / ``testbed_nogres`` fixtures."""

    variant: str
    env: dict[str, str]
    lab_dir: Path
    nodes: list[str] = field(default_factory=lambda: list(NODES))
    partitions: tuple[str, ...] = PARTITIONS
    default_partition: str = DEFAULT_PARTITION
    testbed: "Testbed | None" = field(default=None, repr=False, compare=False)

    @property
    def has_gres(self) -> bool:
        return self.variant == "gres"

    def run(self, argv: Sequence[str], *, timeout: float = 60.0, cwd: str | os.PathLike | None = None,
            check: bool = False, extra_env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
        """Run a command against the cluster (text output, never a shell unless argv asks)."""
        env = dict(self.env, **(extra_env or {}))
        return subprocess.run(list(argv), env=env, cwd=cwd, capture_output=True, text=True,
                              timeout=timeout, check=check, stdin=subprocess.DEVNULL)

    @contextlib.contextmanager
    def controller_down(self) -> Iterator[None]:
        """slurmctld stopped for the block (commands fail: connect failure), restarted after."""
        assert self.testbed is not None
        self.testbed.controller("stop")
        try:
            yield
        finally:
            self.testbed.controller("start")

    def partition_settings_now(self, partition: str, names: Sequence[str]) -> dict[str, str]:
        """The current values of some of a partition's settings (``scontrol show partition``)."""
        shown = self.run(["scontrol", "show", "partition", "-o", partition], check=True).stdout
        fields = dict(word.split("=", 1) for word in shown.split() if "=" in word)
        return {name: fields[name] for name in names}

    @contextlib.contextmanager
    def partition_settings(self, partition: str, **settings: str) -> Iterator[None]:
        """A partition changed for the block (``scontrol update``, e.g. ``AllowGroups="staff"``)
        and put back as it was afterwards, even when the block fails: later tests never see it."""
        before = self.partition_settings_now(partition, list(settings))
        update = ["scontrol", "update", f"PartitionName={partition}"]
        try:
            self.run([*update, *(f"{k}={v}" for k, v in settings.items())], check=True)
            yield
        finally:
            self.run([*update, *(f"{k}={v}" for k, v in before.items())], check=True)
            assert self.partition_settings_now(partition, list(before)) == before

    @contextlib.contextmanager
    def controller_hung(self) -> Iterator[None]:
        """slurmctld paused (SIGSTOP) for the block: connections open, nothing answers."""
        assert self.testbed is not None
        self.testbed.controller("pause")
        try:
            yield
        finally:
            self.testbed.controller("resume")


class Testbed:
    """One cluster for the whole pytest session; switches variants by stop + start."""

    def __init__(self, lab_dir: Path = LAB_DIR, script: Path = SCRIPT, lock_path: Path = LOCK_PATH):
        self.lab_dir = Path(lab_dir)
        self.script = Path(script)
        self.lock_path = Path(lock_path)
        self.variant: str | None = None
        self.switches = 0
        self.log: list[str] = []  # "start gres 1.2s", "ctld-stop 0.4s", ...
        self._lock_fd: int | None = None

    # -- locking: slurm tests of different pytest processes never interleave --------------
    def acquire_lock(self, timeout: float = LOCK_TIMEOUT_S) -> None:
        if self._lock_fd is not None:
            return
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o666)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise TestbedError(f"another test session held {self.lock_path} for more than "
                                       f"{timeout:.0f} s (ARI_TESTBED_LOCK_TIMEOUT)") from None
                time.sleep(0.5)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd

    def release_lock(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- the script --------------------------------------------------------------------------
    def _script(self, *args: str, timeout: float) -> str:
        env = dict(os.environ, ARI_TESTBED_DIR=str(self.lab_dir))
        started = time.monotonic()
        # output to a file, not a pipe: a daemon that inherited the pipe would keep it open
        # and make us wait for ever
        with tempfile.TemporaryFile(mode="w+") as out:
            try:
                proc = subprocess.run(["bash", str(self.script), *args], env=env, stdout=out,
                                      stderr=subprocess.STDOUT, timeout=timeout, stdin=subprocess.DEVNULL)
                timed_out = False
            except subprocess.TimeoutExpired:
                timed_out = True
            out.seek(0)
            output = out.read()
        what = f"slurm-testbed.sh {' '.join(args)}"
        if timed_out:
            raise TestbedError(f"{what} did not finish in {timeout:.0f} s:\n{output}")
        if "already running" not in output:  # keep the real work, not the health checks
            self.log.append(f"{' '.join(args)} {time.monotonic() - started:.1f}s")
        if proc.returncode != 0:
            raise TestbedError(f"{what} failed (exit {proc.returncode}):\n{output}")
        return output

    def ensure(self, variant: str) -> RunningTestbed:
        """The cluster running in ``variant`` (started or switched if needed)."""
        if variant not in VARIANTS + EXTRA_VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS + EXTRA_VARIANTS}, got {variant!r}")
        self.acquire_lock()
        if self.variant is not None and self.variant != variant:
            self.switches += 1
        # always asked: `start` of the running variant is a cheap health check (ping +
        # sinfo) that also repairs what an earlier test may have left broken
        self.variant = None
        self._script("start", variant, timeout=START_TIMEOUT_S)
        self.variant = variant
        return RunningTestbed(variant=variant, env=self.env(), lab_dir=self.lab_dir, testbed=self)

    def log_summary(self) -> list[str]:
        """The script calls that did something (starts, switches, outages), with their times."""
        return self.log[:12] + ([f"... {len(self.log) - 12} more"] if len(self.log) > 12 else [])

    def env(self) -> dict[str, str]:
        env_file = self.lab_dir / "env.sh"
        return build_env(parse_env_file(env_file.read_text()))

    def controller(self, action: str) -> None:
        """slurmctld alone: ``stop``/``start`` (down) or ``pause``/``resume`` (hung)."""
        self._script(f"ctld-{action}", timeout=STOP_TIMEOUT_S)

    def stop(self) -> None:
        """Stop everything the script started; safe to call when nothing runs."""
        try:
            self._script("stop", timeout=STOP_TIMEOUT_S)
        finally:
            self.variant = None
