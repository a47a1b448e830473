"""The checkpoints of a workspace, as ARI's own dashboard lists them.

ARI lists ``<workspace>/checkpoints/<run_id>/`` whose name starts with 8-14 digits and ``_``
(``checkpoint_api.py``); the wizard names its checkpoints the same way. Newest first.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from .jobs import JobsView
from .status import NotACheckpoint, RunStatus, read_status

RUN_ID = re.compile(r"^[0-9]{8,14}_")


def is_dir(path: str | Path) -> bool:
    """``Path.is_dir`` that answers False, not PermissionError, for a path inside a folder this
    user cannot open (another user's 0700 run, a link to one)."""
    try:
        return Path(path).is_dir()
    except OSError:
        return False


def readable(path: str | Path) -> bool:
    """Whether this user can list and open entries of the folder ``path``."""
    return os.access(path, os.R_OK | os.X_OK)


def checkpoint_dirs(workspace: str | Path) -> list[Path]:
    """The run folders of the workspace, newest first; one that cannot be read is still listed
    here (the callers skip it, saying so once): an unreadable entry never hides the others."""
    root = Path(workspace).expanduser() / "checkpoints"
    try:
        names = [p for p in root.iterdir() if RUN_ID.match(p.name)]
    except OSError:
        return []
    entries = [p for p in names if is_dir(p) or (p.is_symlink() and not readable(p))]
    return sorted(entries, key=lambda p: p.name, reverse=True)


def list_runs(workspace: str | Path, jobs: dict[str, JobsView] | None = None) -> list[RunStatus]:
    """Every checkpoint's status (the ones that are not ARI's are left out)."""
    runs = []
    for path in checkpoint_dirs(workspace):
        try:
            runs.append(read_status(path, (jobs or {}).get(str(path))))
        except NotACheckpoint:
            continue
    return runs
