"""A finished or failed run back into the wizard: reopen it as it was, or clone it as a new run."""
from __future__ import annotations

from pathlib import Path

from ..ari.render import LAUNCH_CONFIG_KEY
from .reading import read_json
from ..checkpoint.known_workspaces import record_workspace
from ..checkpoint.load import load_checkpoint


def wizard_written(checkpoint: str | Path) -> bool:
    """Whether launch_config.json carries the wizard's state (what reopening needs)."""
    data = read_json(Path(checkpoint) / "launch_config.json", 4 * 1024 * 1024).data
    section = data.get(LAUNCH_CONFIG_KEY) if isinstance(data, dict) else None
    return isinstance(section, dict) and isinstance(section.get("state"), dict)


def reopen_state(checkpoint: str | Path):
    """The run's wizard state as it was written. The run's workspace is recorded as one of the
    user's (``known_workspaces``): the wizard that opens may look at another site, and the Runs
    panel, which follows the wizard's site, must still find the run the user reopened."""
    checkpoint = Path(checkpoint).expanduser()
    state = load_checkpoint(checkpoint)
    if checkpoint.parent.name == "checkpoints":  # <workspace>/checkpoints/<run_id>
        record_workspace(checkpoint.parent.parent)
    return state


def clone_state(checkpoint: str | Path):
    """The run's wizard state with no run id: Write mints a new one, so nothing is overwritten."""
    state = reopen_state(checkpoint)
    state.run_id = ""
    return state
