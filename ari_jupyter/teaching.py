"""Check cells for the teaching notebooks: is the learner's answer right, and if not, why.

Each ``check_*`` function takes what the learner wrote in an exercise cell, asks the same core
the wizard and the CLI use (the sbatch builder, the wizard's placement verdict on its own state
for a demo site, the probes on a recorded demo site, the doctor), and returns a
:class:`CheckResult` that prints as "Correct: ..." or "Not yet: ..." with a hint, in the
lesson's language (``lang="ja"``, ``lang="zh"``: the translated lessons in the package's
notebooks/teaching/ja and zh). No cluster is needed; nothing here imports ipywidgets.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping
from .i18n import t
from .ari.profile import ExecutionProfile, PRESETS
from .slurm.allocation import Allocation
from .wizard.config import open_host, probe_context, wizard_config
from .wizard.site_defaults import seed_defaults
from .wizard.state import WizardState
from .ari.judge import placement_verdict, slurm_plan
from .probes import ProbeContext, run_probes_sync
from .ari.errors import AriRuntimeError
from .ari.sbatch import ReproduceArgs, build_sbatch_argv
from .hosts.recorded_site import RecordedSite
from .doctor import diagnose_text
from .base.aio import run_sync
from .hosts.recorded_run import RecordedRun
from .runs.service import place_recorded_runs, runs_host, status_json

GPU_KINDS = frozenset({"gpu_single", "gpu_multi", "mpi_gpu"})
SHARED_VERDICTS = frozenset({"ok", "warn"})
_RANK_LINE = re.compile(r"^srun rank (\d+) of \d+ on (\S+)$")
DEMO_REPO_DIR = "/work/u12345/ari/checkpoints/20260101120000_lesson/repro_sandbox"


@dataclass(frozen=True)
class CheckResult:
    """A check cell's answer: ``passed``, what the core said, and a hint when not passed, in
    ``lang``."""

    passed: bool
    message: str
    hint: str = ""
    lang: str = "en"

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        if self.passed:
            return t("teaching.correct", self.lang, message=self.message)
        return t("teaching.not_yet", self.lang, message=self.message) + (
            "\n" + t("teaching.hint", self.lang, hint=self.hint) if self.hint else "")

    __repr__ = __str__


def _hint(hint_id: str, lang: str) -> str:
    return t("teaching.hint." + hint_id, lang) if hint_id else ""


def _answer(lang: str) -> Callable[..., CheckResult]:
    """``answer(passed, message_id, hint_id="", **params)``: a CheckResult said in ``lang``."""
    def answer(passed: bool, message_id: str, hint_id: str = "", **params: Any) -> CheckResult:
        return CheckResult(passed, t(message_id, lang, **params), _hint(hint_id, lang), lang)
    return answer


class _NotAProfile(ValueError):
    """What the learner gave is no profile: said by message id, in the lesson's language."""

    def __init__(self, message_id: str, **params: Any):
        super().__init__(message_id)
        self.message_id, self.params = message_id, params


def _profile(value: Any):
    """An ExecutionProfile from a preset name, a JSON dict or a profile (ValueError if none)."""
    if isinstance(value, ExecutionProfile):
        return value
    if isinstance(value, str):
        if value not in PRESETS:
            raise _NotAProfile("teaching.not_a_preset", value=repr(value), presets=", ".join(PRESETS))
        return PRESETS[value]()
    if isinstance(value, Mapping):
        return ExecutionProfile.from_json(dict(value))
    raise _NotAProfile("teaching.give_a_profile")


def _refusal(exc: ValueError, lang: str) -> str:
    """Why no profile came of the learner's answer, in ``lang`` when it is ours to say."""
    if isinstance(exc, _NotAProfile):
        return t(exc.message_id, lang, **exc.params)
    return str(exc)  # ExecutionProfile's own refusal of a key or value


