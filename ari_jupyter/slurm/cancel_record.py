"""Which of a run's SLURM jobs ari-jupyter cancelled: a small record in the checkpoint.

A cancelled job's output ends with slurmstepd's ``*** JOB 4 ON n1 CANCELLED AT ...`` and says
nothing of who cancelled it. When ari-jupyter cancels a job (the Runs panel's Cancel,
``ari-jupyter cancel``), the job id goes into ``<checkpoint>/.ari-jupyter-cancels.json``; the
doctor reads it to name the cause instead of guessing. A recorded demo run that was cancelled
from the panel while it was recorded carries the same record.
"""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Mapping

from ..base.bounded_read import read_window
from ..base.files import atomic_write

RECORD = ".ari-jupyter-cancels.json"
CAP = 256 * 1024
"""The most of a record read; a larger file is not ari-jupyter's and is ignored."""
BY = ("ari-jupyter", "runs-panel")
"""Who asked: ari-jupyter's cancel (the Runs panel or ``ari-jupyter cancel``), or the Runs panel
as a recording saw it."""


def read_cancels(checkpoint: str | os.PathLike) -> dict[str, Mapping[str, str]]:
    """The record's entries by job id; empty when there is none or it is not one (bounded read,
    a regular file only)."""
    try:
        text = read_window(os.path.join(os.fspath(checkpoint), RECORD), cap=CAP, head=CAP, tail=0).text
        data = json.loads(text)
    except (OSError, ValueError):  # none, not a regular file, too large, not JSON
        return {}
    entries = data.get("cancelled") if isinstance(data, dict) else None
    out: dict[str, Mapping[str, str]] = {}
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and str(entry.get("job_id", "")).strip() and entry.get("by") in BY:
            out[str(entry["job_id"]).strip()] = {k: str(entry.get(k) or "") for k in ("job_id", "by", "at", "user")}
    return out


def record_cancels(checkpoint: str | os.PathLike, job_ids: Iterable[str], *, by: str = "ari-jupyter",
                   user: str = "", at: str | None = None) -> None:
    """Add ``job_ids`` to the checkpoint's record (written whole, atomically)."""
    if by not in BY:
        raise ValueError(f"by must be one of {BY}, got {by!r}")
    known = dict(read_cancels(checkpoint))
    when = at if at is not None else datetime.now(timezone.utc).isoformat(timespec="seconds")
    for job_id in job_ids:
        known[str(job_id)] = {"job_id": str(job_id), "by": by, "at": when, "user": user}
    data = {"cancelled": list(known.values())}
    atomic_write(Path(checkpoint) / RECORD, (json.dumps(data, indent=1) + "\n").encode("utf-8"), 0o644)
