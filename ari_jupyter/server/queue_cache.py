"""One squeue (and sacct) answer per server per interval, shared by every tab and poll.

Each open Runs panel polls its run, and each poll asks the queue for the user's jobs: without
sharing, the controller's load grows with every tab a user leaves open and with the poll's
pace (benchmarks/controller_load.py). The server's runs routes run their commands through one
``QueueCachingHost``: the same user-wide ``squeue``/``sacct`` line within ``CACHE_SECONDS`` is
answered from the last answer (one ``squeue -u`` per interval covers all of the user's runs,
however many panels and tabs follow them: 2 RPCs, REQUEST_JOB_INFO and the
REQUEST_PARTITION_INFO squeue 22.05 makes itself), requests that arrive while one is out wait
for it, and a
``scancel`` forgets what was cached so the run shown after Cancel is the queue of now.
Job-specific ``squeue -j`` lines (Cancel's checks) always go to SLURM; the Runs view's own
job-specific lines, asked on every poll, are shared like the listing: ``squeue --start -j``
(why a pending job waits) and ``sacct -j`` (how the run's jobs ended).

On a hub that offers its queue service (``hub_queue``), the user-wide ``squeue -u`` line is
answered by the service (one squeue for the whole hub) and cached here as its own answer would
be, for what is left of ``CACHE_SECONDS`` at the age the service gives (a job's state shows
within 30 s with the service too); when the service gives no usable answer, this server asks
SLURM as above.
"""
from __future__ import annotations

import asyncio
import time
from typing import Mapping, Sequence

from ..base.commands import CommandResult
from ..hosts.host import LocalHost
from .hub_queue import HubQueueClient

CACHE_SECONDS = 30.0
"""How long a queue answer is reused: a job's state shows within 30 s (a run's phase comes from
its files, never from here); 4 RPCs a minute per server, however many tabs poll."""
SHARED = ("squeue", "sacct")


class QueueCachingHost(LocalHost):
    """This machine, with user-wide queue listings shared for :data:`CACHE_SECONDS`."""

    def __init__(self, env: Mapping[str, str] | None = None, *, cache_seconds: float = CACHE_SECONDS,
                 clock=time.monotonic, service: HubQueueClient | None = None) -> None:
        super().__init__(env)
        self.service = service if service is not None else HubQueueClient.from_env(self.env)
        self._fresh_next = False
        self._cache_seconds = cache_seconds
        self._clock = clock
        self._answers: dict[tuple, tuple[float, asyncio.Future]] = {}

    async def run(self, argv: Sequence[str], timeout: float,
                  env: Mapping[str, str] | None = None) -> CommandResult:
        argv = list(argv)
        if argv and argv[0] == "scancel":
            self._answers.clear()
            self._fresh_next = True
        if not argv or argv[0] not in SHARED or _fresh_only(argv) or env is not None:
            return await super().run(argv, timeout, env)
        key = tuple(argv)
        now = self._clock()
        held = self._answers.get(key)
        if held is not None and now - held[0] < self._cache_seconds:
            return await asyncio.shield(held[1])
        answer = asyncio.ensure_future(self._ask(argv, timeout))
        self._answers[key] = (now, answer)
        try:
            result = await asyncio.shield(answer)
        except BaseException:
            self._answers.pop(key, None)
            raise
        if result.returncode != 0:  # a failure is not kept: the next poll asks again
            self._answers.pop(key, None)
        return result

    async def _ask(self, argv: list[str], timeout: float) -> CommandResult:
        """The hub's service's answer to ``argv`` when it gives one, else SLURM's."""
        if self.service is not None and self.service.answers(tuple(argv)):
            fresh, self._fresh_next = self._fresh_next, False
            rows = await self.service.rows(fresh=fresh)
            if rows is not None:
                held = self._answers.get(tuple(argv))
                if held is not None:  # as old as the service says: held for what is left of 30 s
                    self._answers[tuple(argv)] = (held[0] - self.service.age, held[1])
                return CommandResult(tuple(argv), 0, rows, "")
        return await super().run(argv, timeout)


def _fresh_only(argv: Sequence[str]) -> bool:
    """A line whose answer must be of now: ``squeue -j`` (Cancel checks its jobs with it)."""
    return argv[0] == "squeue" and "-j" in argv and "--start" not in argv
