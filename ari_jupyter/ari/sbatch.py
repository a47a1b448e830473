"""The exact ``sbatch`` argv ARI's reproduce dispatcher builds, computed without running anything.

Mirrors ``ari-skill-paper-re`` ``run_reproduce`` → ``_run_reproduce_slurm`` (spec §3.4): the
merge of caller arguments with the rubric's execution_profile, the preconditions in ARI's order
(sbatch on PATH, a resolvable partition, GRES when GPUs are requested), and the token order of
the command line. Site facts ARI discovers by shelling out (``which sbatch``, ``sinfo -h -o %G``,
``sbatch --help``) are parameters here, so the wizard can answer from its probes and the tests
from ARI's own vectors. Where ARI raises, this raises ``AriRuntimeError`` with ARI's message.
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from . import errors
from .errors import AriRuntimeError, AriValueError
from .partition import resolve_partition
from .profile import ExecutionProfile
from ..i18n import text as catalog_text

DEFAULT_MAX_RUNTIME_SEC = 21600
"""ARI's fallback when neither ``timeout_global_sec`` nor the rubric's ``max_runtime_sec`` is set."""

BIND_FLAGS = ("--cpu-bind", "--mem-bind")
"""The only flags ARI gates on ``sbatch --help`` (plain substring containment)."""

SHARED_FS_PREFIXES = ("/work", "/scratch", "/lustre", "/home", "/nfs", "/data")
"""ARI's ``_is_shared_fs`` prefixes (warning-only check on the repo dir)."""

SANDBOX_KINDS = ("auto", "local", "docker", "apptainer", "singularity", "slurm")


class ArgsError(ValueError):
    """Invalid run_reproduce arguments; ``messages`` lists every problem, each naming its key."""

    def __init__(self, messages: list[str]):
        self.messages = list(messages)
        super().__init__("invalid run_reproduce arguments: " + "; ".join(self.messages))


@dataclass
class ReproduceArgs:
    """The caller arguments of ARI's ``run_reproduce`` that shape the sbatch line (0/""/False = unset)."""

    partition: str = ""
    cpus: int = 0
    walltime: str = ""
    nodes: int = 0
    ntasks: int = 0
    ntasks_per_node: int = 0
    nodelist: str = ""
    exclude_nodes: str = ""
    exclusive: bool = False
    gpus_per_task: int = 0
    gpus_per_node: int = 0
    gpu_type: str = ""
    memory_gb_per_node: int = 0
    memory_gb_per_cpu: int = 0
    constraint: str = ""
    cpu_bind: str = ""
    mem_bind: str = ""
    hint: str = ""
    extra_sbatch_args: list[str] = field(default_factory=list)
    timeout_global_sec: int = 0

    def to_json(self) -> dict[str, Any]:
        """Only the arguments that differ from ARI's defaults."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value not in (0, "", False, [], None):
                out[f.name] = list(value) if isinstance(value, list) else value
        return out

    @classmethod
    def from_json(cls, data: Any) -> "ReproduceArgs":
        """Parse a JSON object of run_reproduce arguments; raise ``ArgsError`` naming each bad key."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ArgsError([f"arguments: must be a JSON object, got {type(data).__name__}"])
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        messages: list[str] = []
        for key, raw in data.items():
            if key not in known:
                messages.append(f"{key}: not a run_reproduce argument (known: {', '.join(known)})")
                continue
            kind = _ARG_KINDS[key]
            value, problem = _check_arg(kind, raw)
            if problem:
                messages.append(f"{key}: {problem}")
            else:
                values[key] = value
        if messages:
            raise ArgsError(messages)
        return cls(**values)


_ARG_KINDS = {f: "int" for f in ("cpus", "nodes", "ntasks", "ntasks_per_node", "gpus_per_task",
                                  "gpus_per_node", "memory_gb_per_node", "memory_gb_per_cpu",
                                  "timeout_global_sec")}
