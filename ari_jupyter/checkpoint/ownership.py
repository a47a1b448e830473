"""Whether another user could change what a hand-off runs: the folders a checkpoint and its
hand-off script live in, and the files in them.

Two rules, the same ones the hand-off script checks before it runs anything:

* **a folder on the way** (the workspace and every folder above it, through symlinks): owned
  by this user or root, and writable by nobody else unless it has the sticky bit (then
  another user can make entries but not rename or remove this user's). A group-writable folder
  whose group is this user's own private group (same name, no other members) counts as the
  user's alone.
* **a folder or file of ours** (``checkpoints/``, ``launch/``, the checkpoint, its files, the
  script): owned by this user and writable by nobody else.

A group-shared workspace without the sticky bit (mode 2770) lets any member rename
``launch/`` and put his own script where the hand-off command points; a world-writable sticky
one (1777) lets him make ``launch/`` or ``checkpoints/`` before the user's first Write. Both
are refused with how to fix the workspace.

The folders of ours at the workspace root are every one the run writes or reads there
(``ari/naming.WORKSPACE_FOLDERS``: ``checkpoints/``, ``launch/``, ``slurm_logs/``,
``experiments/``); another user's ``slurm_logs/`` lets him plant a job's output as a link to the
user's file (slurmstepd truncates it) or its text, his ``experiments/`` a node's ``run_job.sh``.
"""
from __future__ import annotations

import grp
import os
import pwd
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from ..ari.naming import WORKSPACE_FOLDERS

__all__ = ["Unsafe", "folder_on_the_way", "ours", "chain", "first_unsafe_on_the_way",
           "owner_name", "WORKSPACE_FOLDERS", "unsafe_workspace_folders", "foreign_output"]


@dataclass(frozen=True)
class Unsafe:
    """Why ``path`` lets another user change what a hand-off runs.

    ``why``: "owner" (another user owns it), "writable" (others can write it, no sticky bit),
    "link" (a symbolic link where a file or folder of ours belongs), "not_regular".
    """

    path: str
    why: str
    owner: str
    mode: str

    @property
    def message_id(self) -> str:
        return f"ownership.{self.why}"

    def params(self) -> dict[str, str]:
        return {"path": self.path, "owner": self.owner, "mode": self.mode}


def owner_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except (KeyError, OverflowError):
        return str(uid)


@lru_cache(maxsize=64)
def _private_group(gid: int, uid: int) -> bool:
    """The user's own private group (Debian's user private groups): his primary group, named
    like him, with no other members; writing by that group is writing by him alone."""
    try:
        user = pwd.getpwuid(uid)
        group = grp.getgrgid(gid)
    except (KeyError, OverflowError):
        return False
    return user.pw_gid == gid and group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}


def _others_can_write(info: os.stat_result, uid: int) -> bool:
    mode = info.st_mode
    if mode & stat.S_IWOTH:
        return True
    return bool(mode & stat.S_IWGRP) and not _private_group(info.st_gid, uid)


def _mode(info: os.stat_result) -> str:
    return f"{stat.S_IMODE(info.st_mode):04o}"


def folder_on_the_way(path: str | Path, info: os.stat_result, uid: int | None = None) -> Unsafe | None:
    """The rule for the workspace and the folders above it (see the module's doc)."""
    uid = os.geteuid() if uid is None else uid
    if info.st_uid not in (uid, 0):
        return Unsafe(str(path), "owner", owner_name(info.st_uid), _mode(info))
    if _others_can_write(info, uid) and not info.st_mode & stat.S_ISVTX:
        return Unsafe(str(path), "writable", owner_name(info.st_uid), _mode(info))
    return None


def ours(path: str | Path, info: os.stat_result, uid: int | None = None) -> Unsafe | None:
    """The rule for what emit writes: ``checkpoints/``, ``launch/``, the checkpoint, its files."""
    uid = os.geteuid() if uid is None else uid
    if stat.S_ISLNK(info.st_mode):
        return Unsafe(str(path), "link", owner_name(info.st_uid), _mode(info))
    if info.st_uid != uid:
        return Unsafe(str(path), "owner", owner_name(info.st_uid), _mode(info))
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return Unsafe(str(path), "writable", owner_name(info.st_uid), _mode(info))
    return None


