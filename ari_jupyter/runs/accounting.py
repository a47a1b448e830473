"""A run's finished jobs from SLURM's accounting: one ``sacct`` line for all the jobs known.

The queue (``squeue``) forgets a job ``MinJobAge`` after it ended (300 s by default); from then
on only accounting knows how it ended. The jobs asked for are the ones known to be the runs':
listed by the queue now, named by a job output file (``slurm_job_<id>.out``) in a run's
SLURM_LOG_DIR, or a follow-up allocation of its chain (``followups.json``: its output is
``followup_<id>.out`` in the checkpoint). They are asked in one line, ``sacct -X -P -n -j a,b,c``
(``slurm.accounting``); when no id is known at all, the user's jobs (``-u <user>``, since ``-S``
when given), as before. One job of a run leaves no id anywhere: ARI's reproduce job
(``run_reproduce`` submits it with ``sbatch --wait``, keeps no id, and its output is
``repro_sandbox/reproduce.log``). Once its log is there and the queue no longer lists it, the one
line asked for one run (status, its detail in the Runs panel; not the list of every run) is the
user's jobs since the run's start instead (``unnamed_since``): still one sacct call, its answer
the user's allocations in that window.
The caller still attributes every answer by user and work dir (``jobs.RunScope``): an id found
in a file is never trusted on its own.

Its one caller is ``jobs._queued_views``; the queue's own reading stays there.
"""
from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Iterable, Sequence

from ..ari.followup import CHAIN_FILE
from ..hosts.host import Host
from ..slurm.accounting import (ACCOUNT_FIELDS, Accounted, accounting_disabled, parse_accounting,
                                sacct_argv)
from .reading import read_json

_OUTPUT_FILE = re.compile(r"^slurm_job_([0-9]+)\.out$")
MAX_LOG_FILES = 5000
"""Entries of a log dir looked at (a log dir of thousands of runs is not walked whole)."""
TIMEOUT = 10.0
CHAIN_CAP = 256 * 1024
REPRODUCE_LOG = "repro_sandbox/reproduce.log"
"""Where ARI's run_reproduce has its job write (``--output``): there once the job started."""
_RUN_START = re.compile(r"^([0-9]{14})_")
_START_FILES = (".env", "experiment.md", "launch_config.json")
"""Files written before a run's first job (emit, or ARI's own start)."""


def log_dir_job_ids(log_dir: str) -> list[str]:
    """The job ids the job output files in a run's SLURM_LOG_DIR name (none when unreadable)."""
    ids: list[str] = []
    if not log_dir:
        return ids
    try:
        with os.scandir(log_dir) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_LOG_FILES:
                    break
                if match := _OUTPUT_FILE.match(entry.name):
                    ids.append(match.group(1))
    except OSError:  # no log dir yet, or not readable: nothing known from it
        pass
    return ids


def recorded_links(checkpoint: Path) -> list[dict[str, str]]:
    """The follow-up links the run's chain recorded (``followups.json``), each well formed:
    ``job_id``, ``after`` and ``submitted_at`` ("" when not recorded)."""
    recorded = read_json(Path(checkpoint) / CHAIN_FILE, CHAIN_CAP).data
    raw = recorded.get("links") if isinstance(recorded, dict) else None
    return [{"job_id": link["job_id"], "after": link["after"], "submitted_at": str(link.get("submitted_at", ""))}
            for link in (raw if isinstance(raw, list) else ())
            if isinstance(link, dict) and isinstance(link.get("job_id"), str) and isinstance(link.get("after"), str)]


def chain_job_ids(checkpoint: str | Path) -> list[str]:
    """The ids of the run's follow-up allocations: no job output file in SLURM_LOG_DIR names them."""
    return [link["job_id"] for link in recorded_links(Path(checkpoint))]


START_SLACK_S = 60
"""How much earlier than its first file a run's window starts: the files' clock (a login node's)
and the controller's may differ by a little."""


def run_start(checkpoint: str | Path) -> str:
    """When the run began, less ``START_SLACK_S`` (``YYYY-MM-DDTHH:MM:SS``, local time as sacct's
    ``-S`` reads it): the earliest of the run id's time stamp and the files written before its
    first job; "" when neither is there."""
    path = Path(checkpoint)
    times = []
    if stamp := _RUN_START.match(path.name):
        try:
            times.append(time.mktime(time.strptime(stamp.group(1), "%Y%m%d%H%M%S")))
        except (ValueError, OverflowError):
            pass
    for name in _START_FILES:
        try:
            times.append((path / name).stat().st_mtime)
        except OSError:
            continue
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(min(times) - START_SLACK_S)) if times else ""


def runs_start(checkpoints: Iterable[str | Path]) -> str:
    """The earliest start of these runs, or "" when one of them has none (then no window)."""
    starts = [run_start(c) for c in checkpoints]
    return "" if not starts or "" in starts else min(starts)


def unnamed_since(checkpoint: str | Path) -> str:
    """The run's start (``run_start``) when ARI's reproduce job has written its log (so it was
    submitted, and no file names its id); "" when it has not."""
    path = Path(checkpoint)
    try:
        if not (path / REPRODUCE_LOG).is_file():
            return ""
    except OSError:
        return ""
    return run_start(path)


def user_argv(user: str, since: str = "") -> list[str]:
    """The user's jobs (today's, or since ``since``): the line when no job id is known."""
    argv = ["sacct", "-X", "-P", "-n", "-u", user, "-o", ",".join(ACCOUNT_FIELDS)]
    return argv + (["-S", since] if since else [])


async def accounted(host: Host, job_ids: Iterable[str], user: str,
                    since: str = "", *, by_user: bool = False) -> tuple[list[Accounted], str]:
    """The accounting's rows of these jobs since ``since`` (one sacct line; the user's jobs
    when ``by_user`` or when no id is known) and whether accounting answered: 'yes', 'no' (the
    site keeps none, or there is no sacct) or 'unknown' (sacct failed)."""
    ids: Sequence[str] = list(dict.fromkeys(job_ids))
    argv = sacct_argv(ids, since) if ids and not by_user else user_argv(user, since)
    result = await host.run(argv, timeout=TIMEOUT)
    if result.not_found or accounting_disabled(result.output):
        return [], "no"
    if not result.ok:
        return [], "unknown"
    rows, _ = parse_accounting(result.stdout)
    return rows, "yes"
