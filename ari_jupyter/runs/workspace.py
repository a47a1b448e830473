"""The checkpoints of a workspace, as ARI's own dashboard lists them.

ARI lists ``<workspace>/checkpoints/<run_id>/`` whose name starts with 8-14 digits and ``_``
(``checkpoint_api.py``); the wizard names its checkpoints the same way. Newest first.
"""
from __future__ import annotations

import re
from pathlib import Path

from .jobs import JobsView
from .status import NotACheckpoint, RunStatus, read_status

RUN_ID = re.compile(r"^[0-9]{8,14}_")


def checkpoint_dirs(workspace: str | Path) -> list[Path]:
    root = Path(workspace).expanduser() / "checkpoints"
    try:
        entries = [p for p in root.iterdir() if RUN_ID.match(p.name) and p.is_dir()]
    except OSError:
        return []
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