def chain(path: str | Path) -> list[Path]:
    """Every folder whose entries lead to ``path``: the folders above each prefix of the path
    as written and above its real path (a symlink on the way is an entry of its folder too),
    and the real path itself; from the root down, each once. Missing tails are left out."""
    path = Path(os.path.abspath(path))
    found: dict[str, None] = {}
    prefixes = [path, *path.parents]
    for prefix in reversed(prefixes):
        if not os.path.lexists(prefix):
            break
        real = Path(os.path.realpath(prefix))
        for folder in [*reversed(real.parents), real] if real.is_dir() else reversed(real.parents):
            found.setdefault(str(folder), None)
        found.setdefault(str(prefix.parent), None)
    return [Path(p) for p in found]


def first_unsafe_on_the_way(path: str | Path, uid: int | None = None) -> Unsafe | None:
    """The first folder on the way to ``path`` (the nearest existing one included) another
    user could change, or None. An unreadable folder is someone else's business: skipped."""
    for folder in chain(path):
        try:
            info = os.stat(folder)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode):
            continue
        problem = folder_on_the_way(folder, info, uid)
        if problem is not None:
            return problem
    return None


def unsafe_entries(directory: str | Path, names: Iterable[str], uid: int | None = None) -> list[Unsafe]:
    """The files among ``names`` in ``directory`` that break the rule for ours (missing: fine)."""
    out = []
    for name in names:
        where = Path(directory) / name
        try:
            info = os.lstat(where)
        except FileNotFoundError:
            continue
        problem = ours(where, info, uid)
        if problem is None and not stat.S_ISREG(info.st_mode):
            problem = Unsafe(str(where), "not_regular", owner_name(info.st_uid), _mode(info))
        if problem is not None:
            out.append(problem)
    return out


def unsafe_workspace_folders(workspace: str | Path, uid: int | None = None) -> list[Unsafe]:
    """The folders of ``WORKSPACE_FOLDERS`` in ``workspace`` that break the rule for ours, a
    symbolic link among them (missing: fine, emit makes them)."""
    out = []
    for name in WORKSPACE_FOLDERS:
        where = Path(workspace) / name
        try:
            problem = ours(where, os.lstat(where), uid)
        except OSError:
            continue
        if problem is not None:
            out.append(problem)
    return out


def foreign_output(path: str | Path, uid: int | None = None) -> Unsafe | None:
    """Why a job's output file is not the user's own to show (None: it is): a link, not a
    regular file, another user's, or in a folder another user owns or can write (he could
    have put any text there). A missing file is None (nothing to show)."""
    uid = os.geteuid() if uid is None else uid
    where = Path(path)
    try:
        info = os.lstat(where)
        folder = os.stat(where.parent)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return Unsafe(str(where), "link", owner_name(info.st_uid), _mode(info))
    if not stat.S_ISREG(info.st_mode):
        return Unsafe(str(where), "not_regular", owner_name(info.st_uid), _mode(info))
    # the job's umask decides the modes: written by the user's own private group is his alone
    for place, of in ((where, info), (where.parent, folder)):
        if of.st_uid != uid:
            return Unsafe(str(place), "owner", owner_name(of.st_uid), _mode(of))
        if _others_can_write(of, uid):
            return Unsafe(str(place), "writable", owner_name(of.st_uid), _mode(of))
    return None


def only_own_group_writes(info: os.stat_result, uid: int | None = None) -> bool:
    """A folder of the user's that only his own private group can write besides him (ARI made
    ``experiments/`` under umask 002): his alone, and safe to make 0750 like the rest."""
    uid = os.geteuid() if uid is None else uid
    mode = info.st_mode
    return (info.st_uid == uid and stat.S_ISDIR(mode) and not mode & stat.S_IWOTH
            and bool(mode & stat.S_IWGRP) and _private_group(info.st_gid, uid))