def probe_site(site: str, *, workspace: str | None = None, only: Iterable[str] | None = None,
               config=None) -> dict:
    """The probe results of a demo site by id, with the workspace and timeouts chosen exactly
    as ``ari-jupyter probe --site SITE`` chooses them (so a lesson and the CLI agree)."""
    config = config or wizard_config()
    host = open_host(site, config)
    ctx = ProbeContext(allocation=Allocation.from_env(host.env),
                       workspace=workspace or config.workspace_for_host(host),
                       timeout=config.probe_timeout, timeouts=dict(config.probe_timeouts),
                       only=list(only) if only else None)
    return {result.id: result for result in run_probes_sync(host, ctx)}


def _site_env(site) -> dict[str, str]:
    allocation = Allocation.from_env(site.env)
    env = {"ARI_SLURM_CPUS": "1"}
    if allocation.partition:
        env["ARI_SLURM_PARTITION"] = allocation.partition
    return env


def wizard_state(site: str, profile: Any = None, *, max_cpus: int | None = None, config=None):
    """(state, host): the wizard's state on demo site ``site`` once its checks have answered
    (every default as a fresh wizard there has it: partition, Nodes, Max CPUs...), with
    ``profile`` (a preset name, a dict or a profile) and Max CPUs as the learner gives them."""
    config = config or wizard_config()
    host = open_host(site, config)
    env = dict(os.environ)
    state = WizardState()
    seed_defaults(state, config, host, env)
    for result in run_probes_sync(host, probe_context(state, config)):
        state.set_probe_result(result)
    seed_defaults(state, config, host, env)
    if profile is not None:
        state.profile = _profile(profile)
    if max_cpus is not None:
        state.max_cpus = max_cpus
    return state, host


def placement_on(site: str, profile: Any, *, max_cpus: int | None = None):
    """Where the reproduce job's ranks land on ``site`` and what that means: the wizard's
    step 1 (``judge.placement_verdict``) for its state there with ``profile``."""
    state, host = wizard_state(site, profile, max_cpus=max_cpus)
    return placement_verdict(state.choices(), host.env)


def check_ranks_on_both_nodes(profile: Any, site: str = "rccs-cloud", *, max_cpus: int | None = None,
                              lang: str = "en") -> CheckResult:
    """Lesson 1: does every node of the reproduce job get ranks, with a job sbatch accepts and
    a kind that fits ``site``? The verdict is the wizard's step 1 (``placement_on``)."""
    answer = _answer(lang)
    try:
        chosen = _profile(profile)
    except ValueError as exc:
        return CheckResult(False, _refusal(exc, lang), _hint("start_from_preset", lang), lang)
    state, host = wizard_state(site, chosen, max_cpus=max_cpus)
    told = placement_verdict(state.choices(), host.env)
    shape = ", ".join(f"{name}: {count}" for name, count in told.ranks_per_node)
    cause = told.cause
    if told.verdict == "no_plan":
        brought = _preset_gpu_request(profile, chosen)
        said = answer(False, "teaching.ari_refuses", _no_plan_hint(chosen, state), error=told.error)
        if brought:  # the GPU request ARI quotes came with the preset, not from the learner
            said = replace(said, message=t("teaching.preset_brings", lang, preset=repr(profile),
                                           values=brought) + " " + said.message)
        return said
    if told.verdict == "refused":
        return answer(False, "teaching.sbatch_refuses", "fit_node", reason=cause.text(lang),
                      shape=shape, cpus=state.max_cpus)
    if told.verdict == "wrong_kind":
        return answer(False, "teaching.wrong_kind", "kind_for_site", kind=repr(chosen.kind),
                      reason=cause.text(lang))
    if told.verdict == "one_node":
        return answer(False, "teaching.no_kind", "give_kind", shape=shape)
    if told.verdict == "nodes_idle":
        return answer(False, "teaching.some_nodes_idle", "ask_nodes", shape=shape,
                      used=told.placement.nodes_with_ranks, nodes=told.placement.total_nodes)
    if told.verdict == "shares_cores":
        return answer(False, "teaching.shares_cores", "fewer_tasks", reason=cause.text(lang),
                      shape=shape)
    plan, _ = slurm_plan(state.choices(), host.env)
    said = answer(True, "teaching.ranks_ok", shape=shape, line=" ".join(plan.argv[:-1]))
    if chosen.requested_nodes and state.nodes and chosen.requested_nodes != state.nodes:
        # the wizard's Nodes (the allocation's) wins over the profile's requested_nodes
        said = replace(said, message=said.message + " " + t(
            "teaching.nodes_overridden", lang, asked=chosen.requested_nodes, nodes=state.nodes))
    return said


