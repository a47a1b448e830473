"""The workspaces this user wrote checkpoints to, so that a run written outside the default
workspace (step 4's Workspace field, ``emit --workspace``) is listed without asking.

Writing a checkpoint records its workspace in a small JSON list in Jupyter's per-user data
directory (``<jupyter data dir>/ari_jupyter/workspaces.json``, or the file named by
``$ARI_JUPYTER_WORKSPACES_FILE``): newest first, each folder once, at most ``MAX_RECORDED``.
A missing, unreadable or corrupt file is an empty list, and a list that cannot be written
never stops a Write: the run is still there, only not listed by itself.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Mapping
from ..base.files import atomic_write

FILE_ENV = "ARI_JUPYTER_WORKSPACES_FILE"
MAX_RECORDED = 20
"""Enough for every scratch and project folder one person writes runs to; old ones drop off."""
MAX_FILE_BYTES = 256 * 1024


def recorded_workspaces_file(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get(FILE_ENV):
        return Path(env[FILE_ENV]).expanduser()
    try:
        from jupyter_core.paths import jupyter_data_dir

        data_dir = Path(jupyter_data_dir())
    except Exception:  # jupyter_core missing or broken: its own default
        data_dir = Path.home() / ".local" / "share" / "jupyter"
    return data_dir / "ari_jupyter" / "workspaces.json"


def _normal(path: str | Path) -> str:
    return os.path.normpath(os.path.abspath(os.path.expanduser(str(path))))


def recorded_workspaces(env: Mapping[str, str] | None = None) -> list[str]:
    """The recorded workspaces, newest first; [] for a missing or damaged list."""
    path = recorded_workspaces_file(env)
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES])
    except (OSError, ValueError):
        return []
    entries = data.get("workspaces") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return []
    seen: dict[str, None] = {}
    for entry in entries:
        if isinstance(entry, str) and entry.startswith("/") and "\0" not in entry:
            seen.setdefault(_normal(entry), None)
    return list(seen)[:MAX_RECORDED]


def forget_workspace(workspace: str | Path, env: Mapping[str, str] | None = None) -> bool:
    """Take ``workspace`` off the list (atomically): the Runs panel and ``ari-jupyter runs`` no
    longer list it by themselves; its checkpoints stay where they are. False when it was not
    recorded or the list could not be written."""
    import fcntl

    path = recorded_workspaces_file(env)
    gone = _normal(workspace)
    try:
        with open(path.parent / f".{path.name}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            entries = recorded_workspaces(env)
            if gone not in entries:
                return False
            kept = [w for w in entries if w != gone]
            data = json.dumps({"workspaces": kept}, indent=1, ensure_ascii=False) + "\n"
            atomic_write(path, data.encode("utf-8"), 0o600)
    except OSError:
        return False
    return True


def record_workspace(workspace: str | Path, env: Mapping[str, str] | None = None) -> bool:
    """Put ``workspace`` first in the list (atomically); False when the list could not be written."""
    import fcntl

    path = recorded_workspaces_file(env)
    mine = _normal(workspace)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # two Writes at once (wizard and CLI) must not drop each other's workspace
        with open(path.parent / f".{path.name}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            entries = [mine, *(w for w in recorded_workspaces(env) if w != mine)][:MAX_RECORDED]
            data = json.dumps({"workspaces": entries}, indent=1, ensure_ascii=False) + "\n"
            atomic_write(path, data.encode("utf-8"), 0o600)
    except OSError:
        return False
    return True
