"""The first lines a ``reproduce.sh`` needs for a given execution profile (spec §5, L5 and L6).

ARI submits a wrapper that runs ``bash <repo>/reproduce.sh`` as one task on the first node of
the job, in a non-login shell. So:
- L5: ``module`` is usually undefined there; the prelude initialises Lmod / Environment Modules
  (``$MODULESHOME/init/bash``, the profile.d scripts, the usual init paths) before
  ``module load <all, in order>``.
- L6: with more than one node (or an MPI kind) the work must be fanned out by
  ``srun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS``; ``mpirun -np $SLURM_NTASKS`` is the
  fallback where the site has no srun. ``SLURM_NTASKS`` is only set when the job got
  ``--ntasks``, so the prelude defaults it to the node count under ``set -u``.
Every value that reaches the script is shell-quoted.
"""
from __future__ import annotations

import shlex
from typing import Sequence

from .profile import ExecutionProfile

LAUNCHERS = ("srun", "mpirun")

MODULE_INIT_FILES = (
    # Where Lmod and Environment Modules put their bash init (Debian/Ubuntu, then RHEL-style
    # /usr/share/Modules); $MODULESHOME, set wherever a module system was initialised, comes first.
    "/etc/profile.d/lmod.sh",
    "/usr/share/lmod/lmod/init/bash",
    "/etc/profile.d/modules.sh",
    "/usr/share/modules/init/bash",
    "/usr/share/Modules/init/bash",
)


def module_init_lines() -> list[str]:
    """Bash that defines ``module`` where the shell did not (L5: a non-login bash).

    One block for reproduce.sh and the hand-off script. It works under ``set -eu``: an init
    file that trips on an unset variable or a failing command is still sourced, and ``set -u``
    is restored only where it was on.
    """
    return [
        "# A non-login bash has no `module`: define it before loading (L5).",
        "if ! command -v module >/dev/null 2>&1; then",
        '  case $- in *u*) ari_nounset=1; set +u ;; *) ari_nounset= ;; esac',
        '  for init in ${MODULESHOME:+"$MODULESHOME/init/bash"} \\',
        "              " + " ".join(MODULE_INIT_FILES[:3]) + " \\",
        "              " + " ".join(MODULE_INIT_FILES[3:]) + "; do",
        '    if [ -r "$init" ]; then . "$init" || true; break; fi',
        "  done",
        '  if [ -n "$ari_nounset" ]; then set -u; fi',
        "fi",
    ]


class PreludeError(ValueError):
    """A module name or command that cannot be written safely into reproduce.sh."""


def module_name_problem(name: str) -> str:
    """Why ``name`` cannot be a word of ``module load``, or "" (the wizard shows it inline)."""
    if not name or name != name.strip():
        return "is empty or has surrounding spaces"
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in name):
        return "contains spaces or control characters"
    if name.startswith("-"):
        return "starts with '-' (module would take it for an option)"
    return ""


def check_module_name(name: str) -> str:
    """``name`` unchanged, or PreludeError saying why it cannot be written into reproduce.sh."""
    problem = module_name_problem(name)
    if problem:
        raise PreludeError(f"module name {name!r} {problem}")
    return name


def needs_fan_out(profile: ExecutionProfile, nodes: int | None = None) -> bool:
    """L6 applies when the job spans several nodes or the kind is MPI."""
    span = max(nodes or 0, profile.requested_nodes or 0)
    return span > 1 or profile.is_mpi


def module_load_line(modules: Sequence[str]) -> str:
    """``module load a b c`` with every name checked and quoted; "" for no modules."""
    if not modules:
        return ""
    return "module load " + " ".join(shlex.quote(check_module_name(m)) for m in modules)


def fan_out_line(command: Sequence[str] | None = None, launcher: str = "srun") -> str:
    """The L6 launch line; ``command`` is the program and its arguments (quoted here)."""
    if launcher not in LAUNCHERS:
        raise PreludeError(f"launcher must be one of {', '.join(LAUNCHERS)}, got {launcher!r}")
    if command is not None and (not command or any("\n" in part or "\0" in part
                                                   for part in command)):
        raise PreludeError("command must be a non-empty list of arguments without newlines")
    target = " ".join(shlex.quote(part) for part in command) if command else '"$@"'
    if launcher == "srun":
        return f"srun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS {target}"
    return f"mpirun -np $SLURM_NTASKS {target}"


def render_prelude(profile: ExecutionProfile, modules: Sequence[str] = (), *,
                   nodes: int | None = None, launcher: str = "srun",
                   command: Sequence[str] | None = None) -> str:
    """The prelude text: shebang, strict mode, module loads, and (when needed) the fan-out.

    ``modules`` adds site modules after the profile's ``module_loads`` (duplicates dropped,
    order kept). Without ``command`` the fan-out becomes a ``fan_out`` function the rest of
    the script calls as ``fan_out ./program args``.
    """
    all_modules: list[str] = []
    for name in [*profile.module_loads, *modules]:
        if name not in all_modules:
            all_modules.append(name)
    lines = ["#!/usr/bin/env bash", "set -euo pipefail"]
    if all_modules:
        lines += ["", *module_init_lines(), module_load_line(all_modules)]
    if needs_fan_out(profile, nodes):
        lines += ["", "# Multi-node fan-out (L6): every rank is started by the launcher.",
                  ': "${SLURM_NTASKS:=${SLURM_JOB_NUM_NODES:-1}}"  # unset without --ntasks']
        if command:
            lines.append(fan_out_line(command, launcher))
        else:
            lines.append("fan_out() { " + fan_out_line(None, launcher) + "; }")
    return "\n".join(lines) + "\n"
