"""Read files that another process is still writing, without trusting them.

ARI writes ``tree.json`` with a plain ``write_text`` (not atomic), appends to ``ari.log`` and
the hand-off's ``ari_run_*.log`` while we read, and a log can be gigabytes long. Every reader
here is bounded: JSON up to a size cap, logs only from the end.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import Any, Mapping

from ..ari.dotenv import read_dotenv
from ..base.bounded_read import TooDeep, TooLarge, loads_bounded, read_bytes_bounded
from ..base.redact import redact

JSON_CAP = 256 * 1024 * 1024
"""Larger JSON files are not parsed (a 10,000-node tree.json is about 10 MB)."""

TAIL_BYTES = 64 * 1024
"""How far back from the end a log tail reads."""


@dataclass(frozen=True)
class JsonRead:
    """A JSON file's content, or why there is none. ``text`` is kept for salvaging a partial file."""

    data: Any = None
    problem: str = ""
    """'' (parsed), 'missing', 'empty', 'truncated', 'invalid', 'too-large' or 'unreadable'."""
    text: str = ""
    size: int = 0
    mtime: float = 0.0


def read_json(path: Path, cap: int = JSON_CAP, *, parse: bool = True) -> JsonRead:
    """Parse a JSON file; a half-written one is 'truncated' (its text kept), never an exception.
    With ``parse=False`` only the text is read (for a caller that reads a known layout).
    Only a regular file is read (a FIFO or a device never blocks or grows the read), at most
    ``cap`` bytes, nested at most ``JSON_DEPTH`` deep ('too-deep')."""
    try:
        stat = path.stat()
        raw = read_bytes_bounded(path, cap) if stat.st_size else b""
    except FileNotFoundError:
        return JsonRead(problem="missing")
    except TooLarge:
        return JsonRead(problem="too-large", size=stat.st_size, mtime=stat.st_mtime)
    except OSError:  # not a regular file, no permission
        return JsonRead(problem="unreadable")
    if not raw:
        return JsonRead(problem="empty", mtime=stat.st_mtime)
    text = raw.decode("utf-8", errors="replace")
    if not parse:
        return JsonRead(text=text, size=len(raw), mtime=stat.st_mtime)
    try:
        return JsonRead(data=loads_bounded(text, name=str(path)), size=len(raw), mtime=stat.st_mtime)
    except TooDeep:
        return JsonRead(problem="too-deep", size=len(raw), mtime=stat.st_mtime)
    except json.JSONDecodeError as exc:
        # An error at the very end means the writer has not finished (or was killed mid-write).
        at_end = exc.pos >= len(text.rstrip()) - 1
        return JsonRead(problem="truncated" if at_end else "invalid", text=text,
                        size=len(raw), mtime=stat.st_mtime)


@dataclass(frozen=True)
class Tail:
    """The last lines of a file and how big the file is."""

    lines: tuple[str, ...] = ()
    size: int = 0
    mtime: float = 0.0
    exists: bool = False


def linked_out(path: str | Path) -> str:
    """Where ``checkpoints/<run_id>`` leads when that is outside ``checkpoints/`` ('' when it is
    not a run folder of a ``checkpoints/`` or stays inside it)."""
    path = Path(path).expanduser()
    if path.parent.name != "checkpoints":
        return ""
    real = os.path.realpath(path)
    return "" if os.path.dirname(real) == os.path.realpath(path.parent) else real


def redaction_env(checkpoint: Path) -> Mapping[str, str]:
    """What a run's shown text is redacted with: this process's environment and the
    checkpoint's own ``.env`` (a key set only there, printed by an LLM client into the run's
    log or a job's output, is masked by its value whatever its shape)."""
    return {**os.environ, **read_dotenv(Path(checkpoint) / ".env")}


def tail(path: Path, max_lines: int = 40, max_bytes: int = TAIL_BYTES,
         env: Mapping[str, str] | None = None) -> Tail:
    """The last ``max_lines`` complete lines within the last ``max_bytes`` of ``path``.

    Reads from the end only, so a 2 GB log costs the same as a small one. A line cut at the
    start of the window is dropped; undecodable bytes are replaced; NUL runs (a sparse or
    preallocated file) are skipped. Only a regular file is read (a FIFO named like a log never
    blocks). The lines pass through the one redactor (``redact``, with this process's
    environment, or ``env``: ``redaction_env``): a key an LLM client printed ("Incorrect API
    key provided: sk-...") or an ``Authorization:`` header never reaches ``status``, its JSON
    or the Runs panel.
    """
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as handle:
            stat = os.fstat(handle.fileno())
            if not S_ISREG(stat.st_mode):
                return Tail() if S_ISDIR(stat.st_mode) else Tail(exists=True)
            start = max(0, stat.st_size - max_bytes)
            handle.seek(start)
            chunk = handle.read(max_bytes)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return Tail()
    except OSError:
        return Tail(exists=True)
    text = chunk.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if start > 0 and lines:
        lines = lines[1:]
    if lines and lines[-1] == "":
        lines = lines[:-1]
    cleaned = [line.rstrip("\r") for line in lines if line.strip("\x00 \r")]
    shown = "\n".join(line.replace("\x00", "") for line in cleaned[-max_lines:])
    return Tail(tuple(redact(shown, os.environ if env is None else env).split("\n")) if shown else (),
                stat.st_size, stat.st_mtime, True)


def read_small_text(path: Path, cap: int = 64 * 1024) -> str:
    """The first ``cap`` bytes of a small regular file, '' when it cannot be read (a FIFO or a
    device is not read: the open never waits, the read never grows)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    with open(fd, "rb") as handle:
        try:
            if not S_ISREG(os.fstat(fd).st_mode):
                return ""
            return handle.read(cap).decode("utf-8", errors="replace")
        except OSError:
            return ""
