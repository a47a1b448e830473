"""What a command did, as values: the result of a command, its output kept within a cap.

Apart from ``base.process`` (which runs commands, with asyncio and subprocess) so that a demo
site, which answers from a recording, and the parsers that read a result load none of that.
"""
from __future__ import annotations

import shlex
import time
from typing import NamedTuple, Sequence

NOT_FOUND_RETURNCODE = 127
NOT_EXECUTABLE_RETURNCODE = 126


class CommandResult(NamedTuple):
    """What a command did. ``returncode`` is None when it timed out or was never started.

    A NamedTuple: immutable, and cheap to define."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    elapsed: float = 0.0
    not_found: bool = False
    truncated: bool = False
    """stdout was longer than the host's output cap: what is kept is its beginning only."""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.not_found

    @property
    def command(self) -> str:
        return shlex.join(self.argv)

    @property
    def output(self) -> str:
        """stdout and stderr together, in that order (for evidence and pattern checks)."""
        parts = [p.rstrip("\n") for p in (self.stdout, self.stderr) if p.strip()]
        return "\n".join(parts)


def command_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """The command line as strings; an empty one is a caller's bug, not a command to run."""
    argv = tuple(str(arg) for arg in argv)
    if not argv:
        raise ValueError("run() needs a program to run")
    return argv


def not_found(argv: tuple[str, ...], started: float, message: str | None = None) -> CommandResult:
    return CommandResult(
        argv=argv,
        returncode=NOT_FOUND_RETURNCODE,
        stdout="",
        stderr=message or f"{argv[0]}: command not found\n",
        elapsed=time.monotonic() - started,
        not_found=True,
    )


class Capture:
    """Keeps the first ``cap`` bytes of a stream and counts the rest, which is drained anyway
    so that a chatty child never blocks on a full pipe."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        text = self.data.decode("utf-8", errors="replace")
        if self.dropped:
            text += f"\n[truncated: {self.dropped} more bytes]\n"
        return text


def cap_text(text: str, cap: int) -> str:
    capture = Capture(cap)
    capture.add(text.encode("utf-8", errors="replace"))
    return capture.text()
