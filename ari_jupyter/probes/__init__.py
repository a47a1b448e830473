"""Site probes: each answers one question about the site with a verdict and its evidence.

``run_probes(host, ctx)`` runs them concurrently and yields results as they finish;
``run_probes_sync`` is the blocking twin for the command line.
"""
from .context import ProbeContext
from .result import STATUSES, ProbeResult
from .runner import PROBE_IDS, PROBES, UnknownProbeError, run_probes, run_probes_sync, selected_ids

__all__ = [
    "PROBE_IDS", "PROBES", "STATUSES", "ProbeContext", "ProbeResult", "UnknownProbeError",
    "run_probes", "run_probes_sync", "selected_ids",
]
