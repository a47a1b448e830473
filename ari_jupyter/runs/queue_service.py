"""The hub's queue service and a user's server agree here: the line, the answer, the split.

On a JupyterHub, one service (``ari_jupyter.hubservice``) asks SLURM once per interval for all
users' jobs (:data:`ALL_USERS_ARGV`: the user-wide listing the Runs routes ask,
``jobs._squeue``, without ``-u``) and answers each user only their own rows, verbatim, so a
user's server reads them exactly as it reads its own ``squeue -u`` (:func:`user_argv`). The
answer is JSON (:func:`answer`); the user's server takes the rows when the answer is ``ok`` and
fresh, and asks SLURM itself otherwise.
"""
from __future__ import annotations

from typing import Any

from .jobs import SEP, SQUEUE_FIELDS, SQUEUE_FORMAT, SQUEUE_STATES, _rows, user_queue_argv

SERVICE_NAME = "ari-jupyter-status"
"""The service's name in ``c.JupyterHub.services``: its URL is ``<hub>/services/<name>/``."""
JOBS_PATH = "api/jobs"
"""``GET <service>/api/jobs/<user>``: that user's rows (the token must be that user's)."""
FIGURES_PATH = "api/figures"
"""``GET <service>/api/figures``: what the service costs and serves (a hub admin's token)."""
URL_ENV = "ARI_JUPYTER_STATUS_URL"
"""Where a user's server finds the service (the hub's ``c.Spawner.environment`` sets it)."""
ALL_USERS_ARGV = ("squeue", "-h", "-t", SQUEUE_STATES, "-o", SQUEUE_FORMAT)
RPCS_PER_QUERY = 2
"""What one ``squeue`` costs slurmctld, measured with ``sdiag`` on the test bed (Slurm 22.05):
REQUEST_JOB_INFO and the REQUEST_PARTITION_INFO squeue makes itself."""
_USER = SQUEUE_FIELDS.index("%u")


def user_argv(user: str) -> tuple[str, ...]:
    """The line a user's server runs for its user's whole queue (``jobs.user_queue_argv``): the
    one the service answers in its stead."""
    return tuple(user_queue_argv(user))


def rows_by_user(text: str) -> tuple[dict[str, str], int]:
    """squeue's all-users answer split by each row's user: ``{user: that user's rows}`` (each
    row as squeue wrote it, a line break after each) and how many rows could not be given to
    a user (they are given to no one). A job name may hold the separator: the user is counted
    from the row's end, as ``jobs._job_of_row`` reads it."""
    found: dict[str, list[str]] = {}
    unreadable = 0
    for row in _rows(text):
        parts = row.split(SEP) if row is not None else []
        if len(parts) < len(SQUEUE_FIELDS):
            unreadable += 1
            continue
        user = parts[len(parts) - len(SQUEUE_FIELDS) + _USER].strip()
        if not user:
            unreadable += 1
            continue
        found.setdefault(user, []).append(row)
    return {user: "".join(r + "\n" for r in rows) for user, rows in found.items()}, unreadable


def private_jobs(config_text: str) -> bool:
    """True when ``scontrol show config`` says ``PrivateData`` hides jobs from other users."""
    for line in config_text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "PrivateData":
            return any(v.strip().lower() in ("jobs", "all") for v in value.split(","))
    return False


def answer(state: str, *, user: str = "", rows: str = "", age_s: float | None = None,
           stale: bool = False, detail: str = "") -> dict[str, Any]:
    """The service's answer to a user: ``state`` "ok" (``rows`` are all of ``user``'s jobs, as
    of ``age_s`` seconds ago; ``stale`` when the last ask got no answer), "private" (SLURM
    hides other users' jobs from the service), "error" (no answer yet)."""
    return {"service": SERVICE_NAME, "state": state, "user": user, "rows": rows,
            "age_s": None if age_s is None else round(age_s, 1), "stale": stale, "detail": detail}


def usable_rows(reply: Any, user: str, max_age: float) -> str | None:
    """The rows a user's server may take from the service's ``reply``: None unless it is an
    ``ok``, fresh answer about this very user no older than ``max_age`` seconds."""
    if not isinstance(reply, dict) or reply.get("service") != SERVICE_NAME:
        return None
    age = reply.get("age_s")
    if (reply.get("state") != "ok" or reply.get("stale") is not False or reply.get("user") != user
            or not isinstance(reply.get("rows"), str) or not isinstance(age, (int, float))
            or age > max_age):
        return None
    return reply["rows"]

