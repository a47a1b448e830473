"""Errors raised where ARI itself would raise, so previews fail exactly when a run would.

ARI's reproduce dispatcher (``ari-skill-paper-re`` ``_run_reproduce_slurm``) raises plain
``RuntimeError`` (sbatch missing, no partition, GPUs without GRES) and lets ``int()`` raise
``ValueError`` on a malformed ``ARI_SLURM_CPUS``. The messages below mirror ARI's wording so a
user who sees one in the wizard recognises it later in ARI's log.
"""
from __future__ import annotations


class AriError(Exception):
    """Something ARI's reproduce step would refuse. ``ari_exception`` names ARI's own type."""

    ari_exception = "Exception"


class AriRuntimeError(AriError, RuntimeError):
    """ARI raises ``RuntimeError`` with this message."""

    ari_exception = "RuntimeError"


class AriValueError(AriError, ValueError):
    """ARI raises ``ValueError`` (an ``int()`` of a malformed environment value)."""

    ari_exception = "ValueError"


# Wording follows ARI's messages (ari-skill-paper-re/src/server.py) so users can grep their logs.
SBATCH_MISSING = (
    "sandbox_kind=slurm requested but `sbatch` is not on PATH. "
    "Refusing to silently fall back to local host execution. "
    "Either install SLURM tooling, pick a different sandbox_kind, "
    "or set ARI_PHASE1_ALLOW_FALLBACK=1 to opt in to the legacy "
    "silent-fallback behaviour."
)

NO_PARTITION = (
    "sandbox_kind=slurm requested but no partition could be "
    "resolved (caller arg, ARI_SLURM_PARTITION env, and "
    "launch_config.json all empty). Refusing to silently fall back "
    "to local host execution. Provide a partition via the wizard / "
    "ARI_SLURM_PARTITION / launch_config.json, or set "
    "ARI_PHASE1_ALLOW_FALLBACK=1 to opt in to the legacy "
    "silent-fallback behaviour."
)


NO_GRES_WAY = "probe.no_gres.fix"
"""The one sentence on GPUs without GRES (what SLURM and ARI refuse, and the one job that works):
the site check's fix, the validator's, the doctor's for ARI's refusal and for sbatch's, and the
reproduce.sh lint's all say it. (Its id is the site check's, which saved states carry.)"""


def gpu_without_gres(gpu_type: str, gpus_per_task: int, gpus_per_node: int) -> str:
    """ARI's message when GPUs are requested on a cluster whose ``sinfo -h -o %G`` shows no GRES."""
    return (
        f"GPU resources requested "
        f"(gpu_type={gpu_type!r}, gpus_per_task={gpus_per_task}, "
        f"gpus_per_node={gpus_per_node}) but this cluster has "
        f"no GRES configured — sbatch would reject any --gres / --gpus-* "
        f"flag. Refusing to silently drop GPU flags and run on CPU. "
        f"Set ARI_SLURM_ALLOW_NO_GRES=1 to opt in to the legacy "
        f"silent-drop behaviour (only when you know the partition "
        f"exposes physical GPUs without GRES)."
    )
