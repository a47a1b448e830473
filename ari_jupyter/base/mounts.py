"""The mount table: which filesystem holds a path (is the checkpoint on storage every node
mounts, or on a node-local /tmp?)."""
from __future__ import annotations

import re
from typing import NamedTuple, Sequence


class Mount(NamedTuple):
    """A mount table line."""

    mountpoint: str
    fstype: str
    source: str = ""


_OCTAL_ESCAPE = r"\\([0-7]{3})"  # compiled at its first use (re's cache)


def _unescape_mount_field(value: str) -> str:
    """Undo the kernel's octal escapes (``\\040`` space, ``\\011`` tab, ``\\134`` backslash)."""
    return re.sub(_OCTAL_ESCAPE, lambda m: chr(int(m.group(1), 8)), value)


def parse_mountinfo(text: str) -> list[Mount]:
    """Mounts from ``/proc/self/mountinfo`` text, in kernel order; malformed lines are skipped.

    Format (proc(5)): ``id parent major:minor root mountpoint options [optional...] - fstype
    source superoptions``. The optional fields vary in number, hence the search for ``-``.
    """
    mounts: list[Mount] = []
    for line in text.splitlines():
        fields = line.split()
        try:
            separator = fields.index("-", 6)
        except ValueError:
            continue
        if len(fields) < separator + 2:
            continue
        source = fields[separator + 2] if len(fields) > separator + 2 else ""
        mounts.append(
            Mount(
                mountpoint=_unescape_mount_field(fields[4]),
                fstype=fields[separator + 1],
                source=_unescape_mount_field(source),
            )
        )
    return mounts


def mount_for_path(path: str, mounts: Sequence[Mount]) -> Mount | None:
    """The mount holding ``path`` (absolute, already resolved): longest mountpoint prefix.

    When several mounts share a mountpoint the last one listed is on top, as in the kernel.
    """
    best: Mount | None = None
    for mount in mounts:
        point = mount.mountpoint
        inside = path == point or point == "/" or path.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best.mountpoint)):
            best = mount
    return best


NODE_LOCAL_PREFIXES = ("/tmp", "/var/tmp", "/dev/shm", "/local", "/scratch/local")
"""Paths that are node-local by convention whatever is mounted there (per-job tmp dirs)."""