_ARG_KINDS.update({f: "str" for f in ("partition", "walltime", "nodelist", "exclude_nodes",
                                      "gpu_type", "constraint", "cpu_bind", "mem_bind", "hint")})
_ARG_KINDS.update(exclusive="bool", extra_sbatch_args="list")


def _check_arg(kind: str, raw: Any) -> tuple[Any, str]:
    if kind == "int":
        if isinstance(raw, bool) or not isinstance(raw, int):
            return None, f"must be an integer, got {raw!r}"
        return raw, ""
    if kind == "bool":
        if not isinstance(raw, bool):
            return None, f"must be true or false, got {raw!r}"
        return raw, ""
    if kind == "list":
        if raw is None:
            return [], ""
        if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
            return None, f"must be an array of strings, got {raw!r}"
        if any(_has_control(v) for v in raw):
            return None, "items must not contain control characters"
        return list(raw), ""
    if not isinstance(raw, str):
        return None, f"must be a string, got {raw!r}"
    if _has_control(raw):
        return None, f"must not contain control characters, got {raw!r}"
    return raw, ""


def _has_control(text: str) -> bool:
    return any(ord(ch) < 32 or ord(ch) == 127 for ch in text)


# -- the merge (spec §3.4.2) -----------------------------------------------------------------

def merge_with_profile(args: ReproduceArgs,
                       profile: ExecutionProfile | Mapping[str, Any] | None) -> ReproduceArgs:
    """Caller value when non-zero/non-empty, else the profile's, as ``run_reproduce`` resolves.

    ``exclusive`` is OR-ed; ``extra_sbatch_args`` is the caller's list or the profile's (never
    merged); ``partition``, ``cpus``, ``walltime`` and ``timeout_global_sec`` never come from
    the profile.
    """
    if isinstance(profile, ExecutionProfile):
        prof: Mapping[str, Any] = profile.to_json()
    else:
        prof = dict(profile or {})

    def num(caller: int, key: str) -> int:
        raw = prof.get(key, 0)
        try:
            return int(caller) or int(raw or 0)
        except (TypeError, ValueError) as exc:
            raise AriValueError(f"execution_profile {key}={raw!r}: ARI's int() fails on it "
                                f"({exc}); run_reproduce raises before anything is submitted") from None

    def text(caller: str, key: str) -> str:
        return caller or (prof.get(key) or "")

    return ReproduceArgs(
        partition=args.partition,
        cpus=args.cpus,
        walltime=args.walltime,
        nodes=num(args.nodes, "requested_nodes"),
        ntasks=num(args.ntasks, "min_ranks"),
        ntasks_per_node=num(args.ntasks_per_node, "ntasks_per_node"),
        nodelist=text(args.nodelist, "requested_nodelist"),
        exclude_nodes=text(args.exclude_nodes, "exclude_nodes"),
        exclusive=bool(args.exclusive) or bool(prof.get("exclusive", False)),
        gpus_per_task=num(args.gpus_per_task, "requested_gpus_per_task"),
        gpus_per_node=num(args.gpus_per_node, "requested_gpus_per_node"),
        gpu_type=text(args.gpu_type, "gpu_type"),
        memory_gb_per_node=num(args.memory_gb_per_node, "memory_gb_per_node"),
        memory_gb_per_cpu=num(args.memory_gb_per_cpu, "memory_gb_per_cpu"),
        constraint=text(args.constraint, "constraint"),
        cpu_bind=text(args.cpu_bind, "cpu_bind"),
        mem_bind=text(args.mem_bind, "mem_bind"),
        hint=text(args.hint, "hint"),
        extra_sbatch_args=list(args.extra_sbatch_args or prof.get("extra_sbatch_args") or []),
        timeout_global_sec=args.timeout_global_sec,
    )


