"""tree.json one node at a time: what ``requeue`` reads and rewrites without holding the tree.

Parsed whole, a compact tree.json takes about 65 times its size in memory (a 60 MB tree: over
3 GB). Here the file is read in chunks; its top-level values are decoded one by one and the
``nodes`` list one node at a time, each checked for nesting (``JSON_DEPTH``); the rewritten
tree is produced in pieces, exactly as ``json.dumps(tree, indent=2, ensure_ascii=False)``
would write it whole. Memory stays at a chunk plus the largest node.
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
_BLANK = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class BadTree(ValueError):
    """Not a tree.json: not an object, a ``nodes`` that is not a list, cut, or not JSON."""


class _Reader:
    def __init__(self, path: Path, cap: int) -> None:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        self.handle = open(fd, "rb")
        info = os.fstat(fd)
        if not S_ISREG(info.st_mode):
            self.handle.close()
            raise NotARegularFile(str(path), kind="?")
        self.left = cap
        self.decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        self.buf, self.pos, self.eof = "", 0, False

    def close(self) -> None:
        self.handle.close()

    def more(self, at_least: int = CHUNK) -> None:
        data = self.handle.read(min(max(CHUNK, at_least), self.left + 1))
        self.left -= len(data)
        if self.left < 0:
            raise BadTree("larger than the cap")
        self.eof = not data
        self.buf = self.buf[self.pos:] + self.decode(data, final=self.eof)
        self.pos = 0

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
            if json_depth(value) > JSON_DEPTH:
                raise TooDeep("tree.json", depth=JSON_DEPTH)
            self.pos = end
            return value


def events(path: Path, cap: int) -> Iterator[tuple[str, Any]]:
    """("key", name) then ("value", v) for each top-level key, except ``nodes``: ("nodes", None)
    then ("node", n) for each node. ``BadTree`` / ``TooDeep`` / OSError when it is not a tree."""
    reader = _Reader(path, cap)
    try:
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
                yield "nodes", None
                if reader.peek() == "]":
                    reader.pos += 1
                    continue
                while True:
                    yield "node", reader.value()
                    if reader.peek() == "]":
                        reader.pos += 1
                        break
                    reader.take(",")
                continue
            if key == "nodes":
                raise BadTree("nodes is not a list")
            yield "key", key
            yield "value", reader.value()
        if reader.peek() != "" or "nodes" not in seen:
            raise BadTree("text after the tree, or no nodes")
    finally:
        reader.close()


def _dumps(value: Any, indent: str) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)


def rewritten(path: Path, cap: int, node_of: Callable[[Any], Any]) -> Iterator[bytes]:
    """The tree with each node replaced by ``node_of(node)``, in pieces, byte for byte what
    ``json.dumps(tree, indent=2, ensure_ascii=False)`` gives for the tree parsed whole."""
    out: list[str] = []
    keys, nodes, in_list = 0, 0, False

    def close_list() -> str:
        return ("]" if nodes == 0 else "\n  ]") if in_list else ""

    for kind, value in events(path, cap):
        if kind in ("key", "nodes"):
            out.append(close_list() + ("{\n" if keys == 0 else ",\n")
                       + "  " + json.dumps("nodes" if kind == "nodes" else value, ensure_ascii=False)
                       + ": " + ("[" if kind == "nodes" else ""))
            keys += 1
            in_list, nodes = kind == "nodes", 0
        elif kind == "value":
            out.append(_dumps(value, "  "))
        else:
            out.append(("\n    " if nodes == 0 else ",\n    ") + _dumps(node_of(value), "    "))
            nodes += 1
        if sum(map(len, out)) >= CHUNK:
            yield "".join(out).encode("utf-8")
            out = []
    yield ("".join(out) + close_list() + "\n}").encode("utf-8") if keys else b"{}"