def _preset_gpu_request(given: Any, chosen) -> str:
    """The GPU request a preset named by ``given`` brings (``gpu_type='v100', ...``), or ""."""
    if not isinstance(given, str):
        return ""
    asked = {key: getattr(chosen, key, None) for key in ("gpu_type", "gpus_per_task", "gpus_per_node")}
    return ", ".join(f"{key}={value!r}" for key, value in asked.items() if value)


def _no_plan_hint(chosen, state) -> str:
    """The hint when ARI refuses the profile: a GPU request on a site without GRES asks for a
    CPU kind; anything else starts again from a preset."""
    gres = state.probe_results.get("gres")
    no_gres = gres is not None and gres.data.get("has_gres") is False
    gpus = any(getattr(chosen, key, None) for key in ("gpu_type", "gpus_per_task", "gpus_per_node"))
    return "kind_for_site" if gpus and no_gres else "start_from_preset"


def check_gres_fix(profile: Any, *, allow_no_gres: bool = False, site: str = "sx40",
                   lang: str = "en") -> CheckResult:
    """Lesson 3: a GPU profile ARI accepts on a site whose SLURM has no GRES."""
    answer = _answer(lang)
    try:
        chosen = _profile(profile)
    except ValueError as exc:
        return CheckResult(False, _refusal(exc, lang), _hint("start_from_given", lang), lang)
    if (chosen.kind or "") not in GPU_KINDS:
        return answer(False, "teaching.no_gpu_kind", "keep_gpu_kind", kind=repr(chosen.kind))
    gres = probe_site(site, only=["gres"])["gres"]
    has_gres = bool((gres.data or {}).get("has_gres"))
    env = _site_env(RecordedSite.load(site))
    if allow_no_gres:
        env["ARI_SLURM_ALLOW_NO_GRES"] = "1"
    try:
        argv = build_sbatch_argv(ReproduceArgs(), env, DEMO_REPO_DIR, has_gres=has_gres,
                                 bind_flags=True, profile=chosen)
    except AriRuntimeError as exc:
        return answer(False, "teaching.ari_still_refuses", "no_gpu_request", error=str(exc),
                      gres=t("teaching.yes" if has_gres else "teaching.no", lang))
    gpu_flags = [arg for arg in argv if arg.startswith("--gres") or arg.startswith("--gpus")]
    if gpu_flags and not has_gres:
        return answer(False, "teaching.gpu_flags_left", flags=str(gpu_flags))
    return answer(True, "teaching.gres_ok", line=" ".join(argv[:-1]), status=_status(gres.status, lang))


def _status(status: str, lang: str) -> str:
    """A verdict word as ``ari-jupyter probe`` prints it in ``lang`` (ok, warn, fail...)."""
    return status if lang == "en" else t(f"status_{status}", lang)


def check_checkpoint_shared(checkpoint_dir: str, site: str = "rccs-cloud", *,
                            lang: str = "en") -> CheckResult:
    """Lesson 2: is ``checkpoint_dir`` on a filesystem every node of ``site`` shares?"""
    answer = _answer(lang)
    if not isinstance(checkpoint_dir, str) or not checkpoint_dir.startswith("/"):
        return answer(False, "teaching.not_absolute", "absolute", path=repr(checkpoint_dir))
    result = probe_site(site, workspace=checkpoint_dir, only=["shared_fs"])["shared_fs"]
    verdict = result.text(lang)  # "Correct:"/"Not yet:" says the rest; a verdict word would pile up
    if result.status in SHARED_VERDICTS:
        if result.status == "warn":
            verdict = t("teaching.only_warns", lang, verdict=verdict)
        return CheckResult(True, verdict, "", lang)
    return CheckResult(False, verdict, result.fix_text(lang), lang)


