"""Plain-text columns that line up in a terminal whatever the language.

A CJK character takes two terminal columns (east-asian width W or F), so ``str.ljust`` would
misalign ``スキップ`` against ``OK``; every table the commands print pads with these.
"""
from __future__ import annotations

import unicodedata


def columns(text: str) -> int:
    """Terminal columns of ``text``."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, width: int) -> str:
    """``text`` left-justified to ``width`` terminal columns, and at least one space after it."""
    return text + " " * max(1, width - columns(text))


_NO_LINE_START = frozenset("、。，．）」』】：；！？ーぁぃぅぇぉっゃゅょァィゥェォッャュョ:;,.!?)")
_NO_LINE_END = frozenset("（「『【(")


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in "WF"


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` terminal columns (textwrap counts characters and
    breaks only at spaces, so a Japanese sentence would run on as one line twice too wide).
    A line may break at a space or next to a wide character, never inside an ASCII word."""
    lines, line = [], ""
    for token in _tokens(" ".join(text.split())):
        candidate = line + token
        if line and columns(candidate.rstrip()) > width:
            lines.append(line.rstrip())
            line = token.lstrip()
        else:
            line = candidate
    if line.strip():
        lines.append(line.rstrip())
    return lines


def _tokens(text: str) -> list[str]:
    """Unbreakable pieces: each wide character alone (one that may not start a line stays with
    the character before it), each ASCII word with the space before it."""
    out: list[str] = []
    for ch in text:
        if out and not _wide(ch) and not ch.isspace() and not _wide(out[-1][-1]) \
                and not out[-1][-1].isspace():
            out[-1] += ch  # inside an ASCII word
        elif out and (ch in _NO_LINE_START or out[-1][-1] in _NO_LINE_END):
            out[-1] += ch  # no line starts with closing punctuation or ends with an opening one
        elif out and out[-1].isspace():
            out[-1] += ch  # a space starts the next piece
        else:
            out.append(ch)
    return out


MIN_ROOM = 24
"""Below this many columns beside a prefix, wrapping would make a ribbon: the line stays whole."""


def hang(prefix: str, text: str, width: int | None, indent: int | None = None) -> str:
    """``prefix`` + ``text``; with a ``width``, ``text`` wrapped to it and its further lines
    indented by ``indent`` columns (default: under its first word, so a verdict's text stays
    in its column and a fix under its label)."""
    indent = columns(prefix) if indent is None else indent
    room = (width or 0) - max(columns(prefix), indent)
    if not width or room < MIN_ROOM:
        return prefix + text
    lines = wrap(text, room) or [""]
    return "\n".join([prefix + lines[0], *(" " * indent + line for line in lines[1:])])


def terminal_width(stream) -> int | None:
    """The terminal's columns when ``stream`` is one (prose is wrapped to fit), else None: a
    pipe, a file or a test reads each message on one line, as grep expects."""
    import shutil

    try:
        if stream.isatty():
            return shutil.get_terminal_size().columns
    except (AttributeError, ValueError):  # closed or not a real stream
        pass
    return None
