"""One squeue for the whole hub: asked at most once per interval, answered to each user alone.

``HubQueue`` holds the last all-users answer (``queue_service.ALL_USERS_ARGV``) split by user.
A user's request within the interval is answered from it; the first one after asks SLURM
again (an idle hub asks nothing). A request may ask for a fresh answer (after a Cancel): it
gets one when neither ceiling forbids it, else the held one. The ceilings, in RPCs a minute:
``hub_ceiling`` bounds all the service's queries (the interval is never shorter than it
allows), ``user_ceiling`` the fresh answers one user's requests may cause. When SLURM does not
answer, the last answer is given on, marked stale, and asked again an interval later; a query
never waits longer than ``timeout``.

``PrivateData``: when ``scontrol show config`` (asked once, on the first request) says jobs are private
and the service is neither root nor the SlurmUser, squeue would show it only its own jobs:
the service then answers "private" to everyone and asks squeue nothing (each user's server
asks its own). Until ``scontrol`` answers, the service answers "error" (servers ask their own).
"""
from __future__ import annotations

import asyncio
import os
import pwd
import time
from collections import deque
from typing import Any, Callable

from ..hosts.host import Host
from ..runs.queue_service import ALL_USERS_ARGV, RPCS_PER_QUERY, answer, private_jobs, rows_by_user

QUERY_TIMEOUT = 10.0
"""Seconds one squeue may take; a request never waits longer for it."""
CONFIG_ARGV = ("scontrol", "show", "config")


def spacing(ceiling: float) -> float:
    """Seconds between two queries so that they cost at most ``ceiling`` RPCs a minute."""
    return 60.0 * RPCS_PER_QUERY / ceiling if ceiling > 0 else float("inf")


def slurm_user(config_text: str) -> str:
    """The ``SlurmUser`` name ``scontrol show config`` gives (``slurm(64030)``: ``slurm``)."""
    for line in config_text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "SlurmUser":
            return value.strip().split("(")[0]
    return ""


def _me() -> str:
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


class HubQueue:
    """The hub's one queue answer, its budget and its figures."""

    def __init__(self, host: Host, *, interval: float = 30.0, hub_ceiling: float = 10.0,
                 user_ceiling: float = 4.0, timeout: float = QUERY_TIMEOUT,
                 clock: Callable[[], float] = time.monotonic, me: Callable[[], str] = _me) -> None:
        self.host = host
        self.hub_spacing = spacing(hub_ceiling)
        self.interval = max(interval, self.hub_spacing)
        self.user_spacing = max(spacing(user_ceiling), self.hub_spacing)
        self.hub_ceiling, self.user_ceiling = hub_ceiling, user_ceiling
        self.timeout = timeout
        self._clock = clock
        self._me = me
        self._rows: dict[str, str] | None = None
        self._answered_at: float | None = None
        self._asked_at: float | None = None
        self._stale = False
        self._detail = ""
        self._private: bool | None = None
        self._private_asked: asyncio.Future | None = None
        self._private_failed_at = float("-inf")
        self._fresh_at: dict[str, float] = {}
        self._inflight: asyncio.Future | None = None
        self._rpc_times: deque[float] = deque()
        self.queries = 0
        self.rpcs = 0
        self.requests = 0
        self.unreadable = 0
        self._served: set[str] = set()

    def _spent(self, rpcs: int) -> None:
        now = self._clock()
        self.rpcs += rpcs
        self._rpc_times.extend([now] * rpcs)

    async def check_private(self) -> bool | None:
        """Whether SLURM hides other users' jobs from this service; None while ``scontrol``
        has not answered (asked once; again, within the hub's ceiling, when it did not answer).
        Requests that come meanwhile wait for that one answer."""
        if self._private_asked is None:
            if self._clock() - self._private_failed_at < self.hub_spacing:
                return None
            self._private_asked = asyncio.ensure_future(self._ask_private())
        return await asyncio.shield(self._private_asked)

    async def _ask_private(self) -> bool | None:
        result = await self.host.run(list(CONFIG_ARGV), timeout=self.timeout)
        self._spent(1)  # REQUEST_BUILD_INFO
        if not result.ok:
            self._private_asked, self._private_failed_at = None, self._clock()
            self._detail = "scontrol show config: no answer"
            return None
        me = self._me()
        self._private = private_jobs(result.stdout) and me != "root" and me != slurm_user(result.stdout)
        return self._private

    def _due(self, user: str, fresh: bool) -> bool:
        now = self._clock()
        if self._asked_at is None:
            return True
        since = now - self._asked_at
        if fresh and since >= self.hub_spacing and now - self._fresh_at.get(user, -1e18) >= self.user_spacing:
            self._fresh_at[user] = now
            return True
        return since >= self.interval

    async def _query(self) -> None:
        self._asked_at = self._clock()
        self.queries += 1
        try:
            result = await asyncio.wait_for(self.host.run(list(ALL_USERS_ARGV), timeout=self.timeout),
                                            self.timeout + 2)
        except asyncio.TimeoutError:
            result = None
        self._spent(RPCS_PER_QUERY)
        if result is None or not result.ok or result.truncated:
            self._stale = True
            self._detail = ("squeue: no answer" if result is None or result.timed_out
                            else "squeue: answer cut" if result.truncated
                            else (result.output.strip().splitlines() or [f"exit {result.returncode}"])[-1][-300:])
            return
        self._rows, self.unreadable = rows_by_user(result.stdout)
        self._answered_at = self._clock()
        self._stale, self._detail = False, ""

    async def answer_for(self, user: str, fresh: bool = False) -> dict[str, Any]:
        """``queue_service.answer`` for ``user``: their rows only."""
        self.requests += 1
        private = await self.check_private()
        if private is None:  # it cannot tell whether squeue would show everyone's jobs
            return answer("error", user=user, detail=self._detail)
        if private:
            return answer("private", user=user,
                          detail="PrivateData=jobs: this service sees only its own jobs")
        idle = self._inflight is None or self._inflight.done()
        if idle and self._due(user, fresh):  # requests that come meanwhile share this query
            self._inflight = asyncio.ensure_future(self._query())
        if self._inflight is not None and not self._inflight.done():
            await asyncio.shield(self._inflight)
        if self._rows is None:
            return answer("error", user=user, detail=self._detail)
        self._served.add(user)
        return answer("ok", user=user, rows=self._rows.get(user, ""), stale=self._stale,
                      age_s=self._clock() - self._answered_at, detail=self._detail)

    def figures(self) -> dict[str, Any]:
        """What the service has cost and served: for the admin's route."""
        now = self._clock()
        while self._rpc_times and now - self._rpc_times[0] > 60:
            self._rpc_times.popleft()
        return {"queries": self.queries, "rpcs": self.rpcs, "rpcs_last_minute": len(self._rpc_times),
                "requests": self.requests, "users_served": len(self._served),
                "last_answer_age_s": None if self._answered_at is None else round(now - self._answered_at, 1),
                "stale": self._stale, "detail": self._detail, "private_data": self._private,
                "unreadable_rows": self.unreadable, "interval_s": self.interval,
                "hub_ceiling_rpm": self.hub_ceiling, "user_ceiling_rpm": self.user_ceiling,
                "rpcs_per_query": RPCS_PER_QUERY}
