"""One verdict for the user's choices: every finding once, with one severity.

``judge(choices)`` combines the field checks, the experiment.md lints, the
execution-profile validator and the placement of the reproduce job's ranks. A cause that two
of them see (12 CPUs on a 4-CPU node: the placement's "ranks would share cores" and the
validator's "sbatch refuses the job") is reported once, by the more precise one, so every
step of the wizard shows the same severity for it. ``error`` blocks Write.

Each step shows the part of the list that concerns it (``for_step``); the steps filter, they
never judge again.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..base.verdict import STATUS_OF_SEVERITY, Finding, rank, worst
from .run_settings import problems as run_settings_problems, stage_problems
from .time_fit import idle_cull_finding, time_fit_finding
from . import fields, render
from .arguments import caller_args, env_values
from .choices import Choices
from .lint_experiment import lint_experiment
from .validate import validate_choices
from ..base.verdict import ProbeResult
from .errors import AriError
from .sbatch import plan_slurm_dispatch
from .profile import fans_out
from .placement import plan_placement, request_from_sbatch_argv, shapes_from_allocation

STEPS = ("allocation", "checks", "profile", "experiment", "run_settings")

JOB_SHAPE_FIELDS = frozenset({
    "placement", "nodes", "requested_nodes", "max_cpus", "ntasks_per_node", "min_ranks",
    "walltime", "requested_gpus_per_task", "requested_gpus_per_node", "gpu_type",
    "memory_gb_per_node", "memory_gb_per_cpu", "mem_gb", "allow_no_gres",
})
"""What step 1's placement picture is about: the job's nodes, ranks, CPUs, GPUs and time."""

EXPERIMENT_FIELDS = frozenset({"title", "goal", "metrics", "min_expected_metric",
                               "provided_files", "workspace", "run_id", "experiment.md"})
"""Step 4's own fields (step 4 also lists every error: those are what block Write)."""

# Placement findings that repeat a validator cause: dropped when the validator tells it.
_SAME_CAUSE = {
    "placement_cpu_oversubscribed": {"cpus_over_node", "tasks_cpus_over_node",
                                     "ranks_cpus_over_nodes"},
    "placement_nodes_exceed_allocation": {"nodes_over_partition", "nodes_over_allocation"},
    "placement_gpus_not_visible": {"no_gres", "partition_no_gres", "gpus_over_node",
                                   "no_gres_allowed_seen", "no_gres_allowed_unseen",
                                   "gpu_type_unknown"},
    "placement_gpu_oversubscribed": {"gpus_over_node", "no_gres", "partition_no_gres"},
}

# Validator findings that only follow from a value the field checks refuse already: ARI
# ignores a partition it cannot read (so none resolves) and reads a CPU count below 1 as empty
# (so it would use 8). The field's own error names the cause and its fix; the consequence,
# about a value the user never gave, is left out.
_FOLLOWS_FROM_FIELD = {
    "no_partition": {"partition_bad_chars"},
    "cpus_over_node": {"max_cpus_low"},
    "tasks_cpus_over_node": {"max_cpus_low"},
    "ranks_cpus_over_nodes": {"max_cpus_low"},
}

# Field findings whose cause the validator tells better: a walltime that is no SLURM time
# ('90 min', '９０分') is also one .env cannot carry or one with non-ASCII characters, and two
# errors with two different examples for one box read as two problems. The validator's
# message names the forms sbatch reads and what to type; the field's follows from it.
_TOLD_BY_VALIDATOR = {
    "walltime_unwritable": {"walltime_not_slurm"},
    "walltime_non_ascii": {"walltime_not_slurm"},
}


def judge(choices: Choices, *, env: Mapping[str, str] | None = None, fan_out: bool | None = None,
          has_sbatch: bool | None = None, workflow_found: bool | None = None) -> list[Finding]:
    """Every finding about ``choices``, each cause once, errors first.

    ``env`` is the environment of the machine looked at (the sbatch line ARI would build reads
    it); ``fan_out`` says whether reproduce.sh starts its ranks through srun (default: what the
    profile's kind implies); ``workflow_found`` whether ARI's workflow.yaml can be written on
    the machine that writes the checkpoint (None: not asked).
    """
    findings = field_findings(choices)
    if workflow_found is not None:
        findings += stage_problems(choices.run_settings, workflow_found)
    if choices.partition and not any(f.severity == "error" for f in findings):
        findings += lint_findings(choices)
    refused = {f.rule for f in findings}
    validated = [f for f in validate_choices(choices)
                 if not refused & _FOLLOWS_FROM_FIELD.get(f.rule, set())]
    told = {f.rule for f in validated}
    findings = [f for f in findings if not told & _TOLD_BY_VALIDATOR.get(f.rule, set())]
    findings += validated
    findings += _placement_findings(choices, env, fan_out, has_sbatch, findings)
    short = time_fit_finding(choices.run_settings.scope(), choices.probe("time_left"))
    findings += [short] if short else []
    culled = idle_cull_finding(env, choices.probe("time_left"))
    findings += [culled] if culled else []
    unique = list({(f.field, f.rule, f.severity, f.message): f for f in findings}.values())
    return sorted(unique, key=lambda f: rank(f.severity))


