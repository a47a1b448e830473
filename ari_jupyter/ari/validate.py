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

from ..i18n import message
from .module_choice import software_modules
from .errors import NO_GRES_WAY, AriValueError
from ..base.verdict import Finding, rank
from .partition import resolve_partition
from .profile import GPU_KINDS, PROFILE_KEYS, ExecutionProfile
from .sbatch import (
    BIND_FLAGS, ReproduceArgs, ari_thinks_shared, effective_cpus, max_runtime_sec, merge_with_profile,
    walltime_str,
)
from .arguments import caller_args, env_values
from .choices import Choices
from .prelude import module_name_problem
from ..slurm.parsers import parse_gres_spec, parse_slurm_duration

# Flags ARI always sets; repeating them in extra_sbatch_args silently overrides ARI's value.
_MANAGED_FLAGS = {
    "--wait": "--wait", "-W": "--wait", "--partition": "--partition", "-p": "--partition",
    "--cpus-per-task": "--cpus-per-task", "-c": "--cpus-per-task", "--time": "--time",
    "-t": "--time", "--job-name": "--job-name", "-J": "--job-name", "--chdir": "--chdir",
    "-D": "--chdir", "--output": "--output", "-o": "--output", "--export": "--export",
}


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
             home: str | None = None, site: str = "") -> list[Finding]:
    """Every finding, errors first. ``partition`` is the wizard's choice (exported as
    ARI_SLURM_PARTITION); ``modules`` are extra site modules the hand-off loads; ``site``
    names the site in messages (a demo site's name, '' for this machine)."""
    profile = profile or ExecutionProfile()
    env = dict(env or {})
    facts = SiteFacts.from_probes(probes)
    merged = merge_with_profile(args or ReproduceArgs(), profile)
    ctx = _Context(profile, merged, facts, allocation, env, bind_flags, list(modules), site=site)
    if args is not None and args.nodes:
        ctx.nodes_field = "nodes"
    ctx.partition_name = resolve_partition(merged.partition or partition, env, repo_dir).partition
    ctx.cpus = _safe_cpus(ctx)
    ctx.walltime = (merged.walltime or env.get("ARI_SLURM_WALLTIME", "")
                    or walltime_str(max_runtime_sec(merged, rubric_max_runtime_sec)))
    for check in (_check_submission, _check_partition, _check_gpus, _check_nodes, _check_ranks,
                  _check_memory, _check_bind, _check_modules, _check_mpi, _check_extra_args,
                  _check_profile_keys, _check_option_like_values):
        check(ctx)
    if repo_dir is not None and home is not None and not ari_thinks_shared(repo_dir, home):
        ctx.add("repo_not_shared", "repo_dir", "warning", path=str(repo_dir))
    return sorted(ctx.problems, key=lambda p: rank(p.severity))


def validate_choices(choices: Choices) -> list[Finding]:
    """``validate`` for the user's choices, as ARI will see the run: their caller arguments,
    the settings the checkpoint .env carries and the modules the hand-off loads."""
    args = caller_args(choices)
    return validate(choices.profile, args, probes=choices.probe_list(),
                    allocation=choices.allocation, env=dict(env_values(choices).values),
                    partition=args.partition or None,
                    modules=[m for m in choices.module_loads if not module_name_problem(m)],
                    bind_flags=choices.probe_data("sbatch", "bind_flags"), site=choices.site_name)


def blocking(problems: Iterable[Finding]) -> list[Finding]:
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
    problems: list[Finding] = field(default_factory=list)
    site: str = ""
    nodes_field: str = "requested_nodes"
    """Where the node count came from: the caller's ``nodes`` (the wizard's Nodes box, emit's
    --nodes), else the profile's ``requested_nodes``; its findings go there."""

    def add(self, rule: str, field_name: str, severity: str, *, fix: str | None = "fix",
            **params: Any) -> None:
        """Record finding ``rule``: its message is ``validate.<rule>``, its fix
        ``validate.<rule>.<fix>`` (``fix=None``: the finding has no fix)."""
        self.problems.append(Finding.of(
            rule, severity, f"validate.{rule}", field=field_name,
            fix_id=f"validate.{rule}.{fix}" if fix else "", **params))

    @property
    def part(self) -> dict | None:
        return self.facts.partition(self.partition_name) if self.partition_name else None

    @property
    def fallback(self) -> bool:
        return self.env.get("ARI_PHASE1_ALLOW_FALLBACK", "") == "1"