NODE_LOCAL_CAUSES = frozenset({"repo-dir-node-local", "permission-denied"})
"""Doctor rules whose fix is a checkpoint on a filesystem every node shares (lesson 2's check)."""


def check_diagnosis(log: str, answer: str, fix: str | None = None, *, site: str = "rccs-cloud",
                    lang: str = "en") -> CheckResult:
    """Lesson 4: did the learner name the cause of ``log``, and (when the cause is a checkpoint
    on node-local storage) give as ``fix`` a checkpoint directory every node of ``site`` shares?

    The cause is what went wrong first in the log (the doctor's finding on the earliest line);
    the doctor lists errors before warnings, so its first finding may be a consequence."""
    said = _answer(lang)
    # a clean job's output gets one "job-output" note of what was read: no cause to name
    every = [f for f in diagnose_text(log, kind="log") if f.rule != "job-output"]
    if not every:
        return said(False, "teaching.doctor_nothing", "whole_log")
    cause = min(every, key=lambda f: (f.line is None, f.line or 0))
    given = (answer or "").strip()
    if not given:
        return said(False, "teaching.no_answer", "run_diagnose")
    if given.upper() != cause.rule.upper():
        others = [f.rule.upper() for f in every]
        hint = "consequence" if given.upper() in others else "rule_word"
        return said(False, "teaching.not_the_cause", hint, given=repr(given))
    reason = (cause.cause or cause.message) if lang == "en" else cause.text(lang)
    if cause.rule in NODE_LOCAL_CAUSES:
        if not fix:
            return said(False, "teaching.cause_without_fix", "shared_checkpoint", rule=cause.rule,
                        cause=reason, site=site)
        shared = check_checkpoint_shared(fix, site, lang=lang)
        if not shared.passed:
            return CheckResult(False, _t("teaching.fix_not_shared", lang, rule=cause.rule,
                                         verdict=shared.message),
                               shared.hint or _hint("shared_checkpoint", lang), lang)
        return said(True, "teaching.diagnosed_and_fixed", rule=cause.rule, cause=reason,
                    verdict=shared.message)
    return said(True, "teaching.diagnosed", rule=cause.rule, cause=reason, fix=cause.fix_text(lang))


def _t(message_id: str, lang: str, **params: Any) -> str:
    return t(message_id, lang, **params)


# -- lesson 5: following a run, on the run a demo site recorded ---------------------------------


def recorded_run(site: str = "rccs-cloud") -> dict[str, Any]:
    """Lesson 5: the run ``site`` recorded, as ``ari-jupyter status --site SITE RUN_ID --json``
    and the Runs panel show it (copied into the site's local demo workspace on first use; its
    jobs come from the recording, no SLURM is asked), plus ``timeline``: each phase
    ``ari-jupyter status`` saw while it ran."""
    host = runs_host(site)
    placed = place_recorded_runs(host)
    if not placed:
        raise ValueError(t("teaching.no_recorded_run", "en", site=site))
    status = run_sync(status_json(placed[0], host))
    return {**status, "timeline": list(RecordedRun.load(placed[0].name).phases)}


def print_run(run: Mapping[str, Any], lang: str = "en") -> None:
    """The run as a follower reads it: phase, search nodes, best metric, each job (where it
    ran) and the end of the log."""
    nodes, best = run["nodes"], run["best_metric"]
    print(t("teaching.run.summary", lang, run_id=run["run_id"], phase=run["phase"],
            done=nodes["done"], total=nodes["total"],
            best=f"{best['name']} = {best['value']:g} ({best['node_id']})" if best else "-"))
    for job in run["jobs"]["jobs"]:
        print(t("teaching.run.job", lang, job_id=job["job_id"], name=job["name"], kind=job["kind"],
                state=job["state"], nodes=job["nodes"], where=job["where"],
                work_dir=job["work_dir"].split("/")[-1]))
    for line in run["log_tail"][-5:]:
        print("  | " + line)


