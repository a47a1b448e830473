"""The rubric's ``reproduce_contract.execution_profile`` as a validated traitlets object.

ARI's schema (``replication_rubric.schema.json``) defines 24 keys with no ``required`` list and
no ``additionalProperties: false``. Every key here carries the schema's type and bounds; the
trait default is the value every ARI consumer treats exactly like an absent key (``0``, ``""``,
``False``, ``[]`` or ``None``), which is why ``to_json()`` can drop defaults without changing
what ARI does. Keys whose mere presence changes ARI's behaviour have ``None`` as default:
``min_ranks: 1`` makes the dispatcher emit ``--ntasks 1``; ``accepts_reduced_scale: true``
adds a CSV column to the replicator prompt; an empty profile suppresses the whole HPC prompt
appendix. Unknown keys validate in ARI's schema, so ``from_json`` keeps them in
``extra_keys`` (written back by ``to_json``) and the validator warns about likely typos.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from traitlets import Bool, Dict, Enum, HasTraits, Int, List, Unicode

KINDS = ("cpu_single", "gpu_single", "gpu_multi", "mpi", "mpi_gpu")
RESULT_AGGREGATIONS = ("rank0_csv",)
MPI_KINDS = ("mpi", "mpi_gpu")
GPU_KINDS = ("gpu_single", "gpu_multi", "mpi", "mpi_gpu")


def fans_out(kind: str) -> bool:
    """Whether ARI's replicator prompt tells the agent to launch ranks with srun.

    Every non-empty execution profile gets the "Multi-node fan-out" convention ("reproduce.sh
    starts as 1 rank. Use srun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS <cmd>"), whatever its
    kind; MPI kinds are also told they MUST launch that way (spec §4.3). Without a kind there is
    no profile: reproduce.sh runs as one process on the first node of the job.
    """
    return bool(kind)


# (key, json type, minimum or enum) in the schema's order (spec §4.2).
_INT_MIN = {
    "paper_max_ranks": 1,
    "paper_max_nodes": 1,
    "min_ranks": 1,
    "min_nodes": 1,
    "requested_nodes": 1,
    "ntasks_per_node": 0,
    "requested_gpus_per_task": 0,
    "requested_gpus_per_node": 0,
    "memory_gb_per_node": 0,
    "memory_gb_per_cpu": 0,
}
_STRINGS = ("exclude_nodes", "gpu_type", "constraint", "cpu_bind", "mem_bind", "hint")
_STRING_LISTS = ("metric_columns", "module_loads", "extra_sbatch_args")
_BOOLS = ("accepts_reduced_scale", "exclusive")
_ENUMS = {"kind": KINDS, "result_aggregation": RESULT_AGGREGATIONS}

PROFILE_KEYS = (
    "kind", "paper_max_ranks", "paper_max_nodes", "min_ranks", "min_nodes",
    "result_aggregation", "metric_columns", "accepts_reduced_scale", "requested_nodes",
    "ntasks_per_node", "requested_nodelist", "exclude_nodes", "exclusive",
    "requested_gpus_per_task", "requested_gpus_per_node", "gpu_type", "memory_gb_per_node",
    "memory_gb_per_cpu", "constraint", "cpu_bind", "mem_bind", "hint", "module_loads",
    "extra_sbatch_args",
)
"""The 24 keys of ARI's execution_profile schema, in the schema's order."""


class ProfileError(ValueError):
    """Invalid execution_profile input; ``messages`` lists every problem, each naming its key."""

    def __init__(self, messages: list[str]):
        self.messages = list(messages)
        super().__init__("invalid execution_profile: " + "; ".join(self.messages))


class ExecutionProfile(HasTraits):
    """One execution_profile. Assigning a value outside the schema raises ``TraitError``."""

    kind = Enum(KINDS, default_value=None, allow_none=True,
                help="What the replicator prompt is told to build; never changes sbatch flags.")
    paper_max_ranks = Int(None, allow_none=True, min=1, help="Ranks the paper used (prompt only).")
    paper_max_nodes = Int(None, allow_none=True, min=1, help="Nodes the paper used (prompt only).")
    min_ranks = Int(None, allow_none=True, min=1, help="Becomes sbatch --ntasks.")
    min_nodes = Int(None, allow_none=True, min=1, help="Read by nothing in ARI.")
    result_aggregation = Enum(RESULT_AGGREGATIONS, default_value=None, allow_none=True,
                              help="Only dumped into the prompt.")
    metric_columns = List(Unicode(), help="CSV header the replicator must write (MPI kinds).")
    accepts_reduced_scale = Bool(None, allow_none=True,
                                 help="true adds a paper_paper_scale_point CSV column to the prompt.")
    requested_nodes = Int(None, allow_none=True, min=1, help="Becomes sbatch --nodes.")
    ntasks_per_node = Int(0, min=0, help="Becomes sbatch --ntasks-per-node when > 0.")
    requested_nodelist = Unicode(None, allow_none=True, help="Becomes sbatch --nodelist.")
    exclude_nodes = Unicode("", help="Becomes sbatch --exclude.")
    exclusive = Bool(False, help="Becomes sbatch --exclusive (OR-merged with the caller's).")
    requested_gpus_per_task = Int(0, min=0, help="--gpus-per-task, or the GRES count when typed.")
    requested_gpus_per_node = Int(0, min=0, help="--gpus-per-node, or the GRES count when typed.")
    gpu_type = Unicode("", help="Switches to --gres=gpu:<type>:<K> only.")
    memory_gb_per_node = Int(0, min=0, help="Becomes --mem=<N>G.")
    memory_gb_per_cpu = Int(0, min=0, help="Becomes --mem-per-cpu=<N>G.")
    constraint = Unicode("", help="Becomes --constraint=<C>.")
    cpu_bind = Unicode("", help="Becomes --cpu-bind=<X> when sbatch advertises it.")
    mem_bind = Unicode("", help="Becomes --mem-bind=<X> when sbatch advertises it.")
    hint = Unicode("", help="Becomes --hint=<X>.")
    module_loads = List(Unicode(), help="Prompt: prepend `module load a b c` to reproduce.sh.")
    extra_sbatch_args = List(Unicode(), help="Appended verbatim before the wrapper script.")
    extra_keys = Dict(help="Keys outside the schema's 24; ARI ignores them, kept for round trips.")

    # -- serialisation -----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The profile as ARI's JSON, leaving out values ARI treats like an absent key."""
        out: dict[str, Any] = {}
        for key in PROFILE_KEYS:
            value = getattr(self, key)
            if value is None or value == "" or value == [] or value is False:
                continue
            if key in _INT_MIN and _INT_MIN[key] == 0 and value == 0:
                continue
            out[key] = list(value) if isinstance(value, list) else value
        for key, value in self.extra_keys.items():
            out.setdefault(key, value)
        return out

    @classmethod
    def from_json(cls, data: Any) -> "ExecutionProfile":
        """Build a profile from ARI's JSON; raise ``ProfileError`` listing every invalid key."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ProfileError([f"execution_profile: must be a JSON object, got {_json_type(data)}"])
        values: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        messages: list[str] = []
        for key, raw in data.items():
            if not isinstance(key, str) or key not in PROFILE_KEYS:
                extra[str(key)] = raw
                continue
            value, problem = _check_key(key, raw)
            if problem:
                messages.append(f"{key}: {problem}")
            else:
                values[key] = value
        if messages:
            raise ProfileError(messages)
        profile = cls()
        for key, value in values.items():
            if value is not None:
                setattr(profile, key, value)
        profile.extra_keys = extra
        return profile

    def copy(self) -> "ExecutionProfile":
        return type(self).from_json(self.to_json())

    # -- facts other modules ask about ------------------------------------------------------
    @property
    def requests_gpus(self) -> bool:
        """True when ARI's dispatcher would need GRES (``gpu_type`` or a GPU count)."""
        return bool(self.gpu_type or self.requested_gpus_per_task or self.requested_gpus_per_node)

    @property
    def gpus_per_task_only(self) -> int:
        """GPUs asked per rank when none are asked per node (preset gpu_single): the wizard's
        simple view shows "GPUs per node 0" while sbatch gets ``--gpus-per-task``; 0 otherwise."""
        if self.requested_gpus_per_node:
            return 0
        return self.requested_gpus_per_task or 0

    @property
    def is_mpi(self) -> bool:
        return self.kind in MPI_KINDS

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExecutionProfile) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  (mutable)

    def __repr__(self) -> str:
        return f"ExecutionProfile({self.to_json()!r})"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _has_control_chars(text: str) -> bool:
    return any(ord(ch) < 32 or ord(ch) == 127 for ch in text)