def _safe_cpus(ctx: _Context) -> int | None:
    try:
        return effective_cpus(ctx.args.cpus, ctx.env)
    except AriValueError as exc:
        ctx.add("cpus_not_integer", "max_cpus", "error", error=str(exc))
        return None


def _seconds(text: str) -> int | None:
    try:
        return parse_slurm_duration(text)
    except ValueError:
        return None


def _check_submission(ctx: _Context) -> None:
    if ctx.facts.sbatch is False:
        if ctx.fallback:
            ctx.add("sbatch_fallback", "sbatch", "warning")
        else:
            ctx.add("sbatch_missing", "sbatch", "error")
    if not ctx.partition_name:
        if ctx.fallback:
            ctx.add("no_partition_fallback", "partition", "warning")
        else:
            ctx.add("no_partition", "partition", "error")


def _check_partition(ctx: _Context) -> None:
    facts, name = ctx.facts, ctx.partition_name
    wall = _seconds(ctx.walltime)
    if wall is None:
        ctx.add("walltime_not_slurm", "walltime", "error", walltime=ctx.walltime)
    elif _minutes_form(ctx.walltime) and wall < SHORT_WALLTIME_S:
        # SLURM reads "1:00" as MM:SS and "2" as minutes: a job of a minute or two is far
        # more likely an hour written short than a reproduce run ARI gives 6 h by default
        ctx.add("walltime_minutes", "walltime", "warning", walltime=ctx.walltime,
                read=walltime_str(wall), meant=f"{ctx.walltime.split(':')[0].zfill(2)}:00:00")
    if not name or facts.partitions is None:
        return
    part = ctx.part
    if part is None:
        known = ", ".join(p["name"] for p in facts.partitions) or "—"
        ctx.add("partition_unknown", "partition", "error", partition=name, known=known)
        return
    if str(part.get("avail", "up")).lower() != "up":
        ctx.add("partition_down", "partition", "warning", partition=name,
                avail=str(part.get("avail")))
    limit = str(part.get("timelimit") or "")
    limit_s = None if limit.lower() in ("", "infinite", "unlimited", "n/a") else _seconds(limit)
    if wall is not None and limit_s is not None and wall > limit_s:
        ctx.add("walltime_over_limit", "walltime", "error",
                fix="fix_default" if not (ctx.args.walltime or ctx.env.get("ARI_SLURM_WALLTIME"))
                else "fix", walltime=ctx.walltime, partition=name, limit=limit,
                max=walltime_str(limit_s))


SHORT_WALLTIME_S = 10 * 60
"""Below this, a walltime written as MM or MM:SS gets a warning (see walltime_minutes)."""


def _minutes_form(walltime: str) -> bool:
    """SLURM's MM or MM:SS forms (no hours, no days)."""
    head, _, tail = walltime.strip().partition(":")
    return head.isdigit() and (not tail or (tail.isdigit() and ":" not in tail))


def site_has_no_gpu(facts: Any) -> bool:
    """Known to have no GPU: none visible here (nvidia-smi counts none or is absent) and SLURM
    lists no GPU GRES on any partition. Unknown when either probe did not tell."""
    gres = list(facts.gres or []) + list(facts.partition_gres or [])
    for entry in facts.partitions or []:
        gres += list(entry.get("gres") or [])
    return facts.gpu_count == 0 and facts.has_gres is not None and not _gres_gpu_specs(gres)


