"""The verdict of one probe, shared by the CLI, the wizard, emit and the doctor."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

STATUSES = ("ok", "warn", "fail", "skip", "unknown")
"""ok: ready; warn: works but risky; fail: blocks a run; skip: not applicable here;
unknown: the site did not answer (timeout, controller hiccup) - retry, do not conclude."""


@dataclass(frozen=True)
class ProbeResult:
    id: str
    status: str
    summary: str
    command: str = ""
    evidence: str = ""
    fix: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ProbeResult":
        return cls(**{k: data[k] for k in ("id", "status", "summary") },
                   **{k: data[k] for k in ("command", "evidence", "fix", "data") if k in data})
