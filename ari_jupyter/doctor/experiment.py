"""experiment.md goes to the experiment lint rules (E1-E10) of ``ari_jupyter.ari.lint_experiment``."""
from __future__ import annotations

from typing import Mapping

from ..base.verdict import Finding
from ..ari.lint_experiment import lint_experiment


def lint_experiment_text(text: str, env: Mapping[str, str] | None = None) -> list[Finding]:
    """The experiment lints; their findings are doctor findings already (one Finding class)."""
    return lint_experiment(text, env=env)
