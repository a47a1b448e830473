"""The run's pending jobs with their reason and expected start (``slurm.pending``): one
``squeue --start`` line for all of them, asked only when a job of a run is pending.

Its one caller is ``jobs._queued_views``.
"""
from __future__ import annotations

from typing import Iterable

from ..hosts.host import Host
from ..slurm.pending import Waiting, parse_start, start_argv

TIMEOUT = 10.0


async def waiting(host: Host, job_ids: Iterable[str]) -> dict[str, Waiting]:
    """Why each of these pending jobs waits and when it is expected to start; empty when
    squeue does not say (the job started or ended meanwhile, squeue failed)."""
    ids = list(dict.fromkeys(job_ids))
    if not ids:
        return {}
    result = await host.run(start_argv(ids), timeout=TIMEOUT)
    return parse_start(result.stdout) if result.ok else {}
