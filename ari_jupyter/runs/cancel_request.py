"""What a cancel request asks for, or why it is refused: only an explicit, well-formed "all"
cancels every active job of a run.

The Runs panel's route takes ``{"job_ids": ["123", "124_1"]}`` (those jobs) or
``{"all": true}`` (every active job of the run); ``ari-jupyter cancel`` takes ``--job ID``
(repeatable) or ``--all``. Anything else is refused before anything is cancelled: a list, a
string, ``null`` job ids, an empty list, a misspelled or extra key, a job id that is not one.
A refusal names the problem with a shortened copy of what was sent, never the whole of it.
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Sequence
from ..i18n import t

ALL = None
"""What ``cancel_targets`` returns for "every active job of the run" (``cancel_jobs``'s None)."""

MAX_JOBS = 1000
JOB_ID = re.compile(r"[0-9]{1,20}(?:_[0-9]{1,20})?")
_SHOWN = 40


class BadCancelRequest(ValueError):
    """The request asks for nothing well-formed; ``message_id`` and ``params`` say why."""

    def __init__(self, message_id: str, **params: Any) -> None:
        self.message_id, self.params = message_id, params
        super().__init__(t(message_id, "en", **params))


def shown(value: Any) -> str:
    """``repr(value)`` cut to a few dozen characters (a 100 MB id is never echoed back)."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + f"... ({len(text)} characters)"


def job_ids(values: Iterable[Any]) -> list[str]:
    """The job ids, each checked; at most ``MAX_JOBS``; duplicates dropped, order kept."""
    out: list[str] = []
    for number, value in enumerate(values):
        if number >= MAX_JOBS:
            raise BadCancelRequest("runs.cancel.request.too_many", limit=MAX_JOBS)
        if not isinstance(value, str) or not JOB_ID.fullmatch(value.strip()):
            raise BadCancelRequest("runs.cancel.request.bad_job", value=shown(value))
        if value.strip() not in out:
            out.append(value.strip())
    if not out:
        raise BadCancelRequest("runs.cancel.request.no_jobs")
    return out


def cancel_targets(body: Any) -> list[str] | None:
    """The job ids a parsed JSON body asks to cancel, or ``ALL`` for ``{"all": true}``."""
    if not isinstance(body, dict):
        raise BadCancelRequest("runs.cancel.request.not_object", value=shown(body))
    unknown = sorted(str(k) for k in body if k not in ("job_ids", "all"))
    if unknown:
        raise BadCancelRequest("runs.cancel.request.unknown_keys",
                               keys=", ".join(shown(k) for k in unknown[:5]))
    if "job_ids" in body and "all" in body:
        raise BadCancelRequest("runs.cancel.request.both")
    if "all" in body:
        if body["all"] is not True:
            raise BadCancelRequest("runs.cancel.request.all_not_true", value=shown(body["all"]))
        return ALL
    if "job_ids" not in body:
        raise BadCancelRequest("runs.cancel.request.nothing")
    if not isinstance(body["job_ids"], list):
        raise BadCancelRequest("runs.cancel.request.not_list", value=shown(body["job_ids"]))
    return job_ids(body["job_ids"])


def cli_targets(jobs: Sequence[str] | None, all_jobs: bool) -> list[str] | None:
    """``ari-jupyter cancel``'s ``--job`` values and ``--all``: the same rules as the route."""
    if jobs and all_jobs:
        raise BadCancelRequest("runs.cancel.request.both_flags")
    if all_jobs:
        return ALL
    if not jobs:
        raise BadCancelRequest("runs.cancel.request.no_flags")
    return job_ids(jobs)
