"""The numbers the hardening tests produce: cases tried, faults survived, files lost.

A test calls ``record(area, check, cases=..., survived=..., lost=...)``; the conftest ties each
record to the test's outcome (a figure from a failing test is reported as failed) and writes
them all to ``reliability.json`` at the end of the session.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPORT_NAME = "reliability.json"


@dataclass
class Figure:
    area: str
    check: str
    cases: int = 0
    """Inputs or faults tried."""
    survived: int = 0
    """Of those, how many ended as specified (clear verdict, clear refusal, intact files)."""
    lost: int = 0
    """Partial files, leaked secrets, executed payloads or processes left running."""
    unit: str = "cases"
    note: str = ""
    test: str = ""
    outcome: str = "passed"
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


class Collector:
    """Figures of the running session, keyed by test node id so a rerun replaces its own."""

    def __init__(self) -> None:
        self.figures: dict[tuple[str, str, str], Figure] = {}
        self.current_test = ""
        self.known_bugs: dict[str, str] = {}
        """Test id -> reason, for tests marked xfail(strict=True) that failed as expected."""

    def record(self, area: str, check: str, *, cases: int, survived: int, lost: int = 0,
               unit: str = "cases", note: str = "", **extra) -> Figure:
        figure = Figure(area, check, int(cases), int(survived), int(lost), unit, note,
                        self.current_test, "passed", dict(extra))
        self.figures[(self.current_test, area, check)] = figure
        return figure

    def mark(self, test: str, outcome: str) -> None:
        for key, figure in self.figures.items():
            if key[0] == test and outcome != "passed":
                figure.outcome = outcome

    def merge(self, figures: list[Figure]) -> list[Figure]:
        """Sum figures with the same (area, check) across parametrised tests."""
        merged: dict[tuple[str, str], Figure] = {}
        for figure in figures:
            key = (figure.area, figure.check)
            if key not in merged:
                merged[key] = Figure(figure.area, figure.check, 0, 0, 0, figure.unit, figure.note,
                                     "", "passed", {})
                merged[key].extra["tests"] = 0
            total = merged[key]
            total.cases += figure.cases
            total.survived += figure.survived
            total.lost += figure.lost
            total.extra["tests"] += 1
            for key, value in figure.extra.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    total.extra[key] = total.extra.get(key, 0) + value
            if figure.outcome != "passed":
                total.outcome = figure.outcome
        return list(merged.values())


COLLECTOR = Collector()


def record(area: str, check: str, **kwargs) -> Figure:
    return COLLECTOR.record(area, check, **kwargs)


def report_dir() -> Path:
    return Path(os.environ.get("ARI_TEST_REPORT_DIR") or "test-artifacts")
