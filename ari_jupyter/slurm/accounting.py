"""SLURM's accounting (``sacct``) for known jobs: the command line, and its answer read back.

``sacct -X -P -n -j <ids> -o ACCOUNT_FIELDS``: one row per allocation (``-X``: no steps),
``|``-separated (``-P``), no header (``-n``). A job name may hold a ``|``; the other fields are
counted from both ends so it keeps its row. Pure: text in, values out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .parsers import parse_count, parse_slurm_duration

ACCOUNT_FIELDS = ("JobID", "JobName", "State", "ExitCode", "Elapsed", "ElapsedRaw", "NNodes",
                  "NodeList", "User", "WorkDir", "Timelimit")
DISABLED = "accounting storage is disabled"
"""What sacct says where the site keeps no accounting (``AccountingStorageType=none``)."""
_JOB_ID = re.compile(r"^[0-9]+(?:_[0-9]+)?$")
MAX_IDS = 2000
"""Ids asked in one sacct line (a command line stays far below ARG_MAX)."""


def sacct_argv(job_ids: Sequence[str], since: str = "") -> list[str]:
    """The one sacct line for these jobs: only well-formed ids, each once, in order given;
    with ``-S since`` when given. Asked by id alone, sacct answers from the start of its records,
    so an id SLURM gave again (a cluster started anew, ids wrapping past MaxJobId) brings back
    the old job under it too: ``since`` (the runs' start) leaves those out."""
    ids = list(dict.fromkeys(j for j in job_ids if _JOB_ID.match(j)))[:MAX_IDS]
    argv = ["sacct", "-X", "-P", "-n", "-j", ",".join(ids), "-o", ",".join(ACCOUNT_FIELDS)]
    return argv + (["-S", since] if since else [])


@dataclass(frozen=True, slots=True)
class Accounted:
    """One allocation as accounting recorded it."""

    job_id: str
    name: str
    state: str
    """``COMPLETED``, ``FAILED``, ``TIMEOUT``, ``CANCELLED`` (its ``by <uid>`` dropped), ..."""
    exit_code: str
    """``<code>:<signal>``, as sacct prints it."""
    elapsed: str
    elapsed_s: int
    nodes: int
    node_list: str
    user: str
    work_dir: str
    time_limit: str

    @property
    def node_seconds(self) -> int:
        """Elapsed seconds times allocated nodes (0 for a job that never ran)."""
        return self.elapsed_s * self.nodes


def parse_accounting(text: str) -> tuple[list[Accounted], int]:
    """The rows of ``sacct_argv``'s answer and how many lines could not be read."""
    rows: list[Accounted] = []
    unreadable = 0
    width = len(ACCOUNT_FIELDS)
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split("|")
        if len(parts) < width or not _JOB_ID.match(parts[0].strip()):
            unreadable += 1
            continue
        extra = len(parts) - width  # separators inside the job name
        name = "|".join(parts[1:2 + extra])
        (state, exit_code, elapsed, elapsed_raw, nodes, node_list, user, work_dir,
         limit) = (p.strip() for p in parts[2 + extra:])
        try:
            count = parse_count(nodes)
            seconds = int(elapsed_raw) if elapsed_raw.isascii() and elapsed_raw.isdigit() \
                else parse_slurm_duration(elapsed)
        except ValueError:
            count = seconds = None
        if count is None or seconds is None or not state:
            unreadable += 1
            continue
        rows.append(Accounted(parts[0].strip(), name.strip(), state.split()[0], exit_code, elapsed,
                              seconds, count, node_list, user, work_dir, limit))
    return rows, unreadable


def accounting_disabled(output: str) -> bool:
    """Whether sacct's output says the site keeps no accounting."""
    return DISABLED in output.lower()


LIMIT_FIELDS = ("Account", "Partition", "GrpTRESMins", "GrpTRESRunMins", "MaxTRESMins", "GrpJobs",
                "MaxJobs", "MaxSubmit", "MaxWall", "GrpWall")


def assoc_argv(user: str) -> list[str]:
    """The user's associations and their limits, as ``sacctmgr show assoc`` lets a user see them."""
    return ["sacctmgr", "-n", "-P", "show", "assoc", "where", f"user={user}",
            "format=" + ",".join(LIMIT_FIELDS)]


def assoc_limits(text: str) -> list[str]:
    """Each association that has a limit, as ``account[/partition]: Name=value, ...``; none when
    no limit is set (or nothing could be read): a view then says nothing rather than guess."""
    out = []
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) != len(LIMIT_FIELDS) or not parts[0].strip():
            continue
        limits = [f"{name}={value.strip()}" for name, value in zip(LIMIT_FIELDS[2:], parts[2:])
                  if value.strip()]
        if limits:
            where = parts[0].strip() + (f"/{parts[1].strip()}" if parts[1].strip() else "")
            out.append(f"{where}: {', '.join(limits)}")
    return list(dict.fromkeys(out))


SHARE_FIELDS = ("Account", "User", "RawShares", "NormShares", "EffectvUsage", "FairShare")


def share_argv(user: str) -> list[str]:
    """The user's own fair-share rows (``sshare -U``), where the site lets a user see them."""
    return ["sshare", "-n", "-P", "-U", "-u", user, "-o", ",".join(SHARE_FIELDS)]


def fair_shares(text: str) -> list[str]:
    """Each of the user's associations with a fair-share factor, as ``account: FairShare=f``
    (0 to 1: 1 is the most priority; it falls as the account uses its share); none when sshare
    shows no factor: no accounting (no rows), no fair-share priority (``priority/basic`` leaves
    the normalized shares empty and prints a factor of 0 that means nothing), a site that hides
    usage, or nothing could be read: a view then says nothing rather than guess."""
    out = []
    for line in text.splitlines():
        parts = [part.strip() for part in line.split("|")]
        if len(parts) != len(SHARE_FIELDS) or not parts[0] or not parts[1] or not parts[3]:
            continue
        try:
            factor = float(parts[5])
        except ValueError:
            continue
        if 0.0 <= factor <= 1.0:
            out.append(f"{parts[0]}: FairShare={parts[5]}")
    return list(dict.fromkeys(out))
