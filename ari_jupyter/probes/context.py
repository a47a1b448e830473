"""What every probe receives besides the host, and the helpers they share.

A probe is ``async def probe(host, ctx) -> ProbeResult``. The runner gives each probe a
deadline (its own timeout); ``run_command`` spends what is left of it, so a probe that runs
two commands still ends within its budget. Commands that several probes need (``sinfo -h -o
%G`` for gres and gpus, the partition list) run once per probe run: the controller is asked
once, not once per probe.
"""
from __future__ import annotations

import asyncio
import contextvars
import re
import time
from dataclasses import dataclass, field
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Mapping, Sequence, TypeVar

from ..hosts.host import Host
from ..base.commands import CommandResult
from ..base.plain_text import plain
from ..base.redact import redact
from .evidence_words import command_ending, more_characters
from ..slurm.parsers import PARTITION_NAME
from ..base.verdict import ProbeResult

T = TypeVar("T")

DEFAULT_TIMEOUT = 10.0
EVIDENCE_LIMIT = 4000
"""Characters of command output kept as evidence (the full output is never needed to judge)."""

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "ari_jupyter_probe_deadline", default=None
)

# Messages SLURM clients print when the controller is slow or away: retry, do not conclude.
CONTROLLER_HICCUPS = re.compile(
    r"socket timed out|unable to contact slurm controller|connection refused|"
    r"communication connection failure|zero bytes were transmitted|"
    r"slurm backup controller in standby mode|slurmctld.* not responding",
    re.IGNORECASE,
)


# A SLURM client that cannot find its cluster at all (no slurm.conf, no DNS SRV record):
# not a hiccup — this host cannot talk to SLURM until it is configured.
SLURM_UNCONFIGURED = re.compile(
    r"could not establish a configuration source|unable to process configuration file|"
    r"fetch_config: dns srv lookup failed|slurm\.conf.*no such file",
    re.IGNORECASE,
)


