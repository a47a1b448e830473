"""Golden files for generated text, compared line by line (as submitit's sbatch record is).

A mismatch fails with a unified diff of the golden file against what was generated, so a
reader sees which line changed, not two long strings. ``ARI_UPDATE_GOLDEN=1`` rewrites the
files after an intended change (then read the diff in git before committing).
"""
from __future__ import annotations

import difflib
import os
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"


def updating() -> bool:
    return os.environ.get("ARI_UPDATE_GOLDEN") == "1"


def line_diff(expected: str, actual: str, name: str) -> str:
    """The unified diff from ``expected`` (the golden file) to ``actual``; '' when equal."""
    return "".join(difflib.unified_diff(expected.splitlines(keepends=True),
                                        actual.splitlines(keepends=True),
                                        fromfile=f"golden/{name}", tofile=f"generated/{name}"))


def assert_matches_golden(path: Path, text: str) -> None:
    """``text`` equals the golden file at ``path``, else fail with the line-by-line diff."""
    if updating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"missing golden file {path}; run with ARI_UPDATE_GOLDEN=1"
    name = path.relative_to(GOLDEN).as_posix() if path.is_relative_to(GOLDEN) else path.name
    diff = line_diff(path.read_text(encoding="utf-8"), text, name)
    if diff:
        raise AssertionError(f"{path.name} differs from its golden file (ARI_UPDATE_GOLDEN=1 "
                             f"rewrites it after an intended change):\n{diff}")
