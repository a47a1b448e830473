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
    message_id: str = ""
    """Catalog id of ``summary`` ('' = the summary has no translation yet)."""
    params: dict[str, Any] = field(default_factory=dict)
    fix_id: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    @classmethod
    def of(cls, id: str, status: str, message_id: str, *, fix_id: str = "",
           params: dict[str, Any] | None = None, **fields: Any) -> "ProbeResult":
        """A result whose summary (and fix) come from the catalogs, rendered in English."""
        from ..i18n import t

        params = dict(params or {})
        return cls(id=id, status=status, summary=t(message_id, "en", **params),
                   fix=t(fix_id, "en", **params) if fix_id else fields.pop("fix", ""),
                   message_id=message_id, params=params, fix_id=fix_id, **fields)

    def text(self, lang: str | None = "en") -> str:
        """``summary`` in ``lang`` (English when it has no message id)."""
        from ..i18n import t

        return t(self.message_id, lang, **self.params) if self.message_id else self.summary

    def fix_text(self, lang: str | None = "en") -> str:
        from ..i18n import t

        return t(self.fix_id, lang, **self.params) if self.fix_id else self.fix

    def evidence_text(self, lang: str | None = "en") -> str:
        """``evidence`` with ari-jupyter's own lines in ``lang`` (command output verbatim)."""
        from .evidence_words import evidence_in

        return evidence_in(self, lang)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ProbeResult":
        return cls(**{k: data[k] for k in ("id", "status", "summary") },
                   **{k: data[k] for k in ("command", "evidence", "fix", "data", "message_id",
                                           "params", "fix_id") if k in data})