def _gres_gpu_specs(specs: Iterable[str]) -> list[tuple[str | None, int | None]]:
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
        ctx.add("gpu_type_bad_chars", "gpu_type", "error", gpu_type=a.gpu_type)
    if not requested:
        if profile.kind in GPU_KINDS and site_has_no_gpu(facts):
            # ARI's prompt then asks for CUDA code the site cannot run (spec 4.3)
            ctx.add("gpu_kind_no_gpu_site", "kind", "warning", kind=profile.kind)
        elif profile.kind == "mpi":
            ctx.add("mpi_kind_gpu_prompt", "kind", "info", fix=None, kind=profile.kind)
        elif profile.kind in GPU_KINDS and facts.has_gres:
            ctx.add("gpu_kind_no_request", "requested_gpus_per_task", "warning", kind=profile.kind)
        return
    seen = facts.gpu_count
    if facts.has_gres is False:
        if ctx.env.get("ARI_SLURM_ALLOW_NO_GRES", "") == "1":
            if seen:
                ctx.add("no_gres_allowed_seen", field_name, "info", fix=None, seen=seen)
            else:
                ctx.add("no_gres_allowed_unseen", field_name, "warning")
            return
        ctx.add("no_gres", field_name, "error", fix="fix_seen" if seen else "fix_unseen",
                seen=seen or 0, way=message(NO_GRES_WAY))
        return
    if facts.has_gres is None:
        ctx.add("gres_unknown", field_name, "info", fix=None)
        return
    if ctx.facts.partition_has_gres is False and ctx.partition_name:
        ctx.add("partition_no_gres", field_name, "error", partition=ctx.partition_name)
        return
    part = ctx.part
    specs = _gres_gpu_specs((part or {}).get("gres") or facts.partition_gres or facts.gres)
    if not specs:
        return
    if a.gpu_type and a.gpu_type not in {t for t, _ in specs if t}:
        types = ", ".join(sorted({t for t, _ in specs if t})) or "—"
        ctx.add("gpu_type_unknown", "gpu_type", "error", gpu_type=a.gpu_type, types=types)
        return
    counts = [c for t, c in specs if c is not None and (not a.gpu_type or t == a.gpu_type)]
    if not counts:
        return
    per_node = max(counts)
    tasks_on_node = a.ntasks_per_node or (math.ceil(a.ntasks / a.nodes) if a.ntasks and a.nodes
                                          else a.ntasks or 1)
    if a.gpu_type:
        wanted, how = a.gpus_per_task or a.gpus_per_node or 1, f"--gres=gpu:{a.gpu_type}:N"
    elif a.gpus_per_node:
        wanted, how = a.gpus_per_node, "--gpus-per-node"
    else:
        wanted, how = a.gpus_per_task * tasks_on_node, "--gpus-per-task × --ntasks-per-node"
    if wanted > per_node:
        ctx.add("gpus_over_node", field_name, "error", wanted=wanted, how=how, per_node=per_node)
    if a.gpu_type and a.gpus_per_task and tasks_on_node > 1:
        ctx.add("gres_per_node_shared", field_name, "warning", gpu_type=a.gpu_type,
                count=a.gpus_per_task, tasks=tasks_on_node)


def _check_nodes(ctx: _Context) -> None:
    nodes = ctx.args.nodes
    part = ctx.part
    if nodes and part and isinstance(part.get("nodes"), int) and nodes > part["nodes"]:
        ctx.add("nodes_over_partition", ctx.nodes_field, "error", nodes=nodes,
                partition=ctx.partition_name, available=part["nodes"])
        return  # the allocation check below is the same cause, told less precisely
    alloc_nodes = getattr(ctx.allocation, "num_nodes", None)
    if nodes and alloc_nodes and getattr(ctx.allocation, "inside_allocation", False) \
            and nodes > alloc_nodes:
        ctx.add("nodes_over_allocation", ctx.nodes_field, "warning", nodes=nodes,
                available=alloc_nodes)


