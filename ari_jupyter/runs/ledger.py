"""ARI's submission ledger (``ari.hpc.submission-ledger/v1``): every job the newer ARI submitted.

The newer hpc skill (kotama7/ARI ``ari-skill-hpc/ari_skill_hpc/scheduler.py`` at 78ca18c8,
``SubmissionLedger``) writes one record per request before it runs ``sbatch`` and completes it
with the job's handle afterwards::

    {"schema_version": "ari.hpc.submission-ledger/v1",
     "records": {"<request digest>": {"state": "claim" | "submitted", "claimed_at": "...",
                 "committed_at": "...", "request": {...}, "handle": {...ari.hpc.job-handle/v1},
                 "script_digest": "sha256:..."}}}

``request`` is an ``ari.hpc.job-request/v1`` (a typed job: ``job_submit``, the reproduce job)
or an ``ari.hpc.script-bridge/v1`` payload (``slurm_submit``, the BFTS agent's scripts: job
name, work dir, ``resources`` as in a job request, ``modules``). The ledger outlives SLURM's
memory of a job, so every job ARI submitted is listed with its exact request and handle, and
the envelope compares against what was asked, not only what squeue still shows.

Where: ``ARI_HPC_LEDGER_PATH`` in the checkpoint's ``.env`` (the wizard writes one for the
newer ARI), else ARI's default ``<checkpoint>/hpc-jobs-v1.json``. Read bounded
(``base.bounded_read``); nothing here raises on a foreign, half-written or huge file.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..ari.contracts import LEDGER_FILE
from ..ari.dotenv import read_dotenv
from ..base.bounded_read import BoundedReadError, read_window
from ..i18n import message
from .jobs import REPRODUCE_JOB_NAME, Job

SCHEMA = "ari.hpc.submission-ledger/v1"
REQUEST_SCHEMA = "ari.hpc.job-request/v1"
BRIDGE_SCHEMA = "ari.hpc.script-bridge/v1"
LEDGER_CAP = 16 * 1024 * 1024
"""A ledger larger than this is not read (each record is a few KB; thousands fit)."""
MAX_RECORDS = 10_000
FORGOTTEN = "UNKNOWN"
"""A ledger job SLURM no longer lists: ARI's own word for a finished job without accounting."""


@dataclass(frozen=True)
class LedgerEntry:
    """One record: the job's handle (None while only claimed) and its exact request."""

    request_digest: str
    state: str
    request: Mapping[str, Any]
    handle: Mapping[str, Any] | None
    claimed_at: str = ""
    committed_at: str = ""

    @property
    def job_id(self) -> str:
        value = (self.handle or {}).get("job_id")
        return value if isinstance(value, str) else ""

    @property
    def kind(self) -> str:
        """'bfts' for the agent's scripts; a typed request named like ARI's reproduce job is
        'reproduce', any other typed request the agent's too."""
        if self.request.get("schema_version") == REQUEST_SCHEMA and \
                str(self.request.get("job_name", "")).startswith(REPRODUCE_JOB_NAME):
            return "reproduce"
        return "bfts"

    @property
    def resources(self) -> Mapping[str, Any]:
        value = self.request.get("resources")
        return value if isinstance(value, Mapping) else {}

    def to_json(self) -> dict[str, Any]:
        return {"request_digest": self.request_digest, "state": self.state,
                "job_id": self.job_id, "kind": self.kind, "claimed_at": self.claimed_at,
                "committed_at": self.committed_at, "request": dict(self.request),
                "handle": dict(self.handle) if self.handle is not None else None}


@dataclass(frozen=True)
class Ledger:
    path: str
    entries: tuple[LedgerEntry, ...] = ()
    problem: Mapping[str, Any] | None = None
    """Why the ledger could not be read (a sentence as data), None when it was."""

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "schema_version": SCHEMA, "problem": self.problem,
                "entries": [entry.to_json() for entry in self.entries]}


def ledger_paths(checkpoint: Path) -> list[Path]:
    """Where the run's ledger may be, first the one ``.env`` names."""
    named = read_dotenv(Path(checkpoint) / ".env").get("ARI_HPC_LEDGER_PATH", "").strip()
    paths = [Path(named)] if named.startswith("/") else []
    return paths + [Path(checkpoint) / LEDGER_FILE]