def max_runtime_sec(args: ReproduceArgs, rubric_max_runtime_sec: Any = None) -> int:
    """``int(timeout_global_sec or rubric max_runtime_sec or 21600)`` — the job's ``--time``
    source. The rubric's value is taken as ARI takes it: ``3600.0`` and ``"7200"`` are whole
    seconds to ``int()``; a value ``int()`` refuses (``"1h"``, ``"3600.0"``) fails as ARI fails."""
    raw = args.timeout_global_sec or rubric_max_runtime_sec or DEFAULT_MAX_RUNTIME_SEC
    try:
        return int(raw)
    except (TypeError, ValueError) as exc:
        raise AriValueError(f"max_runtime_sec={raw!r}: ARI's int() fails on it ({exc}); give whole "
                            "seconds, e.g. 3600") from None


def walltime_str(timeout_sec: int) -> str:
    """ARI's ``_walltime_str``: HH:MM:SS with a 60 s floor and no upper cap."""
    secs = max(60, int(timeout_sec))
    hours, rem = divmod(secs, 3600)
    minutes, seconds = divmod(rem, 60)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}"


# -- site facts ARI shells out for ---------------------------------------------------------

def has_gres_from_sinfo(output: str | None) -> bool:
    """ARI's ``_slurm_has_gres`` given ``sinfo -h -o %G`` stdout (``None``: sinfo missing or failed)."""
    if not output:
        return False
    return any(line.strip() and line.strip() != "(null)" for line in output.strip().splitlines())


def bind_flags_from_help(help_text: str | None) -> frozenset[str]:
    """Which of ``--cpu-bind``/``--mem-bind`` ARI would keep, from ``sbatch --help`` stdout+stderr."""
    text = help_text or ""
    return frozenset(flag for flag in BIND_FLAGS if flag in text)


def ari_thinks_shared(path: str | Path, home: str | Path | None,
                      realpath: Callable[[str], str] | None = None) -> bool:
    """ARI's ``_is_shared_fs``: resolved path under ``$HOME`` or one of six fixed prefixes.

    ``realpath`` resolves on the machine being judged (a demo site's recorded symlinks); a
    ``home`` of None (a host without $HOME) leaves only the prefixes."""
    resolve = realpath or os.path.realpath
    try:
        resolved = resolve(str(path))
        home_resolved = resolve(str(home)) if home else None
    except OSError:
        return False
    if home_resolved and Path(resolved).is_relative_to(home_resolved):
        return True
    return any(resolved == p or resolved.startswith(p + "/") for p in SHARED_FS_PREFIXES)


def select_sandbox(sandbox_kind: str, env: Mapping[str, str], *,
                   has_bin: Callable[[str], bool], docker_works: bool) -> str:
    """The sandbox ``run_reproduce`` picks (``_phase1_sandbox_kind`` + the caller override)."""

    def phase1_kind() -> str:
        value = env.get("ARI_PHASE1_SANDBOX") or "auto"
        if value != "auto":
            return value
        if has_bin("sbatch") and env.get("ARI_SLURM_PARTITION"):
            return "slurm"
        on_hpc = any(env.get(k) for k in ("SLURM_CLUSTER_NAME", "SLURM_JOB_ID"))
        if docker_works and not on_hpc:
            return "docker"
        for runner in ("apptainer", "singularity"):
            if has_bin(runner):
                return runner
        return "local"

    requested = (sandbox_kind or phase1_kind()).lower()
    if requested == "auto":
        requested = phase1_kind()
    return requested


def unknown_sandbox_error(kind: str) -> str:
    """ARI's result ``error`` for a kind it cannot dispatch ("" when the kind is known)."""
    if kind in ("local", "", "docker", "apptainer", "singularity", "slurm"):
        return ""
    return f"unknown sandbox_kind: {kind}"


# -- the dispatch plan (spec §3.4.2b, §3.4.3) ---------------------------------------------

