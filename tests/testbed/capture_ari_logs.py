"""Capture what real ARI logs when its LLM endpoint is unreachable (and a skill cannot import).

    ARI_BIN=/path/to/ari-venv/bin python tests/testbed/capture_ari_logs.py NAME

ARI installed from ../shared/ari-snapshot as its README says (Python 3.13, editable installs,
``mcp<2``). A checkpoint is written with ``ari-jupyter emit`` (demo site rccs-cloud, a
scratch workspace) and started with its own hand-off script, with the LLM at 127.0.0.1:9 where
nothing listens. Once the root node has failed, the run (and every skill server it started)
is stopped, and the log the hand-off wrote is copied to tests/fixtures/doctor/ari/NAME.log.
Uninstall a skill's package first (e.g. ``pip uninstall semanticscholar``) for the
skill-import case; ``mcp`` 2.x installed makes every skill fail.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "doctor" / "ari"
RUN_ID = "20261201100000_llm_down"
WAIT_S = 600


def _processes_of(checkpoint: Path) -> list[int]:
    """Every process whose environment names this checkpoint (ARI and its skill servers)."""
    marker = f"ARI_CHECKPOINT_DIR={checkpoint}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _stop_everything(handoff: subprocess.Popen, checkpoint: Path, settle_s: float = 15.0) -> None:
    """Kill the hand-off's process group, then every process naming the checkpoint, until none
    is left: a skill server can start between one look at /proc and the kill, so a single
    pass can miss it."""
    try:
        os.killpg(handoff.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    handoff.wait()
    deadline = time.monotonic() + settle_s
    while (left := _processes_of(checkpoint)) and time.monotonic() < deadline:
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.2)


def run_until_llm_fails(ari_bin: Path, workdir: Path, env: dict | None = None,
                        wait_s: float = WAIT_S) -> str:
    """Write a checkpoint with ``ari-jupyter emit``, start it with its hand-off script (``ari``
    from ``ari_bin``, the LLM at 127.0.0.1:9), stop everything once the root node has failed;
    the text of the log the hand-off wrote."""
    workspace = workdir / "ws"
    subprocess.run([sys.executable, "-m", "ari_jupyter", "emit", "--site", "rccs-cloud",
                    "--workspace", str(workspace), "--title", "LLM down", "--goal",
                    "Measure a tiny loop.", "--metric", "runtime_sec", "--walltime", "00:10:00",
                    "--max-cpus", "1", "--run-id", RUN_ID, "--force", "--no-probes"],
                   check=True, capture_output=True)
    checkpoint = workspace / "checkpoints" / RUN_ID
    run_env = {"PATH": f"{ari_bin}:/usr/bin:/bin", "HOME": str(workdir / "home"),
               "LITELLM_LOCAL_MODEL_COST_MAP": "True", "ARI_BACKEND": "openai",
               "ARI_MODEL": "gpt-4o-mini", "ARI_LLM_API_BASE": "http://127.0.0.1:9/v1",
               "OPENAI_API_KEY": "unused", "ARI_MEMORY_BACKEND": "in_memory", **(env or {})}
    run_env["PATH"] = f"{ari_bin}:{run_env['PATH']}"
    handoff = subprocess.Popen(["bash", str(workspace / "launch" / f"{RUN_ID}.sh")], env=run_env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    deadline = time.monotonic() + wait_s
    try:
        while time.monotonic() < deadline and handoff.poll() is None:
            logs = sorted(checkpoint.glob("ari_run_*.log"))
            if logs and "Connection error" in logs[-1].read_text(errors="replace"):
                time.sleep(3)
                break
            time.sleep(2)
    finally:
        _stop_everything(handoff, checkpoint)
    logs = sorted(checkpoint.glob("ari_run_*.log"))
    return logs[-1].read_text(errors="replace") if logs else ""


def main(name: str) -> int:
    with tempfile.TemporaryDirectory(prefix="ari-capture-") as tmp:
        text = run_until_llm_fails(Path(os.environ["ARI_BIN"]), Path(tmp))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.log").write_text(text)
    print(OUT / f"{name}.log")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
