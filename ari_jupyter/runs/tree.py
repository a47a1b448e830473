"""The BFTS tree as ARI saves it: node counts, the best metric, the nodes' errors.

ARI's ``_save_checkpoint`` (``ari-core/ari/cli/bfts_loop.py``) writes ``tree.json`` =
``{"run_id", "experiment_file", ..., "nodes": [Node.to_dict()...]}`` and the same node list
into ``nodes_tree.json``, each with ``json.dumps(indent=2)``. Node status is one of
``pending``, ``running``, ``success``, ``failed``, ``abandoned`` (``NodeStatus``).
When tree.json is half-written, nodes_tree.json is used; when both are, the node statuses
are salvaged from the text (ARI's fixed indentation puts a node's own keys at six spaces).
"""
from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG
from typing import Any, Iterable

from . import tree_stream
from .reading import JSON_CAP, JsonRead, read_json

STATUSES = ("pending", "running", "success", "failed", "abandoned")
_NODE_STATUS = re.compile(r'\n      "status": "([a-z]+)"')
_NODE_ID = re.compile(r'\n      "id": "([^"\n]*)"')
_NODE_OPEN = "\n    {\n"
_NODE_HEAD = re.compile(r'\n      "id": "([^"\n]*)",\n      "parent_id": [^\n]*\n      "depth": [^\n]*\n'
                        r'      "status": "([a-z]+)"')
"""``Node.to_dict`` starts with id, parent_id, depth, status: one pass finds both."""
_NODE_METRICS = re.compile(r'\n      "metrics": (\{\}|\{\n(?:        [^\n]*\n)*      \})')
"""A node's metrics: the lines indented deeper than the node's keys, up to the brace at the
keys' depth (ARI's are flat, name -> number; a nested value is taken whole). Linear: a node key
line never holds eight leading spaces, so the lines one try reads are read by no other (a
``[^}]*`` up to the next brace read the rest of a crafted file once per node)."""
_NODE_ERROR = re.compile(r'\n      "error_log": ([^\n]*)')
_TOP = re.compile(r'\n  "(run_id|created_at)": ("(?:[^"\\\n]|\\.)*")')


@dataclass(frozen=True)
class NodeCounts:
    total: int = 0
    done: int = 0
    failed: int = 0
    running: int = 0

    def to_json(self) -> dict[str, int]:
        return {"total": self.total, "done": self.done, "failed": self.failed,
                "running": self.running}


@dataclass(frozen=True)
class BestMetric:
    name: str
    value: float
    node_id: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "node_id": self.node_id}


@dataclass(frozen=True)
class TreeSummary:
    """What the saved tree says. ``source`` is the file it came from ('' when none)."""

    run_id: str = ""
    counts: NodeCounts = NodeCounts()
    best: BestMetric | None = None
    errors: tuple[tuple[str, str], ...] = ()
    """(node id, error_log) of failed nodes, newest last."""
    source: str = ""
    problem: str = ""
    """'' or why the tree could not be read whole: 'truncated', 'invalid', 'too-large', ..."""
    salvaged: bool = False
    created_at: str = ""
    node_ids: tuple[str, ...] = field(default=(), compare=False)
    first_node_at: str = ""
    """The first node's ``created_at``: when ARI's tree search began ('' when not said)."""


def count(statuses: Iterable[str]) -> NodeCounts:
    total = done = failed = running = 0
    for status in statuses:
        total += 1
        if status == "success":
            done += 1
        elif status in ("failed", "abandoned"):
            failed += 1
        elif status == "running":
            running += 1
    return NodeCounts(total, done, failed, running)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def best_metric(nodes: list[dict], metric: str = "", higher_is_better: bool = True) -> BestMetric | None:
    """The best successful node by ``metric`` (the run's primary metric), else by ARI's
    evaluator score ``_scientific_score`` (what ARI ranks nodes by for the paper)."""
    for name, higher in ((metric, higher_is_better), ("_scientific_score", True)):
        if not name:
            continue
        best: BestMetric | None = None
        for node in nodes:
            if node.get("status") != "success" or not isinstance(node.get("metrics"), dict):
                continue
            value = _number(node["metrics"].get(name))
            if value is None:
                continue
            if best is None or (value > best.value if higher else value < best.value):
                best = BestMetric(name, value, str(node.get("id", "")))
        if best is not None:
            return best
    return None


