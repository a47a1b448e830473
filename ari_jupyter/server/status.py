"""What the status bar shows: the allocation from the server's environment plus time left.

The allocation comes from the environment the server was started with (it does not change
while the server runs). Outside an allocation, with a demo site configured (``ARI_JUPYTER_DEMO_SITE``
or ``c.AriWizard.demo_site``, as the wizard chooses its site), it is the demo site's recorded
allocation, marked ``"demo": {"site": name}``: the status bar shows it as a demo. A wizard that
runs under this server names its own site (``wizard.site_choice``), and the bar follows it.

Time left comes from the core ``time_left`` probe (squeue), run on the async host API with a
short timeout, once: the job's end is fixed, so later answers count that one down on this
machine's clock and ask slurmctld nothing (``time_left_age_s`` says how old the squeue answer
is). It is asked again after :data:`REREAD_SECONDS` (an admin may have run ``scontrol update
TimeLimit=``), when the count reaches zero, or when the request asks (``?refresh=1``). An
answer that cannot be counted (unknown) is kept :data:`CACHE_SECONDS`. When a later read gets no
answer (slurmctld down or slow) the last answer goes on being counted down, marked
``time_left_stale``. Concurrent requests share one squeue; none blocks the IO loop.
"""
from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Awaitable, Callable, Mapping

from ..hosts.host import LocalHost
from ..probes import ProbeContext, run_probes
from ..base.verdict import ProbeResult
from ..probes.slurm import time_left_verdict
from ..slurm.parsers import TimeLeft, format_slurm_duration
from ..slurm.allocation import Allocation
from ..wizard.config import wizard_config
from ..wizard.site_choice import wizard_site
from ..hosts.recorded_site import RecordedSite
from ..i18n import message, say
from ..base.redact import redact_tree
from ..ari.time_fit import idle_cull_seconds, idle_duration

TIME_LEFT_TIMEOUT = 3.0
"""Seconds squeue may take; a slow controller gives status 'unknown', not a hung request."""
PROBE_GRACE = 2.0
"""Extra seconds before a probe that ignores its own timeout is abandoned."""
CACHE_SECONDS = 30.0
"""How long an answer that cannot be counted down (unknown) is reused: the status bar's poll."""
REREAD_SECONDS = 300.0
"""How long a time left is counted down before squeue is asked again (a changed time limit
shows within this; 3 RPCs per read: 0.6 a minute per server)."""

TimeLeftProbe = Callable[[Any], Awaitable[dict[str, Any]]]


async def probe_time_left(allocation, host: Any = None) -> dict[str, Any]:
    """Run the core ``time_left`` probe on ``host`` (default: the local host); the ProbeResult
    as JSON."""

    context = ProbeContext(allocation, timeout=TIME_LEFT_TIMEOUT, only=("time_left",))
    async for result in run_probes(host if host is not None else LocalHost(), context):
        if result.id == "time_left":
            return result.to_json()
    return _unknown("probe.time_left.no_result")


def _unknown(message_id: str, **params: Any) -> dict[str, Any]:
    return ProbeResult.of("time_left", "unknown", message_id, params=params).to_json()


