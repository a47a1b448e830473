"""Shared pieces of the hardening tests: a valid wizard state, fake commands on PATH, a scan
of /proc for processes a test started, and secret-looking values to hunt for."""
from __future__ import annotations

import os
import signal
import stat
import time
import uuid
from pathlib import Path
from typing import Iterable, Mapping

from ari_jupyter.slurm.allocation import Allocation
from ari_jupyter.ari.profile import PRESETS
from ari_jupyter.wizard.state import WizardState
from ari_jupyter.base.verdict import ProbeResult

MARK_VARIABLE = "ARI_HARDENING_MARK"
"""Put into the environment of every command a test starts; /proc tells who still has it."""

ALLOC_ENV = {
    "SLURM_JOB_ID": "1027", "SLURM_JOB_NAME": "jupyterlab", "SLURM_JOB_PARTITION": "small",
    "SLURM_JOB_NODELIST": "rc[01-02]", "SLURM_JOB_NUM_NODES": "2", "SLURM_NTASKS": "4",
    "SLURM_TASKS_PER_NODE": "3,1", "SLURM_JOB_CPUS_PER_NODE": "3,1", "SLURM_CPUS_ON_NODE": "3",
}

# Values shaped like real credentials, each unique enough that finding it anywhere is a leak.
SECRETS = {
    "OPENAI_API_KEY": "sk-proj-Hq3rT7vX9mZ2kL5nP8wQ1sD4fG6hJ0aB",
    "ANTHROPIC_API_KEY": "sk-ant-api03-Zy8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0GfEd",
    "HF_TOKEN": "hf_QwErTyUiOpAsDfGhJkLzXcVbNm123456",
    "GITHUB_TOKEN": "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "WANDB_API_KEY": "3f9c2a7e1b5d8f0a4c6e2b9d7f1a3c5e8b0d2f4a",
    "DB_PASSWORD": "correct-horse-battery-staple-42",
    "S3_SECRET": "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
    "MY_SERVICE_TOKEN": "tok.9d8c7b6a5f4e3d2c1b0a",
}


def secrets_in(text: str, secrets: Mapping[str, str] = SECRETS) -> list[str]:
    """Names of the secrets whose value (or a 12-character piece of it) occurs in ``text``."""
    found = []
    for name, value in secrets.items():
        pieces = {value} | {value[i:i + 12] for i in range(0, max(1, len(value) - 11), 6)}
        if any(piece in text for piece in pieces):
            found.append(name)
    return found


def valid_state(tmp: Path, **overrides) -> WizardState:
    """A state that emits without problems under ``tmp/ws``, its workspace judged shared."""
    inputs = tmp / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    (inputs / "matrix.mtx").write_text("%%MatrixMarket\n")
    workspace = str(overrides.pop("workspace", tmp / "ws"))
    state = WizardState(
        allocation=Allocation.from_env(ALLOC_ENV), site_name="", partition="small",
        partition_source="SLURM_JOB_PARTITION", profile=PRESETS["mpi"](),
        module_loads=["openmpi/4.1"], title="SpGEMM scaling on two nodes",
        goal="Measure how a sparse matrix-matrix multiply scales from one to two nodes.",
        metrics=["GFlops", "GB/s"], min_expected_metric=5,
        provided_files=[str(inputs / "matrix.mtx")], max_cpus=4, walltime="01:00:00",
        nodes=2, workspace=workspace, run_id="20250101120000_spgemm", lang="en")
    state.set_probe_result(ProbeResult("sbatch", "ok", "sbatch found", data={"path": "/usr/bin/sbatch"}))
    mark_shared(state, workspace)
    for name, value in overrides.items():
        setattr(state, name, value)
    return state


def mark_shared(state: WizardState, workspace: str) -> None:
    """Tell emit the workspace is on a shared filesystem (no probe of this machine)."""
    state.set_probe_result(ProbeResult("shared_fs", "ok", "shared", data={"path": str(workspace)}))


# -- fake commands ---------------------------------------------------------------------------

def write_command(bin_dir: Path, name: str, body: str) -> Path:
    """An executable ``/bin/sh`` script ``bin_dir/name``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + body.rstrip("\n") + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def marked_env(bin_dir: Path, extra: Mapping[str, str] | None = None) -> tuple[dict[str, str], str]:
    """An environment whose PATH starts at ``bin_dir`` and that carries a fresh mark."""
    mark = uuid.uuid4().hex
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(bin_dir.parent), "LANG": "C.UTF-8",
           MARK_VARIABLE: mark}
    env.update(extra or {})
    return env, mark


# -- processes -------------------------------------------------------------------------------

def processes_with_mark(mark: str) -> list[int]:
    """Live (non-zombie) processes whose environment carries ``MARK_VARIABLE=mark``."""
    needle = f"{MARK_VARIABLE}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def wait_until_gone(mark: str, timeout: float = 3.0) -> list[int]:
    """The marked processes still alive after ``timeout`` (ideally none)."""
    deadline = time.monotonic() + timeout
    while True:
        alive = processes_with_mark(mark)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def kill_marked(mark: str) -> None:
    """Clean up after a failing test: end exactly the processes this test started."""
    for pid in processes_with_mark(mark):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def all_strings(value) -> Iterable[str]:
    """Every string inside nested dicts / lists / tuples (keys included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from all_strings(key)
            yield from all_strings(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from all_strings(item)
