"""What ARI leaves in a checkpoint while and after it runs, read from its code.

- ``.ari_pid`` (``ari-core/ari/pidfile.py``): the ``ari run`` PID, written before the BFTS loop
  and removed when the process exits (normally, on SIGTERM, or at exit); it stays behind only
  when the process was killed hard or its node died.
- ``.ari_handoff_pid`` (ari-jupyter's hand-off script, not ARI): the script's own PID, written
  just before it runs ``ari run``; the script stays alive while ``ari run`` does, so while it
  is alive and ``.ari_pid`` is not written yet ARI is still starting (imports, config).
- ``.pipeline_started`` (``pipeline/driver.py``): the paper pipeline has begun.
- ``ari.log`` (``cli/run.py`` ``_setup_logging``): one JSON object per line,
  ``{"ts", "level", "logger", "msg", "run_id"}``; the pipeline logs ``=== Stage [<name>]: ... ===``
  as each stage starts; the reproduce stages are named ``ors_*``.
- The end of a run (``core.py`` ``generate_paper_section``): ``Paper pipeline completed: ...``
  in ari.log and ``[Paper Pipeline] Complete:`` on stdout (the hand-off's log), or an
  ``[Paper Pipeline] ERROR:`` / ``ABORTED:`` line, or ``Paper pipeline failed:`` (cli/run.py).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .render import HANDOFF_PID_FILE
from ..i18n import text
from ..base.bounded_read import read_text_bounded
from ..base.numbers import count_of
from ..base.plain_text import plain

PID_FILE = ".ari_pid"
PID_CAP = 64
"""A pid file holds a number and a newline; more is not one (a link to /dev/zero grew without end)."""
PID_DIGITS = 10
PIPELINE_MARKER = ".pipeline_started"
ARI_FILES = ("tree.json", "nodes_tree.json", "results.json", "ari.log", PID_FILE)
WIZARD_FILES = ("experiment.md", "launch_config.json")
HANDOFF_LOG_GLOB = "ari_run_*.log"

STAGE = re.compile(r"=== Stage \[([A-Za-z0-9_.-]+)\]")
STAGE_STDOUT = re.compile(r"^\[Paper Pipeline\] Stage \[([A-Za-z0-9_.-]+)\]")
END_OK = (re.compile(r"Paper pipeline completed:"), re.compile(r"^\[Paper Pipeline\] Complete:"))
END_BAD = (re.compile(r"^\[Paper Pipeline\] (ERROR|ABORTED):"), re.compile(r"Paper pipeline failed:"),
           re.compile(r"No enabled pipeline stages"), re.compile(r"\[Paper Pipeline\] ABORTED"))
INTERRUPT = re.compile(r"^(KeyboardInterrupt|Terminated|Aborted!?)\s*$")
RUN_COMPLETE = re.compile(r"Run complete\.\s+Processed (\d+) nodes")


@dataclass(frozen=True)
class Process:
    """Whether the ``ari run`` of the checkpoint is alive on this machine."""

    pid: int | None
    alive: bool
    why: str


def ari_process(checkpoint: Path) -> Process:
    """Read ``.ari_pid`` and check the PID; a reused PID running something else is not ARI."""
    try:
        content = read_text_bounded(checkpoint / PID_FILE, PID_CAP).strip()
    except FileNotFoundError:
        return Process(None, False, text("runs.process.no_pid"))
    except OSError as exc:
        return Process(None, False, text("runs.process.unreadable", error=exc.strerror))
    pid = count_of(content, max_digits=PID_DIGITS)
    if not pid:
        return Process(None, False, text("runs.process.garbage", value=repr(content[:20])))
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return Process(pid, False, text("runs.process.ended", pid=pid))
    except PermissionError:
        return Process(pid, True, text("runs.process.alive_other_user", pid=pid))
    except OSError as exc:
        return Process(pid, False, text("runs.process.uncheckable", pid=pid, error=exc.strerror))
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return Process(pid, True, text("runs.process.alive", pid=pid))
    # ARI's console script (`ari run ...`, or `python .../bin/ari run ...`): a word whose name
    # is `ari`; "ari" inside some other word (a path, `-m 'not ari'`) says nothing
    if not any(word.rsplit(b"/", 1)[-1] == b"ari" for word in argv[:3]):
        return Process(pid, False, text("runs.process.reused", pid=pid))
    return Process(pid, True, text("runs.process.ari_alive", pid=pid))


def handoff_process(checkpoint: Path) -> Process:
    """The hand-off script recorded in ``.ari_handoff_pid``, alive only when that PID still runs
    this checkpoint's script (``bash <workspace>/launch/<run_id>.sh``): a reused PID is not it."""
    try:
        content = read_text_bounded(checkpoint / HANDOFF_PID_FILE, PID_CAP).strip()
    except OSError:
        return Process(None, False, "")
    pid = count_of(content, max_digits=PID_DIGITS)
    if not pid:
        return Process(None, False, "")
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:  # ended (or no /proc): no evidence that it runs
        return Process(pid, False, "")
    script = f"{checkpoint.name}.sh".encode()
    if not any(word.rsplit(b"/", 1)[-1] == script for word in argv[:3]):
        return Process(pid, False, "")
    return Process(pid, True, text("runs.process.starting", pid=pid))


