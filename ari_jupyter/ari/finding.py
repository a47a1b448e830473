"""One finding, the same shape wherever it comes from.

The execution-profile validator, the wizard's field checks, the experiment.md lints (E1-E8),
the reproduce.sh lints and the doctor's log checks all report a rule id, a severity, the form
field or line it points at, what is wrong and how to fix it. A finding built with
``Finding.of`` also carries a message id and its parameters: the English text is rendered
from the catalog once (``message``/``fix``, what ``--json`` keeps), and ``text(lang)`` /
``fix_text(lang)`` render the same sentence in another language.
"""
from __future__ import annotations

from dataclasses import dataclass, field as _field
from typing import Any, Iterable, Mapping

from ..i18n import message_of

SEVERITIES = ("error", "warning", "info")
"""error: the run fails or lands in the wrong place (Write is blocked); warning: likely
trouble; info: advice."""


@dataclass(frozen=True)
class Finding:
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
        from ..i18n import t

        return cls(rule=rule, severity=severity, line=line,
                   message=t(message_id, "en", **params),
                   fix=t(fix_id, "en", **params) if fix_id else "",
                   field=field, message_id=message_id, params=dict(params), fix_id=fix_id)

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def text(self, lang: str | None = "en") -> str:
        """``message`` in ``lang`` (English when the finding has no message id)."""
        from ..i18n import t

        return t(self.message_id, lang, **self.params) if self.message_id else self.message

    def fix_text(self, lang: str | None = "en") -> str:
        from ..i18n import t

        return t(self.fix_id, lang, **self.params) if self.fix_id else self.fix

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
    order = {name: i for i, name in enumerate(SEVERITIES)}
    return sorted(findings, key=lambda f: (order[f.severity], f.line is None, f.line or 0, f.rule))
