"""What was decided at Write, per kind of job ARI submits: the record the checkpoint keeps.

``decide(choices)`` turns the user's choices into, for each job kind, the partition, nodes,
CPUs and GPUs per node and time limit the user approved, and the values ARI reads to build
that job. It computes nothing of ARI's again: the reproduce job's numbers come from
``arguments.reproduce_args`` (``sbatch.merge_with_profile``, the caller arguments workflow.yaml
carries) and ``sbatch.effective_cpus``; both kinds' environment from ``arguments.env_values``
(what ``.env`` and ``bfts_env.sh`` carry). ``emit`` writes ``Decided.to_json()`` once into
``launch_config.json`` (``ari_jupyter.decided``); the Runs view compares each job with it
(``runs/envelope.py``) instead of working ARI's merge out again from the saved state.

============  =======================================  ========================================
              BFTS job (``ari-skill-hpc`` ``submit``)  reproduce job (``ari-ors``)
============  =======================================  ========================================
partition     ``SLURM_DEFAULT_PARTITION``              the caller's ``partition``
nodes         the merged ``nodes`` (the most one job   the merged ``nodes`` (Nodes, else the
              of the run may take); 1 when not set     profile's ``requested_nodes``); None:
              (the LLM picks ``nodes``, default 1)     not set (no ``--nodes``)
CPUs per node ``ARI_SLURM_CPUS`` (one task per node)   ``--cpus-per-task`` × the merged
                                                       ``ntasks_per_node`` (1 when not set)
GPUs per node ``ARI_SLURM_GPUS`` (``--gres=gpu:N``)    the merged ``gpu_type`` count, else
                                                       ``gpus_per_node``; 0 with "no GRES"
time limit    the Walltime (``ARI_SLURM_WALLTIME``);   the caller's ``walltime``, else
              "" when not set (the LLM picks, default  ``ARI_SLURM_WALLTIME``
              01:00:00)
============  =======================================  ========================================
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from .arguments import env_values, reproduce_args
from .choices import Choices
from .render import reproduce_inputs
from .sbatch import effective_cpus

SCHEMA = 1
"""The record's version: ``from_json`` refuses another (a newer ari-jupyter wrote it)."""

KINDS = ("bfts", "reproduce")

READS = {
    # ari-skill-hpc slurm.py submit: the partition, CPUs, memory and GPUs of every BFTS job
    # (its time limit is the LLM's, told the Walltime in experiment.md's Hardware Limits)
    "bfts": ("SLURM_DEFAULT_PARTITION", "SLURM_VALID_PARTITIONS", "ARI_SLURM_CPUS",
             "ARI_SLURM_MEM_GB", "ARI_SLURM_GPUS"),
    # ari-skill-paper-re run_reproduce: the sandbox, the partition, CPUs, time and GRES drop
    "reproduce": ("ARI_PHASE1_SANDBOX", "ARI_SLURM_PARTITION", "ARI_SLURM_CPUS",
                  "ARI_SLURM_WALLTIME", "ARI_SLURM_ALLOW_NO_GRES"),
}
"""Of the checkpoint's environment, what ARI reads to build each kind of job."""


class DecidedError(ValueError):
    """A decided record that cannot be read (another schema, a missing or mistyped key)."""


Value = str | int | bool | tuple[str, ...]


@dataclass(frozen=True)
class JobDecision:
    """One kind of job as decided: what it may ask of SLURM and what ARI reads to build it."""

    kind: str
    partition: str
    nodes: int | None
    cpus_per_node: int | None
    gpus_per_node: int
    time_limit: str
    """SLURM ``--time`` (``HH:MM:SS``, ``D-HH:MM:SS``); "" when ARI or the LLM picks it."""
    env: tuple[tuple[str, str], ...] = ()
    """The checkpoint's environment values ARI reads for this kind (``READS``), in that order."""
    args: tuple[tuple[str, Value], ...] = ()
    """The caller arguments ARI gets (``ors_run_reproduce``'s inputs); none for a BFTS job,
    whose arguments the LLM chooses within the environment."""

    def env_values(self) -> dict[str, str]:
        return dict(self.env)

    def args_values(self) -> dict[str, Any]:
        return {key: list(value) if isinstance(value, tuple) else value for key, value in self.args}

    def to_json(self) -> dict[str, Any]:
        return {"partition": self.partition, "nodes": self.nodes,
                "cpus_per_node": self.cpus_per_node, "gpus_per_node": self.gpus_per_node,
                "time_limit": self.time_limit, "env": self.env_values(),
                "args": self.args_values()}

    @classmethod
    def from_json(cls, kind: str, data: Any) -> "JobDecision":
        if not isinstance(data, Mapping):
            raise DecidedError(f"{kind}: must be an object")
        partition = _typed(kind, data, "partition", str)
        time_limit = _typed(kind, data, "time_limit", str)
        nodes = _count(kind, data, "nodes", optional=True)
        cpus = _count(kind, data, "cpus_per_node", optional=True)
        gpus = _count(kind, data, "gpus_per_node", optional=False)
        env = _typed(kind, data, "env", Mapping)
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise DecidedError(f"{kind}.env: every value must be a string")
        args = _typed(kind, data, "args", Mapping)
        return cls(kind, partition, nodes, cpus, gpus, time_limit, tuple(env.items()),
                   _frozen_args(kind, args))


