"""Make a run its allocation cut resumable: the nodes left ``running`` become ``failed``.

``ari resume`` runs again only ``pending`` and ``failed`` nodes (:mod:`..ari.resume_rule`); a
node the cut interrupted stays ``running`` and the resume finds nothing to do. This marks those
nodes failed the way ARI does, in tree.json, crash-safely, keeping the tree as it was beside it
(``tree.json.before-requeue``), and writes the run's scope for ``ari resume --config``
(``resume.yaml``: ARI's resume would otherwise explore with its defaults). It refuses, changing nothing, while anything of the run is alive
(ARI's process, the hand-off, a job of the run in the queue, or a queue it cannot ask), and for a
run this user cannot read or does not own (the checkpoint's ownership rules).

What this machine cannot see may still run: ``ari run`` on the allocation's node (its ``.ari_pid``
names a pid that is not running here, and ARI removes that file when it exits), or a job the
queue did not show at that moment. So it also refuses while the run's files changed in the last
``RECENT_SECONDS`` or its ``.ari_pid`` names a pid not running here, saying the evidence, unless
the user confirms (``force``: ``ari-jupyter requeue --force``).
"""
from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from ..ari.dotenv import read_dotenv
from ..ari.markers import PID_FILE, ari_process
from ..ari.resume_rule import (RESUME_CONFIG, bfts_scope, left_running, mark_left_running_failed,
                               requeue_command, resume_command, resume_config, stranded)
from ..base.files import write_all
from ..checkpoint.ownership import ours, unsafe_entries
from ..hosts.host import Host, LocalHost
from ..i18n import message, message_of
from .jobs import workspace_root
from .reading import read_small_text
from . import tree_stream
from .status import NotACheckpoint, run_status

TREE = "tree.json"
BACKUP = "tree.json.before-requeue"
TREE_CAP = 64 * 1024 * 1024
WORKFLOW_CAP = 4 * 1024 * 1024
RECENT_SECONDS = 300
"""A run whose files changed this recently may still be running where this machine cannot see."""
SCAN_LIMIT = 4096
"""How many entries of the run's folders are looked at for the newest change."""


@dataclass(frozen=True)
class Requeue:
    """The outcome: ``result`` is "requeued" (nodes marked), "nothing" (none was left running)
    or "refused" (``message_id``/``params`` say why); ``command`` continues the run."""

    result: str
    checkpoint: str
    message_id: str
    params: dict[str, Any] = field(default_factory=dict)
    nodes: tuple[str, ...] = ()
    command: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"result": self.result, "checkpoint_dir": self.checkpoint, "nodes": list(self.nodes),
                "command": self.command, "message_id": self.message_id, "params": self.params}


def _refused(checkpoint: Path, message_id: str, **params: Any) -> Requeue:
    return Requeue("refused", str(checkpoint), message_id, params)


def _not_ours(path: Path) -> Requeue | None:
    """The checkpoint and the files read or written here must be this user's and writable by
    nobody else."""
    try:
        problem = ours(path, os.lstat(path))
    except OSError:
        return _refused(path, "runs.requeue.unreadable", path=str(path))
    read_or_written = [TREE, BACKUP, RESUME_CONFIG, ".env", "workflow.yaml"]
    problem = problem or next(iter(unsafe_entries(path, read_or_written)), None)
    if problem is not None:
        return _refused(path, "runs.requeue.not_ours", path=problem.path, owner=problem.owner,
                        mode=problem.mode)
    return None


class _NothingLeftRunning(Exception):
    """The tree was read to its end and no node was left running: nothing is written."""


class _TreeRefused(Exception):
    """tree.json could not be read as a tree: ``message_id`` says how."""

    def __init__(self, message_id: str) -> None:
        super().__init__(message_id)
        self.message_id = message_id