SBATCH_SWITCHES = frozenset({
    "--wait", "-W", "--exclusive", "--test-only", "--parsable", "--requeue", "--no-requeue",
    "--overcommit", "-O", "--contiguous", "--spread-job", "--use-min-nodes", "--hold", "-H",
    "--quiet", "-Q", "--verbose", "-v", "--ignore-pbs", "--no-kill", "-k"})
"""sbatch options that take no value: never paired with the word after them."""


def argument_groups(argv: Iterable[str]) -> list[str]:
    """The quoted words of ``argv`` with each option and its value in one piece ("--time
    01:00:00"); an option written ``--flag=value``, a switch, the command and the script
    (the last word) stand alone."""
    words = [str(word) for word in argv]
    groups: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        paired = (word.startswith("-") and "=" not in word and word not in SBATCH_SWITCHES
                  and i + 2 < len(words) and not words[i + 1].startswith("-"))
        if paired:
            groups.append(f"{shlex.quote(word)} {shlex.quote(words[i + 1])}")
            i += 2
        else:
            groups.append(shlex.quote(word))
            i += 1
    return groups


@dataclass(frozen=True)
class SlurmPlan:
    """What ``_run_reproduce_slurm`` would do. ``argv`` is empty when ARI falls back to local."""

    argv: tuple[str, ...]
    partition: str
    partition_source: str
    cpus: int
    walltime: str
    local_fallback: str = ""
    """Why ARI would run reproduce.sh on the host instead (only with ARI_PHASE1_ALLOW_FALLBACK=1)."""
    warnings: tuple[str, ...] = ()
    gpu: dict[str, Any] = field(default_factory=dict)
    """Effective GPU request after GRES gating: per_task, per_node, type."""
    args: ReproduceArgs = field(default_factory=ReproduceArgs)
    """The merged arguments the argv was built from."""

    @property
    def wrapper_path(self) -> str:
        return self.argv[-1] if self.argv else ""

    def shell_line(self) -> str:
        """The argv as one copy-pasteable, quoted shell line."""
        return shlex.join(self.argv)

    def shell_groups(self) -> list[str]:
        """``shell_line`` in the pieces a narrow preview may break between: each ``--flag
        value`` whole, each path whole (joined with single spaces they are ``shell_line``)."""
        return argument_groups(self.argv)

    def result_fields(self) -> dict[str, Any]:
        """The SLURM keys ARI adds to its result when the job ran (executed/exit_code aside)."""
        if not self.argv:
            return {}
        out: dict[str, Any] = {"partition": self.partition, "cpus": self.cpus,
                               "walltime": self.walltime}
        if self.args.nodes:
            out["nodes"] = int(self.args.nodes)
        if self.args.ntasks:
            out["ntasks"] = int(self.args.ntasks)
        if self.args.exclusive:
            out["exclusive"] = True
        if self.gpu["per_task"] or self.gpu["per_node"] or self.gpu["type"]:
            out["gpu"] = dict(self.gpu)
        return out

    def to_json(self) -> dict[str, Any]:
        return {"argv": list(self.argv), "partition": self.partition,
                "partition_source": self.partition_source, "cpus": self.cpus,
                "walltime": self.walltime, "local_fallback": self.local_fallback,
                "warnings": list(self.warnings), "gpu": dict(self.gpu)}


def wrapper_script(repo_dir: str | Path) -> str:
    """The ``.slurm_wrap.sh`` ARI writes beside reproduce.sh and submits instead of it."""
    script = Path(repo_dir) / "reproduce.sh"
    return "#!/usr/bin/env bash\n" f"exec bash {shlex.quote(str(script))}\n"


def _supports(bind_flags: bool | Iterable[str], flag: str) -> bool:
    if isinstance(bind_flags, bool):
        return bind_flags
    return flag in frozenset(bind_flags)


