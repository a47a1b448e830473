"""The live line on a terminal that names the checks still running.

A controller that hangs makes ``probe``, ``emit`` and ``check-handoff`` wait up to their
timeouts; on a terminal the user sees which checks are holding things up (a spinner, the
seconds waited, the names) on stderr. When stderr is not a terminal, or with ``--json``,
nothing extra is written, so pipes, logs and JSON consumers see exactly the plain output.
"""
from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from typing import Callable, Iterable, Optional, TextIO

SPINNER = "|/-\\"
REDRAW_S = 0.1
CLEAR = "\r\033[K"


def wants_live_line(stream: TextIO, json_output: bool = False) -> bool:
    """A live line only for a person at a terminal (not ``--json``, not a pipe, not TERM=dumb)."""
    if json_output or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class LiveChecks:
    """``with LiveChecks(names, enabled=...) as live:`` redraws "still running: ..." on stderr
    until every name is ``done`` or the block ends; ``live.write`` prints a line of regular
    output without tearing the live line. Disabled, it only passes ``write`` through."""

    def __init__(self, names: Iterable[str], *, enabled: bool, stream: Optional[TextIO] = None,
                 label: str = "still running",
                 name_of: Optional[Callable[[str], str]] = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.label = label  # in the user's language, as ``name_of`` gives each check's name
        self._name_of = name_of or (lambda name: name)
        self._pending = list(names)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._started = time.monotonic()
        self._shown = False
        self._frame = 0

    def __enter__(self) -> "LiveChecks":
        self._started = time.monotonic()
        if self.enabled:
            self._thread = threading.Thread(target=self._spin, name="ari-jupyter-live", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1.0)
        with self._lock:
            self._clear()

    def done(self, name: str) -> None:
        with self._lock:
            if name in self._pending:
                self._pending.remove(name)
            self._draw()

    def write(self, out: TextIO, text: str) -> None:
        """Print ``text`` to ``out`` (stdout, usually), then put the live line back."""
        with self._lock:
            self._clear()
            out.write(text)
            out.flush()
            self._draw()

    @property
    def pending(self) -> list[str]:
        with self._lock:
            return list(self._pending)

    def line(self) -> str:
        """What the live line says now (without the terminal controls)."""
        waited = time.monotonic() - self._started
        names = ", ".join(self._name_of(name) for name in self._pending)
        return f"{SPINNER[self._frame % len(SPINNER)]} {waited:4.1f}s {self.label} {names}"

    def _spin(self) -> None:
        while not self._stop.wait(REDRAW_S):
            with self._lock:
                self._frame += 1
                self._draw()

    def _draw(self) -> None:
        if not self.enabled or self._stop.is_set() or not self._pending:
            self._clear()
            return
        width = shutil.get_terminal_size((80, 24)).columns
        text = self.line()
        if len(text) > width - 1:  # a wrapped line cannot be cleared with \r
            text = text[: max(width - 4, 10)] + "..."
        self.stream.write(CLEAR + text)
        self.stream.flush()
        self._shown = True

    def _clear(self) -> None:
        if self._shown:
            self.stream.write(CLEAR)
            self.stream.flush()
            self._shown = False
