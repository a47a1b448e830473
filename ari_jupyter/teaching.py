"""Check cells for the teaching notebooks: is the learner's answer right, and if not, why.

Each ``check_*`` function takes what the learner wrote in an exercise cell, asks the same core
the wizard and the CLI use (the sbatch builder, the placement plan, the probes on a recorded
demo site, the doctor), and returns a :class:`CheckResult` that prints as "Correct: ..." or
"Not yet: ..." with a hint. No cluster is needed; nothing here imports ipywidgets.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

GPU_KINDS = frozenset({"gpu_single", "gpu_multi", "mpi_gpu"})
SHARED_VERDICTS = frozenset({"ok", "warn"})
DEMO_REPO_DIR = "/work/u12345/ari/checkpoints/20260101120000_lesson/repro_sandbox"


@dataclass(frozen=True)
class CheckResult:
    """A check cell's answer: ``passed``, what the core said, and a hint when not passed."""

    passed: bool
    message: str
    hint: str = ""

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        if self.passed:
            return f"Correct: {self.message}"
        return f"Not yet: {self.message}" + (f"\nHint: {self.hint}" if self.hint else "")

    __repr__ = __str__


def _profile(value: Any):
    """An ExecutionProfile from a preset name, a JSON dict or a profile (ValueError if none)."""
    from .ari.profile import PRESETS, ExecutionProfile

    if isinstance(value, ExecutionProfile):
        return value
    if isinstance(value, str):
        if value not in PRESETS:
            raise ValueError(f"{value!r} is not a preset; presets: {', '.join(PRESETS)}")
        return PRESETS[value]()
    if isinstance(value, Mapping):
        return ExecutionProfile.from_json(dict(value))
    raise ValueError("give a preset name, a dict of execution_profile keys or an ExecutionProfile")


def probe_site(site: str, *, workspace: str | None = None, only: Iterable[str] | None = None,
               config=None) -> dict:
    """The probe results of a demo site by id, with the workspace and timeouts chosen exactly
    as ``ari-jupyter probe --site SITE`` chooses them (so a lesson and the CLI agree)."""
    from .allocation import Allocation
    from .config import open_host, wizard_config
    from .probes import ProbeContext, run_probes_sync

    config = config or wizard_config()
    host = open_host(site, config)
    ctx = ProbeContext(allocation=Allocation.from_env(host.env),
                       workspace=workspace or config.workspace_for_host(host),
                       timeout=config.probe_timeout, timeouts=dict(config.probe_timeouts),
                       only=list(only) if only else None)
    return {result.id: result for result in run_probes_sync(host, ctx)}


def _site_env(site) -> dict[str, str]:
    from .allocation import Allocation

    allocation = Allocation.from_env(site.env)
    env = {"ARI_SLURM_CPUS": "1"}
    if allocation.partition:
        env["ARI_SLURM_PARTITION"] = allocation.partition
    return env


def check_ranks_on_both_nodes(profile: Any, site: str = "rccs-cloud") -> CheckResult:
    """Lesson 1: do the reproduce job's ranks land on every node of ``site``'s allocation?"""
    from .allocation import Allocation
    from .ari.errors import AriRuntimeError
    from .ari.sbatch import ReproduceArgs, build_sbatch_argv
    from .recorded_site import RecordedSite
    from .ari.profile import fans_out
    from .placement import placement_for

    try:
        chosen = _profile(profile)
    except ValueError as exc:
        return CheckResult(False, str(exc), "start from a preset, e.g. profile = 'cpu_single'")
    recorded = RecordedSite.load(site)
    allocation = Allocation.from_env(recorded.env)
    try:
        argv = build_sbatch_argv(ReproduceArgs(), _site_env(recorded), DEMO_REPO_DIR,
                                 has_gres=False, bind_flags=True, profile=chosen)
    except AriRuntimeError as exc:
        return CheckResult(False, f"ARI refuses this profile: {exc}")
    placement = placement_for(allocation, argv, chosen.kind or "")
    counts = [node.rank_count for node in placement.nodes]
    nodes = allocation.num_nodes or len(counts)
    shape = ", ".join(f"{node.name}: {node.rank_count}" for node in placement.nodes)
    if not fans_out(chosen.kind or ""):
        return CheckResult(False, f"ranks per node {shape}: without a kind there is no "
                           "execution profile, and reproduce.sh runs once, on the first node",
                           "give the profile a kind, e.g. 'cpu_single'")
    if placement.nodes_with_ranks < nodes:
        return CheckResult(False, f"ranks per node {shape}: only {placement.nodes_with_ranks} "
                           f"of {nodes} nodes get work",
                           "ask for the allocation's nodes: requested_nodes and ntasks_per_node")
    over = [node.name for node in placement.nodes if node.cpu_oversubscribed]
    if over:
        return CheckResult(False, f"ranks per node {shape}, but more CPUs than {', '.join(over)} "
                           "has: sbatch refuses the job", "fewer ntasks_per_node")
    return CheckResult(True, f"ranks per node {shape}, from `{' '.join(argv[:-1])} ...`")


