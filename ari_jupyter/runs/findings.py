"""Why a run stopped or is in trouble: run-level findings plus the doctor's failure catalog.

The doctor's catalog (``ari_jupyter.doctor.catalog.scan``) is applied to the end of the logs,
the failed nodes' ``error_log`` and the reproduce job's log; the rules here add what only the
checkpoint as a whole shows (an interrupted run, every node failed, the LLM unreachable).
"""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Sequence

from ..ari.finding import Finding
from .jobs import JobsView
from .markers import Process, log_text
from .reading import tail
from .tree import TreeSummary



def run_findings(checkpoint: Path, *, phase: str, tree: TreeSummary, process: Process,
                 end_line: str, log_lines: Sequence[str], jobs: JobsView) -> list[Finding]:
    findings: list[Finding] = []
    resume = f"ari resume {shlex.quote(str(checkpoint))}"
    if phase == "interrupted":
        last = next((log_text(line) for line in reversed(log_lines) if line.strip()), "")
        where = f" The log stops at: {last[:200]}" if last else ""
        findings.append(Finding(
            "run-interrupted", "error", None,
            f"The run stopped without ARI's end and nothing of it is alive ({process.why}).{where}",
            f"look at the log tail for the last thing ARI did; `{resume}` re-queues the pending "
            "and failed nodes (it keeps the tree)"))
    if phase == "failed" and tree.counts.total and tree.counts.done == 0:
        first = tree.errors[0][1].splitlines()[0][:300] if tree.errors else "no error recorded"
        findings.append(Finding(
            "run-no-successful-node", "error", None,
            f"No node succeeded ({tree.counts.failed} of {tree.counts.total} failed); "
            f"first error: {first}",
            "fix the cause named here, then start again with the hand-off script or "
            f"`{resume}`"))
    if end_line and phase == "failed":
        findings.append(Finding("run-pipeline-ended", "warning", None,
                                f"ARI's last word: {end_line[:300]}",
                                "see the log tail; `ari paper <checkpoint>` re-runs only the pipeline"))
    if jobs.scheduler == "error":
        findings.append(Finding("run-jobs-unknown", "warning", None,
                                f"The run's SLURM jobs are unknown: {jobs.problem}",
                                "check that slurmctld answers (`squeue`) from this machine"))
    findings += _catalog(checkpoint, log_lines, tree)
    return _dedupe(findings)


def _catalog(checkpoint: Path, log_lines: Sequence[str], tree: TreeSummary) -> list[Finding]:
    from ..doctor.catalog import CATALOG, scan

    texts = [log_text(line) for line in log_lines[-200:]]
    texts += [error for _, error in tree.errors]
    texts += list(tail(checkpoint / "repro_sandbox" / "reproduce.log", 100).lines)
    symptoms = {sig.rule: sig.symptom for sig in CATALOG}
    # Line numbers of a joined window of several files mean nothing to the reader: the
    # doctor's verdict is kept (rule, severity, cause, fix), said without them.
    return [Finding(f.rule, f.severity, None,
                    f"{symptoms.get(f.rule, f.message)[:1].upper()}{symptoms.get(f.rule, f.message)[1:]}. "
                    f"Cause: {f.cause}." if f.cause else f.message, f.fix)
            for f in scan("\n".join(texts))]


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[str] = set()
    kept = []
    for finding in findings:
        if finding.rule not in seen:
            seen.add(finding.rule)
            kept.append(finding)
    return kept
