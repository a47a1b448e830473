"""Check an execution profile (and run_reproduce arguments) against what the probes saw.

Each problem says what ARI or SLURM will do with the request and how to fix it. Severity:
``error`` — ARI raises or sbatch refuses the job; ``warning`` — it runs, but not as the user
probably expects; ``info`` — worth knowing. Site facts come from the probe results
(``partitions``, ``gres``, ``mpi``, ``modules``, ``gpus``, ``sbatch``); a probe that did not
answer makes its checks stay silent rather than guess.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .errors import AriValueError
from .finding import SEVERITIES
from .partition import resolve_partition
from .profile import GPU_KINDS, PROFILE_KEYS, ExecutionProfile
from .sbatch import (
    BIND_FLAGS, ReproduceArgs, ari_thinks_shared, effective_cpus, max_runtime_sec, merge_with_profile,
    walltime_str,
)

# Flags ARI always sets; repeating them in extra_sbatch_args silently overrides ARI's value.
_MANAGED_FLAGS = {
    "--wait": "--wait", "-W": "--wait", "--partition": "--partition", "-p": "--partition",
    "--cpus-per-task": "--cpus-per-task", "-c": "--cpus-per-task", "--time": "--time",
    "-t": "--time", "--job-name": "--job-name", "-J": "--job-name", "--chdir": "--chdir",
    "-D": "--chdir", "--output": "--output", "-o": "--output", "--export": "--export",
}


@dataclass(frozen=True)
class Problem:
    field: str
    severity: str
    message: str
    fix: str = ""

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {self.severity!r}")

    def to_json(self) -> dict[str, str]:
        return {"field": self.field, "severity": self.severity, "message": self.message,
                "fix": self.fix}


@dataclass
class SiteFacts:
    """The probe data the checks need; ``None`` means the probe did not tell."""

    sbatch: bool | None = None
    partitions: list[dict] | None = None
    default_partition: str | None = None
    has_gres: bool | None = None
    gres: list[str] = field(default_factory=list)
    partition_gres: list[str] | None = None
    partition_has_gres: bool | None = None
    srun: bool | None = None
    mpirun: bool | None = None
    modules: list[str] | None = None
    gpu_count: int | None = None

    @classmethod
    def from_probes(cls, probes: Iterable[Any]) -> "SiteFacts":
        facts = cls()
        for probe in probes:
            data = probe.data or {}
            if probe.status == "unknown":
                continue
            if probe.id == "sbatch":
                facts.sbatch = data.get("path") is not None if "path" in data else None
            elif probe.id == "partitions" and probe.status != "skip":
                facts.partitions = list(data.get("partitions") or [])
                facts.default_partition = data.get("default")
            elif probe.id == "gres" and data.get("has_gres") is not None:
                facts.has_gres = bool(data["has_gres"])
                facts.gres = list(data.get("gres") or [])
                facts.partition_gres = data.get("partition_gres")
                facts.partition_has_gres = data.get("partition_has_gres")
            elif probe.id == "mpi":
                facts.srun = bool(data.get("srun"))
                facts.mpirun = bool(data.get("mpirun") or data.get("mpiexec"))
            elif probe.id == "modules":
                facts.modules = list(data.get("modules") or []) if probe.status != "skip" else []
            elif probe.id == "gpus" and isinstance(data.get("count"), int):
                facts.gpu_count = data["count"]
        return facts

    def partition(self, name: str) -> dict | None:
        for entry in self.partitions or []:
            if entry.get("name") == name:
                return entry
        return None


def validate(profile: ExecutionProfile | None, args: ReproduceArgs | None = None, *,
             probes: Sequence[Any] = (), allocation: Any = None,
             env: Mapping[str, str] | None = None, partition: str | None = None,
             repo_dir: str | Path | None = None, bind_flags: Iterable[str] | bool | None = None,
             modules: Sequence[str] = (), rubric_max_runtime_sec: int | None = None,
             home: str | None = None) -> list[Problem]:
    """Every problem found, errors first. ``partition`` is the wizard's choice (exported as
    ARI_SLURM_PARTITION); ``modules`` are extra site modules the hand-off loads."""
    profile = profile or ExecutionProfile()
    env = dict(env or {})
    facts = SiteFacts.from_probes(probes)
    merged = merge_with_profile(args or ReproduceArgs(), profile)
    ctx = _Context(profile, merged, facts, allocation, env, bind_flags, list(modules))
    ctx.partition_name = resolve_partition(merged.partition or partition, env, repo_dir).partition
    ctx.cpus = _safe_cpus(merged, env, ctx.problems)
    ctx.walltime = (merged.walltime or env.get("ARI_SLURM_WALLTIME", "")
                    or walltime_str(max_runtime_sec(merged, rubric_max_runtime_sec)))
    for check in (_check_submission, _check_partition, _check_gpus, _check_nodes, _check_ranks,
                  _check_memory, _check_bind, _check_modules, _check_mpi, _check_extra_args,
                  _check_profile_keys, _check_option_like_values):
        check(ctx)
    if repo_dir is not None and home is not None and not ari_thinks_shared(repo_dir, home):
        ctx.add("repo_dir", "warning",
                f"{repo_dir} is not under $HOME or /work, /scratch, /lustre, /home, /nfs, /data: "
                "ARI warns that the reproduce job's --chdir/--output may be node-local",
                "Put the workspace on the shared filesystem every node mounts.")
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(ctx.problems, key=lambda p: order[p.severity])


def validate_state(state: Any) -> list[Problem]:
    """``validate`` for a wizard state: the caller arguments and the .env values it will write."""
    from . import render

    args = ReproduceArgs(partition=state.partition or "", cpus=int(state.max_cpus or 0),
                         walltime=state.walltime or "", nodes=int(state.nodes or 0))
    try:
        env = render.env_values(state)
    except (ValueError, TypeError):
        env = {}
    if state.max_cpus is None:
        env.pop("ARI_SLURM_CPUS", None)  # not chosen yet: ARI's default (8) applies
    probes = list((state.probe_results or {}).values())
    sbatch = (state.probe_results or {}).get("sbatch")
    bind_flags = (sbatch.data or {}).get("bind_flags") if sbatch is not None else None
    return validate(state.profile, args, probes=probes, allocation=state.allocation, env=env,
                    partition=state.partition or None, modules=list(state.module_loads or ()),
                    bind_flags=bind_flags)


def blocking(problems: Iterable[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]


# -- internals -------------------------------------------------------------------------------

@dataclass
class _Context:
    profile: ExecutionProfile
    args: ReproduceArgs
    facts: SiteFacts
    allocation: Any
    env: dict[str, str]
    bind_flags: Iterable[str] | bool | None
    modules: list[str] = field(default_factory=list)
    partition_name: str = ""
    cpus: int | None = None
    walltime: str = ""
    problems: list[Problem] = field(default_factory=list)

    def add(self, field_name: str, severity: str, message: str, fix: str = "") -> None:
        self.problems.append(Problem(field_name, severity, message, fix))

    @property
    def part(self) -> dict | None:
        return self.facts.partition(self.partition_name) if self.partition_name else None

    @property
    def fallback(self) -> bool:
        return self.env.get("ARI_PHASE1_ALLOW_FALLBACK", "") == "1"


def _safe_cpus(args: ReproduceArgs, env: Mapping[str, str], problems: list[Problem]) -> int | None:
    try:
        return effective_cpus(args.cpus, env)
    except AriValueError as exc:
        problems.append(Problem("ARI_SLURM_CPUS", "error", f"ARI raises ValueError: {exc}",
                                "Set ARI_SLURM_CPUS to a whole number (the Max CPUs value)."))
        return None


def _seconds(text: str) -> int | None:
    from ..probes.parsers import parse_slurm_duration

    try:
        return parse_slurm_duration(text)
    except ValueError:
        return None


def _check_submission(ctx: _Context) -> None:
    if ctx.facts.sbatch is False:
        if ctx.fallback:
            ctx.add("sbatch", "warning", "sbatch is not on PATH: with ARI_PHASE1_ALLOW_FALLBACK=1 "
                    "ARI runs reproduce.sh on the host where `ari` runs, outside SLURM",
                    "Run `ari` where sbatch works if the reproduction must use the partition.")
        else:
            ctx.add("sbatch", "error", "sbatch is not on PATH: ARI raises RuntimeError "
                    "(\"sandbox_kind=slurm requested but `sbatch` is not on PATH\")",
                    "Run `ari` from a node with the SLURM client (inside the allocation or a "
                    "login node).")
    if not ctx.partition_name:
        severity = "warning" if ctx.fallback else "error"
        ctx.add("partition", severity, "no partition resolves (argument, ARI_SLURM_PARTITION, "
                "SLURM_PARTITION, launch_config.json): ARI raises RuntimeError (\"no partition "
                "could be resolved\")" + (" — or runs locally with the fallback" if ctx.fallback
                                          else ""),
                "Choose a partition; the hand-off exports it as ARI_SLURM_PARTITION.")


def _check_partition(ctx: _Context) -> None:
    facts, name = ctx.facts, ctx.partition_name
    wall = _seconds(ctx.walltime)
    if wall is None:
        ctx.add("walltime", "error", f"walltime {ctx.walltime!r} is not a SLURM time "
                "(MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS): sbatch refuses --time",
                "Use HH:MM:SS, e.g. 01:00:00.")
    if not name or facts.partitions is None:
        return
    part = ctx.part
    if part is None:
        known = ", ".join(p["name"] for p in facts.partitions) or "none"
        ctx.add("partition", "error", f"partition {name!r} is not listed by sinfo (known: "
                f"{known}): sbatch answers \"invalid partition specified\"",
                "Pick one of the listed partitions.")
        return
    if str(part.get("avail", "up")).lower() != "up":
        ctx.add("partition", "warning", f"partition {name} is {part.get('avail')}: the job "
                "queues until it is up", "Pick a partition that is up.")
    limit = str(part.get("timelimit") or "")
    limit_s = None if limit.lower() in ("", "infinite", "unlimited", "n/a") else _seconds(limit)
    if wall is not None and limit_s is not None and wall > limit_s:
        ctx.add("walltime", "error", f"--time {ctx.walltime} exceeds partition {name}'s time "
                f"limit {limit}: sbatch refuses (\"Requested time limit is invalid\")",
                f"Set ARI_SLURM_WALLTIME to at most {walltime_str(limit_s)} (ARI otherwise "
                "derives --time from the rubric's max_runtime_sec, 6 h by default).")


def _gres_gpu_specs(specs: Iterable[str]) -> list[tuple[str | None, int | None]]:
    from ..probes.parsers import parse_gres_spec

    out = []
    for spec in specs:
        parsed = parse_gres_spec(spec)
        if parsed and parsed.name == "gpu":
            out.append((parsed.type, parsed.count))
    return out


def _check_gpus(ctx: _Context) -> None:
    a, facts, profile = ctx.args, ctx.facts, ctx.profile
    requested = bool(a.gpu_type or a.gpus_per_task or a.gpus_per_node)
    field_name = ("gpu_type" if a.gpu_type else
                  "requested_gpus_per_task" if a.gpus_per_task else "requested_gpus_per_node")
    if a.gpu_type and any(ch in a.gpu_type for ch in ":, \t"):
        ctx.add("gpu_type", "error", f"gpu_type {a.gpu_type!r} contains ':', ',' or a blank: "
                f"ARI writes --gres=gpu:{a.gpu_type}:N, which SLURM parses differently",
                "Use the bare type sinfo shows, e.g. v100 for gpu:v100:4.")
    if not requested:
        if profile.kind == "mpi":
            ctx.add("kind", "info", "ARI tells the replicator that kind mpi is GPU-bearing "
                    "(CUDA or cupy, no NumPy fallback) even without a GPU request")
        elif profile.kind in GPU_KINDS and facts.has_gres:
            ctx.add("requested_gpus_per_task", "warning", f"kind {profile.kind} asks for CUDA "
                    "code, but no GPU is requested: on a cluster with GRES the job gets no GPU",
                    "Set requested_gpus_per_task (or _per_node) and gpu_type.")
        return
    seen = facts.gpu_count
    if facts.has_gres is False:
        if ctx.env.get("ARI_SLURM_ALLOW_NO_GRES", "") == "1":
            if seen:
                ctx.add(field_name, "info", "no GRES on this cluster: with "
                        "ARI_SLURM_ALLOW_NO_GRES=1 ARI drops every GPU flag; the job still sees "
                        f"the node's GPUs ({seen} found by nvidia-smi here)")
            else:
                ctx.add(field_name, "warning", "no GRES and no GPU seen here: with "
                        "ARI_SLURM_ALLOW_NO_GRES=1 ARI drops every GPU flag and the job "
                        "most likely runs without any GPU",
                        "Clear the GPU fields, or choose a cluster/partition with GPUs.")
            return
        if seen:
            fix = (f"This node shows {seen} GPU(s) without GRES (the sx40 pattern): set "
                   "ARI_SLURM_ALLOW_NO_GRES=1 (ARI drops every GPU flag; the job still sees "
                   "the GPUs), or clear the GPU fields (preset gpu_single_nogres).")
        else:
            fix = ("Clear the GPU fields (preset gpu_single_nogres) or use a cluster with GRES; "
                   "ARI_SLURM_ALLOW_NO_GRES=1 is not the answer here: no GPU was seen on this "
                   "node either.")
        ctx.add(field_name, "error", "GPUs requested but `sinfo -h -o %G` shows no GRES: ARI "
                "raises RuntimeError (\"GPU resources requested ... but this cluster has no GRES "
                "configured\")", fix)
        return
    if facts.has_gres is None:
        ctx.add(field_name, "info", "GRES unknown (the gres probe did not answer): ARI raises "
                "if `sinfo -h -o %G` shows none")
        return
    if ctx.facts.partition_has_gres is False and ctx.partition_name:
        ctx.add(field_name, "error", f"GRES exist on the cluster but not on partition "
                f"{ctx.partition_name}: ARI's check is cluster-wide and passes the GPU flags, "
                "sbatch then refuses the job", "Choose a partition with GPUs for this profile.")
        return
    part = ctx.part
    specs = _gres_gpu_specs((part or {}).get("gres") or facts.partition_gres or facts.gres)
    if not specs:
        return
    if a.gpu_type and a.gpu_type not in {t for t, _ in specs if t}:
        types = ", ".join(sorted({t for t, _ in specs if t})) or "untyped only"
        ctx.add("gpu_type", "error", f"gpu_type {a.gpu_type!r} is not among the GPU GRES "
                f"({types}): sbatch refuses (\"Requested node configuration is not available\")",
                f"Set gpu_type to one of: {types}.")
        return
    counts = [c for t, c in specs if c is not None and (not a.gpu_type or t == a.gpu_type)]
    if not counts:
        return
    per_node = max(counts)
    tasks_on_node = a.ntasks_per_node or (math.ceil(a.ntasks / a.nodes) if a.ntasks and a.nodes
                                          else a.ntasks or 1)
    if a.gpu_type:
        wanted, how = a.gpus_per_task or a.gpus_per_node or 1, f"--gres=gpu:{a.gpu_type}:N per node"
    elif a.gpus_per_node:
        wanted, how = a.gpus_per_node, "--gpus-per-node"
    else:
        wanted, how = a.gpus_per_task * tasks_on_node, "--gpus-per-task × tasks per node"
    if wanted > per_node:
        ctx.add(field_name, "error", f"{wanted} GPUs per node requested ({how}) but nodes have "
                f"at most {per_node}: sbatch refuses (\"Requested node configuration is not "
                "available\")", f"Request at most {per_node} GPUs per node.")
    if a.gpu_type and a.gpus_per_task and tasks_on_node > 1:
        ctx.add(field_name, "warning", f"with gpu_type ARI emits --gres=gpu:{a.gpu_type}:"
                f"{a.gpus_per_task} — a per-NODE count — and drops --gpus-per-task; "
                f"{tasks_on_node} tasks per node share those GPUs",
                "Set requested_gpus_per_node to the GPUs each node needs.")


def _check_nodes(ctx: _Context) -> None:
    nodes = ctx.args.nodes
    part = ctx.part
    if nodes and part and isinstance(part.get("nodes"), int) and nodes > part["nodes"]:
        ctx.add("requested_nodes", "error", f"{nodes} nodes requested but partition "
                f"{ctx.partition_name} has {part['nodes']}: sbatch refuses (\"Node count "
                "specification invalid\")", f"Request at most {part['nodes']} nodes.")
    alloc_nodes = getattr(ctx.allocation, "num_nodes", None)
    if nodes and alloc_nodes and getattr(ctx.allocation, "inside_allocation", False) \
            and nodes > alloc_nodes:
        ctx.add("requested_nodes", "warning", f"{nodes} nodes requested, more than this "
                f"allocation's {alloc_nodes}: the reproduce job is a separate job and waits for "
                "other free nodes (or for this notebook job to end)",
                f"Request at most {alloc_nodes} nodes, or make sure the partition has them free.")


def _check_ranks(ctx: _Context) -> None:
    a, profile, part = ctx.args, ctx.profile, ctx.part
    nodes, ntasks, per_node = a.nodes, a.ntasks, a.ntasks_per_node
    if ntasks and nodes and per_node:
        slots = nodes * per_node
        if ntasks > slots:
            ctx.add("min_ranks", "error", f"{ntasks} ranks do not fit {nodes} nodes × "
                    f"{per_node} tasks per node = {slots}: sbatch refuses the job",
                    f"Set min_ranks to {slots} or raise ntasks_per_node/requested_nodes.")
        elif ntasks < slots:
            ctx.add("min_ranks", "warning", f"{ntasks} ranks but {nodes} nodes × {per_node} "
                    f"tasks per node = {slots}: SLURM starts {ntasks}; ntasks_per_node is only "
                    "a maximum", f"Set min_ranks to {slots} for a full layout.")
    if ntasks and nodes and ntasks < nodes:
        ctx.add("min_ranks", "warning", f"{ntasks} ranks on {nodes} nodes: sbatch shrinks the job "
                f"to {ntasks} node(s)", "Give every node at least one rank.")
    if profile.is_mpi and not (ntasks > 1 or (per_node and (nodes or 1) * per_node > 1)):
        ctx.add("min_ranks", "warning", f"kind {profile.kind} but the job gets a single task: "
                "srun -n $SLURM_NTASKS starts one rank", "Set min_ranks (and requested_nodes).")
    if profile.min_ranks and profile.paper_max_ranks and profile.min_ranks > profile.paper_max_ranks:
        ctx.add("min_ranks", "info", f"min_ranks {profile.min_ranks} exceeds the paper's "
                f"{profile.paper_max_ranks} ranks")
    cpus = ctx.cpus
    node_cpus = part.get("cpus") if part else None
    if not cpus or not isinstance(node_cpus, int) or cpus <= 0:
        return
    if cpus > node_cpus:
        ctx.add("cpus", "error", f"--cpus-per-task {cpus} but nodes of {ctx.partition_name} have "
                f"{node_cpus} CPUs: sbatch refuses (\"Requested node configuration is not "
                "available\")", f"Set ARI_SLURM_CPUS (Max CPUs) to at most {node_cpus}; ARI uses "
                "8 when it is unset.")
        return
    if per_node and per_node * cpus > node_cpus:
        ctx.add("ntasks_per_node", "error", f"{per_node} tasks × {cpus} CPUs = "
                f"{per_node * cpus} per node, nodes have {node_cpus}: sbatch refuses the job",
                f"Lower ARI_SLURM_CPUS to {node_cpus // per_node} or ntasks_per_node.")
        return  # the whole-job check below would repeat the same refusal
    span = nodes or (part.get("nodes") if isinstance(part.get("nodes"), int) else None)
    if ntasks and span and ntasks * cpus > span * node_cpus:
        ctx.add("min_ranks", "error", f"{ntasks} ranks × {cpus} CPUs = {ntasks * cpus} CPUs, "
                f"more than {span} nodes × {node_cpus}: sbatch refuses (\"More processors "
                "requested than permitted\")",
                f"Lower ARI_SLURM_CPUS to {max(1, span * node_cpus // ntasks)} or the rank count.")


def _check_memory(ctx: _Context) -> None:
    a, part = ctx.args, ctx.part
    if a.memory_gb_per_node and a.memory_gb_per_cpu:
        ctx.add("memory_gb_per_cpu", "error", "memory_gb_per_node and memory_gb_per_cpu are both "
                "set: ARI emits --mem and --mem-per-cpu, which SLURM refuses together "
                "(mutually exclusive)", "Keep only one of the two.")
    mem_mb = part.get("memory_mb", part.get("memory")) if part else None
    if not isinstance(mem_mb, int) or mem_mb <= 0:
        return
    if a.memory_gb_per_node and a.memory_gb_per_node * 1024 > mem_mb:
        ctx.add("memory_gb_per_node", "error", f"--mem={a.memory_gb_per_node}G but nodes of "
                f"{ctx.partition_name} have {mem_mb} MB: sbatch refuses the job",
                f"Request at most {mem_mb // 1024} GB per node.")
    if a.memory_gb_per_cpu and ctx.cpus and a.memory_gb_per_cpu * 1024 * ctx.cpus > mem_mb:
        ctx.add("memory_gb_per_cpu", "error", f"--mem-per-cpu={a.memory_gb_per_cpu}G × "
                f"{ctx.cpus} CPUs exceeds the {mem_mb} MB of a node: sbatch refuses the job",
                "Lower memory_gb_per_cpu or ARI_SLURM_CPUS.")


def _check_bind(ctx: _Context) -> None:
    for flag, value in zip(BIND_FLAGS, (ctx.args.cpu_bind, ctx.args.mem_bind)):
        if not value:
            continue
        key = flag[2:].replace("-", "_")
        if ctx.bind_flags is None:
            ctx.add(key, "info", f"unknown whether this sbatch supports {flag}; ARI drops it "
                    "when `sbatch --help` does not mention it")
            continue
        supported = ctx.bind_flags if isinstance(ctx.bind_flags, bool) \
            else flag in set(ctx.bind_flags)
        if not supported:
            ctx.add(key, "warning", f"this sbatch does not advertise {flag}: ARI drops "
                    f"{flag}={value} from the job", f"Use `srun {flag}={value}` inside "
                    "reproduce.sh instead.")


def _module_available(name: str, available: Sequence[str]) -> bool:
    if name in available:
        return True
    return "/" not in name and any(m.startswith(name + "/") for m in available)


def _check_modules(ctx: _Context) -> None:
    wanted = [*ctx.profile.module_loads, *(m for m in ctx.modules
                                           if m not in ctx.profile.module_loads)]
    if not wanted:
        return
    available = ctx.facts.modules
    if available is None:
        return
    if not available:
        ctx.add("module_loads", "warning", "module_loads is set but no module system or module "
                "was found here: `module load` fails in reproduce.sh",
                "Leave module_loads empty or run the wizard where `module avail` works.")
        return
    for name in wanted:
        if not _module_available(name, available):
            close = difflib.get_close_matches(name, available, n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            ctx.add("module_loads", "error", f"module {name!r} is not in `module avail`: "
                    "`module load` fails and reproduce.sh stops", f"Remove it or pick an "
                    f"available module.{hint}")


def _check_mpi(ctx: _Context) -> None:
    if not ctx.profile.is_mpi or ctx.facts.srun is None:
        return
    if not ctx.facts.srun and not ctx.facts.mpirun:
        ctx.add("kind", "error", f"kind {ctx.profile.kind} needs an MPI launcher, but neither "
                "srun nor mpirun/mpiexec is on PATH", "Load an MPI module (and list it in "
                "module_loads) or run where srun exists.")
    elif not ctx.facts.srun:
        ctx.add("kind", "warning", "no srun: ranks must be started with mpirun -np "
                "$SLURM_NTASKS, which must exist on every compute node",
                "List the MPI module in module_loads so reproduce.sh loads it on the nodes.")


def _check_extra_args(ctx: _Context) -> None:
    for token in ctx.args.extra_sbatch_args:
        if not token.startswith("-"):
            ctx.add("extra_sbatch_args", "error", f"{token!r} does not start with '-': sbatch "
                    "takes the first bare word as the batch script, not ARI's wrapper",
                    "Write options as --flag=value.")
            continue
        flag = token.split("=", 1)[0]
        if flag in _MANAGED_FLAGS:
            ctx.add("extra_sbatch_args", "warning", f"{token!r} repeats {_MANAGED_FLAGS[flag]}, "
                    "which ARI already sets; the later value (yours) wins",
                    "Drop it unless overriding ARI's value is intended.")
        if flag in ("--ntasks", "-n", "--gpus", "-G") and "=" in token and ctx.args.gpus_per_task:
            ctx.add("extra_sbatch_args", "warning", f"{token!r} is invisible to ARI's --ntasks "
                    "pairing: ARI still adds --ntasks 1 for --gpus-per-task",
                    "Set min_ranks instead.")


# sbatch options that undo what ARI's own reproduce line relies on (spec: sbatch --wait ...
# --export ALL <repo_dir>/.slurm_wrap.sh), beyond the flags ARI sets itself.
_FIGHTING_FLAGS = {
    "--wrap": "replaces ARI's wrapper script with a command line: the reproduction never runs",
    "--uid": "asks sbatch to submit as another user (root only): the job is refused or runs as "
             "someone else",
    "--gid": "asks sbatch to submit as another group (root only): the job is refused",
    "--array": "submits several copies of the reproduction; --wait waits for all of them",
    "-a": "submits several copies of the reproduction; --wait waits for all of them",
    "--test-only": "makes sbatch only test the request: no job runs and ARI finds no results",
    "--hold": "holds the job: ARI's --wait waits until someone releases it",
    "-H": "holds the job: ARI's --wait waits until someone releases it",
    "--error": "sends stderr away from reproduce.log, the file ARI reads back",
    "-e": "sends stderr away from reproduce.log, the file ARI reads back",
    "--get-user-env": "replaces the environment ARI exports with a fresh login environment",
    "--help": "prints help instead of submitting: no job runs",
    "-h": "prints help instead of submitting: no job runs",
    "--usage": "prints usage instead of submitting: no job runs",
    "--version": "prints the version instead of submitting: no job runs",
    "-V": "prints the version instead of submitting: no job runs",
}
# Values that go on the sbatch line as a word of their own after their flag.
_NAME_FIELDS = (("partition", "partition"), ("nodelist", "requested_nodelist"),
                ("exclude_nodes", "exclude_nodes"))


def _check_option_like_values(ctx: _Context) -> None:
    """A name that starts with '-' is read by sbatch as an option (``--partition --wrap=...``):
    refused where a name is expected; extra arguments that fight ARI's own flags warned."""
    for attr, field_name in _NAME_FIELDS:
        value = str(getattr(ctx.args, attr, "") or "")
        if attr == "partition" and not value:
            value = ctx.partition_name or ""
        if value.lstrip().startswith("-"):
            ctx.add(field_name, "error", f"{field_name} {value!r} starts with '-': sbatch would "
                    "read it as an option, not as a name", "Give the name itself (letters, "
                    "digits, '_' and '-' inside, never first); options go in extra_sbatch_args.")
    for token in ctx.args.extra_sbatch_args:
        flag, _, value = str(token).partition("=")
        if flag in _FIGHTING_FLAGS:
            ctx.add("extra_sbatch_args", "warning", f"{token!r} {_FIGHTING_FLAGS[flag]}",
                    "Remove it from extra_sbatch_args.")
        elif flag == "--export" and value and "ALL" not in value.split(","):
            ctx.add("extra_sbatch_args", "warning", f"{token!r} overrides ARI's --export ALL: the "
                    "job loses the API keys, loaded modules and PATH reproduce.sh needs",
                    "Remove it; ARI exports the whole environment on purpose.")


def _check_profile_keys(ctx: _Context) -> None:
    for key in ctx.profile.extra_keys:
        close = difflib.get_close_matches(key, PROFILE_KEYS, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        ctx.add(key, "warning", f"{key!r} is not an execution_profile key: ARI ignores it",
                f"Remove it.{hint}")
