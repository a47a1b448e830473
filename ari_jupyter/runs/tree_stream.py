"""tree.json one node at a time: what ``requeue`` reads and rewrites without holding the tree.

Parsed whole, a compact tree.json takes about 65 times its size in memory (a 60 MB tree: over
3 GB). Here the file is read in chunks; its top-level values are decoded one by one and the
``nodes`` list many whole nodes at a time (as many as a chunk holds), each checked for nesting
(``JSON_DEPTH``). The rewritten tree is the file as it was, byte for byte, but for the nodes
that changed, each written in the file's own layout (ARI's ``indent=2``, else compact): a
60 MB tree is read once and never encoded again. Memory stays at a chunk plus the largest node.
"""
from __future__ import annotations

import codecs
import json
import os
import re
from pathlib import Path
from stat import S_ISREG
from typing import Any, Callable, Iterator

from ..base.bounded_read import JSON_DEPTH, NotARegularFile, TooDeep, json_depth

CHUNK = 1 << 20
BATCH = 64 * 1024
"""How much of the buffer one decode of several nodes takes at most (a node that changed
is looked for again in it, for its place in the file)."""
BATCH_TRIES = 64
"""How many ``},`` from the batch's end are looked at for its cut (a failed decode costs a batch)."""
_BLANK = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class BadTree(ValueError):
    """Not a tree.json: not an object, a ``nodes`` that is not a list, cut, or not JSON."""


def _opening(text: str, start: int, end: int) -> int:
    """How many lists and objects open in ``text[start:end]``: a bound on their nesting."""
    return text.count("[", start, end) + text.count("{", start, end)


def _within(value: Any, limit: int) -> bool:
    """Whether ``value`` nests at most ``limit`` deep (``json_depth``'s answer), one level of
    containers at a time: a list of thousands of nodes in a tenth of a walk's time."""
    level, depth = [value], 0
    while level:
        depth += 1
        if depth > limit:
            return False
        level = [item for container in level
                 for item in (container.values() if type(container) is dict else container)
                 if type(item) is dict or type(item) is list]
    return True


