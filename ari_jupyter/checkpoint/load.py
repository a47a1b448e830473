"""A checkpoint read back into the wizard's state, from what ``emit`` stored in launch_config.json."""
from __future__ import annotations

from pathlib import Path

from ..ari import render
from ..base.bounded_read import OPTION_FILE_CAP, read_json_bounded
from ..i18n import text
from ..wizard.state import WizardState
from .errors import EmitError


def load_checkpoint(checkpoint_dir: str | Path) -> WizardState:
    """The wizard state stored in ``<checkpoint>/launch_config.json`` by ``emit_checkpoint``."""
    path = Path(checkpoint_dir) / "launch_config.json"
    try:
        data = read_json_bounded(path, OPTION_FILE_CAP)
    except FileNotFoundError:
        raise EmitError(text("emit.error.not_a_checkpoint", path=str(path))) from None
    except (OSError, ValueError) as exc:
        raise EmitError(text("emit.error.unreadable", path=str(path), error=str(exc))) from None
    section = data.get(render.LAUNCH_CONFIG_KEY) if isinstance(data, dict) else None
    if not isinstance(section, dict) or not isinstance(section.get("state"), dict):
        raise EmitError(text("emit.error.not_ours", path=str(path),
                             section=render.LAUNCH_CONFIG_KEY))
    return WizardState.from_json(section["state"])
