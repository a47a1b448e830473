"""Will the chosen scope fit in the allocation's time left? The run lives inside the allocation,
so when the allocation ends, ``ari run`` ends with it.

What the search needs at most: ARI's BFTS loop runs its nodes in batches of ``parallel`` and
waits for each node at most the node timeout (``ari-core/ari/cli/bfts_loop.py``: ``_timeout_s =
cfg.bfts.timeout_per_node`` ... ``future.result(timeout=_timeout_s)`` over a batch submitted
to the executor), and stops at ``max_nodes`` (``bfts.max_total_nodes``). So the search takes up
to ``node timeout × ceil(max nodes / parallel)``, and never fewer than ``max depth`` rounds
(a child waits for its parent). The paper and reproduce stages come after it.

ARI has no estimate of its own for a BFTS run: its wizard's presets carry a typical length as
text (``StepScope.tsx`` ``est: '~1-2 h'``), for presets only and not a bound, and
``viz/api_paperbench.py`` ``_estimate_cost`` is for PaperBench dry runs. The bound is what
tells whether the allocation can end first.
"""
from __future__ import annotations

from math import ceil
from typing import Any, Mapping

from ..base.verdict import Finding
from ..base.numbers import count_of
from ..i18n import message


def search_rounds(scope: Mapping[str, int]) -> int:
    """Batches of ``parallel`` nodes the search may run: ceil(max nodes / parallel), at least
    max depth."""
    return max(ceil(scope["max_nodes"] / max(scope["parallel"], 1)), scope["max_depth"])


def search_seconds(scope: Mapping[str, int]) -> int:
    """The longest the BFTS search may take: rounds × the node timeout."""
    return search_rounds(scope) * scope["node_timeout_min"] * 60


def search_time(scope: Mapping[str, int]) -> dict:
    """The one model of how long a search takes, in words: the bound above in hours (a
    message). The scope presets' labels and the time-fit warning both say this."""
    return hours(search_seconds(scope))


def hours(seconds: int) -> dict:
    """A duration as a sentence says it, in hours (``16 hours``, ``about 3.2 hours``; under an
    hour in minutes), not sbatch's ``D-HH:MM:SS``: a message, said in the reader's language.
    "about" when the figure shown is rounded."""
    if seconds < 3600:
        minutes = max(round(seconds / 60), 1)
        exact = minutes * 60 == seconds
        return message("run_settings.duration.minutes" if exact else "run_settings.duration.about_minutes",
                       n=minutes)
    shown = round(seconds / 3600, 1) if seconds < 36000 else round(seconds / 3600)
    exact = shown * 3600 == seconds
    figure = int(shown) if shown == int(shown) else shown
    one = "_one" if figure == 1 else ""
    return message(f"run_settings.duration.hours{one}" if exact
                   else f"run_settings.duration.about_hours{one}", h=figure)


def clock(seconds: int) -> str:
    """``H:MM:SS`` (``D-HH:MM:SS`` past a day), as sbatch's ``--time`` reads it."""
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}" if days else f"{hours}:{minutes:02d}:{secs:02d}"


def time_left_seconds(time_left: Any) -> int | None:
    """Seconds left in a ``time_left`` probe result (its JSON too); None when unknown or
    unlimited."""
    if time_left is None:
        return None
    data = time_left.get("data") if isinstance(time_left, Mapping) else getattr(time_left, "data", None)
    if not isinstance(data, Mapping) or data.get("unlimited"):
        return None
    seconds = data.get("seconds")
    return seconds if isinstance(seconds, int) and not isinstance(seconds, bool) else None


def time_fit_finding(scope: Mapping[str, int], time_left: Any) -> Finding | None:
    """A warning when the search may need more than the allocation has left, with the fixes;
    None when it fits or the time left is unknown or unlimited."""
    left = time_left_seconds(time_left)
    needed = search_seconds(scope)
    if left is None or needed <= left:
        return None
    return Finding.of("time_fit_short", "warning", "run_settings.time_fit_short",
                      field="run_settings.scope_preset", fix_id="run_settings.time_fit_short.fix",
                      needed=search_time(scope), left=hours(left), time=clock(needed),
                      rounds=search_rounds(scope),
                      parallel=scope["parallel"], max_nodes=scope["max_nodes"],
                      node_timeout_min=scope["node_timeout_min"])


IDLE_CULL_VARIABLE = "ARI_JUPYTER_IDLE_CULL"
"""Set by a site's admin in the single-user server's environment (JupyterHub's
``Spawner.environment``) to the idle culler's ``--timeout`` in seconds: the server cannot learn it
otherwise (the culler is a hub service, and a server's token may not read the hub's services)."""


def idle_cull_seconds(env: Mapping[str, str] | None) -> int | None:
    """The hub's idle timeout for this server, in seconds; None when the site says none (or says
    something that is not a positive whole number of seconds)."""
    raw = (env or {}).get(IDLE_CULL_VARIABLE, "").strip()
    return count_of(raw) or None


def idle_duration(seconds: int) -> dict:
    """The idle timeout as people say it, in the reader's language: ``90 s``, ``10 min``,
    ``1 h``, ``1 h 30 min`` (a message: the finding's parameter, the status bar's words)."""
    if seconds < 120:
        return message("run_settings.duration.s", n=seconds)
    hours, minutes = divmod(round(seconds / 60), 60)
    if not hours:
        return message("run_settings.duration.min", n=minutes)
    return (message("run_settings.duration.h_min", h=hours, n=minutes) if minutes
            else message("run_settings.duration.h", h=hours))


def idle_cull_finding(env: Mapping[str, str] | None, time_left: Any) -> Finding | None:
    """A warning when the hub stops this server once it is idle: an ``ari run`` started in its
    terminal ends with the server, so the run has the allocation's time left at most, and only
    while someone uses the server (an open tab polls it; a closed one does not)."""
    idle = idle_cull_seconds(env)
    if idle is None:
        return None
    left = time_left_seconds(time_left)
    said = {"idle": idle_duration(idle)} if left is None else {"idle": idle_duration(idle), "left": hours(left)}
    return Finding.of("idle_cull", "warning",
                      "run_settings.idle_cull" if left is None else "run_settings.idle_cull_left",
                      field="run_settings.server", fix_id="run_settings.idle_cull.fix", **said)
