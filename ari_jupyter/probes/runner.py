"""Run the probes concurrently, each under its own timeout, and hand out results as they come.

One slow answer (a loaded slurmctld, a hung nvidia-smi) must not hold the others back, and
must not hang the caller: a probe that overruns its timeout becomes ``unknown`` and whatever
it started is killed (the host kills the process group when the probe's task is cancelled).
"""
from __future__ import annotations

import asyncio
import traceback
from typing import AsyncIterator, Awaitable, Callable

from ..base.aio import run_sync
from ..hosts.host import Host
from ..i18n import Text
from ..base.redact import redact
from . import PROBE_IDS
from .ari import probe_ari
from .context import ProbeContext, input_size, off_loop, set_deadline
from .filesystem import probe_shared_fs
from .gpu import probe_gpus
from .modules import probe_modules
from .mpi import probe_mpi
from ..base.verdict import ProbeResult
from .slurm import probe_gres, probe_partitions, probe_sbatch, probe_time_left

Probe = Callable[[Host, ProbeContext], Awaitable[ProbeResult]]

PROBES: dict[str, Probe] = {
    "sbatch": probe_sbatch,
    "partitions": probe_partitions,
    "gres": probe_gres,
    "shared_fs": probe_shared_fs,
    "mpi": probe_mpi,
    "modules": probe_modules,
    "gpus": probe_gpus,
    "ari": probe_ari,
    "time_left": probe_time_left,
}
if tuple(PROBES) != PROBE_IDS:  # one list of ids: the package's, imported cheaply
    raise ImportError(f"probes.PROBE_IDS lists {PROBE_IDS}, the runner has {tuple(PROBES)}")

SAFETY_MARGIN = 0.3
"""Extra seconds before the runner cancels a probe whose commands already honour the deadline
(commands end at the deadline; the margin lets them report what they saw)."""


class UnknownProbeError(ValueError):
    """An id that is not in PROBE_IDS."""


def selected_ids(only) -> list[str]:
    if not only:
        return list(PROBE_IDS)
    unknown = [i for i in only if i not in PROBES]
    if unknown:
        raise UnknownProbeError(Text("probe.unknown_ids" if len(unknown) > 1 else "probe.unknown_id",
                                     {"ids": ", ".join(unknown), "known": ", ".join(PROBE_IDS)}))
    return [i for i in PROBE_IDS if i in set(only)]


def _scrub(value, env):
    if isinstance(value, str):
        return redact(value, env)
    if isinstance(value, dict):
        return {k: _scrub(v, env) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_scrub(v, env) for v in value)
    return value


def redacted(result: ProbeResult, env) -> ProbeResult:
    """The result with secrets masked everywhere (summaries quote command output too)."""
    return ProbeResult(
        result.id, result.status, redact(result.summary, env), redact(result.command, env),
        redact(result.evidence, env), redact(result.fix, env), _scrub(result.data, env),
        message_id=result.message_id, params=_scrub(result.params, env), fix_id=result.fix_id,
    )


async def _guarded(probe_id: str, host: Host, ctx: ProbeContext) -> ProbeResult:
    # Off the event loop: a 20,000-module listing is 20,000 strings to scrub, and widget
    # messages must not wait for that.
    result = await _verdict(probe_id, host, ctx)
    size = input_size(result.summary, result.evidence, result.command, result.fix, result.data,
                      result.params)
    return await off_loop(redacted, result, host.env, size=size)


async def _verdict(probe_id: str, host: Host, ctx: ProbeContext) -> ProbeResult:
    timeout = ctx.timeout_for(probe_id)
    set_deadline(timeout)  # this task's own context: seen only by this probe's commands
    try:
        return await asyncio.wait_for(PROBES[probe_id](host, ctx), timeout + SAFETY_MARGIN)
    except asyncio.TimeoutError:
        return ProbeResult.of(probe_id, "unknown", "probe.runner.timed_out",
                              fix_id="probe.runner.timed_out.fix", params={"seconds": f"{timeout:g}"})
    except Exception as exc:  # a probe bug must not take the other verdicts down
        return ProbeResult.of(
            probe_id, "unknown", "probe.runner.error", params={"error": f"{type(exc).__name__}: {exc}"},
            evidence="".join(traceback.format_exception_only(type(exc), exc)).strip(),
        )


async def run_probes(host: Host, ctx: ProbeContext) -> AsyncIterator[ProbeResult]:
    """Yield each selected probe's result as soon as it is known."""
    ids = selected_ids(ctx.only)
    tasks = [asyncio.ensure_future(_guarded(i, host, ctx)) for i in ids]
    try:
        for next_done in asyncio.as_completed(tasks):
            yield await next_done
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await ctx.close()


def run_probes_sync(
    host: Host, ctx: ProbeContext, on_result: Callable[[ProbeResult], None] | None = None
) -> list[ProbeResult]:
    """Blocking twin of :func:`run_probes` (CLI, scripts). ``on_result`` sees each result as
    it arrives. Works inside a running event loop too (a worker thread gets its own loop)."""

    async def collect() -> list[ProbeResult]:
        results = []
        async for result in run_probes(host, ctx):
            results.append(result)
            if on_result is not None:
                on_result(result)
        return results

    return run_sync(collect())