@dataclass(frozen=True)
class Decided:
    """Both kinds of job as decided at Write (``schema`` names the record's version)."""

    bfts: JobDecision
    reproduce: JobDecision
    schema: int = SCHEMA

    def for_kind(self, kind: str) -> JobDecision | None:
        return {"bfts": self.bfts, "reproduce": self.reproduce}.get(kind)

    def to_json(self) -> dict[str, Any]:
        return {"schema": self.schema, "bfts": self.bfts.to_json(),
                "reproduce": self.reproduce.to_json()}

    @classmethod
    def from_json(cls, data: Any) -> "Decided":
        """The record ``to_json`` wrote; raise ``DecidedError`` for anything else."""
        if not isinstance(data, Mapping):
            raise DecidedError("the decided record must be an object")
        schema = data.get("schema")
        if schema != SCHEMA or isinstance(schema, bool):
            raise DecidedError(f"decided record schema {schema!r}: this version reads {SCHEMA}")
        return cls(*(JobDecision.from_json(kind, data.get(kind)) for kind in KINDS))


def decide(choices: Choices) -> Decided:
    """Both kinds of job as the choices decide them (see the module's table).

    Call it on choices that can be written (Max CPUs a positive integer, as ``launch_config``
    requires); a profile value ARI's ``int()`` refuses raises ``AriValueError`` as ARI would.
    """
    # where the run is written (SLURM_LOG_DIR, ARI_ENV_FILE, the ledger) is no decision about a job
    env = env_values(replace(choices, workspace="", run_id="")).values
    merged = reproduce_args(choices)
    cpus = effective_cpus(merged.cpus, env)
    if choices.allow_no_gres:  # ARI drops every GPU flag where the site has no GRES
        gpus = 0
    elif merged.gpu_type:  # --gres=gpu:<type>:<per task or per node or 1>
        gpus = merged.gpus_per_task or merged.gpus_per_node or 1
    else:  # --gpus-per-task is not in squeue's TRES per node; --gpus-per-node is
        gpus = merged.gpus_per_node
    walltime = env.get("ARI_SLURM_WALLTIME", "")
    bfts = JobDecision(
        "bfts", env.get("SLURM_DEFAULT_PARTITION", ""), merged.nodes or 1,
        int(env["ARI_SLURM_CPUS"]), int(env.get("ARI_SLURM_GPUS", "0")), walltime,
        env=_read(env, "bfts"))
    reproduce = JobDecision(
        "reproduce", merged.partition, merged.nodes or None, cpus * (merged.ntasks_per_node or 1),
        gpus, merged.walltime or walltime, env=_read(env, "reproduce"),
        args=_frozen_args("reproduce", reproduce_inputs(choices)))
    return Decided(bfts, reproduce)


def _read(env: Mapping[str, str], kind: str) -> tuple[tuple[str, str], ...]:
    return tuple((key, env[key]) for key in READS[kind] if key in env)


def _frozen_args(kind: str, args: Mapping[str, Any]) -> tuple[tuple[str, Value], ...]:
    out: list[tuple[str, Value]] = []
    for key, value in args.items():
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = tuple(value)
        elif not isinstance(value, (str, int, bool, tuple)):
            raise DecidedError(f"{kind}.args.{key}: must be a string, a number, true/false or "
                               f"a list of strings, got {value!r}")
        out.append((str(key), value))
    return tuple(out)


def _typed(kind: str, data: Mapping[str, Any], key: str, kind_of: type) -> Any:
    value = data.get(key)
    if not isinstance(value, kind_of):
        raise DecidedError(f"{kind}.{key}: must be a {kind_of.__name__}, got {value!r}")
    return value


def _count(kind: str, data: Mapping[str, Any], key: str, *, optional: bool) -> int | None:
    value = data.get(key)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise DecidedError(f"{kind}.{key}: must be a whole number of at least 0, got {value!r}")
    return value
