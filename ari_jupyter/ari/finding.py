"""One lint or diagnosis result, the same shape wherever it comes from.

The experiment.md lints (E1-E8), the reproduce.sh lints and the doctor's log checks all
report a rule id, a severity, the line it points at, what is wrong and how to fix it; the
command line's ``--json`` and the wizard show exactly those five keys.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

SEVERITIES = ("error", "warning", "info")
"""error: the run fails or lands in the wrong place; warning: likely trouble; info: advice."""


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    line: int | None
    message: str
    fix: str = ""
    lines: tuple[int, ...] = field(default=(), compare=False)
    """Every line involved when there are several (``line`` is the first)."""
    cause: str = field(default="", compare=False)
    suggestion: str = field(default="", compare=False)
    """The exact line to add or to replace ``line`` with, when the fix is one line."""

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {self.severity!r}")

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` contract: exactly these five keys."""
        return {"rule": self.rule, "severity": self.severity, "line": self.line,
                "message": self.message, "fix": self.fix}


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Errors first, then by line (findings without a line last within their severity)."""
    order = {name: i for i, name in enumerate(SEVERITIES)}
    return sorted(findings, key=lambda f: (order[f.severity], f.line is None, f.line or 0, f.rule))
