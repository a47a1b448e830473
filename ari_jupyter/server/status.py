"""What the status bar shows: the allocation from the server's environment plus time left.

The allocation comes from the environment the server was started with (it does not change
while the server runs). Outside an allocation, with a demo site configured (``ARI_JUPYTER_DEMO_SITE``
or ``c.AriWizard.demo_site``, as the wizard chooses its site), it is the demo site's recorded
allocation, marked ``"demo": {"site": name}``: the status bar shows it as a demo. A wizard that
runs under this server names its own site (``wizard.site_choice``), and the bar follows it. Time left comes from the core ``time_left`` probe (squeue), run on
the async host API with a short timeout, and cached for a few seconds so that many open
browser tabs cause one squeue call, never a blocked IO loop.
"""
from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Awaitable, Callable, Mapping

from ..hosts.host import LocalHost
from ..probes import ProbeContext, run_probes
from ..base.verdict import ProbeResult
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
CACHE_SECONDS = 10.0
"""How long one time-left answer is reused (squeue reports minutes, polling is every 30 s)."""

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
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.env = dict(os.environ) if env is None else dict(env)
        self.allocation = Allocation.from_env(self.env)
        self._probe = time_left_probe
        self._cache_seconds = cache_seconds
        self._clock = clock
        self._cached: tuple[float, dict[str, Any]] | None = None
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

    async def time_left(self) -> dict[str, Any] | None:
        """The cached probe result; None outside an allocation (nothing to ask squeue)."""
        if not self.allocation.inside_allocation:
            return None
        async with self._lock:  # concurrent requests wait for the one squeue in flight
            now = self._clock()
            if self._cached is None or now - self._cached[0] >= self._cache_seconds:
                try:
                    result = await asyncio.wait_for(self._probe(self.allocation),
                                                    TIME_LEFT_TIMEOUT + PROBE_GRACE)
                except asyncio.TimeoutError:
                    result = _unknown("probe.unanswered.timeout", command="squeue",
                                      seconds=f"{TIME_LEFT_TIMEOUT:g}",
                                      what=message("probe.what.time_left",
                                                   job_id=self.allocation.job_id))
                self._cached = (now, result)
            return self._cached[1]

    async def snapshot(self) -> dict[str, Any]:
        """``{"allocation": Allocation.to_json(), "time_left": ProbeResult JSON or None,
        "idle_cull": {"seconds", "text", "message_id", "params"} (the hub's idle timeout) or None}``."""

        demo = await self._demo_snapshot() if not self.allocation.inside_allocation else None
        if demo is not None:
            return redact_tree(demo, self.env)

        # the hub's idle timeout, when the site says it: a run in this server's terminal ends
        # with the server, so the status bar says it beside the time left (worded as the time
        # left is: English here, the route's language from message_id and params)
        idle = idle_cull_seconds(self.env)
        said = idle_duration(idle) if idle else None
        return redact_tree({"allocation": self.allocation.to_json(), "time_left": await self.time_left(),
                            "idle_cull": {"seconds": idle, "text": say(said, "en"), **said} if idle else None},
                           self.env)
