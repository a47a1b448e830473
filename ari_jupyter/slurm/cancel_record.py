"""Which of a run's SLURM jobs ari-jupyter cancelled: the record's format (text in, values out).

A cancelled job's output ends with slurmstepd's ``*** JOB 4 ON n1 CANCELLED AT ...`` and says
nothing of who cancelled it. When ari-jupyter cancels a job (the Runs panel's Cancel,
``ari-jupyter cancel``), ``runs.jobs`` adds the job id to ``<checkpoint>/.ari-jupyter-cancels.json``;
a recorded demo run whose panel cancelled jobs while it was recorded is placed with the same
record (``hosts.recorded_run``); the doctor reads it to name the cause instead of guessing.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Iterable, Mapping

RECORD = ".ari-jupyter-cancels.json"
CAP = 256 * 1024
"""The most of a record read; a larger file is not ari-jupyter's and is ignored."""
BY = ("ari-jupyter", "runs-panel")
"""Who asked: ari-jupyter's cancel (the Runs panel or ``ari-jupyter cancel``), or the Runs panel
as a recording saw it."""


def parse_cancels(text: str) -> dict[str, Mapping[str, str]]:
    """The record's entries by job id; empty when the text is not one."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    entries = data.get("cancelled") if isinstance(data, dict) else None
    out: dict[str, Mapping[str, str]] = {}
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and str(entry.get("job_id", "")).strip() and entry.get("by") in BY:
            out[str(entry["job_id"]).strip()] = {k: str(entry.get(k) or "") for k in ("job_id", "by", "at", "user")}
    return out


def render_cancels(known: Mapping[str, Mapping[str, str]], job_ids: Iterable[str], *, by: str = "ari-jupyter",
                   user: str = "", at: str | None = None) -> str:
    """The record's text: ``known`` (``parse_cancels`` of the file there) with ``job_ids`` added."""
    if by not in BY:
        raise ValueError(f"by must be one of {BY}, got {by!r}")
    entries = dict(known)
    when = at if at is not None else datetime.now(timezone.utc).isoformat(timespec="seconds")
    for job_id in job_ids:
        entries[str(job_id)] = {"job_id": str(job_id), "by": by, "at": when, "user": user}
    return json.dumps({"cancelled": list(entries.values())}, indent=1) + "\n"