def _check_string(raw: Any) -> tuple[Any, str]:
    if not isinstance(raw, str):
        return None, f"must be a string, got {_json_type(raw)} {raw!r}"
    if _has_control_chars(raw):
        return None, f"must not contain control characters (newline, tab, ...), got {raw!r}"
    return raw, ""


def _check_key(key: str, raw: Any) -> tuple[Any, str]:
    """Return (python value, "") or (None, problem text) for one schema key."""
    if key in _ENUMS:
        allowed = _ENUMS[key]
        if raw not in allowed or not isinstance(raw, str):
            return None, f"must be one of {', '.join(allowed)}; got {raw!r}"
        return raw, ""
    if key in _INT_MIN:
        minimum = _INT_MIN[key]
        # JSON Schema "integer" accepts 4.0 but never true/false.
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            return None, f"must be an integer >= {minimum}, got {_json_type(raw)} {raw!r}"
        if isinstance(raw, float):
            if not math.isfinite(raw) or not raw.is_integer():
                return None, f"must be an integer >= {minimum}, got {raw!r}"
            raw = int(raw)
        if raw < minimum:
            return None, f"must be an integer >= {minimum}, got {raw}"
        return raw, ""
    if key in _BOOLS:
        if not isinstance(raw, bool):
            return None, f"must be true or false, got {_json_type(raw)} {raw!r}"
        return raw, ""
    if key in _STRING_LISTS:
        if not isinstance(raw, list):
            return None, f"must be an array of strings, got {_json_type(raw)} {raw!r}"
        bad = [f"item {i} ({_json_type(v)} {v!r})" for i, v in enumerate(raw)
               if not isinstance(v, str) or _has_control_chars(v)]
        if bad:
            return None, "every item must be a string without control characters; bad: " + ", ".join(bad)
        return list(raw), ""
    if key == "requested_nodelist":
        if raw is None:
            return None, ""
        return _check_string(raw)
    if key in _STRINGS:
        return _check_string(raw)
    raise AssertionError(f"unhandled profile key {key}")  # pragma: no cover - PROFILE_KEYS is closed