def check_gres_fix(profile: Any, *, allow_no_gres: bool = False, site: str = "sx40") -> CheckResult:
    """Lesson 3: a GPU profile ARI accepts on a site whose SLURM has no GRES."""
    from .ari.errors import AriRuntimeError
    from .ari.sbatch import ReproduceArgs, build_sbatch_argv
    from .recorded_site import RecordedSite

    try:
        chosen = _profile(profile)
    except ValueError as exc:
        return CheckResult(False, str(exc), "start from the profile given in the exercise")
    if (chosen.kind or "") not in GPU_KINDS:
        return CheckResult(False, f"kind {chosen.kind!r} asks for no GPU at all; the job still "
                           "needs the node's GPUs", "keep a GPU kind such as 'gpu_single'")
    gres = probe_site(site, only=["gres"])["gres"]
    has_gres = bool((gres.data or {}).get("has_gres"))
    env = _site_env(RecordedSite.load(site))
    if allow_no_gres:
        env["ARI_SLURM_ALLOW_NO_GRES"] = "1"
    try:
        argv = build_sbatch_argv(ReproduceArgs(), env, DEMO_REPO_DIR, has_gres=has_gres,
                                 bind_flags=True, profile=chosen)
    except AriRuntimeError as exc:
        return CheckResult(False, f"ARI still refuses (GRES configured: {'yes' if has_gres else 'no'}): {exc}",
                           "on a site without GRES request no GPU count or type; the job "
                           "gets the node's GPUs anyway")
    gpu_flags = [arg for arg in argv if arg.startswith("--gres") or arg.startswith("--gpus")]
    if gpu_flags and not has_gres:
        return CheckResult(False, f"the line still carries {gpu_flags}, which sbatch refuses here")
    return CheckResult(True, f"ARI builds `{' '.join(argv[:-1])} ...` (no GPU flags, GRES "
                       f"check: {gres.status})")


def check_checkpoint_shared(checkpoint_dir: str, site: str = "rccs-cloud") -> CheckResult:
    """Lesson 2: is ``checkpoint_dir`` on a filesystem every node of ``site`` shares?"""
    if not isinstance(checkpoint_dir, str) or not checkpoint_dir.startswith("/"):
        return CheckResult(False, f"{checkpoint_dir!r} is not an absolute path",
                           "an absolute path, e.g. under /work")
    result = probe_site(site, workspace=checkpoint_dir, only=["shared_fs"])["shared_fs"]
    if result.status in SHARED_VERDICTS:
        note = " (ARI only logs a warning here)" if result.status == "warn" else ""
        return CheckResult(True, f"{result.status}: {result.summary}{note}")
    return CheckResult(False, f"{result.status}: {result.summary}", result.fix)


def check_diagnosis(log: str, answer: str) -> CheckResult:
    """Lesson 4: did the learner name the doctor's first error rule for ``log``?"""
    from .doctor import diagnose_text

    every = diagnose_text(log, kind="log")
    findings = [f for f in every if f.severity == "error"] or every
    if not findings:
        return CheckResult(False, "the doctor finds nothing in this text", "paste the whole log")
    first = findings[0]
    given = (answer or "").strip()
    if not given:
        return CheckResult(False, "no answer yet",
                           "run diagnose_text(log) and copy the rule of the first finding")
    if given.upper() == first.rule.upper():
        return CheckResult(True, f"{first.rule}: {first.cause or first.message} Fix: {first.fix}")
    others = [f.rule for f in every]
    hint = ("that finding is a consequence; the first error is its cause"
            if given.upper() in (r.upper() for r in others)
            else "each finding prints as [severity] rule: cause; the rule is the word before the colon")
    return CheckResult(False, f"{given!r} is not the doctor's first error", hint)
