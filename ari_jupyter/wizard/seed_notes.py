"""Where the wizard does otherwise than ARI's setup guide, the page its readers arrive with
(``python -m ari.viz.server --host 0.0.0.0``, ``ari run experiment.md``, ``nodes=<allocation>``,
the rubric's ``module_loads``, "rely on --gpus-per-task"): one line at that spot of the wizard,
with a link to the wizard guide's section that says why (``docs/wizard.md``, "Where the wizard
differs from the setup guide", one anchor per spot).
"""
from __future__ import annotations

from typing import Mapping

from ..base.guides import guide_url
from ..i18n import Text, text

SPOTS = ("nodes", "modules", "gpus", "handoff", "dashboard")
"""Step 3's Nodes, its modules and its "Allow GPU requests without GRES"; after Write, the
checklist's run step and its dashboard step."""

GUIDE = "wizard"
"""The guide whose section "Where the wizard differs from the setup guide" says why."""


def seed_note(spot: str) -> Text:
    """The one line said at ``spot`` (ValueError for a spot that has none)."""
    if spot not in SPOTS:
        raise ValueError(f"no note on the setup guide at {spot!r}; the spots are {', '.join(SPOTS)}")
    return text(f"seed.{spot}")


def seed_note_url(spot: str, lang: str = "en", env: Mapping[str, str] | None = None) -> str:
    """The guide's section on ``spot``, on this Jupyter server (JupyterHub's per-user prefix
    when there is one), in ``lang`` where the section is translated."""
    seed_note(spot)
    return guide_url(GUIDE, lang, anchor=f"seed-{spot}", env=env)