def _nodes_of(read: JsonRead) -> list[dict] | None:
    data = read.data
    if isinstance(data, dict) and isinstance(data.get("nodes"), list):
        return [n for n in data["nodes"] if isinstance(n, dict)]
    return None


ERRORS_KEPT = 5


def _failed_errors(nodes: list[dict], limit: int = ERRORS_KEPT) -> tuple[tuple[str, str], ...]:
    errors = [(str(n.get("id", "")), str(n.get("error_log") or ""))
              for n in nodes if n.get("status") in ("failed", "abandoned") and n.get("error_log")]
    return tuple(errors[-limit:])


def _fast_nodes(text: str) -> list[dict] | None:
    """The nodes' id, status, metrics and error_log from ARI's ``indent=2`` layout without
    parsing the whole document (a 10,000-node tree is ~10 MB): a node's own keys are the only
    lines indented by six spaces, since JSON strings hold no raw newline. None when the text
    is not exactly that layout (then the caller parses it whole)."""
    if not text.startswith("{\n") or not text.rstrip().endswith("]\n}"):
        return None
    heads = _NODE_HEAD.findall(text)
    metrics, errors = _NODE_METRICS.findall(text), _NODE_ERROR.findall(text)
    count = text.count(_NODE_OPEN)
    if not count or not (len(heads) == len(metrics) == len(errors) == count):
        return None
    nodes = []
    try:
        for (node_id, status), metric_text in zip(heads, metrics):
            node: dict = {"id": node_id, "status": status}
            if status == "success":
                node["metrics"] = json.loads(metric_text)
            nodes.append(node)
        failed = [i for i, node in enumerate(nodes) if node["status"] in ("failed", "abandoned")]
        for index in failed[-ERRORS_KEPT:]:  # only the errors that are shown are decoded
            error_text = errors[index][:-1] if errors[index].endswith(",") else errors[index]
            if error_text != "null":
                nodes[index]["error_log"] = json.loads(error_text)
    except ValueError:
        return None
    return nodes


_FIRST_NODE_AT = re.compile(r'\n      "created_at": ("(?:[^"\\\n]|\\.)*")')
"""A node's own ``created_at`` in ARI's ``indent=2`` layout (six spaces: a node's key)."""


def _first_node_at(text: str) -> str:
    match = _FIRST_NODE_AT.search(text)
    try:
        return str(json.loads(match.group(1))) if match else ""
    except ValueError:
        return ""


def _fast_summary(name: str, read: JsonRead, metric: str, higher: bool) -> TreeSummary | None:
    nodes = _fast_nodes(read.text)
    if nodes is None:
        return None
    top = {key: json.loads(value) for key, value in _TOP.findall(read.text[:4096])}
    return TreeSummary(run_id=str(top.get("run_id") or ""),
                       counts=count(n["status"] for n in nodes),
                       best=best_metric(nodes, metric, higher), errors=_failed_errors(nodes),
                       source=name, created_at=str(top.get("created_at") or ""),
                       node_ids=tuple(n["id"] for n in nodes),
                       first_node_at=_first_node_at(read.text))