@dataclass
class ProbeContext:
    """Inputs shared by all probes of one run.

    ``allocation`` is an ``ari_jupyter.slurm.allocation.Allocation`` (None outside Python callers that
    have none); ``partition`` the partition chosen by the user (else the environment decides);
    ``checkpoint_dir``/``workspace`` the directory the shared-filesystem probe judges;
    ``only`` restricts the probe ids; ``timeouts`` overrides ``timeout`` per probe id;
    ``module_cache`` keeps module listings per MODULEPATH for the process lifetime.
    """

    allocation: Any = None
    partition: str | None = None
    checkpoint_dir: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    only: Sequence[str] | None = None
    timeouts: Mapping[str, float] = field(default_factory=dict)
    workspace: str | None = None
    module_cache: bool = True
    _shared: dict[tuple, asyncio.Task] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def timeout_for(self, probe_id: str) -> float:
        return float(self.timeouts.get(probe_id, self.timeout))

    async def run_shared(self, host: Host, argv: Sequence[str]) -> CommandResult:
        """Run ``argv`` once for all probes of this run; later callers get the same result."""
        key = (id(host), tuple(argv))
        task = self._shared.get(key)
        if task is None:
            task = asyncio.ensure_future(run_command(host, argv))
            self._shared[key] = task
        return await asyncio.shield(task)

    async def close(self) -> None:
        """Stop shared commands nobody waits for any more (their process groups are killed)."""
        tasks = [t for t in self._shared.values() if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._shared.clear()


_WORKERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ari-jupyter-probe")
"""Threads kept across probe runs: starting one on a loaded machine can itself stall the loop."""


INLINE_LIMIT = 16_384
"""Characters (or list items) of input below which ``off_loop`` runs the function on the
loop itself: parsing a few lines takes microseconds, while handing them to a worker thread
and back costs two thread wake-ups, which on a loaded machine take milliseconds each."""


async def off_loop(function: Callable[..., T], *args: Any, size: int | None = None) -> T:
    """``function(*args)`` in a worker thread, so long parsing and redaction of a big answer
    (a 20,000-module listing) never hold the event loop, where the kernel's widget messages
    wait. With ``size`` (the input's characters or items) below :data:`INLINE_LIMIT` it
    runs at once on the loop instead."""
    if size is not None and size < INLINE_LIMIT:
        return function(*args)
    return await asyncio.get_running_loop().run_in_executor(_WORKERS, function, *args)


def input_size(*values: Any) -> int:
    """A cheap measure of how much work a value is to parse or scrub: characters of strings,
    items of lists (each counted as a short line), the sizes within dicts and tuples."""
    total = 0
    for value in values:
        if isinstance(value, str):
            total += len(value)
        elif isinstance(value, (list, tuple, set, frozenset)):
            total += 64 * len(value) if len(value) > 16 else input_size(*value)
        elif isinstance(value, dict):
            total += input_size(*value.values()) + 8 * len(value)
        else:
            total += 8
    return total


def set_deadline(seconds: float) -> contextvars.Token:
    return _deadline.set(time.monotonic() + seconds)


def remaining(default: float = DEFAULT_TIMEOUT) -> float:
    """Seconds left in the current probe's budget (never negative)."""
    deadline = _deadline.get()
    if deadline is None:
        return default
    return max(0.0, deadline - time.monotonic())


async def run_command(
    host: Host, argv: Sequence[str], env: Mapping[str, str] | None = None
) -> CommandResult:
    return await host.run(argv, timeout=remaining(), env=env)


# ---------------------------------------------------------------------------------------------
# shaping results


def evidence_of(host: Host, *results: CommandResult, note: str = "") -> str:
    """Redacted, bounded text showing what the commands printed and how they ended."""
    blocks = []
    for result in results:
        if result is None:
            continue
        ending = command_ending(result)
        # before the cut: a cut secret is not found whole
        body = redact(plain(result.output), host.env)
        if len(body) > EVIDENCE_LIMIT:
            body = body[:EVIDENCE_LIMIT] + "\n" + more_characters(len(body) - EVIDENCE_LIMIT)
        blocks.append(f"$ {result.command}\n{body}\n{ending}" if body else f"$ {result.command}\n{ending}")
    if note:
        blocks.append(note)
    return redact("\n\n".join(blocks), host.env)


def is_controller_hiccup(result: CommandResult) -> bool:
    return bool(CONTROLLER_HICCUPS.search(result.output))


def is_unconfigured(result: CommandResult) -> bool:
    return not result.ok and bool(SLURM_UNCONFIGURED.search(result.output))


def last_line(text: str, limit: int = 200) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return first_line(lines[-1], limit) if lines else ""


def first_line(text: str, limit: int = 200) -> str:
    for line in text.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def unanswered(probe_id: str, host: Host, result: CommandResult, what: dict | str) -> ProbeResult | None:
    """The ``unknown`` verdict when a command timed out or the controller hiccupped, else None.

    ``what`` names the question, as a message (``message("probe.what.partition_list")``), or as
    a word every language writes alike ("GRES").
    """
    if result.timed_out:
        return ProbeResult.of(
            probe_id, "unknown", "probe.unanswered.timeout", fix_id="probe.unanswered.timeout.fix",
            params={"command": result.argv[0], "seconds": f"{result.elapsed:.1f}", "what": what},
            command=result.command, evidence=evidence_of(host, result),
        )
    if not result.ok and is_controller_hiccup(result):
        return ProbeResult.of(
            probe_id, "unknown", "probe.unanswered.controller",
            fix_id="probe.unanswered.controller.fix",
            params={"answer": first_line(result.output, 120), "what": what},
            command=result.command, evidence=evidence_of(host, result),
        )
    if is_unconfigured(result):
        return ProbeResult.of(
            probe_id, "unknown", "probe.unanswered.unconfigured", fix_id="probe.unconfigured.fix",
            params={"answer": last_line(result.output, 120), "what": what},
            command=result.command, evidence=evidence_of(host, result),
        )
    return None


def valid_partition(name: str) -> bool:
    return bool(PARTITION_NAME.fullmatch(name))


def chosen_partition(host: Host, ctx: ProbeContext) -> tuple[str | None, str]:
    """The partition the run will use as far as the environment tells, and where it came from.

    Explicit choice, then ``ARI_SLURM_PARTITION`` (what ARI reads first), then the allocation's
    own partition. The sinfo default is the caller's last resort. Values that are not partition
    names are passed over (an explicit one is refused: it would become a command-line option).
    """
    if ctx.partition:
        if not valid_partition(ctx.partition):
            raise ValueError(f"not a partition name: {ctx.partition!r}")
        return ctx.partition, "chosen"
    candidates = (
        (host.env.get("ARI_SLURM_PARTITION", "").strip(), "ARI_SLURM_PARTITION"),
        (getattr(ctx.allocation, "partition", None) or "", "SLURM_JOB_PARTITION"),
        (host.env.get("SLURM_JOB_PARTITION", "").strip(), "SLURM_JOB_PARTITION"),
    )
    for value, source in candidates:
        if value and valid_partition(value):
            return value, source
    return None, ""
