"""Step 4's and check-handoff's step for an ARI that speaks a newer hand-off contract.

``handoff.handoff_checklist`` ends with ``contract_steps(choices)``: nothing for ARI e41c806
(every setting the wizard writes reaches its jobs), else one step listing setting by setting
what reaches the jobs with that ARI and what does not, each with ARI's reason and the fix
(``ari.contracts.job_settings``).
"""
from __future__ import annotations

from typing import Any

from ..ari.choices import Choices
from ..ari.contracts import contract_of, job_settings, settings_message
from ..i18n import text


def contract_steps(choices: Choices, item_type: Any) -> list:
    """[] for the reference contract; else one ``item_type`` (``handoff.ChecklistItem``) with
    state "differs" and the findings in its detail."""
    contract = contract_of(choices)
    findings = job_settings(contract, choices)
    if not findings:
        return []
    return [item_type(id="contract", title=text("contract.step.title", contract=contract),
                      state="differs",
                      detail=text("contract.step.detail", contract=contract,
                                  settings=settings_message(findings)))]
