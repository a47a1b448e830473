"""Read what a user points a command at without letting it exhaust the machine.

``doctor`` and ``lint`` (and the wizard's Doctor step) read files a user names: a log can be
gigabytes long, and a path can be ``/dev/zero``, ``/dev/urandom`` or a FIFO with no writer.
Read whole, those grow without end or block forever on a shared login node. Here:

* only a regular file is read: anything else (a device, a FIFO, a socket, a directory) is
  refused with ``NotARegularFile`` before a byte is read (opened ``O_NONBLOCK``, so a FIFO
  never blocks even the open);
* a file with a size cap (an experiment.md is never larger than a few hundred KB) is refused
  with ``TooLarge`` when bigger, saying why;
* a log is read as a window: its first ``head`` and last ``tail`` bytes, with one line in
  between saying how much was left out. Memory and time are bounded by the window, whatever
  the file's size;
* standard input, which cannot be seeked, is read up to ``STDIN_CAP``; more is refused.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import BinaryIO
from ..i18n import message, t

HEAD_BYTES = 32 * 1024
TAIL_BYTES = 224 * 1024
"""A log's window: its start (the setup, the first error) and its end (where a run fails),
about 3,000 lines in all (256 KB); the doctor's catalog scans that in a few tenths of a second."""
EXPERIMENT_CAP = 512 * 1024
"""An experiment.md larger than this is not one (ARI's own are a few KB)."""
STDIN_CAP = 16 * 1024 * 1024


class BoundedReadError(OSError):
    """A path that is refused; ``message_id`` and ``params`` say why in the catalogs."""

    message_id = ""

    def __init__(self, path: str, **params) -> None:
        self.path, self.params = str(path), {"path": str(path), **params}
        super().__init__(t(self.message_id, "en", **self.params))
        self.strerror = str(self)


class NotARegularFile(BoundedReadError):
    message_id = "read.not_regular"


class TooLarge(BoundedReadError):
    message_id = "read.too_large"


class StdinTooLarge(TooLarge):
    message_id = "read.stdin_too_large"


@dataclass(frozen=True)
class Window:
    """What was read: the text (head, a line saying what was left out, tail), the file's size
    and how many bytes in the middle were not read (0: the whole file)."""

    text: str
    size: int
    omitted: int = 0


def _kind(mode: int):
    """What the path is, as a sentence part in the catalogs (``read.kind.*``)."""
    for test, name in ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "fifo"),
                       (stat.S_ISCHR, "character_device"), (stat.S_ISBLK, "block_device"),
                       (stat.S_ISSOCK, "socket")):
        if test(mode):
            return message(f"read.kind.{name}")
    return message("read.kind.special")


def human_size(size: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"


def omitted_line(omitted: int) -> str:
    return f"[... {human_size(omitted)} in the middle of the file not read ...]"


def read_window(path: str | os.PathLike, *, cap: int | None = None, head: int = HEAD_BYTES,
                tail: int = TAIL_BYTES, errors: str = "replace") -> Window:
    """The file's text (undecodable bytes replaced, unless ``errors="strict"``): whole when it
    fits in ``head + tail``, else its head and tail. ``cap``: refuse (``TooLarge``) a file
    larger than this."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile(os.fspath(path), kind=_kind(info.st_mode))
        size = info.st_size
        if cap is not None and size > cap:
            raise TooLarge(os.fspath(path), size=human_size(size), cap=human_size(cap))
        if size <= head + tail:
            data = _pread_all(fd, 0, head + tail)
            return Window(data.decode("utf-8", errors=errors), size)
        first = _pread_all(fd, 0, head)
        last = _pread_all(fd, size - tail, tail)
    finally:
        os.close(fd)
    first_text = first.decode("utf-8", errors=errors)
    last_text = last.decode("utf-8", errors=errors)
    # whole lines only on either side of the gap
    first_text = first_text[:first_text.rfind("\n") + 1] or first_text
    cut = last_text.find("\n")
    last_text = last_text[cut + 1:] if cut != -1 else last_text
    omitted = size - head - tail
    return Window(f"{first_text}{omitted_line(omitted)}\n{last_text}", size, omitted)


def _pread_all(fd: int, offset: int, length: int) -> bytes:
    chunks, done = [], 0
    while done < length:
        chunk = os.pread(fd, min(length - done, 1 << 20), offset + done)
        if not chunk:
            break
        chunks.append(chunk)
        done += len(chunk)
    return b"".join(chunks)


def read_stream(stream: BinaryIO, *, cap: int = STDIN_CAP, name: str = "-",
                errors: str = "replace") -> Window:
    """Standard input (or another unseekable stream) up to ``cap`` bytes; ``TooLarge`` beyond."""
    data = stream.read(cap + 1)
    if len(data) > cap:
        raise StdinTooLarge(name, cap=human_size(cap))
    return Window(data.decode("utf-8", errors=errors), len(data))
