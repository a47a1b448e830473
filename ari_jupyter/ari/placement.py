"""Where the reproduce job's ranks will land: a pure model behind the placement picture.

The picture must make the most common multi-node mistake visible at a glance: a reproduce.sh
without an ``srun`` fan-out runs every rank on the first node while the others idle. The job
shape is read back from the exact sbatch argv that ``ari.sbatch.build_sbatch_argv`` produces
(one source of truth), and ranks are laid out the way SLURM's default *block* distribution
does. Only the nodes that are drawn are materialised, so a 160k-node allocation costs nothing.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

from ..slurm import hostlist
from ..base.numbers import count_of
from .profile import fans_out

SHARED_GPU = -1
"""gpu_owner value for a GPU requested per node (``--gres``/``--gpus-per-node``), not per rank."""


@dataclass(frozen=True)
class NodeShape:
    name: str
    cpus: int
    gpus: int


@dataclass(frozen=True)
class JobRequest:
    """The placement-relevant part of an sbatch line (0 = not given)."""

    nodes: int = 0
    ntasks: int = 0
    ntasks_per_node: int = 0
    cpus_per_task: int = 1
    gpus_per_task: int = 0
    gpus_per_node: int = 0


@dataclass(frozen=True)
class NodePlacement:
    index: int
    name: str
    cpus: int
    gpus: int
    first_rank: int
    rank_count: int
    gpu_owner: tuple[int | None, ...]
    cpus_per_task: int = 1

    @property
    def ranks(self) -> range:
        return range(self.first_rank, self.first_rank + self.rank_count)

    @property
    def cpus_used(self) -> int:
        return self.rank_count * self.cpus_per_task

    @property
    def cpu_oversubscribed(self) -> bool:
        return self.cpus > 0 and self.cpus_used > self.cpus


@dataclass(frozen=True)
class PlacementFinding:
    """A message key for i18n plus its parameters; severity is warning or info (``base.verdict``)."""

    code: str
    severity: str
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Placement:
    nodes: tuple[NodePlacement, ...]
    total_nodes: int
    total_ranks: int
    fan_out: bool
    request: JobRequest
    findings: tuple[PlacementFinding, ...]

    @property
    def hidden_nodes(self) -> int:
        return self.total_nodes - len(self.nodes)

    @property
    def nodes_with_ranks(self) -> int:
        if not self.fan_out:
            return 1 if self.total_ranks else 0
        return min(self.total_nodes, self.total_ranks)


def request_from_sbatch_argv(argv: Sequence[str]) -> JobRequest:
    """Read the job shape back from an sbatch argv (pair-style and ``--flag=value`` tokens)."""
    values: dict[str, str] = {}
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith("--") and "=" in token:
            key, _, value = token.partition("=")
            values.setdefault(key, value)
        elif token.startswith("--") and i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
            values.setdefault(token, tokens[i + 1])
            i += 1
        i += 1

    def number(key: str) -> int:
        try:
            return max(0, int(values.get(key, "0")))
        except ValueError:
            return 0

    gpus_per_node = number("--gpus-per-node")
    gres = values.get("--gres", "")
    if gres.startswith("gpu"):
        count = gres.rsplit(":", 1)[-1]
        gpus = count_of(count)
        gpus_per_node = gpus if gpus is not None else max(gpus_per_node, 1)
    return JobRequest(
        nodes=number("--nodes"),
        ntasks=number("--ntasks"),
        ntasks_per_node=number("--ntasks-per-node"),
        cpus_per_task=number("--cpus-per-task") or 1,
        gpus_per_task=number("--gpus-per-task"),
        gpus_per_node=gpus_per_node,
    )


def resolve_shape(request: JobRequest, cpus_per_node: int) -> tuple[int, int]:
    """(nodes, ranks) as SLURM derives them when some of the counts are missing."""
    ntasks = request.ntasks
    nodes = request.nodes
    if nodes <= 0:
        if ntasks and request.ntasks_per_node:
            nodes = math.ceil(ntasks / request.ntasks_per_node)
        elif ntasks and cpus_per_node > 0:
            # SLURM never splits a task across nodes: a node holds whole tasks only. A task
            # larger than a node is refused by sbatch (the validator says so): one node drawn.
            per_node = cpus_per_node // request.cpus_per_task
            nodes = math.ceil(ntasks / per_node) if per_node else 1
        else:
            nodes = 1
    if ntasks <= 0:
        ntasks = request.ntasks_per_node * nodes if request.ntasks_per_node else nodes
    return nodes, ntasks


def block_counts(nodes: int, ranks: int, ntasks_per_node: int) -> Iterator[tuple[int, int]]:
    """(first_rank, count) per node for SLURM's block distribution, lazily."""
    if ntasks_per_node > 0:
        for index in range(nodes):
            first = index * ntasks_per_node
            yield min(first, ranks), max(0, min(ntasks_per_node, ranks - first))
        return
    base, extra = divmod(ranks, nodes)
    first = 0
    for index in range(nodes):
        count = base + (1 if index < extra else 0)
        yield first, count
        first += count