def plan_slurm_dispatch(args: ReproduceArgs, env: Mapping[str, str], repo_dir: str | Path, *,
                        has_gres: bool, bind_flags: bool | Iterable[str],
                        has_sbatch: bool = True,
                        profile: ExecutionProfile | Mapping[str, Any] | None = None,
                        rubric_max_runtime_sec: Any = None,
                        home: str | Path | None = None) -> SlurmPlan:
    """Everything ARI's slurm dispatch decides, in ARI's order; raises where ARI raises.

    ``bind_flags`` is True/False for both ``--cpu-bind`` and ``--mem-bind`` or the set of
    those ``sbatch --help`` advertises. ``home`` enables ARI's shared-FS warning. The
    reproduce.sh-exists precondition is not checked: the script does not exist until ARI's
    replicator writes it.
    """
    # ARI's order: the runtime and the profile's numbers are int()-ed before any dispatch check
    timeout = max_runtime_sec(args, rubric_max_runtime_sec)
    merged = merge_with_profile(args, profile)
    fallback = env.get("ARI_PHASE1_ALLOW_FALLBACK", "") == "1"
    choice = resolve_partition(merged.partition, env, repo_dir)

    def run_locally(reason: str) -> SlurmPlan:
        return SlurmPlan((), "", choice.source, 0, "", args=merged,
                         local_fallback=catalog_text("sbatch.local_fallback", reason=catalog_text(reason)),
                         gpu=_gpu_dict("", 0, 0))

    # 1. sbatch on PATH
    if not has_sbatch:
        if fallback:
            return run_locally("sbatch.reason.no_sbatch")
        raise AriRuntimeError(errors.SBATCH_MISSING)
    # 2. a partition
    if not choice.partition:
        if fallback:
            return run_locally("sbatch.reason.no_partition")
        raise AriRuntimeError(errors.NO_PARTITION)

    warnings: list[str] = []
    repo = Path(repo_dir)
    # 4. shared filesystem (warning only)
    if home is not None and not ari_thinks_shared(repo, home):
        warnings.append(catalog_text("sbatch.warning.node_local", repo=str(repo)))

    # 5. GRES gating
    gpu_type = merged.gpu_type
    per_task = int(merged.gpus_per_task or 0)
    per_node = int(merged.gpus_per_node or 0)
    if (gpu_type or per_task or per_node) and not has_gres:
        if env.get("ARI_SLURM_ALLOW_NO_GRES", "") == "1":
            warnings.append(catalog_text("sbatch.warning.gres_dropped", gpu_type=repr(gpu_type),
                                 per_task=per_task, per_node=per_node))
            gpu_type, per_task, per_node = "", 0, 0
        else:
            raise AriRuntimeError(errors.gpu_without_gres(gpu_type, per_task, per_node))

    cpus = effective_cpus(merged.cpus, env)
    walltime = (merged.walltime or env.get("ARI_SLURM_WALLTIME", "")
                or walltime_str(timeout))

    cmd: list[str] = [
        "sbatch", "--wait",
        "--partition", choice.partition,
        "--cpus-per-task", str(cpus),
        "--time", walltime,
        "--job-name", "ari-ors",
        "--chdir", str(repo),
        "--output", str(repo / "reproduce.log"),
        "--export", "ALL",
    ]
    if merged.nodes and int(merged.nodes) > 0:
        cmd += ["--nodes", str(int(merged.nodes))]
    if merged.ntasks and int(merged.ntasks) > 0:
        cmd += ["--ntasks", str(int(merged.ntasks))]
    if merged.ntasks_per_node and int(merged.ntasks_per_node) > 0:
        cmd += ["--ntasks-per-node", str(int(merged.ntasks_per_node))]
    if merged.nodelist:
        cmd += ["--nodelist", merged.nodelist]
    if merged.exclude_nodes:
        cmd += ["--exclude", merged.exclude_nodes]
    if merged.exclusive:
        cmd.append("--exclusive")
    # SLURM refuses --gpus-per-task without --ntasks/--gpus; ARI pairs it before the GPU branch.
    if per_task > 0 and not any(tok in ("--ntasks", "--gpus") for tok in cmd):
        cmd += ["--ntasks", "1"]
    if gpu_type:
        cmd.append(f"--gres=gpu:{gpu_type}:{per_task or per_node or 1}")
    else:
        if per_task > 0:
            cmd += ["--gpus-per-task", str(per_task)]
        if per_node > 0:
            cmd += ["--gpus-per-node", str(per_node)]
    if merged.memory_gb_per_node and int(merged.memory_gb_per_node) > 0:
        cmd.append(f"--mem={int(merged.memory_gb_per_node)}G")
    if merged.memory_gb_per_cpu and int(merged.memory_gb_per_cpu) > 0:
        cmd.append(f"--mem-per-cpu={int(merged.memory_gb_per_cpu)}G")
    if merged.constraint:
        cmd.append(f"--constraint={merged.constraint}")
    for flag, value in (("--cpu-bind", merged.cpu_bind), ("--mem-bind", merged.mem_bind)):
        if not value:
            continue
        if _supports(bind_flags, flag):
            cmd.append(f"{flag}={value}")
        else:
            warnings.append(catalog_text("sbatch.warning.bind_dropped", key=flag[2:].replace("-", "_"),
                                 value=repr(value), raw=value, flag=flag))
    if merged.hint:
        cmd.append(f"--hint={merged.hint}")
    cmd += [str(a) for a in merged.extra_sbatch_args]
    cmd.append(str(repo / ".slurm_wrap.sh"))
    return SlurmPlan(tuple(cmd), choice.partition, choice.source, cpus, walltime,
                     warnings=tuple(warnings), gpu=_gpu_dict(gpu_type, per_task, per_node),
                     args=merged)