class AllocationStatus:
    """Builds the endpoint's JSON; one instance per server, shared by all requests."""

    def __init__(self, env: Mapping[str, str] | None = None, *,
                 time_left_probe: TimeLeftProbe = probe_time_left,
                 cache_seconds: float = CACHE_SECONDS,
                 reread_seconds: float = REREAD_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.env = dict(os.environ) if env is None else dict(env)
        self.allocation = Allocation.from_env(self.env)
        self._probe = time_left_probe
        self._cache_seconds = cache_seconds
        self._reread_seconds = reread_seconds
        self._clock = clock
        self._cached: tuple[float, dict[str, Any]] | None = None
        """When the last read was made and its answer."""
        self._counted: tuple[float, dict[str, Any]] | None = None
        """The last answer that could be counted down (a time left in seconds, or no limit)."""
        self._lock = asyncio.Lock()
        self._demo: dict[str, dict[str, Any]] = {}  # each demo site's snapshot, made once

    def site_name(self) -> str:
        """The demo site looked at: the one the wizard under this server chose (``""``: this
        machine), else the configured one."""
        chosen = wizard_site(env=self.env)
        return chosen if chosen is not None else wizard_config(None).effective_demo_site(self.env)

    def demo_site(self):
        """``(name, host)`` of the demo site looked at (``site_name``) when the server is
        outside an allocation and the site's recording is inside one; else None."""
        if self.allocation.inside_allocation:
            return None

        try:
            name = self.site_name()
            if not name:
                return None

            host = RecordedSite.load(name)
        except Exception:  # a broken config or site file: no demo line, never a failed request
            return None
        return host.name, host

    async def _demo_snapshot(self) -> dict[str, Any] | None:
        found = self.demo_site()
        key = found[0] if found else ""
        if key not in self._demo:
            allocation = Allocation.from_env(found[1].env) if found else None
            if allocation is None or not allocation.inside_allocation:
                self._demo[key] = {}
            else:
                try:  # the recording's squeue answers: quick, and the same every time
                    left = await asyncio.wait_for(probe_time_left(allocation, found[1]),
                                                  TIME_LEFT_TIMEOUT + PROBE_GRACE)
                except asyncio.TimeoutError:
                    left = None
                self._demo[key] = {"allocation": allocation.to_json(), "time_left": left,
                                   "demo": {"site": found[0]}}
        return self._demo[key] or None

    async def time_left(self, refresh: bool = False) -> tuple[dict[str, Any] | None, float | None, bool]:
        """``(probe result, seconds since squeue answered it, stale)``; ``(None, None, False)``
        outside an allocation (nothing to ask squeue)."""
        if not self.allocation.inside_allocation:
            return None, None, False
        async with self._lock:  # concurrent requests wait for the one squeue in flight
            now = self._clock()
            if refresh or self._cached is None or self._expired(now):
                try:
                    result = await asyncio.wait_for(self._probe(self.allocation),
                                                    TIME_LEFT_TIMEOUT + PROBE_GRACE)
                except asyncio.TimeoutError:
                    result = _unknown("probe.unanswered.timeout", command="squeue",
                                      seconds=f"{TIME_LEFT_TIMEOUT:g}",
                                      what=message("probe.what.time_left",
                                                   job_id=self.allocation.job_id))
                self._cached = (now, result)
                if _countable(result):
                    self._counted = (now, result)
            read_at, result = self._cached
            unanswered = str(result.get("message_id", "")).startswith("probe.unanswered")
            if unanswered and self._counted is not None:
                read_at, counted = self._counted  # no answer now: the last one, marked stale
                return _counted_down(counted, now - read_at), now - read_at, True
            return _counted_down(result, now - read_at), now - read_at, False

    def _expired(self, now: float) -> bool:
        read_at, result = self._cached
        age = now - read_at
        if not _countable(result):
            return age >= self._cache_seconds
        seconds = (result.get("data") or {}).get("seconds")
        return age >= self._reread_seconds or (isinstance(seconds, int) and seconds - age <= 0)

    async def snapshot(self, refresh: bool = False) -> dict[str, Any]:
        """``{"allocation": Allocation.to_json(), "time_left": ProbeResult JSON or None,
        "time_left_age_s": seconds since squeue gave it, "time_left_stale": true when the last read
        got no answer, "idle_cull": {"seconds", "text", "message_id", "params"} (the hub's idle
        timeout) or None}``; ``refresh`` asks squeue again now."""

        demo = await self._demo_snapshot() if not self.allocation.inside_allocation else None
        if demo is not None:
            return redact_tree(demo, self.env)

        # the hub's idle timeout, when the site says it: a run in this server's terminal ends
        # with the server, so the status bar says it beside the time left (worded as the time
        # left is: English here, the route's language from message_id and params)
        idle = idle_cull_seconds(self.env)
        said = idle_duration(idle) if idle else None
        left, age, stale = await self.time_left(refresh)
        return redact_tree({"allocation": self.allocation.to_json(), "time_left": left,
                            "time_left_age_s": None if age is None else round(age),
                            "time_left_stale": stale,
                            "idle_cull": {"seconds": idle, "text": say(said, "en"), **said} if idle else None},
                           self.env)


def _countable(result: dict[str, Any]) -> bool:
    """A time left that can be counted down here: squeue gave seconds, or no limit."""
    data = result.get("data") or {}
    return result.get("status") in ("ok", "warn") and bool(data.get("job_id")) and (
        isinstance(data.get("seconds"), int) or data.get("unlimited") is True)


def _counted_down(result: dict[str, Any], age: float) -> dict[str, Any]:
    """``result`` as it reads ``age`` seconds after squeue gave it (the same words and ids)."""
    data = result.get("data") or {}
    seconds = data.get("seconds")
    if not _countable(result) or data.get("unlimited") or age < 1:
        return result
    left = max(0, seconds - int(age))
    return time_left_verdict(str(data["job_id"]), TimeLeft(format_slurm_duration(left), left),
                             command=result.get("command", ""), evidence=result.get("evidence", "")).to_json()