def _rank_hosts(run: Mapping[str, Any]) -> dict[str, str]:
    """Rank -> host, as the reproduce job's own log says (``srun rank R of N on HOST``)."""
    hosts: dict[str, str] = {}
    for job in run["jobs"]["jobs"]:
        if job["kind"] == "reproduce":
            for line in job["tail"]:
                found = _RANK_LINE.match(line.strip())
                if found:
                    hosts.setdefault(found.group(1), found.group(2))
    return hosts


def _best_jobs(run: Mapping[str, Any]) -> list[str]:
    """The BFTS jobs that ran in the best node's work dir: the one that printed the best metric
    is among them (a node whose agent submitted twice has two)."""
    node = (run["best_metric"] or {}).get("node_id")
    return [job["job_id"] for job in run["jobs"]["jobs"] if node and job["kind"] == "bfts"
            and job["work_dir"].rstrip("/").endswith("/" + node)]


_JOB_WORDS = re.compile(r"(?:slurm\s*)?(?:job|ジョブ|作业|作業)?\s*(?:id)?\s*[#:：]?\s*(\d+)\s*[.。]?",
                        re.IGNORECASE)


def _job_id(answer: Any) -> str:
    """A job as a learner names it: ``3``, ``"3"``, ``"job 3"``, ``"Job #3"``, ``"ジョブ 3"``,
    ``"作业 3"`` are job 3; anything else stays as given (and is said to be no job of the run)."""
    text = str(answer if answer is not None else "").strip()
    found = _JOB_WORDS.fullmatch(text)
    return found.group(1) if found else text


def check_run_reading(best_job: Any, rank_3_host: Any, run: Mapping[str, Any] | None = None, *,
                      site: str = "rccs-cloud", lang: str = "en") -> CheckResult:
    """Lesson 5: which BFTS job measured the best metric, and on which host rank 3 of the
    reproduce job ran. Both need two things read together: the best metric's node and each
    job's work dir; the reproduce job's node list and its own log."""
    said = _answer(lang)
    run = run or recorded_run(site)
    jobs = {job["job_id"]: job for job in run["jobs"]["jobs"]}
    given_job, given_host = _job_id(best_job), str(rank_3_host or "").strip()
    if not given_job or not given_host:
        return said(False, "teaching.run.no_answer", "run_read_both")
    best_jobs, hosts = _best_jobs(run), _rank_hosts(run)
    if given_job not in best_jobs:
        job = jobs.get(given_job)
        if job is None:
            return said(False, "teaching.run.no_such_job", "run_job_ids", job=given_job,
                        jobs=", ".join(jobs))
        if job["kind"] == "reproduce":
            return said(False, "teaching.run.reproduce_is_not_bfts", "run_best_node", job=given_job)
        return said(False, "teaching.run.not_the_best_job", "run_best_node", job=given_job,
                    node=job["work_dir"].rstrip("/").split("/")[-1])
    truth_host = hosts.get("3", "")
    if given_host != truth_host:
        reproduce = next((j for j in jobs.values() if j["kind"] == "reproduce"), None)
        if reproduce and given_host == reproduce["where"]:
            return said(False, "teaching.run.node_list_not_host", "run_rank_line", where=given_host)
        return said(False, "teaching.run.not_rank_3_host", "run_rank_line", host=given_host)
    best = run["best_metric"]
    return said(True, "teaching.run.read", job=given_job, node=best["node_id"], metric=best["name"],
                value=f"{best['value']:g}", host=truth_host,
                spread=", ".join(f"{rank}→{host}" for rank, host in sorted(hosts.items())))
