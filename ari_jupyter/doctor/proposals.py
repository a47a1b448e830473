"""The exact lines the doctor proposes, taken from the reproduce.sh prelude rules.

``ari_jupyter.ari.prelude`` owns the text of the ``module load`` line, the block that defines
``module`` in a non-login bash, and the srun fan-out (spec §5 L5/L6). The doctor only puts a
user's own command behind that launcher, verbatim (its ``$VARS`` and redirections must keep
working), so a fix it proposes is what the wizard would have written.
"""
from __future__ import annotations

from typing import Sequence

from ..ari import prelude
from ..ari.profile import ExecutionProfile

_ARGS_PLACEHOLDER = '"$@"'


def launcher_prefix(launcher: str = "srun") -> str:
    """``srun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS`` (the prelude's line without a command)."""
    line = prelude.fan_out_line(None, launcher)
    if not line.endswith(_ARGS_PLACEHOLDER):
        raise RuntimeError(f"unexpected fan-out line from the prelude: {line!r}")
    return line[: -len(_ARGS_PLACEHOLDER)].rstrip()


def fanout_line(command: str) -> str:
    """The user's command (kept verbatim) behind the prelude's srun fan-out."""
    return f"{launcher_prefix()} {command.strip()}"


def module_line(modules: Sequence[str]) -> str:
    """``module load a b c`` for the profile's module_loads, in order, quoted by the prelude."""
    return prelude.module_load_line(list(modules))


def module_init_block() -> str:
    """The prelude's lines that define ``module`` in a non-login bash (before any module load)."""
    text = prelude.render_prelude(ExecutionProfile(module_loads=["placeholder"]))
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("set -"))
    end = next(i for i, line in enumerate(lines) if line.startswith("module load"))
    return "\n".join(line for line in lines[start + 1:end] if line.strip())


def ntasks_default_line() -> str:
    """The prelude's guard that sets SLURM_NTASKS when the job was submitted without --ntasks."""
    text = prelude.render_prelude(ExecutionProfile(requested_nodes=2))
    return next(line for line in text.splitlines() if "SLURM_NTASKS:=" in line)
