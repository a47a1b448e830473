"""A run's finished jobs from SLURM's accounting: one ``sacct`` line for all the jobs known.

The queue (``squeue``) forgets a job ``MinJobAge`` after it ended (300 s by default); from then
on only accounting knows how it ended. The jobs asked for are the ones known to be the runs':
listed by the queue now, or named by a job output file (``slurm_job_<id>.out``) in a run's
SLURM_LOG_DIR. They are asked in one line, ``sacct -X -P -n -j a,b,c`` (``slurm.accounting``);
when no id is known at all, the user's jobs (``-u <user>``, since ``-S`` when given), as before.
The caller still attributes every answer by user and work dir (``jobs.RunScope``): an id found
in a file is never trusted on its own.

Its one caller is ``jobs._queued_views``; the queue's own reading stays there.
"""
from __future__ import annotations

import os
import re
from typing import Iterable, Sequence

from ..hosts.host import Host
from ..slurm.accounting import (ACCOUNT_FIELDS, Accounted, accounting_disabled, parse_accounting,
                                sacct_argv)

_OUTPUT_FILE = re.compile(r"^slurm_job_([0-9]+)\.out$")
MAX_LOG_FILES = 5000
"""Entries of a log dir looked at (a log dir of thousands of runs is not walked whole)."""
TIMEOUT = 10.0


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


def user_argv(user: str, since: str = "") -> list[str]:
    """The user's jobs (today's, or since ``since``): the line when no job id is known."""
    argv = ["sacct", "-X", "-P", "-n", "-u", user, "-o", ",".join(ACCOUNT_FIELDS)]
    return argv + (["-S", since] if since else [])


async def accounted(host: Host, job_ids: Iterable[str], user: str,
                    since: str = "") -> tuple[list[Accounted], str]:
    """The accounting's rows of these jobs (one sacct line) and whether accounting answered:
    'yes', 'no' (the site keeps none, or there is no sacct) or 'unknown' (sacct failed)."""
    ids: Sequence[str] = list(dict.fromkeys(job_ids))
    argv = sacct_argv(ids) if ids else user_argv(user, since)
    result = await host.run(argv, timeout=TIMEOUT)
    if result.not_found or accounting_disabled(result.output):
        return [], "no"
    if not result.ok:
        return [], "unknown"
    rows, _ = parse_accounting(result.stdout)
    return rows, "yes"
