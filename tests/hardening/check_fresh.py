"""Fail when the committed docs/reliability.md no longer says what this run found.

    python -m tests.hardening.check_fresh GENERATED [COMMITTED]

GENERATED is the page this run's figures give (``python -m tests.hardening.report --out``);
COMMITTED defaults to docs/reliability.md. The comparison covers what a run decides: which
checks exist, each one's result and losses, the known bugs, the Lost total, the profile. It
leaves out what moves from one run to the next on its own (the timestamp, and the counts that
depend on Hypothesis's random draws: tried, survived, refused/written notes), so a fresh page
passes and a stale one (a fixed bug still listed as known, a new check missing) fails.
"""
from __future__ import annotations

import difflib
import sys
from pathlib import Path

from .report import DEFAULT_OUT

MOVING_LINES = ("- Generated:", "- Tried:")
TABLE_COLUMNS = 6  # check | tried | survived | lost | result | notes


def stable_view(text: str) -> list[str]:
    """The lines of a reliability page that a rerun of the same code must reproduce."""
    view = []
    for line in text.splitlines():
        if line.startswith(MOVING_LINES):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == TABLE_COLUMNS and cells[0] not in ("check", "---"):
            check, _tried, _survived, lost, result, _notes = cells
            line = f"| {check} | lost {lost} | {result} |"
        view.append(line.rstrip())
    return view


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not 1 <= len(args) <= 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    generated = Path(args[0])
    committed = Path(args[1]) if len(args) == 2 else DEFAULT_OUT
    try:
        fresh, current = generated.read_text(encoding="utf-8"), committed.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"check_fresh: {exc}", file=sys.stderr)
        return 2
    diff = list(difflib.unified_diff(stable_view(current), stable_view(fresh), str(committed),
                                     "this run", lineterm="", n=1))
    if diff:
        print(f"{committed} is out of date (what this run found differs):", file=sys.stderr)
        print("\n".join(diff), file=sys.stderr)
        print(f"regenerate: cp {generated} {committed}  (or python -m tests.hardening.report after "
              "HYPOTHESIS_PROFILE=ci python3 -m pytest tests/hardening, as root)", file=sys.stderr)
        return 1
    print(f"check_fresh: {committed} says what this run found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
