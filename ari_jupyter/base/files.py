"""Crash-safe writes: every file lands whole or not at all, all of a set or none.

A file is staged under a temporary name in its own folder (opened relative to the folder's
descriptor, never following a symlink), synced, then renamed over its target; a crash leaves
only a temporary that the next writer removes (``TMP_MARKER``). Python's standard library has
no atomic, symlink-safe multi-file write, so this small one is our own.
"""
from __future__ import annotations

import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable


TMP_MARKER = ".tmp-ari-jupyter-"
"""Part of every temporary file name, so a later run can remove what a killed writer left."""


@dataclass(frozen=True)
class Target:
    """A file named relative to an open directory: ``name`` in ``dir_fd`` (``path`` for messages)."""

    dir_fd: int
    name: str
    path: Path


def write_all(items: Iterable[tuple[Path | Target, bytes | Iterable[bytes], int]]) -> None:
    """Replace every ``(path, data, mode)`` so that nothing changes unless everything fits.
    ``data`` is bytes, or an iterable of byte chunks written as they come (a file larger than
    what should be held in memory at once).

    All temp files are written and fsynced first; only then are they renamed, in order (a
    rename needs no space). A full or read-only disk therefore fails before any target is
    touched, and the temps are removed: the previous files, or none, stay as they were.
    A ``Target`` is written relative to its directory's descriptor; a plain path relative to
    its parent, opened once.
    """
    opened: list[int] = []
    targets: list[tuple[Target, bytes, int]] = []
    try:
        for where, data, mode in items:
            if not isinstance(where, Target):
                fd = os.open(where.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                opened.append(fd)
                where = Target(fd, where.name, Path(where))
            targets.append((where, data, mode))
        _write_targets(targets)
    finally:
        for fd in opened:
            os.close(fd)


def _write_targets(items: list[tuple[Target, bytes, int]]) -> None:
    staged: list[tuple[str, Target]] = []
    try:
        for target, data, mode in items:
            staged.append((_stage(target, data, mode), target))
    except BaseException:
        for tmp, target in staged:
            _unlink_quietly(target.dir_fd, tmp)
        raise
    for tmp, target in staged:
        os.replace(tmp, target.name, src_dir_fd=target.dir_fd, dst_dir_fd=target.dir_fd)
    for fd in dict.fromkeys(target.dir_fd for _, target in staged):
        os.fsync(fd)


def atomic_write(path: Path, data: bytes, mode: int) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new file, never a mix."""
    write_all([(path, data, mode)])


_TMP_NAME = re.compile(r"\.(?P<of>.+)" + re.escape(TMP_MARKER) + r"(?P<pid>[0-9]+)-[0-9A-Za-z]{1,32}")


def _stage(target: Target, data: bytes, mode: int) -> str:
    """Write ``data`` to a fresh temp file beside the target (same directory, so the later
    rename is atomic), with ``mode`` whatever the umask, fsynced; return the temp's name."""
    tmp = f".{target.name}{TMP_MARKER}{os.getpid()}-{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode,
                 dir_fd=target.dir_fd)
    try:
        try:
            os.fchmod(fd, mode)
            for chunk in (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        _unlink_quietly(target.dir_fd, tmp)
        raise
    return tmp


def _unlink_quietly(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass


def remove_stale_temps(dir_fd: int, names: Iterable[str]) -> None:
    """Temp files a killed writer of this run id left, and nothing else.

    A temp is removed only when it is provably ours and stale: its name is exactly what
    ``_stage`` makes for one of ``names`` (the files this run writes; another run id's writer
    may be about to rename its temp in a shared directory), it is a regular file (not a link)
    owned by this user, and the process that made it is not running here. Called under the
    lock, so no writer of this run id is mid-write."""
    wanted = set(names)
    for entry in os.listdir(dir_fd):
        match = _TMP_NAME.fullmatch(entry)
        if not match or match.group("of") not in wanted:
            continue
        try:
            info = os.stat(entry, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            continue
        if _process_alive(int(match.group("pid"))):
            continue
        _unlink_quietly(dir_fd, entry)


def _process_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return pid < 2 ** 31
    return True


class NotARegularFile(OSError):
    """``copy_entry`` met something other than a file or a symlink (``changed``: it was a file
    when looked at, and is not one when opened)."""

    def __init__(self, name: str, changed: bool = False):
        super().__init__(f"{name}: not a regular file" + (" any more" if changed else ""))
        self.changed = changed


def copy_entry(dir_fd: int, name: str, target_fd: int, mode: int | None = None) -> None:
    """Copy ``name`` in ``dir_fd`` to a new ``name`` in ``target_fd`` as it is: a symlink as the
    same symlink (never its target's content), a regular file with its mode (``mode`` when
    given) and times, created ``O_EXCL``; anything else raises ``NotARegularFile``."""
    info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(name, dir_fd=dir_fd), name, dir_fd=target_fd)
        return
    if not stat.S_ISREG(info.st_mode):
        raise NotARegularFile(name)
    source = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        info = os.fstat(source)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile(name, changed=True)
        mode = stat.S_IMODE(info.st_mode) & 0o777 if mode is None else mode
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      mode, dir_fd=target_fd)
        try:
            os.fchmod(out, mode)
            while True:
                chunk = os.read(source, 1 << 20)
                if not chunk:
                    break
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view):]
            os.utime(out, ns=(info.st_atime_ns, info.st_mtime_ns))
            os.fsync(out)
        finally:
            os.close(out)
    finally:
        os.close(source)
