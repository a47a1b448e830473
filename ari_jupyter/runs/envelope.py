"""The envelope the user approved in the wizard, and the run's jobs that ask for more.

Users fear an agent that spends their allocation: every job of a run is compared with what
was decided at Write, per job kind, because ARI submits the two kinds from different
settings (spec §3.3, §3.4.3). ``emit`` records it in the checkpoint's ``launch_config.json``
(``ari_jupyter.decided``, ``ari.decided.Decided``: its table says where each value comes
from); this module reads that record and compares, it works out nothing of ARI's itself.

What squeue prints is compared: ``%P`` partition, ``%D`` nodes, ``%c`` CPUs per node, ``%b``
TRES per node (GPUs asked with ``--gpus-per-task`` are not in it), ``%l`` time limit.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..ari.decided import Decided, DecidedError, JobDecision
from ..ari.render import DECIDED_KEY, LAUNCH_CONFIG_KEY
from ..i18n import message
from ..slurm.parsers import gpus_per_node, parse_count, parse_time_limit
from .jobs import Job
from .reading import read_json
from ..base.numbers import count_of

WHAT = ("partition", "nodes", "cpus", "gpus", "walltime")


@dataclass(frozen=True)
class Approved:
    """What the user approved for one kind of job; None where nothing was approved."""

    kind: str
    partition: str = ""
    nodes: int | None = None
    cpus_per_node: int | None = None
    gpus_per_node: int | None = None
    walltime: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Envelope:
    bfts: Approved
    reproduce: Approved

    def for_kind(self, kind: str) -> Approved | None:
        return {"bfts": self.bfts, "reproduce": self.reproduce}.get(kind)

    def to_json(self) -> dict[str, Any]:
        return {"bfts": self.bfts.to_json(), "reproduce": self.reproduce.to_json()}


@dataclass(frozen=True)
class Over:
    """One thing a job asks beyond its approval: ``what`` (one of ``WHAT``), both as shown."""

    what: str
    asked: str
    approved: str

    def said(self) -> dict[str, Any]:
        return message(f"runs.envelope.over.{self.what}", asked=self.asked, approved=self.approved)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "said": self.said()}


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return count_of(value)
    return None


def envelope_of(config: Mapping[str, Any]) -> Envelope | None:
    """The approvals in a ``launch_config.json`` the wizard wrote: its decided record. None for
    another's (ARI's GUI writes the file without the wizard's section: nothing was approved in
    the wizard), and for a record this version cannot read (a newer one's schema): nothing is
    compared rather than guessed."""
    section = config.get(LAUNCH_CONFIG_KEY)
    if not isinstance(section, Mapping):
        return None
    if DECIDED_KEY not in section:
        return _envelope_before_the_record(config, section)
    try:
        decided = Decided.from_json(section[DECIDED_KEY])
    except DecidedError:
        return None
    return Envelope(_approved(decided.bfts), _approved(decided.reproduce))


def _approved(job: JobDecision) -> Approved:
    return Approved(job.kind, job.partition, job.nodes, job.cpus_per_node, job.gpus_per_node,
                    job.time_limit)


def _envelope_before_the_record(config: Mapping[str, Any],
                                section: Mapping[str, Any]) -> Envelope | None:
    """For a checkpoint written before the decided record existed (ari-jupyter 0.1.0 without
    ``ari_jupyter.decided``) only: ARI's merge worked out again from the saved wizard state, as
    those versions did. A checkpoint written since carries the record, and this is not used."""
    state = section.get("state")
    if not isinstance(state, Mapping):
        return None
    profile = state.get("profile") if isinstance(state.get("profile"), Mapping) else {}
    partition = str(config.get("partition") or state.get("partition") or "")
    cpus = _int(config.get("hpc_cpus")) or _int(state.get("max_cpus"))
    walltime = str(config.get("hpc_walltime") or state.get("walltime") or "")
    nodes = _int(state.get("nodes")) or _int(profile.get("requested_nodes"))
    tasks_per_node = _int(profile.get("ntasks_per_node")) or 1
    if state.get("allow_no_gres"):
        reproduce_gpus = 0
    elif profile.get("gpu_type"):
        reproduce_gpus = (_int(profile.get("requested_gpus_per_task"))
                          or _int(profile.get("requested_gpus_per_node")) or 1)
    else:
        reproduce_gpus = _int(profile.get("requested_gpus_per_node")) or 0
    bfts = Approved("bfts", partition, nodes or 1, cpus, _int(config.get("hpc_gpus")) or 0, walltime)
    reproduce = Approved("reproduce", partition, nodes, cpus * tasks_per_node if cpus else None,
                         reproduce_gpus, walltime)
    return Envelope(bfts, reproduce)


def read_envelope(checkpoint: Path) -> Envelope | None:
    """``envelope_of`` the checkpoint's ``launch_config.json``; None when there is none."""
    data = read_json(Path(checkpoint) / "launch_config.json", 1024 * 1024).data
    return envelope_of(data) if isinstance(data, dict) else None


def _walltime_over(limit: str, approved: str) -> bool:
    try:
        allowed, asked = parse_time_limit(approved), parse_time_limit(limit)
    except ValueError:
        return False
    if allowed is None:
        return False
    if asked is None:  # no limit at all is over any approved one; none known is not
        return limit.strip().upper() in ("UNLIMITED", "INFINITE")
    return asked > allowed


def _count(text: str) -> int | None:
    try:
        return parse_count(text)
    except ValueError:
        return None


def outside(job: Job, approved: Approved) -> tuple[Over, ...]:
    """What ``job`` asks beyond ``approved``, in ``WHAT`` order; () when it fits, or where
    squeue did not say (a job read from sacct, an older recording)."""
    overs: list[Over] = []
    if approved.partition and job.partition:
        asked = [p for p in job.partition.split(",") if p]
        if any(p != approved.partition for p in asked):
            overs.append(Over("partition", job.partition, approved.partition))
    nodes = _count(job.nodes)
    if approved.nodes is not None and nodes is not None and nodes > approved.nodes:
        overs.append(Over("nodes", str(nodes), str(approved.nodes)))
    cpus = _count(job.cpus_per_node)
    if approved.cpus_per_node is not None and cpus is not None and cpus > approved.cpus_per_node:
        overs.append(Over("cpus", str(cpus), str(approved.cpus_per_node)))
    if approved.gpus_per_node is not None and job.tres_per_node:
        try:
            gpus = gpus_per_node(job.tres_per_node)
        except ValueError:
            gpus = 0
        if gpus > approved.gpus_per_node:
            overs.append(Over("gpus", str(gpus), str(approved.gpus_per_node)))
    if approved.walltime and job.time_limit and _walltime_over(job.time_limit, approved.walltime):
        overs.append(Over("walltime", job.time_limit, approved.walltime))
    return tuple(overs)


def compared(jobs: Sequence[Job], envelope: Envelope | None) -> list[Job]:
    """The jobs, each with what it asks beyond its kind's approval (``Job.outside``)."""
    if envelope is None:
        return list(jobs)
    out = []
    for job in jobs:
        approved = envelope.for_kind(job.kind)
        out.append(replace(job, outside=outside(job, approved)) if approved else job)
    return out