# -- what ARI's dispatcher makes of values the schema refuses --------------------------------

DISPATCH_INT_FLAGS = {
    "requested_nodes": "--nodes", "min_ranks": "--ntasks", "ntasks_per_node": "--ntasks-per-node",
    "requested_gpus_per_task": "--gpus-per-task", "requested_gpus_per_node": "--gpus-per-node",
    "memory_gb_per_node": "--mem", "memory_gb_per_cpu": "--mem-per-cpu",
}
"""Profile numbers ``run_reproduce`` reads as ``int(profile.get(key, 0) or 0)``, and their flag."""

DISPATCH_ARGS = {
    "requested_nodes": "nodes", "min_ranks": "ntasks", "ntasks_per_node": "ntasks_per_node",
    "requested_gpus_per_task": "gpus_per_task", "requested_gpus_per_node": "gpus_per_node",
    "memory_gb_per_node": "memory_gb_per_node", "memory_gb_per_cpu": "memory_gb_per_cpu",
}
"""The run_reproduce argument that, when non-zero, wins over each of those profile numbers."""

PROMPT_ONLY_KEYS = ("kind", "paper_max_ranks", "paper_max_nodes", "min_nodes", "result_aggregation",
                    "metric_columns", "accepts_reduced_scale", "module_loads")
"""Keys the reproduce dispatcher never reads (the replicator prompt or nothing does)."""


