"""experiment.md goes to the experiment lint rules (E1-E8) of ``ari_jupyter.ari.lint_experiment``."""
from __future__ import annotations

from typing import Mapping

from .finding import Finding


def lint_experiment_text(text: str, env: Mapping[str, str] | None = None) -> list[Finding]:
    """The experiment lints as doctor findings (same five fields, nothing re-implemented here)."""
    from ..ari.lint_experiment import lint_experiment

    return [Finding(rule=f.rule, severity=f.severity, line=f.line, message=f.message, fix=f.fix)
            for f in lint_experiment(text, env=env)]
