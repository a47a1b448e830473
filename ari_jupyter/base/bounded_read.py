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

import json
import os
import stat
from dataclasses import dataclass
from typing import Any, BinaryIO
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


# -- the files a run or an option names --------------------------------------------------------

JSON_DEPTH = 64
"""Nesting a JSON file of a run or an option may have (ARI's tree.json: 4; a node's metrics
or error_log a few more). Deeper is refused before it is parsed: 200 KB of ``[`` would reach
the parser's, or a reader's, recursion limit."""


OPTION_FILE_CAP = 4 * 1024 * 1024
"""A JSON or text file given as an option (``--profile``, ``--args``, ``--from-json``,
``--goal-file``) or a checkpoint's launch_config.json: a few KB; larger is not one."""


class TooDeep(BoundedReadError, ValueError):
    """Also a ValueError: a reader that refuses JSON it cannot parse refuses this too."""

    message_id = "read.too_deep"


class FileTooLarge(TooLarge):
    message_id = "read.file_too_large"


def read_bytes_bounded(path: str | os.PathLike, max_bytes: int, *, follow: bool = True) -> bytes:
    """At most ``max_bytes`` of a regular file, whole: ``NotARegularFile`` for a device, a FIFO
    (opened ``O_NONBLOCK``: the open never waits for a writer), a socket or a directory,
    ``TooLarge`` when it holds more (read as far as ``max_bytes + 1``, so a file growing while
    it is read is refused too). ``follow=False``: a symbolic link is refused (``O_NOFOLLOW``,
    ELOOP)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile(os.fspath(path), kind=_kind(info.st_mode))
        if info.st_size > max_bytes:
            raise FileTooLarge(os.fspath(path), size=human_size(info.st_size),
                               cap=human_size(max_bytes))
        data = _pread_all(fd, 0, max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise FileTooLarge(os.fspath(path), size=human_size(len(data)), cap=human_size(max_bytes))
    return data


def read_text_bounded(path: str | os.PathLike, max_bytes: int, *, follow: bool = True,
                      errors: str = "replace") -> str:
    """``read_bytes_bounded`` decoded as UTF-8 (undecodable bytes replaced unless ``errors``)."""
    return read_bytes_bounded(path, max_bytes, follow=follow).decode("utf-8", errors=errors)


def json_depth(value: Any, limit: int = JSON_DEPTH) -> int:
    """How deep ``value``'s lists and objects nest (a scalar: 0), counted without recursion
    and only up to ``limit + 1``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        container, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                break
        items = container.values() if isinstance(container, dict) else container
        stack.extend((item, depth + 1) for item in items if isinstance(item, (dict, list)))
    return deepest


def loads_bounded(data: bytes | str, *, max_depth: int = JSON_DEPTH, name: str = "-") -> Any:
    """``json.loads`` whose result nests at most ``max_depth`` deep (``TooDeep`` past it), so
    a reader walking it never recurses without bound; ``ValueError`` when it is not JSON.
    The parser itself stops deeper input with a RecursionError (its guard, a clean exception
    and no crash), which is refused the same way; a text with fewer opening brackets than
    ``max_depth`` is not walked at all."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise TooDeep(name, depth=max_depth) from None
    if isinstance(value, (dict, list)):
        opening = data.count(b"[" if isinstance(data, bytes) else "[") + \
            data.count(b"{" if isinstance(data, bytes) else "{")
        if opening > max_depth and json_depth(value, max_depth) > max_depth:
            raise TooDeep(name, depth=max_depth)
    return value


def read_json_bounded(path: str | os.PathLike, max_bytes: int, max_depth: int = JSON_DEPTH, *,
                      follow: bool = True) -> Any:
    """A JSON file a run or an option names: a regular file of at most ``max_bytes``
    (``read_bytes_bounded``), nested at most ``max_depth`` deep (``TooDeep``); ``ValueError``
    when it is not JSON. Every refusal is an ``OSError`` or a ``ValueError``."""
    return loads_bounded(read_bytes_bounded(path, max_bytes, follow=follow), max_depth=max_depth,
                         name=os.fspath(path))
