"""A run's status answer with its sentences in one language, for the Runs panel.

The answer (``status_json``) keeps English text beside each sentence's message id; the panel
asks for its UI language and gets the same answer with the findings, fixes, the process
sentence and the notes rendered from the catalog. Ids and parameters stay, as does text
without an id (ARI's own words are quoted, not translated).
"""
from __future__ import annotations

from typing import Any

from ..i18n import DEFAULT_LANGUAGE, render_message as _rendered, say, t
from .chain import chain_text


def _finding(finding: dict[str, Any], lang: str) -> dict[str, Any]:
    params = dict(finding.get("params") or {})
    out = dict(finding)
    if finding.get("message_id"):
        out["message"] = t(finding["message_id"], lang, **params)
    if finding.get("fix_id"):
        out["fix"] = t(finding["fix_id"], lang, **params)
    return out


def status_in_language(status: dict[str, Any], lang: str) -> dict[str, Any]:
    """``status`` with its catalog sentences in ``lang`` (a supported language code)."""
    if lang == DEFAULT_LANGUAGE:
        return status
    notes = status.get("note_messages") or [None] * len(status.get("notes", ()))
    out = {**status,
           "findings": [_finding(f, lang) for f in status.get("findings", ())],
           "process": _rendered(status.get("process", ""), status.get("process_message"), lang),
           "notes": [_rendered(n, m, lang) for n, m in zip(status.get("notes", ()), notes)]}
    if isinstance(status.get("chain"), dict):  # the follow-up allocations, in words
        out["chain"] = {**status["chain"], "said": chain_text(status["chain"], lang)}
    cost = status.get("cost")
    if isinstance(cost, dict) and cost.get("said"):  # node-hours and LLM use in the panel's words
        out["cost"] = {**cost, "text": [say(line, lang) for line in cost["said"]]}
    jobs = status.get("jobs")
    if isinstance(jobs, dict) and jobs.get("problem_message"):
        jobs = {**jobs, "problem": _rendered(jobs["problem"], jobs["problem_message"], lang)}
    if isinstance(jobs, dict):
        jobs = {**jobs, "jobs": [_job(job, lang) for job in jobs.get("jobs", ())]}
        out["jobs"] = jobs
    return out


def _job(job: dict[str, Any], lang: str) -> dict[str, Any]:
    """The job with what it asks beyond its approval, why it waits and who cancelled it, said
    in ``lang``."""
    if job.get("pending"):
        job = {**job, "pending_text": say(job["pending"], lang)}
    if job.get("cancelled_by"):
        job = {**job, "cancelled_text": say(job["cancelled_by"], lang)}
    if not job.get("outside"):
        return job
    return {**job, "outside_text": say([o["said"] for o in job["outside"]], lang)}


def runs_in_language(answer: dict[str, Any], lang: str) -> dict[str, Any]:
    """``runs_json``'s answer with ``skipped_text``: what could not be read, said once in
    ``lang`` (the panel shows it under the list; the runs it could read are all there)."""
    if not answer.get("skipped_message"):
        return answer
    return {**answer, "skipped_text": say(answer["skipped_message"], lang)}


def cancel_in_language(answer: dict[str, Any], lang: str) -> dict[str, Any]:
    """``cancel_json``'s answer with each outcome's message and the new status in ``lang``."""
    if lang == DEFAULT_LANGUAGE:
        return answer
    return {**answer,
            "outcomes": [{**o, "message": _rendered(o["message"], o, lang)}
                         for o in answer.get("outcomes", ())],
            "status": status_in_language(answer["status"], lang)}
