"""One checkpoint -> ``RunStatus``: the phase, the nodes, the best metric, the log tail, why it failed.

Phases: ``not-started`` (the wizard's files, ARI has not run), ``starting`` (the hand-off script
is alive and ``ari run`` has not written ``.ari_pid`` yet), ``exploring`` (BFTS),
``paper`` (the paper pipeline), ``reproduce`` (the ``ors_*`` stages / ARI's ``ari-ors`` job),
``finished``, ``failed``, ``interrupted`` (the logs stop without ARI's end and nothing of the
run is alive). Everything is read with bounded cost (see :mod:`.reading`) and nothing here
raises on a half-written or foreign checkpoint: that is a ``NotACheckpoint`` verdict or a note.
"""
from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..ari import markers
from .cost import RunCost, run_cost
from .jobs import JobsView, run_jobs
from .reading import linked_out, read_json, read_small_text, redaction_env, tail
from .tree import BestMetric, NodeCounts, TreeSummary, read_tree
from ..base.verdict import Finding, sort_findings
from ..i18n import message, message_of, text
from ..ari.lint_experiment import parse_experiment
from .findings import run_findings
from .envelope import Envelope, compared, read_envelope
from .ledger import Ledger, read_ledger, with_ledger
from .chain import chain_json
from .timeline import PhaseEntry, phase_timeline
from ..hosts.host import LocalHost
from ..hosts.recorded_run import recording_of
from ..doctor.log_checks import read_cancels
from ..slurm.cancel_record import RECORD as CANCEL_RECORD

PHASES = ("not-started", "starting", "exploring", "paper", "reproduce", "finished", "failed", "interrupted")
ACTIVE_PHASES = frozenset({"starting", "exploring", "paper", "reproduce"})
LOG_TAIL_LINES = 40
MARKER_WINDOW = 256 * 1024
"""How much of the end of each log is searched for the current stage and ARI's end."""
MAX_LINE = 400
TREE_PROBLEMS = ("truncated", "invalid", "too-large", "too-deep", "unreadable")


class NotACheckpoint(ValueError):
    """The directory holds neither the wizard's files nor anything ARI writes."""


class UnreadableCheckpoint(NotACheckpoint):
    """The directory (or what it holds) cannot be read by this user: another user's run."""


class LinkedCheckpoint(UnreadableCheckpoint):
    """A run folder of a workspace's ``checkpoints/`` that is a link to a folder outside it:
    anyone who can write the workspace could point it at the user's own files (his home), which
    would then be listed as a run, with jobs of his attributed to it and cancelled with it."""


def refuse_linked_out(path: str | Path) -> None:
    """Raise ``LinkedCheckpoint`` for a run folder that leads out of its ``checkpoints/``."""
    target = linked_out(path)
    if target:
        raise LinkedCheckpoint(text("runs.linked_out", path=str(path), target=target))


@dataclass(frozen=True)
class RunStatus:
    run_id: str
    checkpoint_dir: str
    title: str
    phase: str
    nodes: NodeCounts
    best_metric: BestMetric | None
    stage: str
    alive: bool
    process: str
    log_file: str
    log_tail: tuple[str, ...]
    findings: tuple[Finding, ...]
    jobs: JobsView
    updated_at: str
    notes: tuple[str, ...] = field(default=())
    envelope: Envelope | None = None
    """What the user approved in the wizard per job kind (None: not the wizard's checkpoint)."""
    ledger: Ledger | None = None
    """The newer ARI's submission ledger (None: none kept, as ARI e41c806 keeps none)."""
    chain: dict[str, Any] | None = None
    """The follow-up allocations approved and submitted (``chain.chain_json``; None: none approved)."""
    cost: RunCost | None = None
    """Node-hours used per job kind and ARI's record of its LLM use (``runs.cost``)."""
    timeline: tuple[PhaseEntry, ...] = ()
    """When the run entered each phase, from its files (``runs.timeline``)."""

    @property
    def active(self) -> bool:
        return self.phase in ACTIVE_PHASES

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "checkpoint_dir": self.checkpoint_dir, "title": self.title,
                "phase": self.phase, "active": self.active, "stage": self.stage,
                "nodes": self.nodes.to_json(),
                "best_metric": self.best_metric.to_json() if self.best_metric else None,
                "alive": self.alive, "process": self.process,
                "process_message": message_of(self.process), "log_file": self.log_file,
                "log_tail": list(self.log_tail),
                "findings": [f.to_json() for f in self.findings],
                "jobs": self.jobs.to_json(), "updated_at": self.updated_at,
                "notes": list(self.notes),
                "note_messages": [message_of(note) for note in self.notes],
                "envelope": self.envelope.to_json() if self.envelope else None,
                **({"ledger": self.ledger.to_json()} if self.ledger is not None else {}),
                "cost": self.cost.to_json() if self.cost else None,
                "phase_history": [entry.to_json() for entry in self.timeline],
                **({"chain": self.chain} if self.chain is not None else {})}

    def summary_json(self) -> dict[str, Any]:
        """The row of ``ari-jupyter runs`` and of the Runs panel's list."""
        return {"run_id": self.run_id, "checkpoint_dir": self.checkpoint_dir, "title": self.title,
                "phase": self.phase, "nodes": self.nodes.to_json(),
                "best_metric": self.best_metric.to_json() if self.best_metric else None,
                "updated_at": self.updated_at, "jobs": len(self.jobs.jobs),
                "node_hours": self.cost.node_hours["total"] if self.cost and self.cost.known else None,
                "llm_cost_usd": self.cost.llm.total_cost_usd if self.cost and self.cost.llm else None,
                **({"chain": self.chain} if self.chain is not None else {})}


