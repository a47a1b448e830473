"""What ``ari resume`` (ARI 0.9.1) continues, and how a run cut mid-node is made resumable.

ARI's resume re-queues only the nodes whose tree.json status is ``pending`` or ``failed``
(ari-core/ari/cli/run.py:510-517) and exits 0 with "No pending nodes." when there are none
(run.py:525-527). A node is marked ``running`` when its work starts
(ari-core/ari/orchestrator/node.py:123-124); when SLURM ends ``ari run`` (TIMEOUT, scancel)
nothing marks it otherwise (ari-core/ari/pidfile.py only removes ``.ari_pid``), so the node the
cut interrupted would never run again. Marking it ``failed`` the way ARI marks a node that
stopped (``Node.mark_failed``, node.py:134-138: status, ``completed_at``, ``error_log``) lets
resume re-queue it. ARI reads the checkpoint's ``.env`` only when ``ARI_CHECKPOINT_DIR`` is
exported (ari-core/ari/cli/__init__.py, ``_load_repo_dotenv``), so the command sets it.

The run's scope does not survive a bare resume either: ``ari run`` applies ``ARI_MAX_NODES``,
``ARI_MAX_DEPTH``, ``ARI_MAX_REACT``, ``ARI_TIMEOUT_NODE``, ``ARI_PARALLEL`` (and the frontier
and web choices) over its config (run.py:230, ``apply_bfts_env_overrides`` in
ari-core/ari/config/__init__.py:432-474), ``ari resume`` does not: it explores with the package
workflow.yaml's defaults (50 nodes, 4 in parallel: config/__init__.py:66-90). Its ``--config``
is read with the ``bfts:`` section (``load_config``), so the resume is given the checkpoint's
workflow.yaml with the .env's scope as that section (``RESUME_CONFIG``).
"""
from __future__ import annotations

import shlex
from datetime import datetime
from typing import Any, Mapping

from ..base.numbers import count_of

REQUEUED_STATES = frozenset({"pending", "failed"})
"""The node states ``ari resume`` runs again (run.py:510-517); the others it keeps as they are."""

SETTLED_STATES = frozenset({"success", "abandoned"})
"""Node states that are an outcome: resume keeps them, nothing needs to run them again."""
NODE_STATES = ("pending", "running", "success", "failed", "abandoned")
"""ARI's ``NodeStatus`` (ari-core/ari/orchestrator/node.py:10-15)."""
INTERRUPTED_ERROR = ("interrupted: the run ended while this node was running (its allocation "
                     "ended or it was cancelled); marked failed by ari-jupyter requeue so that "
                     "ari resume runs it again")
"""The ``error_log`` of a node marked failed here (ARI's own read like "timeout: exceeded ...")."""


def resumes(status: Any) -> bool:
    """Whether ``ari resume`` re-queues a node in this state."""
    return status in REQUEUED_STATES


def stranded(status: Any) -> bool:
    """A state resume neither runs again nor counts as an outcome: ``running``, after a cut."""
    return status in NODE_STATES and not resumes(status) and status not in SETTLED_STATES


def left_running(tree: Mapping[str, Any]) -> list[str]:
    """The ids of the nodes a cut left ``running`` (resume would never run them again)."""
    nodes = tree.get("nodes") if isinstance(tree, Mapping) else None
    return [str(node.get("id")) for node in nodes or () if isinstance(node, Mapping)
            and stranded(node.get("status"))]


def requeued(tree: Mapping[str, Any]) -> list[str]:
    """The ids of the nodes ``ari resume`` would run again."""
    return [str(node.get("id")) for node in tree.get("nodes") or ()
            if isinstance(node, Mapping) and resumes(node.get("status"))]


def mark_left_running_failed(tree: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """A copy of ``tree`` whose ``running`` nodes are ``failed`` as ``Node.mark_failed`` writes
    it (``completed_at`` in ISO form, the ``error_log`` saying why); the rest unchanged."""
    nodes = []
    for node in tree.get("nodes") or ():
        if isinstance(node, Mapping) and stranded(node.get("status")):
            node = {**node, "status": "failed", "completed_at": now.isoformat(),
                    "error_log": INTERRUPTED_ERROR}
        nodes.append(node)
    return {**tree, "nodes": nodes}


RESUME_CONFIG = "resume.yaml"
"""The checkpoint's workflow.yaml with the run's BFTS scope, written for ``ari resume --config``."""

_SCOPE_INTS = (("ARI_MAX_NODES", "max_total_nodes"), ("ARI_MAX_DEPTH", "max_depth"),
               ("ARI_MAX_REACT", "max_react_steps"), ("ARI_TIMEOUT_NODE", "timeout_per_node"),
               ("ARI_PARALLEL", "max_parallel_nodes"))
_FRONTIER_SCORES = ("scientific_plus_diversity", "scientific_only", "depth_penalized", "ucb_like")


def bfts_scope(dotenv: Mapping[str, str]) -> dict[str, Any]:
    """The ``bfts:`` settings ``ari run`` takes from these variables (as
    ``apply_bfts_env_overrides`` reads them: an int, a known frontier score, a web switch)."""
    scope: dict[str, Any] = {}
    for variable, name in _SCOPE_INTS:
        value = count_of(dotenv.get(variable, ""))
        if value is not None:  # "²" or 5,000 digits: not a number ari run would take
            scope[name] = value
    if dotenv.get("ARI_FRONTIER_SCORE") in _FRONTIER_SCORES:
        scope["frontier_score"] = dotenv["ARI_FRONTIER_SCORE"]
    if dotenv.get("ARI_BFTS_ALLOW_WEB") is not None:
        scope["allow_web"] = str(dotenv["ARI_BFTS_ALLOW_WEB"]).strip().lower() in ("1", "true", "yes", "on")
    return scope


def resume_config(workflow_yaml: str, scope: Mapping[str, Any]) -> str:
    """``workflow_yaml`` with ``scope`` as its top-level ``bfts:`` section. Appended, so the
    file stays as written; YAML's last key wins, as ARI's loader (PyYAML) reads it."""
    lines = ["", "# The run's BFTS scope from the checkpoint's .env: ari resume does not apply",
             "# ARI_MAX_NODES and the others as ari run does (written by ari-jupyter requeue).",
             "bfts:"]
    for name, value in scope.items():
        said = ("true" if value else "false") if isinstance(value, bool) else value
        lines.append(f"  {name}: {said}")
    return workflow_yaml.rstrip("\n") + "\n" + "\n".join(lines) + "\n"


def resume_command(checkpoint: str, config: str | None = None) -> str:
    """The one line that continues the run: ``ari resume`` with ``ARI_CHECKPOINT_DIR`` set for
    it, so ARI reads the checkpoint's .env (the LLM and SLURM settings), and with ``config``
    (the run's scope) when there is one; shell-quoted."""
    quoted = shlex.quote(str(checkpoint))
    tail = f" --config {shlex.quote(str(config))}" if config else ""
    return f"ARI_CHECKPOINT_DIR={quoted} ari resume {quoted}{tail}"


def requeue_command(checkpoint: str) -> str:
    """``ari-jupyter requeue <checkpoint>``, shell-quoted."""
    return f"ari-jupyter requeue {shlex.quote(str(checkpoint))}"
