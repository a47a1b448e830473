"""Why a run stopped or is in trouble: run-level findings plus the doctor's failure catalog.

The doctor's catalog (``ari_jupyter.doctor.catalog.scan``) is applied to the end of the logs,
the failed nodes' ``error_log`` and the reproduce job's log; the rules here add what only the
checkpoint as a whole shows (an interrupted run, every node failed, the LLM unreachable).
"""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Sequence

from ..base.verdict import Finding
from ..i18n import Text, message
from .jobs import JobsView
from ..ari.markers import Process, log_text
from ..ari.resume_rule import RESUME_CONFIG, requeue_command, resume_command
from .reading import tail
from .tree import TreeSummary
from ..doctor.catalog import CATALOG, scan



def run_findings(checkpoint: Path, *, phase: str, tree: TreeSummary, process: Process,
                 end_line: str, log_lines: Sequence[str], jobs: JobsView) -> list[Finding]:
    findings: list[Finding] = []
    resume = f"ari resume {shlex.quote(str(checkpoint))}"
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
    if jobs.scheduler == "error":
        findings.append(Finding.of("run-jobs-unknown", "warning", "runs.finding.jobs_unknown",
                                   fix_id="runs.finding.jobs_unknown.fix", problem=jobs.problem))
    findings += _catalog(checkpoint, log_lines, tree)
    return _dedupe(findings)


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
    texts += list(tail(checkpoint / "repro_sandbox" / "reproduce.log", 100).lines)
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
    seen: set[str] = set()
    kept = []
    for finding in findings:
        if finding.rule not in seen:
            seen.add(finding.rule)
            kept.append(finding)
    return kept