def plan_placement(
    shapes: Iterable[NodeShape],
    request: JobRequest,
    *,
    fan_out: bool,
    available_nodes: int | None = None,
    max_shown: int = 8,
) -> Placement:
    """Lay out ``request`` over the first nodes of ``shapes`` (the allocation's nodes).

    ``available_nodes`` is the allocation's node count when ``shapes`` is a lazy iterator.
    The reproduce job is a new job on the partition, so nodes beyond the allocation are drawn
    with the last known node's shape and named ``+1``, ``+2``...
    """
    shape_iter = iter(shapes)
    shown_shapes = list(itertools.islice(shape_iter, max_shown))
    if available_nodes is None:
        left = getattr(shape_iter, "remaining", None)
        available_nodes = len(shown_shapes) + (left if left is not None else sum(1 for _ in shape_iter))
    template = shown_shapes[0] if shown_shapes else NodeShape("node", 0, 0)
    nodes, ranks = resolve_shape(request, template.cpus)

    findings: list[PlacementFinding] = []
    if available_nodes and nodes > available_nodes:
        findings.append(PlacementFinding("nodes_exceed_allocation", "info",
                                {"nodes": nodes, "available": available_nodes}))
    if not fan_out and nodes > 1:
        findings.append(PlacementFinding("all_ranks_on_first_node", "warning",
                                {"ranks": ranks, "nodes": nodes, "idle": nodes - 1,
                                 "node": template.name}))
    elif not fan_out and ranks > 1:
        findings.append(PlacementFinding("single_process_many_ranks", "warning", {"ranks": ranks}))

    placed: list[NodePlacement] = []
    counts = block_counts(nodes, ranks, request.ntasks_per_node) if fan_out else None
    last = template
    for index in range(min(nodes, max_shown)):
        if index < len(shown_shapes):
            shape = last = shown_shapes[index]
        else:
            shape = NodeShape(f"+{index - len(shown_shapes) + 1}", last.cpus, last.gpus)
        if fan_out:
            first, count = next(counts)
        else:
            first, count = 0, (ranks if index == 0 else 0)
        placed.append(NodePlacement(
            index=index, name=shape.name, cpus=shape.cpus, gpus=shape.gpus,
            first_rank=first, rank_count=count,
            gpu_owner=_assign_gpus(shape.gpus, first, count, request),
            cpus_per_task=request.cpus_per_task,
        ))

    findings.extend(_capacity_findings(placed, request))
    return Placement(nodes=tuple(placed), total_nodes=nodes, total_ranks=ranks,
                     fan_out=fan_out, request=request, findings=tuple(findings))


