"""A recorded ARI run that a demo site shows: its files, and its jobs as SLURM saw them.

One real multi-node run (``ari run`` from the wizard's checkpoint through BFTS to the
reproduce job, on the project's two-node SLURM test bed) is kept as package data,
``hosts/runs/<run_id>.json``, written by ``tests/testbed/record_run.py``: the workspace's text
files (checkpoint, tree.json, logs, the BFTS jobs' outputs, the reproduce log), secrets
redacted and sizes trimmed, with the workspace and the user written as ``@WORKSPACE@`` and
``@USER@``; each distinct squeue answer (the Runs panel's format) with its time; the phases
``ari-jupyter status`` saw; and, for a run recorded on the test bed with accounting,
accounting's answer for its jobs (``sacct``: the rows ``slurm.accounting.sacct_argv`` asks for,
given once the run had ended), which the jobs' view reads as a live site's sacct answer
(``runs.jobs``): each job as it ended, its exit code, elapsed seconds and nodes. A run recorded
without accounting has squeue's answers alone.

A demo site lists the runs it shows (``"runs"`` in its site file). On first use the run is
copied into the local demo workspace, the paths filled in, so every reader (status, the Runs
panel, the doctor, the lessons, JupyterLab's file browser) reads ordinary files; a file or a
checkpoint already there is never overwritten, so a user's edits and runs stay. Its jobs are
answered from the recording, never from the machine's SLURM.
"""
from __future__ import annotations

import functools
import json
import os
import re
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .host import SiteError
from ..slurm.cancel_record import RECORD, render_cancels
from ..base.bounded_read import read_json_bounded
from ..base.numbers import digits_key

RUNS_DIR = Path(__file__).with_name("runs")
FORMAT = 1
WORKSPACE_TOKEN = "@WORKSPACE@"
USER_TOKEN = "@USER@"
MARKER = ".ari-jupyter-recording.json"
MARKER_CAP = 64 * 1024
"""The marker holds a run id, a node count and a date: a few hundred bytes."""
"""Written into a placed checkpoint: which recording it came from (its jobs are that one's)."""
SEP = "\x1f"
_SQUEUE_KEYS = ("job_id", "name", "state", "elapsed", "nodes", "where", "user", "work_dir")
"""The fields of the recorded squeue answers (the Runs panel's ``%i %j %T %M %D %R %u %Z``)."""
_RUN_ID = re.compile(r"^[0-9]{8,14}_[A-Za-z0-9_.-]{1,200}$")