def _read_as_tree(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """``pieces`` of tree.json, a reading error turned into ``_TreeRefused`` (a write error,
    a full disk, stays what it is)."""
    try:
        yield from pieces
    except FileNotFoundError:
        raise _TreeRefused("runs.requeue.no_tree") from None
    except (OSError, ValueError):  # not a tree, cut, too large or nested too deep
        raise _TreeRefused("runs.requeue.bad_tree") from None


def _marked(path: Path, stamp: datetime, cut: list[str]) -> Iterator[bytes]:
    """tree.json rewritten with its nodes left running marked failed, their ids added to
    ``cut`` as they go by; ``_NothingLeftRunning`` at its end when there was none."""
    def node_of(node: Any) -> Any:
        if not (isinstance(node, dict) and stranded(node.get("status"))):
            return node  # most nodes: the rule's question asked cheaply first
        ids = left_running({"nodes": [node]})
        cut.extend(ids)
        return mark_left_running_failed({"nodes": [node]}, stamp)["nodes"][0]

    yield from _read_as_tree(tree_stream.rewritten(path, TREE_CAP, node_of))
    if not cut:
        raise _NothingLeftRunning


def _scope_config(path: Path) -> list[tuple[Path, bytes, int]]:
    """``resume.yaml`` to write: the checkpoint's workflow.yaml with the .env's BFTS scope;
    nothing when the run has no workflow.yaml (``ari run`` started by hand)."""
    workflow = read_small_text(path / "workflow.yaml", WORKFLOW_CAP + 1)
    if not workflow or len(workflow) > WORKFLOW_CAP:
        return []
    config = resume_config(workflow, bfts_scope(read_dotenv(path / ".env")))
    return [(path / RESUME_CONFIG, config.encode(), 0o600)]


def _newest_change(path: Path) -> tuple[str, float]:
    """The entry of the checkpoint or of the run's node work dirs (``experiments/<run_id>/`` and
    each node's folder) changed last, and when; links are not followed, at most SCAN_LIMIT."""
    newest, when, seen = "", 0.0, 0
    node_dirs = workspace_root(path) / "experiments" / path.name
    folders = [path, node_dirs]
    while folders and seen < SCAN_LIMIT:
        folder = folders.pop(0)
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                seen += 1
                if seen > SCAN_LIMIT:
                    break
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if info.st_mtime > when:
                    newest, when = entry.path, info.st_mtime
                if folder == node_dirs and entry.is_dir(follow_symlinks=False):
                    folders.append(Path(entry.path))
    return newest, when


def still_running_evidence(path: Path, now: float | None = None) -> list[dict]:
    """Why the run may still be running where this machine cannot see (none: no such sign)."""
    now = time.time() if now is None else now
    evidence = []
    newest, when = _newest_change(path)
    if newest and now - when < RECENT_SECONDS:
        evidence.append(message("runs.requeue.evidence.recent", path=newest,
                                seconds=max(0, int(now - when)), minutes=RECENT_SECONDS // 60))
    process = ari_process(path)
    if process.pid is not None and not process.alive:
        evidence.append(message("runs.requeue.evidence.pid", path=str(path / PID_FILE),
                                pid=process.pid, host=socket.gethostname() or "localhost"))
    return evidence


async def requeue(checkpoint: str | Path, host: Host | None = None,
                  now: datetime | None = None, *, force: bool = False) -> Requeue:
    """Mark the run's nodes left ``running`` failed, or say why not; see the module's doc.
    ``force``: the user confirmed, with the evidence shown, that the run no longer runs."""
    path = Path(checkpoint).expanduser().absolute()
    try:  # another user's 0750 folder: the look inside raises PermissionError, said as such
        unreadable = (not os.access(path, os.R_OK | os.X_OK)
                      or ((path / TREE).exists() and not os.access(path / TREE, os.R_OK)))
    except OSError:
        unreadable = True
    if unreadable:
        return _refused(path, "runs.requeue.unreadable", path=str(path))
    refused = _not_ours(path)
    if refused:
        return refused
    try:  # the tree is read below, once: the status needs none of it to say the run is alive
        status = await run_status(path, host or LocalHost(), with_nodes=False)
    except NotACheckpoint:
        return _refused(path, "runs.requeue.unreadable", path=str(path))
    if status.jobs.scheduler != "ok":
        return _refused(path, "runs.requeue.queue_unknown",
                        problem=message_of(status.jobs.problem) or str(status.jobs.problem))
    # the chain's follow-ups (the one running this requeue, the next waiting) are not the run
    live = [job.job_id for job in status.jobs.jobs if job.active and job.kind != "followup"]
    if status.alive or status.active or live:
        return _refused(path, "runs.requeue.alive", phase=status.phase, jobs=", ".join(live) or "-")
    evidence = [] if force else still_running_evidence(path)
    if evidence:
        return _refused(path, "runs.requeue.maybe_running", evidence=evidence,
                        command=f"{requeue_command(str(path))} --force")
    writes = _scope_config(path)
    command = resume_command(str(path), str(path / RESUME_CONFIG) if writes else None)
    stamp = now or datetime.now(timezone.utc)
    cut: list[str] = []
    try:
        mode = (path / TREE).stat().st_mode & 0o777
    except FileNotFoundError:
        return _refused(path, "runs.requeue.no_tree", path=str(path / TREE))
    try:  # parsed once, node by node: a 60 MB tree.json is never held whole (tree_stream); the
        write_all([*writes,  # backup is its bytes as they are
                   (path / BACKUP, _read_as_tree(tree_stream.chunks(path / TREE, TREE_CAP)), mode),
                   (path / TREE, _marked(path / TREE, stamp, cut), mode)])
    except _TreeRefused as refusal:
        return _refused(path, refusal.message_id, path=str(path / TREE))
    except _NothingLeftRunning:  # nothing was changed but the run's scope for resume
        write_all(writes)
        return Requeue("nothing", str(path), "runs.requeue.nothing", {"command": command}, (), command)
    return Requeue("requeued", str(path), "runs.requeue.done",
                   {"count": len(cut), "nodes": ", ".join(cut), "backup": str(path / BACKUP),
                    "command": command}, tuple(cut), command)
