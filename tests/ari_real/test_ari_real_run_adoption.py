"""The real ``ari run``, started by our hand-off script, adopts the checkpoint we wrote.

`ari-jupyter emit` writes the checkpoint (experiment.md, .env, launch_config.json and, with
ARI_ROOT pointing at ARI, workflow.yaml) and the hand-off script; the script starts ARI's own
``ari run`` with the LLM at 127.0.0.1 where nothing listens. ARI goes on until its paper
pipeline starts (the root node fails on the connection error), which is where the test stops it.
Checked in what ARI itself wrote: the run id is the directory's name, ARI's files are in the
checkpoint, no ``workspace/`` appears, the .env values are in ARI's environment (the hpc skill's
capability probe runs ``srun -p <partition>`` only with ARI_SLURM_PARTITION set; a recording
srun stands in for the cluster), ARI's provided-files copier copied our provided file into the
root node's work dir, and the paper pipeline uses our workflow.yaml.
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.ari, pytest.mark.slow]

PIPELINE_STARTED = "Using pipeline config:"
RUN_TIMEOUT = 900  # seconds for ARI to reach its paper pipeline on a loaded CI machine

RECORDING_SRUN = """#!/bin/sh
# Records how ARI's hpc skill calls srun, then runs the command locally (a one-node cluster).
printf '%s\\n' "$@" > "{record}/srun-argv.txt"
env > "{record}/srun-env.txt"
while [ "$#" -gt 0 ] && [ "$1" != bash ]; do shift; done
exec "$@"
"""


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _wait_for(path: Path, text: str, proc: subprocess.Popen, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.is_file() and text in path.read_text(errors="replace"):
            return True
        if proc.poll() is not None:
            return path.is_file() and text in path.read_text(errors="replace")
        time.sleep(2)
    return False


def _stop(proc: subprocess.Popen) -> None:
    """End the hand-off's whole process group (ari and its skill servers)."""
    for sig, grace in ((signal.SIGTERM, 20), (signal.SIGKILL, 20)):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # stragglers that outlived the leader
    except ProcessLookupError:
        pass


def test_ari_run_adopts_the_checkpoint_from_our_handoff(ari_env, tmp_path):
    ws, home, elsewhere, record, bin_dir = (tmp_path / n for n in ("ws", "home", "elsewhere", "record", "bin"))
    for d in (home, elsewhere, record, bin_dir):
        d.mkdir()
    provided = tmp_path / "inputs" / "kernel.c"
    provided.parent.mkdir()
    provided.write_text("int main(void) { return 0; }\n")
    (bin_dir / "srun").write_text(RECORDING_SRUN.format(record=record))
    (bin_dir / "srun").chmod(0o755)

    # 1. our side: the checkpoint and the hand-off script (ARI_ROOT lets emit find workflow.yaml)
    emit_env = {**os.environ, "ARI_ROOT": str(ari_env.root), "HOME": str(home)}
    for name in ("ARI_SLURM_PARTITION", "ARI_SLURM_CPUS", "ARI_CHECKPOINT_DIR"):
        emit_env.pop(name, None)
    emitted = subprocess.run(
        [sys.executable, "-m", "ari_jupyter", "emit", "--json", "--title", "Stream triad",
         "--goal", "Measure the STREAM triad bandwidth of one node.", "--metric", "GB/s",
         "--min-expected-metric", "10", "--provided-file", str(provided), "--partition", "small",
         "--max-cpus", "4", "--walltime", "00:30:00", "--workspace", str(ws), "--no-probes", "--force"],
        env=emit_env, capture_output=True, text=True, timeout=120)
    assert emitted.returncode == 0, emitted.stderr
    result = json.loads(emitted.stdout)
    ckpt = Path(result["checkpoint_dir"])
    run_id = ckpt.name
    assert (ckpt / "workflow.yaml").is_file(), f"emit wrote no workflow.yaml: {emitted.stderr}"
    written = {name: _sha(ckpt / name) for name in ("experiment.md", "workflow.yaml", ".env")}
    dotenv = dict(line.split("=", 1) for line in (ckpt / ".env").read_text().splitlines()
                  if line and not line.startswith("#"))
    assert {"ARI_SLURM_PARTITION", "ARI_SLURM_CPUS", "ARI_PHASE1_SANDBOX"} <= set(dotenv)

    # 2. ARI's side: the second terminal, with ARI's venv on PATH and none of the .env values
    terminal = {**ari_env.env, "HOME": str(home),
                "PATH": f"{ari_env.python.parent}:{bin_dir}:/usr/bin:/bin"}
    assert not set(dotenv) & set(terminal), "the .env values must come from .env, not the terminal"
    script = result["handoff_command"].split(" ", 1)[1]
    with open(tmp_path / "terminal.log", "wb") as out:
        proc = subprocess.Popen(["bash", script], cwd=elsewhere, env=terminal, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            reached = _wait_for(ckpt / "ari.log", PIPELINE_STARTED, proc, RUN_TIMEOUT)
        finally:
            _stop(proc)
    terminal_log = (tmp_path / "terminal.log").read_text(errors="replace")
    assert reached, f"ARI did not reach its paper pipeline:\n{terminal_log[-4000:]}"

    # run id = the directory's name, ARI's files in the checkpoint
    tree = json.loads((ckpt / "tree.json").read_text())
    assert tree["run_id"] == run_id
    assert json.loads((ckpt / "results.json").read_text())["run_id"] == run_id
    assert tree["experiment_file"] == str(ckpt / "experiment.md")
    for name in ("tree.json", "nodes_tree.json", "results.json", "ari.log"):
        assert (ckpt / name).is_file(), f"ARI did not write {name} into the checkpoint"
    assert list(ckpt.glob("ari_run_*.log")), "the hand-off's tee log is missing"
    nodes = tree["nodes"]
    assert nodes and all(n["id"].startswith(f"node_{run_id}") for n in nodes)
    # no second checkpoint, no workspace/ anywhere ARI was started from
    for where in (ws, elsewhere, home):
        assert not (where / "workspace").exists(), f"ARI created {where / 'workspace'}"
    assert sorted(p.name for p in (ws / "checkpoints").iterdir()) == [run_id]
    # our files: experiment.md and workflow.yaml as we wrote them
    assert {name: _sha(ckpt / name) for name in written} == written
    ari_log = (ckpt / "ari.log").read_text(errors="replace")
    assert f"{PIPELINE_STARTED} {ckpt / 'workflow.yaml'}" in ari_log

    # .env values in effect: ARI's hpc skill ran its probe with ARI_SLURM_PARTITION from .env
    srun_argv = (record / "srun-argv.txt").read_text().split("\n")
    assert srun_argv[:2] == ["-p", dotenv["ARI_SLURM_PARTITION"]], srun_argv
    srun_env = dict(line.split("=", 1) for line in (record / "srun-env.txt").read_text().splitlines()
                    if "=" in line)
    for name, value in dotenv.items():
        assert srun_env.get(name) == value, f"{name} from .env not in ARI's environment"
    capabilities = json.loads((ckpt / "platform_capabilities.json").read_text())
    assert capabilities["partition"] == dotenv["ARI_SLURM_PARTITION"]

    # ARI's provided-files copier put our file into the root node's work dir
    root_dirs = list((ws / "experiments" / run_id).glob(f"node_{run_id}_root"))
    assert root_dirs, f"no root node work dir under {ws / 'experiments' / run_id}"
    assert (root_dirs[0] / provided.name).read_bytes() == provided.read_bytes()
    assert f"Copied {provided}" in ari_log