@dataclass(frozen=True)
class RecordedRun:
    """One recorded run as read from ``hosts/runs/<run_id>.json``."""

    run_id: str
    nodes: str
    """The nodes it ran on, as SLURM names them (``n[1-2]``)."""
    recorded_at: str
    files: Mapping[str, Mapping[str, Any]]
    """Workspace-relative path -> ``{"text": ..., "mtime": ...}``."""
    queue: tuple[Mapping[str, Any], ...] = ()
    """Each distinct squeue answer while it ran: ``{"t": seconds, "stdout": rows}``."""
    inside: tuple[Mapping[str, str], ...] = ()
    """Each job as it saw itself running (its own environment, written from inside the job):
    ``{"job_id", "name", "nodes", "where", "work_dir"}``; squeue, asked every few seconds,
    misses a short job or sees it only pending."""
    phases: tuple[Mapping[str, Any], ...] = ()
    accounting: str = ""
    sacct: str = ""
    """Accounting's rows of the run's jobs (``sacct -X -P -n``, ``ACCOUNT_FIELDS``), or none."""
    figures: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, run_id: str) -> "RecordedRun":
        """The bundled recording ``run_id`` (read once per process: it is package data)."""
        return _load(cls, run_id)

    @classmethod
    def _read(cls, run_id: str) -> "RecordedRun":
        if not _RUN_ID.match(run_id):
            raise SiteError(f"not a recorded run id: {run_id!r}")
        path = RUNS_DIR / f"{run_id}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SiteError(f"cannot read the recorded run {path}: {exc}") from exc
        if data.get("format") != FORMAT or data.get("run_id") != run_id:
            raise SiteError(f"{path} is not a recorded run of format {FORMAT}")
        unsafe = [name for name in data["files"] if not _safe_relative(name)]
        if unsafe:  # a file must land inside the workspace
            raise SiteError(f"{path} names files outside the workspace: {unsafe[:3]}")
        return cls(run_id=run_id, nodes=str(data.get("nodes", "")),
                   recorded_at=str(data.get("recorded_at", "")), files=data["files"],
                   queue=tuple(data.get("queue") or ()), inside=tuple(data.get("inside") or ()),
                   phases=tuple(data.get("phases") or ()),
                   accounting=str(data.get("accounting", "")), sacct=str(data.get("sacct") or ""),
                   figures=data.get("figures") or {})

    @property
    def checkpoint(self) -> str:
        """The checkpoint's path relative to the workspace."""
        return f"checkpoints/{self.run_id}"

    @property
    def cancelled_from_panel(self) -> list[str]:
        """The jobs the Runs panel's Cancel cancelled while the run was recorded."""
        panel = self.figures.get("panel") if isinstance(self.figures.get("panel"), Mapping) else {}
        cancelled = panel.get("cancelled") if isinstance(panel.get("cancelled"), Mapping) else {}
        return sorted((str(job) for job in cancelled), key=_job_key)

    def filled(self, text: str, workspace: str | Path, user: str) -> str:
        return text.replace(WORKSPACE_TOKEN, str(workspace)).replace(USER_TOKEN, user)

    def last_seen_queue(self, workspace: str | Path, user: str, *, inside: bool = True) -> str:
        """Every job of the run as last seen while it ran, one row each in the squeue format
        the answers were recorded in, in job id order: as squeue last showed it, or, when
        squeue never saw it running, as the job saw itself (running, on its node list);
        ``inside=False``: only as squeue showed it (what each job asked: its request)."""
        last: dict[str, list[str]] = {}
        for answer in self.queue:
            for row in str(answer.get("stdout", "")).splitlines():
                fields = row.split(SEP)
                # squeue's first fields are these (a newer recording also has the envelope's)
                if len(fields) >= len(_SQUEUE_KEYS) and fields[0].strip():
                    last[fields[0].strip()] = fields
        for job in self.inside if inside else ():
            seen = last.get(job["job_id"])
            if seen is None or seen[2].split()[0] != "RUNNING":
                work_dir = seen[7] if seen else job["work_dir"]  # squeue's is the --chdir
                last[job["job_id"]] = [job["job_id"], job["name"], "RUNNING", seen[3] if seen else "",
                                       job["nodes"], job["where"], USER_TOKEN, work_dir]
        rows = [SEP.join(last[j]) for j in sorted(last, key=_job_key)]
        return self.filled("".join(row + "\n" for row in rows), workspace, user)

    def queue_at_end(self, workspace: str | Path, user: str) -> str:
        """The last squeue answer recorded: the queue as the run ended (empty once all its jobs had)."""
        last = str(self.queue[-1].get("stdout", "")) if self.queue else ""
        return self.filled(last, workspace, user)

    def accounted(self, workspace: str | Path, user: str) -> str:
        """Accounting's rows of the run's jobs, the paths and the user filled in ("" when the
        run was recorded without accounting)."""
        return self.filled(self.sacct, workspace, user)

    def place(self, workspace: str | Path, user: str) -> Path:
        """Copy the run into ``workspace`` unless its checkpoint is there already; never
        overwrite a file. Returns the checkpoint folder."""
        root = Path(workspace).expanduser()
        checkpoint = root / self.checkpoint
        if os.path.lexists(checkpoint):
            return checkpoint
        # the checkpoint appears whole or not at all: staged beside it, renamed into place
        (root / "checkpoints").mkdir(parents=True, exist_ok=True)
        staging = root / "checkpoints" / f".{self.run_id}.placing-{os.getpid()}-{secrets.token_hex(4)}"
        staging.mkdir()
        try:
            for relative, entry in self.files.items():
                inside = relative.startswith(self.checkpoint + "/")
                target = (staging / relative[len(self.checkpoint) + 1:]) if inside else root / relative
                _write_new(target, self.filled(str(entry.get("text", "")), root, user),
                           float(entry.get("mtime") or 0))
            _write_new(staging / MARKER, json.dumps({"run_id": self.run_id, "nodes": self.nodes,
                                                     "recorded_at": self.recorded_at}) + "\n", 0)
            if self.cancelled_from_panel:  # the doctor names who cancelled them
                _write_new(staging / RECORD, render_cancels({}, self.cancelled_from_panel, by="runs-panel",
                                                            user=user, at=""), 0)
            try:
                os.rename(staging, checkpoint)
            except OSError:  # another process placed it first: keep theirs
                pass
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return checkpoint


@functools.lru_cache(maxsize=8)
def _load(cls: type, run_id: str) -> RecordedRun:
    return cls._read(run_id)


def recording_of(checkpoint: str | Path) -> dict[str, str] | None:
    """The recording a checkpoint was placed from (its marker), or None for a real run."""
    try:
        data = read_json_bounded(Path(checkpoint) / MARKER, MARKER_CAP)
    except (OSError, ValueError):  # missing, not a regular file, too large or deep, not JSON
        return None
    if not isinstance(data, dict) or not _RUN_ID.match(str(data.get("run_id", ""))):
        return None
    return {k: str(data.get(k, "")) for k in ("run_id", "nodes", "recorded_at")}


def _job_key(job_id: str) -> tuple[tuple[int, str], str]:
    head = job_id.split("_", 1)[0]
    return (digits_key(head) if head.isascii() and head.isdigit() else (0, ""), job_id)


def _safe_relative(relative: str) -> bool:
    parts = Path(relative).parts
    return bool(parts) and not Path(relative).is_absolute() and ".." not in parts


def _write_new(target: Path, text: str, mtime: float) -> None:
    """Write ``target`` whole, only if nothing is there (a temp file linked into place)."""
    if os.path.lexists(target):
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.placing-{secrets.token_hex(4)}")
    temp.write_text(text, encoding="utf-8")
    try:
        if mtime:
            os.utime(temp, (mtime, mtime))
        os.link(temp, target)
    except FileExistsError:
        pass
    finally:
        temp.unlink(missing_ok=True)