def live_process(checkpoint: Path) -> Process | None:
    """``ari run``, or the hand-off starting it, alive in ``checkpoint``; None when neither is."""
    return next((p for p in (ari_process(checkpoint), handoff_process(checkpoint)) if p.alive), None)


def handoff_logs(checkpoint: Path) -> list[Path]:
    """The hand-off's ``ari_run_<timestamp>.log`` files, newest first (the name sorts by time)."""
    try:
        return sorted((p for p in checkpoint.glob(HANDOFF_LOG_GLOB) if p.is_file()), reverse=True)
    except OSError:
        return []


def ari_log_record(line: str) -> dict | None:
    """One ari.log line as ARI's JsonFormatter wrote it, or None (plain text or cut)."""
    if not line.startswith("{"):
        return None
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) and "msg" in record else None


def log_text(line: str) -> str:
    """A log line for people: ari.log's JSON shown as ``time LEVEL logger: msg`` (first line)."""
    record = ari_log_record(line)
    if record is None:
        return plain(line)
    msg = str(record.get("msg", "")).split("\n", 1)[0]
    ts = str(record.get("ts", ""))[11:19]
    return f"{ts} {record.get('level', '')} {record.get('logger', '')}: {msg}".strip()


LIBRARY_SHUTDOWN = re.compile(r"LiteLLM:\w+: logging_worker\.py:\d+ - \[LoggingWorker\] atexit:")
"""LiteLLM's logging worker flushing at the process's exit: the last lines of every ``ari``
run, about LiteLLM's own callbacks, not the run."""
STAGE_SENTENCE = re.compile(r"^(\[Paper Pipeline\] Stage \[[A-Za-z0-9_.-]+\]: .+?[.!?])\s+[A-Z]")


def shown_log_line(line: str) -> str | None:
    """A log line as a run's log tail shows it: ``log_text``, a pipeline stage's long
    description cut after its first sentence (ARI prints a paragraph per stage; cut by length
    it ended mid-word), and None for LiteLLM's exit lines, which say nothing of the run."""
    shown = log_text(line)
    if LIBRARY_SHUTDOWN.search(shown):
        return None
    sentence = STAGE_SENTENCE.match(shown)
    return f"{sentence.group(1)} …" if sentence else shown


def last_stage(lines: list[str]) -> str:
    for line in reversed(lines):
        record = ari_log_record(line)
        text = str(record.get("msg", "")) if record else line
        match = STAGE.search(text) or STAGE_STDOUT.search(text)
        if match:
            return match.group(1)
    return ""


def end_marker(lines: list[str]) -> tuple[str, str]:
    """('ok' | 'bad' | 'interrupted' | '', the line) for the last marker in these lines."""
    for line in reversed(lines):
        record = ari_log_record(line)
        text = str(record.get("msg", "")) if record else line.strip()
        if INTERRUPT.match(text):
            return "interrupted", text
        if any(p.search(text) for p in END_OK):
            return "ok", text
        if any(p.search(text) for p in END_BAD):
            return "bad", text
    return "", ""
