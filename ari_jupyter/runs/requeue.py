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
from typing import Any

from ..ari.dotenv import read_dotenv
from ..ari.markers import PID_FILE, ari_process
from ..ari.resume_rule import (RESUME_CONFIG, bfts_scope, left_running, mark_left_running_failed,
                               requeue_command, resume_command, resume_config)
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


def _chunks(path: Path):
    """The file's bytes in pieces (the backup of a large tree.json, never held whole)."""
    with open(path, "rb") as handle:
        while chunk := handle.read(tree_stream.CHUNK):
            yield chunk


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
    try:
        status = await run_status(path, host or LocalHost())
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
    try:  # node by node: a 60 MB tree.json is never held whole (tree_stream)
        cut = [node_id for kind, node in tree_stream.events(path / TREE, TREE_CAP)
               if kind == "node" for node_id in left_running({"nodes": [node]})]
    except FileNotFoundError:
        return _refused(path, "runs.requeue.no_tree", path=str(path / TREE))
    except (OSError, ValueError):  # not a tree, cut, too large or nested too deep
        return _refused(path, "runs.requeue.bad_tree", path=str(path / TREE))
    writes = _scope_config(path)
    command = resume_command(str(path), str(path / RESUME_CONFIG) if writes else None)
    if not cut:
        write_all(writes)
        return Requeue("nothing", str(path), "runs.requeue.nothing", {"command": command}, (), command)
    stamp = now or datetime.now(timezone.utc)
    mode = (path / TREE).stat().st_mode & 0o777
    write_all([*writes, (path / BACKUP, _chunks(path / TREE), mode),
               (path / TREE, tree_stream.rewritten(
                   path / TREE, TREE_CAP,
                   lambda node: mark_left_running_failed({"nodes": [node]}, stamp)["nodes"][0]), mode)])
    return Requeue("requeued", str(path), "runs.requeue.done",
                   {"count": len(cut), "nodes": ", ".join(cut), "backup": str(path / BACKUP),
                    "command": command}, tuple(cut), command)