def read_ledger(checkpoint: str | Path) -> Ledger | None:
    """The run's ledger, None when there is none (ARI e41c806 keeps none)."""
    for path in ledger_paths(Path(checkpoint)):
        try:
            if not path.exists():
                continue
        except OSError:
            continue
        return parse_ledger_file(path)
    return None


def parse_ledger_file(path: Path) -> Ledger:
    try:
        window = read_window(path, cap=LEDGER_CAP, head=LEDGER_CAP, tail=0, errors="strict")
    except BoundedReadError as exc:
        return Ledger(str(path), problem=message(exc.message_id, **exc.params))
    except (OSError, UnicodeDecodeError) as exc:
        return Ledger(str(path), problem=message("runs.ledger.unreadable", path=str(path),
                                                 error=str(exc)))
    return parse_ledger(window.text, str(path))


def parse_ledger(text: str, path: str = "") -> Ledger:
    """The entries of a ledger's text, oldest claim first; a problem for anything not v1."""
    try:
        value = json.loads(text)
    except ValueError:
        return Ledger(path, problem=message("runs.ledger.invalid", path=path))
    records = value.get("records") if isinstance(value, dict) else None
    if not isinstance(value, dict) or value.get("schema_version") != SCHEMA \
            or not isinstance(records, dict):
        return Ledger(path, problem=message("runs.ledger.invalid", path=path))
    entries = []
    for digest, record in list(records.items())[:MAX_RECORDS]:
        if not isinstance(record, dict) or not isinstance(record.get("request"), dict):
            continue
        handle = record.get("handle")
        entries.append(LedgerEntry(
            request_digest=str(digest), state=str(record.get("state", "")),
            request=record["request"], handle=handle if isinstance(handle, dict) else None,
            claimed_at=str(record.get("claimed_at", "")),
            committed_at=str(record.get("committed_at", ""))))
    entries.sort(key=lambda e: (e.claimed_at, e.request_digest))
    return Ledger(path, tuple(entries))


# -- the jobs, with what the ledger recorded --------------------------------------------------

def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def asked(entry: LedgerEntry) -> dict[str, str]:
    """The recorded request as squeue's columns (``Job`` fields the envelope compares)."""
    res = entry.resources
    nodes = _int(res.get("nodes")) or 1
    tasks = _int(res.get("tasks")) or 1
    per_node = _int(res.get("tasks_per_node")) or -(-tasks // nodes)
    cpus = (_int(res.get("cpus_per_task")) or 1) * per_node
    gpus = _int(res.get("gpus_per_node")) or (_int(res.get("gpus_per_task")) or 0) * per_node
    return {"partition": str(res.get("partition") or ""), "nodes": str(nodes),
            "cpus_per_node": str(cpus), "tres_per_node": f"gres/gpu:{gpus}" if gpus else "",
            "time_limit": str(res.get("walltime") or "")}


def with_ledger(jobs: Sequence[Job], ledger: Ledger | None) -> list[Job]:
    """The run's jobs, and every job of the ledger SLURM no longer lists (state ``UNKNOWN``,
    ``source`` "ledger"); each ledger job compared by what its recorded request asked (SLURM's
    own columns kept where it still shows them)."""
    if ledger is None:
        return list(jobs)
    by_id = {job.job_id: job for job in jobs}
    out = list(jobs)
    for entry in ledger.entries:
        if not entry.job_id:
            continue  # claimed, never submitted (or its outcome unknown to ARI itself)
        recorded = asked(entry)
        known = by_id.get(entry.job_id)
        if known is not None:
            filled = {k: v for k, v in recorded.items() if not getattr(known, k)}
            out[out.index(known)] = replace(known, kind=known.kind or entry.kind, **filled)
            continue
        out.append(Job(job_id=entry.job_id, name=str(entry.request.get("job_name", "")),
                       state=FORGOTTEN, work_dir=str(entry.request.get("work_dir", "")),
                       kind=entry.kind, source="ledger", **recorded))
    return out
