"""From the user's choices to what ARI receives: its caller arguments and its environment.

Every reader (the sbatch preview, the validator, workflow.yaml, the checkpoint files, the
doctor) gets these two from here, so they cannot be worked out twice with different rules:

- ``caller_args``: the ``run_reproduce`` caller arguments the choices amount to;
- ``env_values``: the values the checkpoint ``.env`` gives ``ari``, with one rule for a bad
  value: it is left out and named in ``EnvValues.refused`` (a view previews what is left;
  ``render.written_env_values`` refuses to write a file while anything is refused).
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from . import contracts
from .choices import PARTITION_NAME, Choices, env_value_problem
from .run_settings import env_values as run_env_values
from .sbatch import ReproduceArgs, merge_with_profile

BFTS_ENV_FILE = "bfts_env.sh"
"""The checkpoint file ARI's BFTS jobs source (``ARI_ENV_FILE``)."""


def caller_args(choices: Choices) -> ReproduceArgs:
    """The ``run_reproduce`` caller arguments the choices amount to, before the rubric's profile.

    One cleaning rule for every reader (the sbatch preview, the validator, workflow.yaml): a
    value ARI could not take is not passed (a partition with characters ARI's hint cannot carry,
    a count below 1), so ARI's own default or the profile decides, and the field's own finding
    says why.
    """
    return ReproduceArgs(
        partition=choices.partition if PARTITION_NAME.match(choices.partition) else "",
        cpus=choices.max_cpus if (choices.max_cpus or 0) > 0 else 0,
        walltime=choices.walltime or "",
        nodes=choices.nodes if (choices.nodes or 0) > 0 else 0)


def reproduce_args(choices: Choices) -> ReproduceArgs:
    """The caller arguments merged with the profile, as ``run_reproduce`` resolves them."""
    return merge_with_profile(caller_args(choices), choices.profile)


@dataclass(frozen=True)
class EnvValues:
    """What the checkpoint ``.env`` gives ``ari``: the values that can be written, and the ones
    that cannot with why (key -> (value, reason)). A view previews ``values``; writing a .env
    refuses while ``refused`` holds anything."""

    values: Mapping[str, str]
    refused: Mapping[str, tuple[str, str]]


def env_values(choices: Choices) -> EnvValues:
    """The settings that must reach ``ari`` as environment variables (spec §0 items 3-5, §8).

    ``launch_config.json`` configures nothing in ``ari run``; the checkpoint ``.env`` is loaded
    by ``ari`` itself because the hand-off exports ``ARI_CHECKPOINT_DIR``. A value not chosen
    yet is absent; a chosen value .env cannot carry is refused, never written.
    """
    wanted: dict[str, str] = {"ARI_SLURM_PARTITION": choices.partition}
    if choices.max_cpus is not None:
        wanted["ARI_SLURM_CPUS"] = str(choices.max_cpus)
    if choices.walltime:
        wanted["ARI_SLURM_WALLTIME"] = choices.walltime
    if choices.mem_gb:
        wanted["ARI_SLURM_MEM_GB"] = str(choices.mem_gb)
    wanted["ARI_PHASE1_SANDBOX"] = "slurm"
    if choices.allow_no_gres:
        wanted["ARI_SLURM_ALLOW_NO_GRES"] = "1"
    wanted["SLURM_DEFAULT_PARTITION"] = choices.partition
    wanted.update(run_env_values(choices.run_settings))
    log_dir = slurm_log_dir_of(choices.workspace)
    if log_dir:
        wanted["SLURM_LOG_DIR"] = log_dir
    env_file = bfts_env_path(choices)
    if env_file:
        wanted["ARI_ENV_FILE"] = env_file
    wanted.update(contracts.contract_env_values(choices))  # {} for the reference (e41c806)
    values: dict[str, str] = {}
    refused: dict[str, tuple[str, str]] = {}
    for key, value in wanted.items():
        problem = _value_problem(key, value)
        if problem:
            refused[key] = (value, problem)
        else:
            values[key] = value
    return EnvValues(MappingProxyType(values), MappingProxyType(refused))


def _value_problem(key: str, value: str) -> str:
    if key in ("ARI_SLURM_PARTITION", "SLURM_DEFAULT_PARTITION") and value \
            and not PARTITION_NAME.match(value):
        return "is not a partition name ARI can read (letters, digits, '_' and '-')"
    if key == "ARI_SLURM_CPUS" and not (value.isascii() and value.isdigit() and int(value) > 0):
        return "must be a positive integer"
    return env_value_problem(value)


def bfts_env_path(choices: Choices) -> str:
    """``<checkpoint>/bfts_env.sh``, or "" while the checkpoint path is unknown or cannot be
    written unquoted into .env."""
    checkpoint = choices.checkpoint_dir
    if not checkpoint:
        return ""
    path = f"{checkpoint.rstrip('/')}/{BFTS_ENV_FILE}"
    return "" if env_value_problem(path) else path


def slurm_log_dir_of(workspace: str | None) -> str:
    """Shared directory for BFTS job logs (``ari`` reads them back with ``cat``), or "" when the
    workspace path cannot be written unquoted into .env."""
    workspace = (workspace or "").rstrip("/")
    if not workspace:
        return ""
    path = f"{workspace}/slurm_logs"
    return "" if env_value_problem(path) else path
