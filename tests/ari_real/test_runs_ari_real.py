"""A real ``ari run`` (ARI's code from the snapshot), followed while it writes its checkpoint.

The checkpoint is written by ``ari-jupyter emit`` and started with its hand-off script, the
LLM at 127.0.0.1 where nothing listens (``ari_env``), and a checkpoint workflow.yaml with every
paper-pipeline stage disabled so the run ends in about two minutes: the root node fails on the
connection error, ARI says ``No enabled stages``. While it runs the status must be a live
``exploring`` run; at the end a ``failed`` one that names the unreachable LLM.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from ari_jupyter.runs import read_status

pytestmark = pytest.mark.ari

RUN_ID = "20261201120000_stream_triad"
DISABLE_PIPELINE = """
import sys, yaml
from ari.config.finder import package_config_root
data = yaml.safe_load((package_config_root() / "workflow.yaml").read_text())
for stage in data["pipeline"]:
    stage["enabled"] = False
open(sys.argv[1], "w").write(yaml.safe_dump(data, sort_keys=False))
"""


def test_a_real_run_is_followed_to_its_end(ari_env, tmp_path):
    workspace = tmp_path / "ws"
    emit = subprocess.run(
        [sys.executable, "-m", "ari_jupyter", "emit", "--title", "Stream triad", "--goal",
         "Measure STREAM triad bandwidth", "--metric", "GBps", "--partition", "small", "--max-cpus",
         "2", "--walltime", "00:10:00", "--nodes", "2", "--workspace", str(workspace), "--run-id",
         RUN_ID, "--site", "laptop", "--no-probes", "--preset", "mpi", "--force"],
        capture_output=True, text=True, timeout=120)
    assert emit.returncode == 0, emit.stderr
    ckpt = workspace / "checkpoints" / RUN_ID
    assert read_status(ckpt).phase == "not-started"
    written = ari_env.run(DISABLE_PIPELINE, ckpt / "workflow.yaml")
    assert written.returncode == 0, written.stderr

    env = {**ari_env.env, "ARI_MAX_NODES": "2",
           "PATH": f"{ari_env.python.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = subprocess.Popen(["bash", str(workspace / "launch" / f"{RUN_ID}.sh")], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    seen = []
    try:
        deadline = time.monotonic() + 600
        while run.poll() is None:
            assert time.monotonic() < deadline, f"ari run did not end; phases seen {seen}"
            status = read_status(ckpt)  # must never raise while ARI writes
            if not seen or seen[-1] != (status.phase, status.alive):
                seen.append((status.phase, status.alive))
            time.sleep(0.3)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, 9)
            run.wait()
    assert run.returncode == 0
    assert ("exploring", True) in seen, seen
    final = read_status(ckpt)
    assert final.phase == "failed" and not final.alive
    assert (final.nodes.total, final.nodes.failed) == (1, 1)
    rules = {f.rule for f in final.findings}
    assert {"run-no-successful-node", "llm-unreachable"} <= rules
    assert final.log_tail[-1].startswith("[Paper Pipeline] ERROR: No enabled stages")
