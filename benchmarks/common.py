"""Shared pieces: the Figure record, median timing, and slow stand-in programs on PATH."""
from __future__ import annotations

import os
import shlex
import shutil
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional


@dataclass
class Figure:
    """One line of the results table.

    ``value`` and ``baseline`` are in ``unit``; ``ratio`` is value / baseline; ``met`` is
    None when a figure has no target or could not be measured (``note`` says why).
    """

    id: str
    title: str
    value: Optional[float]
    unit: str
    baseline: Optional[float] = None
    baseline_label: str = ""
    target: str = ""
    met: Optional[bool] = None
    note: str = ""
    repeats: int = 0
    samples: list[float] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> Optional[float]:
        if self.value is None or not self.baseline:
            return None
        return self.value / self.baseline

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ratio"] = self.ratio
        return data


def not_measured(id: str, title: str, reason: str, target: str = "") -> Figure:
    return Figure(id, title, None, "", target=target, met=None, note=f"not measured: {reason}")


def time_call(function: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def medians(functions: dict[str, Callable[[], Any]], repeats: int) -> dict[str, list[float]]:
    """Run every function ``repeats`` times, interleaved (a, b, a, b, ...) so that a
    machine-wide slowdown hits baseline and candidate alike. Returns the samples."""
    samples: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(repeats):
        for name, function in functions.items():
            elapsed, _ = time_call(function)
            samples[name].append(elapsed)
    return samples


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def write_program(directory: Path, name: str, *, delay: float = 0.0, stdout: str = "",
                  stderr: str = "", exit_code: int = 0, hang: bool = False,
                  pid_file: Optional[Path] = None, dispatch: Optional[dict[str, str]] = None,
                  log: Optional[Path] = None) -> Path:
    """Write a /bin/sh stand-in for a site command.

    It sleeps ``delay`` seconds, prints ``stdout``/``stderr`` and exits; with ``hang`` it
    starts a child and never returns (a controller that stopped answering), recording both
    pids in ``pid_file`` so the benchmark can prove nothing was left behind. ``dispatch``
    maps a substring of the arguments to a different stdout (sinfo's two formats).
    """
    sleep = shutil.which("sleep") or "/bin/sleep"
    lines = ["#!/bin/sh"]
    if log is not None:
        lines.append(f'echo "{name} $*" >> {shlex.quote(str(log))}')
    if pid_file is not None:
        lines.append(f"echo $$ >> {shlex.quote(str(pid_file))}")
    if hang:
        lines.append(f"{sleep} 100000 &")
        if pid_file is not None:
            lines.append(f"echo $! >> {shlex.quote(str(pid_file))}")
        lines.append("wait")
    if delay:
        lines.append(f"{sleep} {delay:g}")
    if dispatch:
        lines.append('case "$*" in')
        for pattern, text in dispatch.items():
            lines.append(f"  *{shlex.quote(pattern)}*) printf '%s' {shlex.quote(text)} ;;")
        lines.append(f"  *) printf '%s' {shlex.quote(stdout)} ;;")
        lines.append("esac")
    elif stdout:
        lines.append(f"printf '%s' {shlex.quote(stdout)}")
    if stderr:
        lines.append(f"printf '%s' {shlex.quote(stderr)} >&2")
    lines.append(f"exit {exit_code}")
    path = directory / name
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o755)
    return path


def alive(pid: int) -> bool:
    """True when ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def fmt_seconds(value: Optional[float]) -> str:
    if value is None:
        return "-"
    if value < 1e-3:
        return f"{value * 1e6:.0f} µs"
    if value < 1:
        return f"{value * 1e3:.1f} ms"
    return f"{value:.2f} s"


def pythonpath_env() -> dict[str, str]:
    """The environment for child Pythons: this checkout importable even without an install.

    Bytecode is cached as after ``pip install`` (which compiles every module): with
    PYTHONDONTWRITEBYTECODE set, a checkout's modules would be compiled from source in every
    sample while the installed ipywidgets of the baseline loads its cached bytecode. The
    benchmarks' warm-up run writes the cache; the timed runs read it, on both sides alike.
    """
    root = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env