def ari_dispatch_reading(data: Any) -> tuple[dict[str, Any], list[str]]:
    """The profile as ARI's dispatcher reads it, for a profile ``from_json`` refuses.

    ARI does not validate: ``int(v or 0)`` for the numbers (``"4"`` gives ``--nodes 4``,
    ``4.5`` gives 4), ``bool(v)`` for ``exclusive`` (``"false"`` gives ``--exclusive``), and it
    ignores keys it does not read (an unknown ``kind``). Returns the values to merge (raw, so
    the merge applies ARI's own coercion, and fails where ARI's ``int("four")`` fails) and one
    warning per coerced or ignored key saying what ARI makes of it. Raises ``ProfileError`` for
    strings and lists the schema refuses (control characters never reach a preview).
    """
    if not isinstance(data, dict):
        raise ProfileError([f"execution_profile: must be a JSON object, got {_json_type(data)}"])
    values: dict[str, Any] = {}
    warnings: list[str] = []
    messages: list[str] = []
    for key, raw in data.items():
        if not isinstance(key, str) or key not in PROFILE_KEYS:
            continue  # ARI ignores keys outside its schema
        value, problem = _check_key(key, raw)
        if not problem:
            if value is not None:
                values[key] = value
            continue
        if key in PROMPT_ONLY_KEYS:
            warnings.append(f"{key}: {problem}; ARI's reproduce dispatcher does not read {key}, so "
                            "the sbatch line is unaffected (the replicator prompt shows the value as given)")
        elif key in DISPATCH_INT_FLAGS:
            flag = DISPATCH_INT_FLAGS[key]
            try:
                number = int(raw or 0)
            except (TypeError, ValueError) as exc:
                # ARI int()s it only when the caller leaves the argument at 0: the merge decides
                warnings.append(f"{key}: {problem}; ARI's int() fails on it ({type(exc).__name__}: "
                                f"{exc}), so run_reproduce raises unless the caller passes "
                                f"{DISPATCH_ARGS[key]}")
                values[key] = raw
                continue
            effect = f"{flag} {number}" if number > 0 else f"no {flag}"
            if number > 0 and flag.startswith("--mem"):
                effect = f"{flag}={number}G"
            warnings.append(f"{key}: {problem}; ARI's int() makes it {number}, so the job gets {effect}")
            values[key] = raw
        elif key == "exclusive":
            effect = "--exclusive" if bool(raw) else "no --exclusive"
            warnings.append(f"exclusive: {problem}; ARI's bool() makes it {bool(raw)}, so the job "
                            f"gets {effect}")
            values[key] = raw
        else:
            messages.append(f"{key}: {problem}")
    if messages:
        raise ProfileError(messages)
    return values, warnings


# -- presets -----------------------------------------------------------------------------------

def _cpu_single() -> ExecutionProfile:
    """One task on one node; the partition default decides the rest."""
    return ExecutionProfile(kind="cpu_single")


def _gpu_single() -> ExecutionProfile:
    """One GPU for one task on a cluster with GRES (untyped: any GPU model)."""
    return ExecutionProfile(kind="gpu_single", requested_gpus_per_task=1)


def _gpu_single_nogres() -> ExecutionProfile:
    """A GPU node without GRES (sx40 pattern): request no GPU at all.

    ARI raises when any GPU field is set and ``sinfo -h -o %G`` shows no GRES; the GPUs are
    visible to the job anyway (``nvidia-smi``), so the kind alone tells the replicator to use CUDA.
    """
    return ExecutionProfile(kind="gpu_single")


def _gpu_multi() -> ExecutionProfile:
    """Four GPUs on one node."""
    return ExecutionProfile(kind="gpu_multi", requested_nodes=1, requested_gpus_per_node=4)


def _mpi() -> ExecutionProfile:
    """Two nodes x four ranks, rank 0 writes the CSV."""
    return ExecutionProfile(kind="mpi", requested_nodes=2, ntasks_per_node=4, min_ranks=8,
                            result_aggregation="rank0_csv")


def _mpi_gpu() -> ExecutionProfile:
    """ARI's TS-SpGEMM example: 4 nodes x 8 ranks, one V100 per task, exclusive, Skylake.

    ``min_ranks`` is 32 (ARI's docs show 4 but expect ``--ntasks 32``; the dispatcher emits
    ``--ntasks <min_ranks>``). The example's ``--account=projX`` is left out: a placeholder
    account makes sbatch refuse the job.
    """
    return ExecutionProfile(
        kind="mpi_gpu", paper_max_ranks=32, paper_max_nodes=4, min_ranks=32,
        result_aggregation="rank0_csv",
        metric_columns=["nodes", "ranks", "runtime_sec", "gflops"],
        accepts_reduced_scale=True, requested_nodes=4, ntasks_per_node=8, exclusive=True,
        requested_gpus_per_task=1, gpu_type="v100", memory_gb_per_node=256,
        constraint="skylake", cpu_bind="cores", hint="nomultithread",
        module_loads=["cuda/12.4", "openmpi/4.1"],
    )


PRESETS: dict[str, Callable[[], ExecutionProfile]] = {
    "cpu_single": _cpu_single,
    "gpu_single": _gpu_single,
    "gpu_single_nogres": _gpu_single_nogres,
    "gpu_multi": _gpu_multi,
    "mpi": _mpi,
    "mpi_gpu": _mpi_gpu,
}
"""Preset name -> factory returning a fresh ExecutionProfile."""


def preset_of(profile: ExecutionProfile) -> str | None:
    """The name of the preset ``profile`` equals (every key), or None for any other profile."""
    return next((name for name, make in PRESETS.items() if make() == profile), None)
