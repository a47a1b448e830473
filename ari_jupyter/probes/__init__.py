"""Site probes: each answers one question about the site with a verdict and its evidence.

``run_probes(host, ctx)`` runs them concurrently and yields results as they finish;
``run_probes_sync`` is the blocking twin for the command line.

The names are loaded on first use: the wizard's first step needs only the probe ids, and a
kernel should not pay for every probe's parsers (or the result type) before it shows them.
"""
from __future__ import annotations

import importlib
from typing import Any

PROBE_IDS: tuple[str, ...] = (
    "sbatch", "partitions", "gres", "shared_fs", "mpi", "modules", "gpus", "ari", "time_left",
)
"""The probe ids, in the order results are shown (the runner checks its table against them).
Here, not in a module of their own: every module is one more file a kernel's cold start reads."""

_LAZY = {
    "STATUSES": "..base.verdict",
    "ProbeResult": "..base.verdict",
    "ProbeContext": ".context",
    "evidence_in": ".evidence_words",
    "PROBES": ".runner",
    "UnknownProbeError": ".runner",
    "run_probes": ".runner",
    "run_probes_sync": ".runner",
    "selected_ids": ".runner",
}

__all__ = [
    "PROBE_IDS", "PROBES", "STATUSES", "ProbeContext", "ProbeResult", "UnknownProbeError",
    "evidence_in", "run_probes", "run_probes_sync", "selected_ids",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # cold start: a name's module (the runner, every probe) loads when the name is first used
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
