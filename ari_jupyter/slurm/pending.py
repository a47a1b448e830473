"""Why a pending job waits and when SLURM expects it to start: ``squeue --start``.

``squeue --start -h -j <ids> -o '%i|%r|%S'``: the job, its reason (``Resources``,
``Priority``, ``ReqNodeNotAvail, UnavailableNodes:n1``, ...) and the start the scheduler
expects (ISO time, or ``N/A`` while it has none). Only pending jobs are listed. Each common
reason has a message saying what the user can do (``runs.pending.advice.<Reason>`` in the
catalogs); any other reason is named as SLURM gives it. Pure: text in, values out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

FORMAT = "%i|%r|%S"
_JOB_ID = re.compile(r"^[0-9]+(?:_[0-9]+)?$")
_ISO = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$")
ADVISED = ("Resources", "Priority", "QOSMaxJobsPerUserLimit", "AssocMaxJobsLimit", "ReqNodeNotAvail",
           "PartitionTimeLimit", "PartitionNodeLimit", "Dependency", "DependencyNeverSatisfied",
           "BeginTime", "JobHeldUser", "JobHeldAdmin")
"""The reasons with advice of their own; ``runs.pending.advice.other`` names any other."""


@dataclass(frozen=True, slots=True)
class Waiting:
    job_id: str
    reason: str
    """The reason's code: ``ReqNodeNotAvail`` of ``ReqNodeNotAvail, UnavailableNodes:n1``."""
    expected_start: str
    """ISO time the scheduler expects the job to start; empty while it has none."""



def advice_id(reason: str) -> str:
    """The message id of what the user can do about ``reason``."""
    return f"runs.pending.advice.{reason if reason in ADVISED else 'other'}"


def start_argv(job_ids: Sequence[str]) -> list[str]:
    ids = list(dict.fromkeys(j for j in job_ids if _JOB_ID.match(j)))
    return ["squeue", "--start", "-h", "-j", ",".join(ids), "-o", FORMAT]


def parse_start(text: str) -> dict[str, Waiting]:
    """The rows of ``start_argv``'s answer by job id (lines it cannot read are left out)."""
    out: dict[str, Waiting] = {}
    for line in text.splitlines():
        job_id, sep, rest = line.partition("|")
        reason, sep2, start = rest.rpartition("|")
        if not (sep and sep2) or not _JOB_ID.match(job_id.strip()):
            continue
        code = reason.split(",")[0].strip()
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", code) or code == "None":
            code = ""
        start = start.strip()
        out[job_id.strip()] = Waiting(job_id.strip(), code, start if _ISO.match(start) else "")
    return out