def field_findings(choices: Choices) -> list[Finding]:
    """Each field's own rules (``fields``), then the run settings' rules."""
    shared = choices.probe("shared_fs")
    has_gres = choices.probe_data("gres", "has_gres")
    out = [*fields.partition_problems(choices.partition),
           *fields.resource_problems(max_cpus=choices.max_cpus, walltime=choices.walltime,
                                     nodes=choices.nodes, mem_gb=choices.mem_gb,
                                     allow_no_gres=choices.allow_no_gres,
                                     requests_gpus=choices.allow_no_gres and choices.profile.requests_gpus,
                                     has_gres=has_gres),
           *fields.module_problems(choices.module_loads),
           *fields.followup_problems(choices.followups, choices.partition, choices.walltime,
                                     choices.nodes),
           *fields.text_problems(choices.title, choices.goal),
           *fields.metric_problems(choices.metrics, choices.min_expected_metric),
           *fields.file_problems(choices.provided_files),
           *fields.workspace_problems(choices.workspace, shared if shared is not None
                                      and probe_is_for(shared, choices.workspace) else None),
           *fields.run_id_problems(choices.run_id, choices.title)]
    out += run_settings_problems(choices.run_settings, partition=choices.partition,
                                 has_gres=has_gres, ui_lang=choices.lang)
    return out + fields.lang_problems(choices.lang)


def lint_findings(choices: Choices) -> list[Finding]:
    """Lints E1-E8 on the experiment.md that would be written (a renderer self-check); E10 is the Goal field's own rule here."""
    try:
        text = render.render_experiment_md(choices)
        env = render.written_env_values(choices)
    except render.RenderError as exc:
        return [Finding.of("render_failed", "error", "field.render_failed", field="experiment.md",
                           detail=str(exc))]
    findings = lint_experiment(text, partition=choices.partition, cpus=choices.max_cpus, env=env,
                               ari_profile=render.HANDOFF_ARI_PROFILE, check_files=False)
    # E10 (the goal as ARI's dashboard reads it) is the Goal field's own rule here: said there
    return [replace(f, field="experiment.md") for f in findings if f.rule != "E10"]


def probe_is_for(result: ProbeResult, workspace: str) -> bool:
    """A shared_fs verdict applies when it judged this workspace (or a path inside it)."""
    data = result.data or {}
    judged = data.get("path") or data.get("checkpoint_dir") or data.get("workspace") or ""
    if not judged:
        return False
    workspace = workspace.rstrip("/") or "/"
    return judged == workspace or judged.startswith(workspace + "/")


REQUIRED_FIELDS = {"profile": ("partition",), "experiment": ("title", "goal", "metrics")}
"""The fields a form marks as required, by the step that shows them."""

_EMPTY_REQUIRED = {"title_empty": "title", "goal_empty": "goal", "metrics_empty": "metrics",
                   "no_partition": "partition"}
"""The findings that only say a required field is still empty (rule -> field)."""


def awaiting_input(findings: Iterable[Finding], touched: Iterable[str] = (),
                   attempted: bool = False) -> list[Finding]:
    """The findings a form holds back for now: a required field still empty that the user has
    not touched, before Write was pressed. They still block Write (their severity is
    unchanged); a form says so in one neutral line, and shows each as the field's error once
    the field was touched or Write was pressed (``attempted``)."""
    if attempted:
        return []
    touched = set(touched)
    return [f for f in findings
            if _EMPTY_REQUIRED.get(f.rule) == f.field and f.field not in touched]


