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
"""
from __future__ import annotations

import shlex
from datetime import datetime
from typing import Any, Mapping

REQUEUED_STATES = frozenset({"pending", "failed"})
"""The node states ``ari resume`` runs again (run.py:510-517); the others it keeps as they are."""

LEFT_RUNNING = "running"
INTERRUPTED_ERROR = ("interrupted: the run ended while this node was running (its allocation "
                     "ended or it was cancelled); marked failed by ari-jupyter requeue so that "
                     "ari resume runs it again")
"""The ``error_log`` of a node marked failed here (ARI's own read like "timeout: exceeded ...")."""


def resumes(status: Any) -> bool:
    """Whether ``ari resume`` re-queues a node in this state."""
    return status in REQUEUED_STATES


def left_running(tree: Mapping[str, Any]) -> list[str]:
    """The ids of the nodes a cut left ``running`` (resume would never run them again)."""
    nodes = tree.get("nodes") if isinstance(tree, Mapping) else None
    return [str(node.get("id")) for node in nodes or () if isinstance(node, Mapping)
            and node.get("status") == LEFT_RUNNING]


def requeued(tree: Mapping[str, Any]) -> list[str]:
    """The ids of the nodes ``ari resume`` would run again."""
    return [str(node.get("id")) for node in tree.get("nodes") or ()
            if isinstance(node, Mapping) and resumes(node.get("status"))]


def mark_left_running_failed(tree: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """A copy of ``tree`` whose ``running`` nodes are ``failed`` as ``Node.mark_failed`` writes
    it (``completed_at`` in ISO form, the ``error_log`` saying why); the rest unchanged."""
    nodes = []
    for node in tree.get("nodes") or ():
        if isinstance(node, Mapping) and node.get("status") == LEFT_RUNNING:
            node = {**node, "status": "failed", "completed_at": now.isoformat(),
                    "error_log": INTERRUPTED_ERROR}
        nodes.append(node)
    return {**tree, "nodes": nodes}


def resume_command(checkpoint: str) -> str:
    """The one line that continues the run: ``ari resume`` with ``ARI_CHECKPOINT_DIR`` set for
    it, so ARI reads the checkpoint's .env (the LLM and SLURM settings), shell-quoted."""
    quoted = shlex.quote(str(checkpoint))
    return f"ARI_CHECKPOINT_DIR={quoted} ari resume {quoted}"


def requeue_command(checkpoint: str) -> str:
    """``ari-jupyter requeue <checkpoint>``, shell-quoted."""
    return f"ari-jupyter requeue {shlex.quote(str(checkpoint))}"
