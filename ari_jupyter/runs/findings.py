"""Why a run stopped or is in trouble: run-level findings plus the doctor's failure catalog.

The doctor's catalog (``ari_jupyter.doctor.catalog.scan``) is applied to the end of the logs,
the failed nodes' ``error_log`` and the reproduce job's log; the rules here add what only the
checkpoint as a whole shows (an interrupted run, every node failed, the LLM unreachable).
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Sequence

from ..base.verdict import Finding
from ..i18n import Text, message
from .jobs import Job, JobsView
from ..ari.markers import Process, log_text
from ..ari.resume_rule import RESUME_CONFIG, requeue_command, resume_command
from .reading import redaction_env, tail
from .tree import TreeSummary
from ..doctor.catalog import CATALOG, scan



def run_findings(checkpoint: Path, *, phase: str, tree: TreeSummary, process: Process,
                 end_line: str, log_lines: Sequence[str], jobs: JobsView) -> list[Finding]:
    findings: list[Finding] = []
    # the one line that continues the run, as every finding below says it (the .env read, the
    # run's scope when requeue wrote it)
    config = checkpoint / RESUME_CONFIG
    resume = resume_command(str(checkpoint), str(config) if config.is_file() else None)
    if phase == "interrupted":
        last = next((log_text(line) for line in reversed(log_lines) if line.strip()), "")
        where = message("runs.finding.interrupted.where", last=last[:200]) if last else ""
        findings.append(_interrupted(checkpoint, tree, why=_as_data(process.why), where=where))
    if phase == "failed" and tree.counts.total and tree.counts.done == 0:
        first = (tree.errors[0][1].splitlines()[0][:300] if tree.errors
                 else message("runs.no_error_recorded"))
        findings.append(Finding.of("run-no-successful-node", "error",
                                   "runs.finding.no_successful_node",
                                   fix_id="runs.finding.no_successful_node.fix",
                                   failed=tree.counts.failed, total=tree.counts.total,
                                   first=first, resume=resume))
    if end_line and phase == "failed":
        findings.append(Finding.of("run-pipeline-ended", "warning", "runs.finding.pipeline_ended",
                                   fix_id="runs.finding.pipeline_ended.fix", end=end_line[:300]))
    findings += [_outside_envelope(checkpoint, job) for job in jobs.jobs if job.outside and job.active]
    findings += [_time_limit(job, resume) for job in jobs.jobs if ended_by_time_limit(job)]
    if jobs.scheduler in ("error", "partial"):  # a partial answer may have lost a live job
        findings.append(Finding.of("run-jobs-unknown", "warning", "runs.finding.jobs_unknown",
                                   fix_id="runs.finding.jobs_unknown.fix", problem=jobs.problem))
    findings += _catalog(checkpoint, log_lines, tree)
    return _dedupe(findings)


def ended_by_time_limit(job: Job) -> bool:
    """SLURM ended the job at its time limit: state TIMEOUT (squeue, sacct), or its output ends
    with slurmstepd's "CANCELLED AT ... DUE TO TIME LIMIT" (the job has left the queue)."""
    if job.state.split()[0:1] == ["TIMEOUT"]:
        return True
    return not job.active and any(_TIME_LIMIT.search(line) for line in job.tail[-5:])


_TIME_LIMIT = re.compile(r"\*\*\* JOB \d+ ON \S+ CANCELLED AT \S+ DUE TO TIME LIMIT")


def _outside_envelope(checkpoint: Path, job: Job) -> Finding:
    cancel = f"ari-jupyter cancel --job {shlex.quote(job.job_id)} {shlex.quote(str(checkpoint))}"
    return Finding.of("run-job-outside-envelope", "error", "runs.finding.outside_envelope",
                      fix_id="runs.finding.outside_envelope.fix", job=job.job_id,
                      kind=message(f"runs.envelope.kind.{job.kind}"),
                      over=[o.said() for o in job.outside], cancel=cancel)


def _time_limit(job: Job, resume: str) -> Finding:
    return Finding.of("run-time-limit", "error", "runs.finding.time_limit",
                      fix_id="runs.finding.time_limit.fix", job=job.job_id,
                      limit=job.time_limit or "?", resume=resume)


def _interrupted(checkpoint: Path, tree: TreeSummary, **params) -> Finding:
    """A cut that left nodes ``running``: ``ari resume`` alone would not run them again, so the
    fix is ``ari-jupyter requeue`` first; so too while the run's scope for the resume is not
    written (``resume.yaml``). Otherwise the resume itself. Both commands read the .env."""
    config = checkpoint / RESUME_CONFIG
    scoped = (checkpoint / "workflow.yaml").is_file()  # requeue writes the scope from it
    resume = resume_command(str(checkpoint), str(config) if scoped else None)
    requeue = requeue_command(str(checkpoint))
    if tree.counts.running:
        return Finding.of("run-interrupted", "error", "runs.finding.interrupted",
                          fix_id="runs.finding.interrupted.fix_requeue", resume=resume,
                          requeue=requeue, count=tree.counts.running, **params)
    if scoped and not config.is_file():
        return Finding.of("run-interrupted", "error", "runs.finding.interrupted",
                          fix_id="runs.finding.interrupted.fix_scope", resume=resume,
                          requeue=requeue, **params)
    return Finding.of("run-interrupted", "error", "runs.finding.interrupted",
                      fix_id="runs.finding.interrupted.fix", resume=resume, **params)


def _catalog(checkpoint: Path, log_lines: Sequence[str], tree: TreeSummary) -> list[Finding]:
    texts = [log_text(line) for line in log_lines[-200:]]
    texts += [error for _, error in tree.errors]
    texts += list(tail(checkpoint / "repro_sandbox" / "reproduce.log", 100,
                       env=redaction_env(checkpoint)).lines)
    symptoms = {sig.rule: sig.symptom for sig in CATALOG}
    # Line numbers of a joined window of several files mean nothing to the reader: the
    # doctor's verdict is kept (rule, severity, cause, fix), said without them.
    return [_without_lines(f, symptoms.get(f.rule, f.message)) for f in scan("\n".join(texts))]


def _as_data(value: str):
    """A ``Text`` as its id and params (what survives JSON); any other string as it is."""
    return message(value.message_id, **value.params) if isinstance(value, Text) else value


def _without_lines(found: Finding, symptom: str) -> Finding:
    """The doctor's finding said as "Symptom. Cause: cause.", with its message ids kept."""
    if not found.cause:
        return Finding(found.rule, found.severity, None, found.message, found.fix,
                       message_id=found.message_id, params=found.params, fix_id=found.fix_id)
    params = dict(found.params)
    said = {"message_id": "runs.finding.doctor", "params": params, "fix_id": found.fix_id}
    if not ("symptom" in params and "cause" in params):
        said = {}  # words without catalog ids stay English everywhere
    return Finding(found.rule, found.severity, None,
                   f"{symptom[:1].upper()}{symptom[1:]}. Cause: {found.cause}.", found.fix, **said)


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[str, str]] = set()
    kept = []
    for finding in findings:
        key = (finding.rule, str(finding.params.get("job", "")))  # one per job for job findings
        if key not in seen:
            seen.add(key)
            kept.append(finding)
    return kept