def _check_ranks(ctx: _Context) -> None:
    a, profile, part = ctx.args, ctx.profile, ctx.part
    nodes, ntasks, per_node = a.nodes, a.ntasks, a.ntasks_per_node
    if ntasks and nodes and per_node:
        slots = nodes * per_node
        if ntasks > slots:
            ctx.add("ranks_over_slots", "min_ranks", "error", ntasks=ntasks, nodes=nodes,
                    per_node=per_node, slots=slots)
        elif ntasks < slots:
            ctx.add("ranks_under_slots", "min_ranks", "warning", ntasks=ntasks, nodes=nodes,
                    per_node=per_node, slots=slots)
    if ntasks and nodes and ntasks < nodes:
        ctx.add("ranks_under_nodes", "min_ranks", "warning", ntasks=ntasks, nodes=nodes)
    if profile.is_mpi and not (ntasks > 1 or (per_node and (nodes or 1) * per_node > 1)):
        ctx.add("mpi_single_task", "min_ranks", "warning", kind=profile.kind)
    if profile.min_ranks and profile.paper_max_ranks and profile.min_ranks > profile.paper_max_ranks:
        ctx.add("ranks_over_paper", "min_ranks", "info", fix=None, min_ranks=profile.min_ranks,
                paper=profile.paper_max_ranks)
    cpus = ctx.cpus
    node_cpus = part.get("cpus") if part else None
    if not cpus or not isinstance(node_cpus, int) or cpus <= 0:
        return
    if cpus > node_cpus:
        ctx.add("cpus_over_node", "max_cpus", "error", cpus=cpus, partition=ctx.partition_name,
                node_cpus=node_cpus)
        return
    if per_node and per_node * cpus > node_cpus:
        ctx.add("tasks_cpus_over_node", "ntasks_per_node", "error", per_node=per_node, cpus=cpus,
                total=per_node * cpus, node_cpus=node_cpus, fit=node_cpus // per_node)
        return  # the whole-job check below would repeat the same refusal
    span = nodes or (part.get("nodes") if isinstance(part.get("nodes"), int) else None)
    if ntasks and span and ntasks * cpus > span * node_cpus:
        ctx.add("ranks_cpus_over_nodes", "min_ranks", "error", ntasks=ntasks, cpus=cpus,
                total=ntasks * cpus, span=span, node_cpus=node_cpus,
                fit=max(1, span * node_cpus // ntasks))


def _check_memory(ctx: _Context) -> None:
    a, part = ctx.args, ctx.part
    if a.memory_gb_per_node and a.memory_gb_per_cpu:
        ctx.add("mem_both", "memory_gb_per_cpu", "error")
    mem_mb = part.get("memory_mb", part.get("memory")) if part else None
    if not isinstance(mem_mb, int) or mem_mb <= 0:
        return
    if a.memory_gb_per_node and a.memory_gb_per_node * 1024 > mem_mb:
        ctx.add("mem_node_over", "memory_gb_per_node", "error", gb=a.memory_gb_per_node,
                partition=ctx.partition_name, mem_mb=mem_mb, max_gb=mem_mb // 1024)
    if a.memory_gb_per_cpu and ctx.cpus and a.memory_gb_per_cpu * 1024 * ctx.cpus > mem_mb:
        ctx.add("mem_cpu_over", "memory_gb_per_cpu", "error", gb=a.memory_gb_per_cpu,
                cpus=ctx.cpus, mem_mb=mem_mb)
    # ARI_SLURM_MEM_GB is not the reproduce job's: the HPC skill writes --mem=<v>G into the
    # header of every BFTS job it submits to the chosen partition (spec §3.1, §3.3).
    bfts_gb = ctx.env.get("ARI_SLURM_MEM_GB", "")
    if bfts_gb.isdigit() and int(bfts_gb) * 1024 > mem_mb:
        ctx.add("bfts_mem_over_node", "mem_gb", "error", gb=int(bfts_gb),
                partition=ctx.partition_name, mem_mb=mem_mb, max_gb=mem_mb // 1024)


def _check_bind(ctx: _Context) -> None:
    for flag, value in zip(BIND_FLAGS, (ctx.args.cpu_bind, ctx.args.mem_bind)):
        if not value:
            continue
        key = flag[2:].replace("-", "_")
        if ctx.bind_flags is None:
            ctx.add("bind_unknown", key, "info", fix=None, flag=flag)
            continue
        supported = ctx.bind_flags if isinstance(ctx.bind_flags, bool) \
            else flag in set(ctx.bind_flags)
        if not supported:
            ctx.add("bind_unsupported", key, "warning", flag=flag, value=value)


def _versions_of(name: str, available: Sequence[str]) -> list[str]:
    """The modules ``module load name`` may mean when ``name`` has no version (Lmod and
    Environment Modules load the site's default of them)."""
    return [] if "/" in name else [m for m in available if m.startswith(name + "/")]


MODULES_NAMED = 8
"""How many of a site's modules a finding names when none is close to the one asked for."""


def _check_modules(ctx: _Context) -> None:
    wanted = [*ctx.profile.module_loads, *(m for m in ctx.modules
                                           if m not in ctx.profile.module_loads)]
    if not wanted:
        return
    available = ctx.facts.modules
    if available is None:
        return
    site = ctx.site or message("validate.this_site")
    if not available:
        ctx.add("modules_no_system", "module_loads", "error", site=site,
                modules=", ".join(wanted))
        return
    for name in wanted:
        if name in available:
            continue
        versions = _versions_of(name, available)
        if versions:
            # `module load openmpi` loads whichever version the site marks default: it works
            # today, and may load another version after the site installs one.
            ctx.add("module_default_version", "module_loads", "warning", module=name,
                    versions=", ".join(versions[:MODULES_NAMED]))
        else:
            close = difflib.get_close_matches(name, available, n=3)
            software = software_modules(available)  # Lmod's own lmod/settarg named last, if at all
            offered = ", ".join(close or software[:MODULES_NAMED] or available[:MODULES_NAMED])
            if not close and len(software or available) > MODULES_NAMED:
                offered += ", …"
            ctx.add("module_unknown", "module_loads", "error", module=name, site=site,
                    offered=offered, count=len(available))


def _check_mpi(ctx: _Context) -> None:
    if not ctx.profile.is_mpi or ctx.facts.srun is None:
        return
    if not ctx.facts.srun and not ctx.facts.mpirun:
        ctx.add("mpi_no_launcher", "kind", "error", kind=ctx.profile.kind)
    elif not ctx.facts.srun:
        ctx.add("mpi_no_srun", "kind", "warning")


def _check_extra_args(ctx: _Context) -> None:
    for token in ctx.args.extra_sbatch_args:
        if not token.startswith("-"):
            ctx.add("extra_bare_word", "extra_sbatch_args", "error", token=token)
            continue
        flag = token.split("=", 1)[0]
        if flag in _MANAGED_FLAGS:
            ctx.add("extra_managed", "extra_sbatch_args", "warning", token=token,
                    flag=_MANAGED_FLAGS[flag])
        if flag in ("--ntasks", "-n", "--gpus", "-G") and "=" in token and ctx.args.gpus_per_task:
            ctx.add("extra_invisible_ntasks", "extra_sbatch_args", "warning", token=token)


# sbatch options that undo what ARI's own reproduce line relies on (spec: sbatch --wait ...
# --export ALL <repo_dir>/.slurm_wrap.sh), beyond the flags ARI sets itself.
_FIGHTING_FLAGS = {
    "--wrap": "wrap", "--uid": "uid", "--gid": "gid", "--array": "array", "-a": "array",
    "--test-only": "test_only", "--hold": "hold", "-H": "hold", "--error": "error",
    "-e": "error", "--get-user-env": "user_env", "--help": "help", "-h": "help",
    "--usage": "usage", "--version": "version", "-V": "version",
}
"""flag -> the reason's message id (``validate.fight.<reason>``)."""
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
            ctx.add("name_option_like", field_name, "error", name=field_name, value=value)
    for token in ctx.args.extra_sbatch_args:
        flag, _, value = str(token).partition("=")
        if flag in _FIGHTING_FLAGS:
            ctx.add("extra_fights_ari", "extra_sbatch_args", "warning", token=str(token),
                    why=message(f"validate.fight.{_FIGHTING_FLAGS[flag]}"))
        elif flag == "--export" and value and "ALL" not in value.split(","):
            ctx.add("extra_export", "extra_sbatch_args", "warning", token=str(token))


def _check_profile_keys(ctx: _Context) -> None:
    for key in ctx.profile.extra_keys:
        close = difflib.get_close_matches(key, PROFILE_KEYS, n=1)
        ctx.add("profile_key_unknown", key, "warning", fix="fix_hint" if close else "fix",
                key=key, hint=close[0] if close else "")