def _title(checkpoint: Path) -> str:
    for line in read_small_text(checkpoint / "experiment.md", 8192).splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def _metric(checkpoint: Path) -> tuple[str, bool]:
    """The run's primary metric: ARI's evaluation_criteria.json, else experiment.md's Metrics."""
    data = read_json(checkpoint / "evaluation_criteria.json", 1024 * 1024).data
    if isinstance(data, dict) and data.get("primary_metric"):
        return str(data["primary_metric"]), data.get("higher_is_better", True) is not False
    text = read_small_text(checkpoint / "experiment.md", 65536)
    if text:
        return parse_experiment(text).primary_metric, True
    return "", True


def _iso(mtime: float) -> str:
    return datetime.fromtimestamp(mtime, tz=timezone.utc).isoformat(timespec="seconds") if mtime else ""


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE else line[:MAX_LINE] + " …"


def _ended_with_interrupt(lines: list[str]) -> bool:
    return any(markers.INTERRUPT.match(line.strip()) for line in lines[-5:])


def is_checkpoint(path: Path) -> bool:
    """read_status's first question, without reading the run: does it hold a run's files
    (False for one this user cannot read)."""
    try:
        return (any((path / name).exists() for name in markers.ARI_FILES)
                or bool(markers.handoff_logs(path))
                or any((path / name).is_file() for name in markers.WIZARD_FILES))
    except OSError:
        return False


def read_status(checkpoint: str | Path, jobs: JobsView | None = None, *,
                with_nodes: bool = True) -> RunStatus:
    """The status from the files (and the jobs, when given); never raises but NotACheckpoint
    (``UnreadableCheckpoint`` for a folder or file this user may not read). ``with_nodes``
    False leaves the tree unread (no nodes, no best metric): whether the run is alive and its
    active phase do not depend on it, only which end an ended run came to (``requeue``, which
    reads the tree itself, asks only that)."""
    path = Path(checkpoint).expanduser()
    refuse_linked_out(path)
    try:
        if path.is_dir() and not os.access(path, os.R_OK | os.X_OK):
            raise PermissionError(path)
        return _read_status(path, jobs, with_nodes)
    except PermissionError:
        raise UnreadableCheckpoint(text("runs.unreadable", path=str(path))) from None


def _with_cancels(path: Path, jobs: tuple) -> tuple:
    """Each cancelled job with who cancelled it, where the checkpoint's cancel record holds it
    (the doctor names the same cause on the job's "CANCELLED AT" line)."""
    if not any(job.state.split()[:1] == ["CANCELLED"] for job in jobs):
        return jobs
    record = read_cancels(str(path))
    return tuple(replace(job, cancelled_by=message("doctor.job-cancelled.by." + record[job.job_id]["by"],
                                                   job=job.job_id, record=CANCEL_RECORD))
                 if job.state.split()[:1] == ["CANCELLED"] and job.job_id in record else job
                 for job in jobs)


