"""A checkpoint read back into the wizard's state, from what ``emit`` stored in launch_config.json."""
from __future__ import annotations

import json
from pathlib import Path

from ..ari import render
from ..i18n import text
from ..wizard.state import WizardState
from .errors import EmitError


def load_checkpoint(checkpoint_dir: str | Path) -> WizardState:
    """The wizard state stored in ``<checkpoint>/launch_config.json`` by ``emit_checkpoint``."""
    path = Path(checkpoint_dir) / "launch_config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EmitError(text("emit.error.not_a_checkpoint", path=str(path))) from None
    except (OSError, ValueError) as exc:
        raise EmitError(text("emit.error.unreadable", path=str(path), error=str(exc))) from None
    section = data.get(render.LAUNCH_CONFIG_KEY) if isinstance(data, dict) else None
    if not isinstance(section, dict) or not isinstance(section.get("state"), dict):
        raise EmitError(text("emit.error.not_ours", path=str(path),
                             section=render.LAUNCH_CONFIG_KEY))
    return WizardState.from_json(section["state"])
