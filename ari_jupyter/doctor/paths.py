"""Where a path in a log lives, judged from the path alone (the log's machine is not at hand).

A ``Permission denied`` on a node-local directory (/tmp) means rank > 0 cannot see the files;
on a shared one (/work, $HOME) the files are there and the mode or owner is wrong. The rule
is the shared-filesystem probe's: node-local prefixes first, then ARI's shared prefixes and
$HOME, then a path component that names shared storage (``/gs/fs/work/...``).
"""
from __future__ import annotations

import os
import posixpath
import re
from typing import Mapping

from ..ari.sbatch import SHARED_FS_PREFIXES
from ..base.mounts import NODE_LOCAL_PREFIXES

SHARED_COMPONENTS = frozenset({"work", "home", "scratch", "lustre", "nfs", "gpfs", "data", "groups",
                               "projects"})
ABSOLUTE_PATH = re.compile(r"(?<![\w.~-])/[^\s:'\"`]+")


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def judge_path(path: str, env: Mapping[str, str] | None = None) -> str | None:
    """"node-local", "shared", or None when the path says neither."""
    env = os.environ if env is None else env
    path = posixpath.normpath(path)
    if any(_under(path, prefix) for prefix in NODE_LOCAL_PREFIXES):
        return "node-local"
    home = (env.get("HOME") or "").rstrip("/")
    if any(_under(path, prefix) for prefix in SHARED_FS_PREFIXES) or (home and _under(path, home)):
        return "shared"
    if SHARED_COMPONENTS & set(path.strip("/").split("/")[:-1]):
        return "shared"
    return None


def first_path(line: str) -> str | None:
    """The first absolute path in a log line (the script or file a message is about)."""
    match = ABSOLUTE_PATH.search(line)
    return match.group(0).rstrip(".,;)") if match else None


def line_on_shared_path(line: str, env: Mapping[str, str] | None = None) -> bool:
    path = first_path(line)
    return path is not None and judge_path(path, env) == "shared"
