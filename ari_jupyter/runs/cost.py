"""What a run has cost so far: node-hours per job kind, and ARI's own record of its LLM use.

Node-hours: each of the run's jobs, its elapsed time × its nodes: accounting's seconds
(``sacct``'s ElapsedRaw) where it has them, else the queue's elapsed (``squeue %M``) for a job
still running. Without accounting, jobs that have left the queue are not counted: the answer
says whether accounting answered (``from_accounting``), so a view never shows a partial sum as
the whole.

LLM use: ``cost_summary.json``, which ARI's cost tracker (``ari-core/ari/cost_tracker.py``)
writes in the checkpoint after every call: ``total_cost_usd``, ``total_tokens``,
``call_count``, and ``by_phase`` / ``by_model`` each mapping a name to ``{"cost_usd",
"tokens"}``. Read bounded; a file of another shape is left out, never guessed at.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..ari.cost import hours_text
from ..base.bounded_read import read_json_bounded
from ..i18n import DEFAULT_LANGUAGE, message, say
from ..slurm.parsers import parse_count, parse_slurm_duration
from .jobs import Job, JobsView

COST_SUMMARY = "cost_summary.json"
SUMMARY_CAP = 1024 * 1024
KINDS = ("bfts", "reproduce")


@dataclass(frozen=True)
class Use:
    name: str
    tokens: int
    cost_usd: float

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "tokens": self.tokens, "cost_usd": self.cost_usd}


@dataclass(frozen=True)
class LlmUse:
    """ARI's ``cost_summary.json`` as it wrote it."""

    total_tokens: int
    total_cost_usd: float
    calls: int
    by_phase: tuple[Use, ...]
    by_model: tuple[Use, ...]

    def to_json(self) -> dict[str, Any]:
        return {"total_tokens": self.total_tokens, "total_cost_usd": self.total_cost_usd,
                "calls": self.calls, "by_phase": [u.to_json() for u in self.by_phase],
                "by_model": [u.to_json() for u in self.by_model]}


def _number(value: Any, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(value)
    return kind(value)


def _uses(table: Any) -> tuple[Use, ...]:
    if not isinstance(table, Mapping):
        raise ValueError(table)
    uses = [Use(str(name), _number(v.get("tokens"), int), _number(v.get("cost_usd"), float))
            for name, v in table.items() if isinstance(v, Mapping)]
    return tuple(sorted(uses, key=lambda u: (-u.cost_usd, -u.tokens, u.name)))


def read_llm_use(checkpoint: Path) -> LlmUse | None:
    """The run's LLM use from ARI's cost summary; None when there is none or it cannot be read."""
    try:
        data = read_json_bounded(Path(checkpoint) / COST_SUMMARY, SUMMARY_CAP)
        if not isinstance(data, Mapping):
            return None
        return LlmUse(_number(data.get("total_tokens"), int), _number(data.get("total_cost_usd"), float),
                      _number(data.get("call_count", 0), int), _uses(data.get("by_phase", {})),
                      _uses(data.get("by_model", {})))
    except (OSError, ValueError, AttributeError):
        return None


def job_seconds(job: Job) -> int | None:
    """How long the job has held its nodes: accounting's seconds, else the queue's elapsed."""
    if job.elapsed_s is not None:
        return job.elapsed_s
    try:
        return parse_slurm_duration(job.elapsed) if job.elapsed else None
    except ValueError:
        return None


def node_hours(jobs: Sequence[Job]) -> dict[str, float]:
    """Node-hours used per job kind (and ``total``), from each job's seconds × nodes."""
    used = {kind: 0.0 for kind in KINDS}
    for job in jobs:
        seconds = job_seconds(job)
        try:
            nodes = parse_count(job.nodes) if job.nodes else None
        except ValueError:
            nodes = None
        if seconds is None or nodes is None or job.kind not in used:
            continue
        used[job.kind] += seconds * nodes / 3600
    used["total"] = sum(used[kind] for kind in KINDS)
    return {k: round(v, 4) for k, v in used.items()}


@dataclass(frozen=True)
class RunCost:
    node_hours: Mapping[str, float]
    from_accounting: bool
    """True when accounting answered: the node-hours count jobs that have left the queue too."""
    llm: LlmUse | None
    known: bool = True
    """False when SLURM did not answer (no squeue, squeue failed): no node-hours are said."""
    no_slurm: bool = False
    """True on a machine without SLURM (a demo, a laptop): said so, not "did not answer"."""

    def to_json(self) -> dict[str, Any]:
        said = self.said()
        return {"node_hours": dict(self.node_hours) if self.known else None,
                "from_accounting": self.from_accounting,
                "llm": self.llm.to_json() if self.llm else None, "said": said,
                "text": [say(line, DEFAULT_LANGUAGE) for line in said]}

    def said(self) -> list[dict]:
        """The sentences a view shows: node-hours, then the LLM's use per phase and model."""
        hours = {k: hours_text(v) for k, v in self.node_hours.items()}
        unknown = "cost.used.node_hours_no_slurm" if self.no_slurm else "cost.used.node_hours_unknown"
        lines = [message(unknown) if not self.known else
                 message("cost.used.node_hours" if self.from_accounting
                         else "cost.used.node_hours_queue", **hours)]
        if self.llm is None:
            return lines + [message("cost.used.llm_none")]
        lines.append(message("cost.used.llm", tokens=tokens_text(self.llm.total_tokens),
                             cost=usd_text(self.llm.total_cost_usd), calls=self.llm.calls))
        for key, uses in (("cost.used.by_phase", self.llm.by_phase),
                          ("cost.used.by_model", self.llm.by_model)):
            if uses:
                lines.append(message(key, items=[message(
                    "cost.used.item", name=u.name, tokens=tokens_text(u.tokens),
                    cost=usd_text(u.cost_usd)) for u in uses]))
        return lines


def tokens_text(tokens: int) -> str:
    return f"{tokens:,}"


def usd_text(cost: float) -> str:
    """US dollars as ARI's tracker estimates them: cents, or four places below a cent."""
    return f"{cost:.2f}" if cost >= 0.01 or cost == 0 else f"{cost:.4f}"


def run_cost(checkpoint: Path, jobs: JobsView) -> RunCost:
    """The run's cost so far from its jobs (as the status read them) and its checkpoint."""
    known = jobs.scheduler in ("ok", "partial", "recording") or jobs.accounting == "yes"
    return RunCost(node_hours(jobs.jobs), jobs.accounting == "yes", read_llm_use(checkpoint), known,
                   no_slurm=jobs.scheduler == "absent")
