"""The worst case, in node-hours, of what the user approves at Write: the cost before.

BFTS: ARI's search evaluates at most ``max nodes`` search nodes (``bfts.max_total_nodes``),
one SLURM job each, each job on the decided nodes for at most the decided time limit
(``decided.decide``: the Walltime, ``ARI_SLURM_WALLTIME``). Reproduce: one job (``ari-ors``)
on its decided nodes (1 when not set: sbatch's default) for its time limit, when the
reproduce stage is on. A time limit left to the LLM (no Walltime) has no bound: the sentence
says so instead of guessing one. Nothing here asks the machine.
"""
from __future__ import annotations

import math

from dataclasses import dataclass

from ..i18n import message
from ..slurm.parsers import parse_time_limit
from .choices import Choices
from .decided import Decided, decide
from .time_fit import clock


@dataclass(frozen=True)
class Part:
    jobs: int
    nodes: int
    seconds: int | None
    """The time limit of one job; None when none bounds it."""

    @property
    def node_hours(self) -> float | None:
        return None if self.seconds is None else self.jobs * self.nodes * self.seconds / 3600


@dataclass(frozen=True)
class CostBound:
    bfts: Part
    reproduce: Part | None
    """None when the reproduce stage is off."""

    @property
    def node_hours(self) -> float | None:
        parts = [self.bfts] + ([self.reproduce] if self.reproduce else [])
        hours = [p.node_hours for p in parts]
        return None if any(h is None for h in hours) else sum(h for h in hours if h is not None)

    def said(self) -> dict:
        """The sentence: the total, then each part as a product."""
        parts = [_part("cost.before.bfts", self.bfts)]
        if self.reproduce is not None:
            parts.append(_part("cost.before.reproduce", self.reproduce))
        total = self.node_hours
        if total is None:
            return message("cost.before.unbounded", parts=parts)
        return message("cost.before.total", total=hours_text(total), parts=parts)

    def to_json(self) -> dict:
        return {"node_hours": self.node_hours,
                "bfts": {"jobs": self.bfts.jobs, "nodes": self.bfts.nodes,
                         "seconds": self.bfts.seconds, "node_hours": self.bfts.node_hours},
                "reproduce": None if self.reproduce is None else {
                    "jobs": 1, "nodes": self.reproduce.nodes, "seconds": self.reproduce.seconds,
                    "node_hours": self.reproduce.node_hours}}


def hours_text(hours: float) -> str:
    """Node-hours as people read them: ``0.25``, ``12``, ``1.5``; a short job's few seconds
    keep two significant digits (``0.0017``), never a bare ``0`` for time that was used."""
    if 0 < hours < 0.01:
        digits = min(6, 1 - math.floor(math.log10(hours)))
        return f"{hours:.{digits}f}".rstrip("0").rstrip(".")
    return f"{hours:.2f}".rstrip("0").rstrip(".") if hours < 10 else f"{hours:.1f}".rstrip("0").rstrip(".")


def _seconds(time_limit: str) -> int | None:
    try:
        return parse_time_limit(time_limit)
    except ValueError:
        return None


def _part(message_id: str, part: Part) -> dict:
    if part.node_hours is None:
        return message(f"{message_id}.unbounded", jobs=part.jobs, nodes=part.nodes)
    return message(message_id, jobs=part.jobs, nodes=part.nodes, limit=clock(part.seconds or 0),
                   hours=hours_text(part.node_hours))


def bound_of(decided: Decided, max_nodes: int, with_reproduce: bool) -> CostBound:
    """The worst case of a decided record (``launch_config.json``'s) and the search's size."""
    bfts = Part(max(max_nodes, 0), decided.bfts.nodes or 1, _seconds(decided.bfts.time_limit))
    reproduce = Part(1, decided.reproduce.nodes or 1, _seconds(decided.reproduce.time_limit)) \
        if with_reproduce else None
    return CostBound(bfts, reproduce)


def cost_bound(choices: Choices) -> CostBound:
    """The worst case of what these choices approve (raises as ``decide`` does on choices
    that cannot be written)."""
    settings = choices.run_settings
    return bound_of(decide(choices), settings.scope()["max_nodes"], settings.include_reproduce)