def _assign_gpus(gpus: int, first: int, count: int, request: JobRequest) -> tuple[int | None, ...]:
    owners: list[int | None] = [None] * gpus
    slot = 0
    if request.gpus_per_task:
        for rank in range(first, first + count):
            for _ in range(request.gpus_per_task):
                if slot < gpus:
                    owners[slot] = rank
                slot += 1
    elif request.gpus_per_node and count:
        for slot in range(min(gpus, request.gpus_per_node)):
            owners[slot] = SHARED_GPU
    return tuple(owners)


def _capacity_findings(placed: Sequence[NodePlacement], request: JobRequest) -> list[PlacementFinding]:
    findings = []
    wanted_gpus = request.gpus_per_task or request.gpus_per_node
    for node in placed:
        if node.cpu_oversubscribed:
            findings.append(PlacementFinding("cpu_oversubscribed", "warning", {
                "node": node.name, "used": node.cpus_used, "cpus": node.cpus}))
        need = (node.rank_count * request.gpus_per_task if request.gpus_per_task
                else (request.gpus_per_node if node.rank_count else 0))
        if wanted_gpus and node.rank_count and node.gpus == 0:
            findings.append(PlacementFinding("gpus_not_visible", "warning", {"node": node.name, "need": need}))
        elif need > node.gpus > 0:
            findings.append(PlacementFinding("gpu_oversubscribed", "warning", {
                "node": node.name, "need": need, "gpus": node.gpus}))
    return findings


class _CountedShapes:
    """A lazy iterator of node shapes that knows how many remain (``remaining``, any size),
    so a plan over ``x[1-100000000]y[1-2]`` never walks the names to count them."""

    def __init__(self, shapes: Iterator[NodeShape], total: int) -> None:
        self._shapes, self.remaining = shapes, total

    def __iter__(self) -> "_CountedShapes":
        return self

    def __next__(self) -> NodeShape:
        shape = next(self._shapes)
        self.remaining -= 1
        return shape


def shapes_from_allocation(allocation, node_cpus: int | None = None) -> Iterator[NodeShape]:
    """Node shapes from an ``Allocation``: names lazily from its hostlist, GPUs from what the
    kernel's own node sees, CPUs from ``node_cpus`` (a whole node of the partition, which is
    what a new job can get) or else the allocation's share (SLURM_JOB_CPUS_PER_NODE)."""
    shapes = _shapes(allocation, node_cpus)
    nodelist = getattr(allocation, "nodelist", None)
    if not nodelist:
        return shapes
    try:
        return _CountedShapes(shapes, hostlist.count(nodelist))
    except hostlist.HostlistError:
        return shapes


def _shapes(allocation, node_cpus: int | None) -> Iterator[NodeShape]:
    cpus = tuple(getattr(allocation, "cpus_per_node", ()) or ())
    fallback_cpus = int(getattr(allocation, "cpus_on_node", 0) or (cpus[-1] if cpus else 0))
    gpus = _gpus_per_node(allocation)
    for index, name in enumerate(allocation.nodes()):
        if node_cpus:
            yield NodeShape(name=name, cpus=int(node_cpus), gpus=gpus)
            continue
        node_cpus_here = cpus[index] if index < len(cpus) else fallback_cpus
        yield NodeShape(name=name, cpus=int(node_cpus_here or 0), gpus=gpus)


def _gpus_per_node(allocation) -> int:
    gpus = getattr(allocation, "gpus_on_node", None)
    if gpus:
        return int(gpus)
    visible = getattr(allocation, "cuda_visible_devices", "") or ""
    return len([d for d in str(visible).split(",") if d.strip() and d.strip() != "NoDevFiles"])


def placement_for(allocation, sbatch_argv: Sequence[str], kind: str, max_shown: int = 8) -> Placement:
    """The picture's model for the wizard: the allocation's nodes, the exact sbatch line, and
    whether the profile's kind fans out."""
    return plan_placement(
        shapes_from_allocation(allocation),
        request_from_sbatch_argv(sbatch_argv),
        fan_out=fans_out(kind),
        available_nodes=int(getattr(allocation, "num_nodes", 0) or 0) or None,
        max_shown=max_shown,
    )
