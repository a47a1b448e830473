"""A finished or failed run back into the wizard: reopen it as it was, or clone it as a new run."""
from __future__ import annotations

from pathlib import Path

from ..ari.render import LAUNCH_CONFIG_KEY
from .reading import read_json
from ..checkpoint.load import load_checkpoint


def wizard_written(checkpoint: str | Path) -> bool:
    """Whether launch_config.json carries the wizard's state (what reopening needs)."""
    data = read_json(Path(checkpoint) / "launch_config.json", 4 * 1024 * 1024).data
    section = data.get(LAUNCH_CONFIG_KEY) if isinstance(data, dict) else None
    return isinstance(section, dict) and isinstance(section.get("state"), dict)


def clone_state(checkpoint: str | Path):
    """The run's wizard state with no run id: Write mints a new one, so nothing is overwritten."""
    state = load_checkpoint(Path(checkpoint))
    state.run_id = ""
    return state