def _gpu_dict(gpu_type: str, per_task: int, per_node: int) -> dict[str, Any]:
    return {"per_task": per_task, "per_node": per_node, "type": gpu_type}


def effective_cpus(caller: int, env: Mapping[str, str]) -> int:
    """Caller ``cpus`` when > 0, else ``int($ARI_SLURM_CPUS)`` (8 only when unset)."""
    if caller and int(caller) > 0:
        return int(caller)
    raw = env.get("ARI_SLURM_CPUS", "8")
    try:
        return int(raw)
    except ValueError as exc:
        raise AriValueError(f"ARI_SLURM_CPUS={raw!r} is not an integer; ARI's int() fails: {exc}") \
            from None


def build_sbatch_argv(args: ReproduceArgs, env: Mapping[str, str], repo_dir: str | Path, *,
                      has_gres: bool, bind_flags: bool | Iterable[str], has_sbatch: bool = True,
                      profile: ExecutionProfile | Mapping[str, Any] | None = None,
                      rubric_max_runtime_sec: int | None = None) -> list[str]:
    """The argv ARI passes to ``subprocess.run``; ``[]`` when ARI would run reproduce.sh locally."""
    plan = plan_slurm_dispatch(args, env, repo_dir, has_gres=has_gres, bind_flags=bind_flags,
                               has_sbatch=has_sbatch, profile=profile,
                               rubric_max_runtime_sec=rubric_max_runtime_sec)
    return list(plan.argv)


def slurm_result(plan: SlurmPlan, *, returncode: int | None, stdout: str = "", stderr: str = "",
                 log_exists: bool, timed_out: bool = False, elapsed_sec: float = 0.0) -> dict:
    """The result dict ``_run_reproduce_slurm`` returns after its ``sbatch --wait`` finished."""
    if timed_out:
        return {"executed": True, "exit_code": None, "timed_out": True,
                "elapsed_sec": elapsed_sec, "partition": plan.partition}
    if returncode != 0 and not log_exists:
        return {"executed": False, "exit_code": int(returncode or 0),
                "error": (stderr or stdout or "sbatch failed").strip()[:1000],
                "elapsed_sec": elapsed_sec, "partition": plan.partition}
    return {"executed": True, "exit_code": int(returncode or 0), "elapsed_sec": elapsed_sec,
            **plan.result_fields()}
