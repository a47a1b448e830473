"""One verdict shape and one severity scale, for every check the package makes.

A ``Finding`` (field checks, validator, lints, placement, the doctor) and a ``ProbeResult`` (a
site check) say the same things: a rule or check id, how bad it is, a sentence and a fix from
the catalogs (message id + parameters; the English text is rendered once and kept for
``--json``). Their words for "how bad" differ only because both are part of a JSON contract
(``error/warning/info`` in findings, ``ok/warn/fail/skip/unknown`` in probe results); both are
placed on ONE scale here (``SCALE``, worst first), so ordering, colours and marks are decided
once, never by a view.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field as _field, replace
from typing import Any, Iterable, Mapping

from ..i18n import message_of, t

SCALE = ("error", "warning", "unknown", "info", "ok", "skip")
"""Every verdict's place, worst first: error blocks a run (Write is disabled); warning is likely
trouble; unknown: the site did not answer (retry, do not conclude); info is advice; ok is ready;
skip does not apply here."""

SEVERITY_OF_STATUS = {"fail": "error", "warn": "warning", "unknown": "unknown", "ok": "ok",
                      "skip": "skip"}
"""A probe status on the scale."""

STATUS_OF_SEVERITY = {"error": "fail", "warning": "warn", "info": "ok"}
"""The probe status that says what a finding says (a finding folded into a probe's verdict)."""

MARKS = {"error": "\u2716", "warning": "\u26a0", "info": "\u2139"}
"""The mark printed before a finding's sentence."""


def rank(severity: str) -> int:
    """Position on ``SCALE``: smaller is worse."""
    return SCALE.index(severity)


def worst(severities: Iterable[str]) -> str | None:
    """The worst of ``severities`` (None when there are none)."""
    return min(severities, key=rank, default=None)


class _Said:
    """A verdict's sentence and fix in any language: the catalog's when it has a message id,
    else the English text it was made with."""

    message_id: str
    fix_id: str
    params: Mapping[str, Any]

    def _english(self) -> str:
        raise NotImplementedError

    def text(self, lang: str | None = "en") -> str:
        return t(self.message_id, lang, **self.params) if self.message_id else self._english()

    def fix_text(self, lang: str | None = "en") -> str:
        return t(self.fix_id, lang, **self.params) if self.fix_id else self.fix

    @property
    def is_error(self) -> bool:
        return self.severity == "error"


SEVERITIES = ("error", "warning", "info")
"""error: the run fails or lands in the wrong place (Write is blocked); warning: likely
trouble; info: advice."""


@dataclass(frozen=True)
class Finding(_Said):
    rule: str
    severity: str
    line: int | None = None
    message: str = ""
    fix: str = ""
    lines: tuple[int, ...] = _field(default=(), compare=False)
    """Every line involved when there are several (``line`` is the first)."""
    cause: str = _field(default="", compare=False)
    suggestion: str = _field(default="", compare=False)
    """The exact line to add or to replace ``line`` with, when the fix is one line."""
    field: str = ""
    """The wizard field (or profile key) the finding concerns; '' when it is about a file line."""
    message_id: str = _field(default="", compare=False)
    params: Mapping[str, Any] = _field(default_factory=dict, compare=False)
    fix_id: str = _field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {self.severity!r}")

    @classmethod
    def of(cls, rule: str, severity: str, message_id: str, *, field: str = "",
           fix_id: str = "", line: int | None = None, **params: Any) -> "Finding":
        """A finding whose sentences come from the catalogs (``message_id``, ``fix_id``)."""
        return cls(rule=rule, severity=severity, line=line,
                   message=t(message_id, "en", **params),
                   fix=t(fix_id, "en", **params) if fix_id else "",
                   field=field, message_id=message_id, params=dict(params), fix_id=fix_id)


    def _english(self) -> str:
        return self.message

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` contract: English text plus the message id and its parameters."""
        return {"rule": self.rule, "field": self.field, "severity": self.severity,
                "line": self.line, "message": self.message, "fix": self.fix,
                "message_id": self.message_id, "fix_id": self.fix_id,
                "params": {name: message_of(value) or value for name, value in self.params.items()}}

    def rendered(self, lang: str | None) -> dict[str, Any]:
        """``to_json`` with message and fix in ``lang`` (what a ``--lang`` CLI prints)."""
        return {**self.to_json(), "message": self.text(lang), "fix": self.fix_text(lang)}


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Errors first, then by line (findings without a line last within their severity)."""
    return sorted(findings, key=lambda f: (rank(f.severity), f.line is None, f.line or 0, f.rule))


STATUSES = ("ok", "warn", "fail", "skip", "unknown")
"""ok: ready; warn: works but risky; fail: blocks a run; skip: not applicable here;
unknown: the site did not answer (timeout, controller hiccup) - retry, do not conclude."""


@dataclass(frozen=True)
class ProbeResult(_Said):
    id: str
    status: str
    summary: str
    command: str = ""
    evidence: str = ""
    fix: str = ""
    data: dict[str, Any] = _field(default_factory=dict)
    message_id: str = ""
    """Catalog id of ``summary`` ('' = the summary has no translation yet)."""
    params: dict[str, Any] = _field(default_factory=dict)
    fix_id: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    @classmethod
    def of(cls, id: str, status: str, message_id: str, *, fix_id: str = "",
           params: dict[str, Any] | None = None, **fields: Any) -> "ProbeResult":
        """A result whose summary (and fix) come from the catalogs, rendered in English."""

        params = dict(params or {})
        return cls(id=id, status=status, summary=t(message_id, "en", **params),
                   fix=t(fix_id, "en", **params) if fix_id else fields.pop("fix", ""),
                   message_id=message_id, params=params, fix_id=fix_id, **fields)

    def _english(self) -> str:
        return self.summary

    @property
    def severity(self) -> str:
        """The status on the one scale (``fail`` is an error, ``warn`` a warning)."""
        return SEVERITY_OF_STATUS[self.status]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ProbeResult":
        return cls(**{k: data[k] for k in ("id", "status", "summary") },
                   **{k: data[k] for k in ("command", "evidence", "fix", "data", "message_id",
                                           "params", "fix_id") if k in data})


def translated(finding: Finding, message_id: str, fix_id: str, **params) -> Finding:
    """``finding`` with the catalog ids (messages/doctor.json) that render its English in ja/zh."""
    return replace(finding, message_id=message_id, fix_id=fix_id, params=params)
