"""One doctor finding: what the CLI prints, what the wizard's Doctor step shows.

The definition is the ari layer's (``ari_jupyter.ari.finding``): the experiment lints, the
reproduce.sh lints and the log checks report the same five fields.
"""
from __future__ import annotations

from dataclasses import replace

from ..ari.finding import SEVERITIES, Finding, sort_findings

__all__ = ["SEVERITIES", "Finding", "sort_findings", "translated"]


def translated(finding: Finding, message_id: str, fix_id: str, **params) -> Finding:
    """``finding`` with the catalog ids (messages/doctor.json) that render its English in ja/zh."""
    return replace(finding, message_id=message_id, fix_id=fix_id, params=params)