def blocking(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


def for_step(findings: Iterable[Finding], step: str) -> list[Finding]:
    """The part of the verdict a step shows (never a new judgement)."""
    if step not in STEPS:
        raise ValueError(f"unknown step {step!r}; steps are {STEPS}")
    findings = list(findings)
    if step == "allocation":
        return [f for f in findings if f.field in JOB_SHAPE_FIELDS]
    if step == "experiment":
        return [f for f in findings if f.field in EXPERIMENT_FIELDS or f.severity == "error"]
    if step == "run_settings":  # step 4's "Run settings" part
        return [f for f in findings if f.field.startswith("run_settings.")]
    if step == "profile":
        return [f for f in findings if f.field not in EXPERIMENT_FIELDS
                and not f.field.startswith("run_settings.")]
    return [f for f in findings if f.field in ("sbatch", "partition", "module_loads", "kind")]


def slurm_plan(choices: Choices, env: Mapping[str, str] | None = None, *,
               has_sbatch: bool | None = None, home: str | None = None):
    """(SlurmPlan, "") as ARI's reproduce dispatcher would decide it for ``choices``, or
    (None, why not). The wizard's sbatch preview, its placement picture and the judge all
    read this one plan."""
    args = caller_args(choices)
    values = dict(env_values(choices).values)
    checkpoint = choices.checkpoint_dir or (
        f"{(choices.workspace or '~').rstrip('/')}/checkpoints/{choices.run_id or '<run_id>'}")
    probes = choices.probe_results or {}
    sbatch = probes.get("sbatch")
    if has_sbatch is None:
        has_sbatch = (sbatch.data or {}).get("path") is not None if sbatch is not None else True
    gres = probes.get("gres")
    flags = (sbatch.data or {}).get("bind_flags") if sbatch is not None else None
    try:
        plan = plan_slurm_dispatch(
            args, {**dict(env or {}), **values}, f"{checkpoint}/repro_sandbox",
            has_gres=bool((gres.data or {}).get("has_gres")) if gres is not None else False,
            bind_flags=True if flags is None else flags, has_sbatch=has_sbatch,
            profile=choices.profile, home=home)
    except (AriError, ValueError) as exc:
        return None, str(exc)
    return plan, ""


def partition_cpus(choices: Choices) -> int | None:
    """CPUs per node of the chosen partition (sinfo): the size of a node the job can get."""
    result = (choices.probe_results or {}).get("partitions")
    for entry in ((result.data or {}).get("partitions") or []) if result is not None else []:
        if entry.get("name") == choices.partition and isinstance(entry.get("cpus"), int):
            return entry["cpus"]
    return None


def placement(choices: Choices, env: Mapping[str, str] | None = None, fan_out: bool | None = None,
              has_sbatch: bool | None = None):
    """Where the reproduce job's ranks land (``placement.Placement``), or None outside an
    allocation or while no sbatch line can be built."""
    allocation = choices.allocation
    if allocation is None or not allocation.inside_allocation:
        return None
    plan, _ = slurm_plan(choices, env, has_sbatch=has_sbatch)
    if plan is None or not plan.argv:
        return None
    if fan_out is None:
        fan_out = fans_out(choices.profile.kind or "")
    return plan_placement(shapes_from_allocation(allocation, partition_cpus(choices)),
                          request_from_sbatch_argv(plan.argv), fan_out=fan_out,
                          available_nodes=allocation.num_nodes or None)


KIND_RULES = frozenset({"gpu_kind_no_gpu_site"})
"""Validator findings that say the profile's kind is wrong for the site (``mpi`` where there
is no GPU: ARI tells the replicator to write CUDA code)."""

PLACEMENT_VERDICTS = ("outside", "no_plan", "refused", "wrong_kind", "one_node", "nodes_idle",
                      "shares_cores", "ok")
"""What ``placement_verdict`` says, first match wins: outside an allocation (no picture);
ARI builds no sbatch line; sbatch refuses the job (an error about the job's shape: tasks x
CPUs beyond a node of the partition, as sinfo tells it); the kind does not fit the site;
reproduce.sh runs once on the first node (no kind, no srun fan-out); some of the job's nodes
get no rank; ranks would share cores (a node's CPUs known only from the allocation's share,
no sinfo: a warning, sbatch does not refuse); every node of the job gets ranks."""


@dataclass(frozen=True)
class PlacementVerdict:
    """Where the reproduce job's ranks land and what that means, as step 1 shows it and the
    lessons check it: one core function for both (``placement_verdict``)."""

    verdict: str
    placement: Any  # placement.Placement, or None (outside an allocation, or no sbatch line)
    findings: tuple  # step 1's findings (``for_step(..., "allocation")``)
    kind_findings: tuple = ()  # the kind that does not fit the site (``KIND_RULES``)
    error: str = ""  # ARI's refusal when it builds no sbatch line

    @property
    def ranks_per_node(self) -> tuple[tuple[str, int], ...]:
        nodes = self.placement.nodes if self.placement is not None else ()
        return tuple((node.name, node.rank_count) for node in nodes)

    @property
    def cause(self):
        """The finding that decided the verdict (None for ok, one_node, nodes_idle...)."""
        if self.verdict == "refused":
            return next(f for f in self.findings if f.severity == "error")
        if self.verdict == "wrong_kind":
            return self.kind_findings[0]
        if self.verdict == "shares_cores":
            return next(f for f in self.findings if f.rule == "placement_cpu_oversubscribed")
        return None


def placement_verdict(choices: Choices, env: Mapping[str, str] | None = None,
                      fan_out: bool | None = None, has_sbatch: bool | None = None,
                      findings: Sequence[Finding] | None = None) -> PlacementVerdict:
    """The reproduce job's placement (``placement``: the job's own nodes, as many as it asks
    for, each the size of a node of the chosen partition from sinfo; the allocation's share
    only when sinfo does not tell it) and the verdict on it (``PLACEMENT_VERDICTS``), from the
    one judge. ``findings``: the judge's verdict when the caller has it already."""
    told = list(judge(choices, env=env, fan_out=fan_out, has_sbatch=has_sbatch)
                if findings is None else findings)
    step = tuple(for_step(told, "allocation"))
    kind = tuple(f for f in told if f.rule in KIND_RULES)
    model = placement(choices, env, fan_out, has_sbatch)
    if model is None:
        allocation = choices.allocation
        if allocation is None or not allocation.inside_allocation:
            return PlacementVerdict("outside", None, (), kind)  # step 1 draws nothing
        _, error = slurm_plan(choices, env, has_sbatch=has_sbatch)
        return PlacementVerdict("no_plan", None, step, kind, error)
    if any(f.severity == "error" for f in step):
        verdict = "refused"
    elif kind:
        verdict = "wrong_kind"
    elif not model.fan_out and (model.total_nodes > 1 or model.total_ranks > 1):
        verdict = "one_node"
    elif model.nodes_with_ranks < model.total_nodes:
        verdict = "nodes_idle"
    elif any(f.rule == "placement_cpu_oversubscribed" for f in step):
        verdict = "shares_cores"
    else:
        verdict = "ok"
    return PlacementVerdict(verdict, model, step, kind)


def _placement_findings(choices: Choices, env, fan_out, has_sbatch,
                        told: Sequence[Finding]) -> list[Finding]:
    model = placement(choices, env, fan_out, has_sbatch)
    if model is None:
        return []
    rules = {f.rule for f in told}
    out: list[Finding] = []
    seen: set[str] = set()
    for item in model.findings:
        rule = f"placement_{item.code}"
        if rule in seen or rules & _SAME_CAUSE.get(rule, set()):
            continue  # once per cause, and not again when the validator tells it
        seen.add(rule)
        out.append(Finding.of(rule, item.severity, rule,
                              field="placement", **item.params))
    return out


GRES_CAUSE_RULES = frozenset({"no_gres", "partition_no_gres", "no_gres_allowed_seen",
                              "no_gres_allowed_unseen"})
"""The validator's findings whose cause is the site's missing GRES (the gres check's cause)."""


def probe_verdicts(choices: Choices, findings: Callable[[], Iterable[Finding]] | None = None) -> dict:
    """The probe results as step 2 shows them for these choices: the probe's own verdict, except
    that the gres check takes the validator's severity for the missing-GRES cause once the
    profile asks for GPUs (the probe runs before the profile is chosen: without a GPU request,
    which is the CLI's case, a site without GRES is fine). One cause, one severity, in step 2
    and in Write's checks. ``findings`` gives the judge's verdict when needed (default:
    ``judge(choices)``)."""
    results = dict(choices.probe_results or {})
    gres = results.get("gres")
    data = (gres.data or {}) if gres is not None else {}
    if gres is None or (data.get("has_gres") and data.get("partition_has_gres") is not False):
        return results  # GRES is there: nothing for the profile to change
    findings = judge(choices) if findings is None else list(findings())
    told = [f for f in findings if f.rule in GRES_CAUSE_RULES]
    if told:
        results["gres"] = replace(gres, status=STATUS_OF_SEVERITY[worst(f.severity for f in told)])
    return results