def _streamed_summary(path: Path, metric: str, higher: bool) -> TreeSummary | None:
    """The summary of a whole tree read node by node (``tree_stream``): memory a chunk and a
    node, not the parsed tree (a compact 60 MB tree.json parsed whole took gigabytes). None
    when the file is not a whole tree (then it is read whole, for its problem and salvage)."""
    top: dict[str, Any] = {}
    statuses: list[str] = []
    ids: list[str] = []
    scored: list[dict] = []  # successful nodes with only the metrics best_metric looks at
    errors: list[tuple[str, str]] = []
    first_at = ""
    key = ""
    try:
        for kind, value in tree_stream.events(path, JSON_CAP):
            if kind == "key":
                key = value
            elif kind == "value" and key in ("run_id", "created_at"):
                top[key] = value
            elif kind == "node" and isinstance(value, dict):
                status = str(value.get("status", ""))
                if not statuses:
                    first_at = str(value.get("created_at") or "")
                statuses.append(status)
                ids.append(str(value.get("id", "")))
                if value.get("status") == "success" and isinstance(value.get("metrics"), dict):
                    scored.append({"id": value.get("id", ""), "status": "success", "metrics": {
                        k: v for k, v in value["metrics"].items() if k in (metric, "_scientific_score")}})
                if value.get("status") in ("failed", "abandoned") and value.get("error_log"):
                    errors = [*errors[-(ERRORS_KEPT - 1):], (ids[-1], str(value.get("error_log") or ""))]
    except (OSError, ValueError):
        return None
    return TreeSummary(run_id=str(top.get("run_id") or ""), counts=count(statuses),
                       best=best_metric(scored, metric, higher), errors=tuple(errors),
                       source=path.name, created_at=str(top.get("created_at") or ""),
                       node_ids=tuple(ids), first_node_at=first_at)


def _layout(path: Path) -> bool:
    """Whether the file starts as ARI's ``indent=2`` layout (the fast reader's); a compact
    tree is read node by node instead of as one text."""
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as handle:
            return S_ISREG(os.fstat(handle.fileno()).st_mode) and handle.read(2) == b"{\n"
    except OSError:
        return False


def read_tree(checkpoint: Path, metric: str = "", higher_is_better: bool = True) -> TreeSummary:
    """The node summary from tree.json, else nodes_tree.json, else what a partial file shows."""
    reads: list[tuple[str, JsonRead]] = []
    if _layout(checkpoint / "tree.json"):
        fast = read_json(checkpoint / "tree.json", parse=False)
        summary = _fast_summary("tree.json", fast, metric, higher_is_better) if fast.text else None
        if summary is not None:
            return summary
    for name in ("tree.json", "nodes_tree.json"):
        if not reads or reads[-1][1].problem in ("", "missing"):
            streamed = _streamed_summary(checkpoint / name, metric, higher_is_better)
            if streamed is not None and (not reads or reads[-1][1].problem == "missing"):
                return streamed
        read = read_json(checkpoint / name)
        reads.append((name, read))
        nodes = _nodes_of(read)
        if nodes is not None:
            data = read.data
            first_problem = next((r.problem for n, r in reads[:-1] if r.problem != "missing"), "")
            return TreeSummary(
                run_id=str(data.get("run_id") or ""),
                counts=count(str(n.get("status", "")) for n in nodes),
                best=best_metric(nodes, metric, higher_is_better),
                errors=_failed_errors(nodes), source=name, problem=first_problem,
                created_at=str(data.get("created_at") or ""),
                node_ids=tuple(str(n.get("id", "")) for n in nodes),
                first_node_at=str(nodes[0].get("created_at") or "") if nodes else "")
    for name, read in reads:
        if read.problem in ("truncated", "invalid") and read.text:
            statuses = _NODE_STATUS.findall(read.text)
            ids = _NODE_ID.findall(read.text)
            # A node cut before its status line is still a node (ARI writes "id" first).
            statuses += ["pending"] * max(0, len(ids) - len(statuses))
            return TreeSummary(counts=count(statuses), source=name, problem=read.problem,
                               salvaged=True, node_ids=tuple(ids))
    problem = next((r.problem for _, r in reads if r.problem != "missing"), "missing")
    return TreeSummary(problem=problem)