def _open_regular(path: Path):
    """``path`` opened for reading as bytes, never blocking: a FIFO or a device is refused."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    handle = open(fd, "rb")
    if not S_ISREG(os.fstat(fd).st_mode):
        handle.close()
        raise NotARegularFile(str(path), kind="?")
    return handle


def chunks(path: Path, cap: int) -> Iterator[bytes]:
    """The file's bytes as they are, in pieces (a copy of a large tree.json, never held whole);
    ``BadTree`` past ``cap``."""
    with _open_regular(path) as handle:
        left = cap
        while chunk := handle.read(min(CHUNK, left + 1)):
            left -= len(chunk)
            if left < 0:
                raise BadTree("larger than the cap")
            yield chunk


class _Reader:
    def __init__(self, path: Path, cap: int) -> None:
        self.handle = _open_regular(path)
        self.left = cap
        self.decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        self.buf, self.pos, self.eof = "", 0, False
        self.start = 0
        """Where the last value ``value`` read starts in the buffer."""
        self.tried = False
        """Whether ``batch`` found no cut in what the buffer holds (it looks again once more is read)."""
        self.copied: list[str] | None = None
        """When not None, the text read goes here too, as it leaves the buffer (``rewritten``)."""
        self.mark = 0
        """Where in the buffer the text not yet in ``copied`` starts."""
        self.batches = 0
        """How many batches were read (which one a node's place names)."""

    def close(self) -> None:
        self.handle.close()

    def more(self, at_least: int = CHUNK) -> None:
        data = self.handle.read(min(max(CHUNK, at_least), self.left + 1))
        self.left -= len(data)
        if self.left < 0:
            raise BadTree("larger than the cap")
        self.eof = not data
        if self.copied is not None:
            self.copied.append(self.buf[self.mark:self.pos])
        self.buf = self.buf[self.pos:] + self.decode(data, final=self.eof)
        self.pos, self.mark, self.tried = 0, 0, False

    def peek(self) -> str:
        while True:
            self.pos = _BLANK.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if self.eof:
                return ""
            self.more()

    def take(self, char: str) -> None:
        if self.peek() != char:
            raise BadTree(f"expected {char!r}")
        self.pos += 1

    def value(self) -> Any:
        """The next JSON value whole (a node), read further until it ends inside the buffer
        (a number cut at the buffer's end is not taken for a shorter one)."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except RecursionError:
                raise TooDeep("tree.json", depth=JSON_DEPTH) from None
            except ValueError:
                if self.eof:
                    raise BadTree("not JSON") from None
                self.more(len(self.buf))  # doubling: a large node costs a few re-reads
                continue
            if end == len(self.buf) and not self.eof:
                self.more(len(self.buf))
                continue
            if _opening(self.buf, self.pos, end) > JSON_DEPTH and json_depth(value) > JSON_DEPTH:
                raise TooDeep("tree.json", depth=JSON_DEPTH)  # fewer brackets: not walked
            self.start, self.pos = self.pos, end
            return value

    def batch(self) -> list | None:
        """The whole values of a list the buffer holds from here (up to ``BATCH`` of it),
        decoded at once, the reader left at the ``,`` after the last; None when none can be
        (then ``value`` reads one). The cut is a ``},`` before a ``{`` that a decode of the
        text before it confirms: one inside a string or inside a value leaves that text no
        list of values, and is not taken."""
        if self.tried:
            return None
        buf, start = self.buf, self.pos
        end = min(len(buf), start + BATCH)
        for _ in range(BATCH_TRIES):
            cut = buf.rfind("},", start, end)
            if cut < 0:
                break
            end = cut
            after = _BLANK.match(buf, cut + 2).end()
            if after >= len(buf) or buf[after] != "{":
                continue
            text = "[" + buf[start:cut + 1] + "]"
            try:
                values, stop = _DECODER.raw_decode(text)
            except (ValueError, RecursionError):
                continue
            if stop != len(text):
                continue
            if not _within(values, JSON_DEPTH + 1):
                raise TooDeep("tree.json", depth=JSON_DEPTH)
            self.pos = cut + 1
            self.batches += 1
            return values
        self.tried = True
        return None

    def spans(self, start: int, count: int) -> Iterator[tuple[int, int]]:
        """Where each of the ``count`` values a ``batch`` from ``start`` read lies in the buffer."""
        for _ in range(count):
            start = _BLANK.match(self.buf, start).end()
            _value, end = _DECODER.raw_decode(self.buf, start)
            yield start, end
            start = _BLANK.match(self.buf, end).end() + 1  # past the ","


def _walk(reader: _Reader) -> Iterator[tuple[str, Any, Any]]:
    """``events``, with each node's place: ("node", node, (start, end) in the buffer, or a
    batch's ``(serial, first, count, index)`` to be asked of ``reader.spans`` when needed)."""
    reader.take("{")
    seen: set[str] = set()
    first = True
    while True:
        if reader.peek() == "}":
            reader.pos += 1
            break
        if not first:
            reader.take(",")
        first = False
        key = reader.value()
        if not isinstance(key, str) or key in seen:
            raise BadTree("a key that is not a string, or twice")
        seen.add(key)
        reader.take(":")
        if key == "nodes" and reader.peek() == "[":
            reader.pos += 1
            yield "nodes", None, None
            if reader.peek() == "]":
                reader.pos += 1
                continue
            while True:
                start = reader.pos
                values = reader.batch()
                if values is not None:
                    for index, value in enumerate(values):
                        yield "node", value, (reader.batches, start, len(values), index)
                    reader.take(",")
                    continue
                value = reader.value()
                yield "node", value, (reader.start, reader.pos)
                if reader.peek() == "]":
                    reader.pos += 1
                    break
                reader.take(",")
            continue
        if key == "nodes":
            raise BadTree("nodes is not a list")
        yield "key", key, None
        yield "value", reader.value(), None
    if reader.peek() != "" or "nodes" not in seen:
        raise BadTree("text after the tree, or no nodes")


def events(path: Path, cap: int) -> Iterator[tuple[str, Any]]:
    """("key", name) then ("value", v) for each top-level key, except ``nodes``: ("nodes", None)
    then ("node", n) for each node. ``BadTree`` / ``TooDeep`` / OSError when it is not a tree."""
    reader = _Reader(path, cap)
    try:
        for kind, value, _place in _walk(reader):
            yield kind, value
    finally:
        reader.close()


def _dumps(value: Any, indent: str) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)


def rewritten(path: Path, cap: int, node_of: Callable[[Any], Any]) -> Iterator[bytes]:
    """The tree with each node replaced by ``node_of(node)``, in pieces: the file's own text
    where ``node_of`` gives the node itself back, the new node where it gives another, written
    as ``json.dumps(indent=2, ensure_ascii=False)`` places a node when the file is in that
    layout (ARI's: it starts with ``{`` and a line break), else compact."""
    reader = _Reader(path, cap)
    reader.copied = copied = []
    try:
        indented = reader.peek() == "{" and reader.buf.startswith("{\n", reader.pos)
        spans: tuple[int, list[tuple[int, int]]] = (-1, [])
        for kind, value, place in _walk(reader):
            if kind == "node" and (new := node_of(value)) is not value:
                if len(place) == 4:  # a node of a batch: where each is, asked once per batch
                    serial, first, count, index = place
                    if spans[0] != serial:
                        spans = (serial, list(reader.spans(first, count)))
                    start, end = spans[1][index]
                else:
                    start, end = place
                copied += [reader.buf[reader.mark:start], _dumps(new, "    ") if indented
                           else json.dumps(new, ensure_ascii=False, separators=(",", ":"))]
                reader.mark = end
            if copied:
                yield "".join(copied).encode("utf-8")
                copied.clear()
        yield ("".join(copied) + reader.buf[reader.mark:]).encode("utf-8")
    finally:
        reader.close()