def _read_status(path: Path, jobs: JobsView | None, with_nodes: bool = True) -> RunStatus:
    if not path.is_dir():
        raise NotACheckpoint(text("runs.not_a_directory", path=str(path)))
    jobs = jobs or JobsView(scheduler="not-asked")
    envelope = read_envelope(path)
    ledger = read_ledger(path)  # the newer ARI's record of every job it submitted
    jobs = replace(jobs, jobs=tuple(compared(with_ledger(jobs.jobs, ledger), envelope)))
    jobs = replace(jobs, jobs=_with_cancels(path, jobs.jobs))
    has_ari = any((path / name).exists() for name in markers.ARI_FILES)
    handoff = markers.handoff_logs(path)
    has_wizard = any((path / name).is_file() for name in markers.WIZARD_FILES)
    if not (has_ari or handoff or has_wizard):
        raise NotACheckpoint(text("runs.not_a_checkpoint", path=str(path)))
    notes: list[str] = []
    recording = recording_of(path)
    if recording:  # a demo site's recorded run: said first, so no one takes it for a live one
        said = "runs.note.recording_accounted" if jobs.accounting == "yes" else "runs.note.recording"
        notes.append(text(said, recorded_at=recording["recorded_at"], nodes=recording["nodes"]))
    tree = read_tree(path, *_metric(path)) if with_nodes else TreeSummary()
    if tree.problem in TREE_PROBLEMS:
        problem = message(f"runs.tree_problem.{tree.problem}")
        if tree.source and tree.salvaged:
            notes.append(text("runs.note.salvaged", source=tree.source, problem=problem))
        elif tree.source:
            notes.append(text("runs.note.tree_elsewhere", source=tree.source, problem=problem))
        else:
            notes.append(text("runs.note.no_nodes", problem=problem))

    if tree.run_id and tree.run_id != path.name:
        notes.append(text("runs.note.renamed", tree_run=tree.run_id, run_id=path.name))
    secrets = redaction_env(path)  # the checkpoint's own .env keys too
    ari_log = tail(path / "ari.log", LOG_TAIL_LINES, MARKER_WINDOW, secrets)
    handoff_tail = tail(handoff[0], LOG_TAIL_LINES, MARKER_WINDOW, secrets) if handoff else None
    process = markers.ari_process(path)
    handoff_process = markers.handoff_process(path)
    # a follow-up of the chain is not the run: one waiting for this allocation to end, or the
    # one checking whether the search is finished, keeps no run alive
    jobs_alive = any(job.active and job.kind != "followup" for job in jobs.jobs)
    alive = process.alive or jobs_alive

    all_lines = list(ari_log.lines) + list(handoff_tail.lines if handoff_tail else ())
    stage = markers.last_stage(list(ari_log.lines)) or markers.last_stage(
        list(handoff_tail.lines) if handoff_tail else [])
    end_kind, end_line = markers.end_marker(list(handoff_tail.lines) if handoff_tail else [])
    if not end_kind:
        end_kind, end_line = markers.end_marker(list(ari_log.lines))
    started = has_ari or bool(handoff) or handoff_process.alive
    reproducing = (stage.startswith("ors_") or any(j.kind == "reproduce" and j.active for j in jobs.jobs))
    pipeline = (path / markers.PIPELINE_MARKER).exists()

    if not started:
        phase = "not-started"
    elif alive:
        phase = "reproduce" if reproducing else "paper" if pipeline else "exploring"
    elif handoff_tail and _ended_with_interrupt(list(handoff_tail.lines)):
        phase = "interrupted"
    elif end_kind == "interrupted":
        phase = "interrupted"
    elif end_kind in ("ok", "bad"):
        phase = "finished" if tree.counts.done > 0 and end_kind == "ok" else "failed"
    elif handoff_process.alive and not process.alive and (
            process.pid is None or _mtime(path / markers.PID_FILE)
            < _mtime(path / markers.HANDOFF_PID_FILE)):
        # the hand-off runs `ari run`, which has not written its .ari_pid yet (it is loading);
        # an .ari_pid older than the hand-off's is an earlier run's, left behind
        phase = "starting"
        alive, process = True, handoff_process
    elif (process.pid is None and tree.counts.total and tree.counts.running == 0
          and not pipeline and not handoff):
        # ``ari run`` started by hand (no hand-off log): the tree is all the evidence there is.
        phase = "failed" if tree.counts.done == 0 else "interrupted"
    else:
        phase = "interrupted"

    if handoff_tail and handoff_tail.lines:
        log_file, raw_tail = str(handoff[0]), handoff_tail.lines
    else:
        log_file, raw_tail = (str(path / "ari.log") if ari_log.exists else ""), ari_log.lines
    shown = [markers.shown_log_line(line) for line in raw_tail]
    log_lines = tuple(_clip(line) for line in shown if line is not None)[-LOG_TAIL_LINES:]


    findings = run_findings(path, phase=phase, tree=tree, process=process, end_line=end_line,
                            log_lines=all_lines, jobs=jobs)
    log_mtimes = [t.mtime for t in (ari_log, handoff_tail) if t]
    timeline = phase_timeline(path, phase=phase, tree_created=tree.first_node_at,
                              ari_log_lines=list(ari_log.lines), handoff_logs=handoff,
                              end_line=end_line, last_write=max(log_mtimes, default=0.0))
    mtimes = log_mtimes + [
        _mtime(path / name) for name in ("tree.json", "nodes_tree.json", "launch_config.json")]
    return RunStatus(
        run_id=path.name, checkpoint_dir=str(path), title=_title(path), phase=phase,
        nodes=tree.counts, best_metric=tree.best, stage=stage if phase in ACTIVE_PHASES else "",
        alive=alive, process=process.why, log_file=log_file, log_tail=log_lines,
        findings=tuple(sort_findings(findings)), jobs=jobs, updated_at=_iso(max(mtimes, default=0.0)),
        notes=tuple(notes), envelope=envelope, ledger=ledger, chain=chain_json(path, jobs),
        cost=run_cost(path, jobs), timeline=timeline)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


async def run_status(checkpoint: str | Path, host=None, *, with_jobs: bool = True,
                     with_nodes: bool = True) -> RunStatus:
    """``read_status`` off the event loop, with the run's jobs asked from SLURM concurrently."""
    path = Path(checkpoint).expanduser()
    if with_jobs and path.is_dir():
        if host is None:
            host = LocalHost()
        jobs = await run_jobs(path, host)
    else:
        jobs = None
    return await asyncio.to_thread(read_status, path, jobs, with_nodes=with_nodes)
