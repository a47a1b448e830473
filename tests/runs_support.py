"""Helpers for the run-status tests: copy a real checkpoint, make a live ``ari`` process."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Iterator

REAL = Path(__file__).parent / "fixtures" / "runs" / "real"


def copy_case(case: str, workspace: Path) -> Path:
    """Copy ``real/<case>/checkpoints/<run_id>`` into ``workspace`` and return the checkpoint."""
    source = REAL / case / "checkpoints"
    (workspace / "checkpoints").mkdir(parents=True, exist_ok=True)
    [run] = list(source.iterdir())
    target = workspace / "checkpoints" / run.name
    shutil.copytree(run, target)
    return target


@contextlib.contextmanager
def live_ari(checkpoint: Path) -> Iterator[int]:
    """A live process whose command line starts with ``ari``, recorded in ``.ari_pid``."""
    proc = subprocess.Popen(["ari", "300"], executable="/bin/sleep", stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not Path(f"/proc/{proc.pid}/cmdline").read_bytes().startswith(b"ari\0"):
            assert time.monotonic() < deadline, "the stand-in ari process did not start"
            time.sleep(0.01)  # still the forked parent until exec
        (checkpoint / ".ari_pid").write_text(str(proc.pid))
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def live_handoff(checkpoint: Path) -> Iterator[int]:
    """A live ``bash <workspace>/launch/<run_id>.sh`` that recorded its PID as the hand-off does
    and waits as it does while ``ari run`` loads; its log is started."""
    launch = checkpoint.parent.parent / "launch"
    launch.mkdir(exist_ok=True)
    script = launch / f"{checkpoint.name}.sh"
    script.write_text('echo $$ > "$1/.ari_handoff_pid.tmp"\n'
                      'mv -f "$1/.ari_handoff_pid.tmp" "$1/.ari_handoff_pid"\nsleep 300 | cat\n')
    (checkpoint / "ari_run_20261201100000.log").touch()
    proc = subprocess.Popen(["bash", str(script), str(checkpoint)], stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not (checkpoint / ".ari_handoff_pid").is_file():
            assert time.monotonic() < deadline, "the stand-in hand-off did not start"
            time.sleep(0.01)
        yield proc.pid
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)


def ari_log_line(msg: str, level: str = "INFO", logger: str = "ari.pipeline.driver") -> str:
    import json

    return json.dumps({"ts": "2026-12-01T10:00:00.000000+00:00", "level": level, "logger": logger,
                       "msg": msg, "run_id": "x"}) + "\n"


def handoff_log(ckpt: Path) -> Path:
    return sorted(ckpt.glob("ari_run_*.log"))[-1]


def finished_with_success(ckpt: Path) -> None:
    """Two successful nodes with the primary metric; the pipeline's completion line last."""
    tree = json.loads((ckpt / "tree.json").read_text())
    root = tree["nodes"][0]
    ok1 = dict(root, id="node_a", status="success", error_log=None, metrics={"GBps": 41.5})
    ok2 = dict(root, id="node_b", status="success", error_log=None,
               metrics={"GBps": 57.25, "_scientific_score": 0.4})
    tree["nodes"] = [root, ok1, ok2]
    (ckpt / "tree.json").write_text(json.dumps(tree, indent=2))
    (ckpt / "evaluation_criteria.json").write_text(
        json.dumps({"primary_metric": "GBps", "higher_is_better": True}))
    append(handoff_log(ckpt), "[Paper Pipeline] Complete: ['write_paper', 'ors_grade']\n")
