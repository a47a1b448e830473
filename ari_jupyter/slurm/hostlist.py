"""SLURM hostlists: count, expand and compress without materialising them.

Our own BSD code because python-hostlist (GPL) refuses more than 100,000
hosts and pyslurm (GPL) needs libslurm. Fugaku-sized lists such as
``nid[000001-158976]`` count in microseconds and expand lazily.

Syntax accepted (what SLURM prints in SLURM_JOB_NODELIST and sinfo):

* items separated by commas (or whitespace) outside brackets: ``n1,n2 login``
* any number of bracket groups per item, expanded as a cartesian product with
  the last group varying fastest: ``a[1-2]b[3-4]`` -> a1b3 a1b4 a2b3 a2b4
* inside brackets, comma-separated numbers and ``LO-HI`` ranges:
  ``nodes[006,011-012]``
* zero padding: the width of each range comes from its start, as in SLURM:
  ``n[08-10]`` -> n08 n09 n10, ``n[8-10]`` -> n8 n9 n10
* plain names with or without digits: ``login``, ``n5``, ``host-[001-002]``

Anything else raises :class:`HostlistError` naming the offending part.
"""
from __future__ import annotations

import itertools
import operator
import re
from typing import Iterable, Iterator, NamedTuple, Union

__all__ = ["HostlistError", "abbreviate", "expand", "count", "compress", "first"]


class HostlistError(ValueError):
    """A hostlist string (or a host name given to compress) is malformed. ``str()`` is the
    English sentence; ``message_id`` and ``params`` say it in the catalog's languages (a
    malformed SLURM_JOB_NODELIST is shown in step 1, in the wizard's language)."""

    def __init__(self, english: str, message_id: str = "", **params: object) -> None:
        super().__init__(english)
        self.message_id, self.params = message_id, params


class _Range(NamedTuple):
    lo: int
    hi: int
    width: int  # digits of the range start; numbers are zero-padded to it


class _Group(NamedTuple):
    """One bracket group as parallel columns (fast to build for 40,000 ranges)."""

    los: tuple[int, ...]
    stops: tuple[int, ...]  # exclusive ends
    widths: tuple[int, ...]

    def size(self) -> int:
        return sum(self.stops) - sum(self.los)

    def runs(self) -> Iterator[_Range]:
        return map(_Range, self.los, map(operator.sub, self.stops, itertools.repeat(1)), self.widths)


# An item is a tuple alternating literal text and bracket groups:
# (literal, group, literal, group, ..., literal).
_Item = tuple  # tuple[Union[str, _Group], ...]

_SEPARATOR = re.compile(r"\s*,\s*|\s+")
_ITEM = re.compile(r"(?:[^\[\],\s]+|\[[^\[\]]*\])+")
_BRACKET = re.compile(r"\[([^\[\]]*)\]")
# Digits are ASCII only: int() would accept other scripts' digits and expand
# would then print names that differ from the input.
_GROUP_BODY = re.compile(r"[0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*")
_ONE_RANGE = re.compile(r"[0-9]+(?:-[0-9]+)?")
_LAST_NUMBER = re.compile(r"(.*?)([0-9]*)([^0-9]*)\Z", re.DOTALL)
_NOT_IN_NAMES = re.compile(r"[\[\],\s]")
_ASCII_FORBIDDEN = "[], \t\r\x0b\x0c\x1c\x1d\x1e\x1f"  # all but the joining "\n"
_NOT_IN_JOINED_NAMES = re.compile(r"[\[\],]|[^\S\n]")


def _no_forbidden_characters(joined: str) -> bool:
    if joined.isascii():  # one memchr-speed scan per character instead of a regex
        return not any(char in joined for char in _ASCII_FORBIDDEN)
    return _NOT_IN_JOINED_NAMES.search(joined) is None


# ---------------------------------------------------------------- parsing


def _show(text: str, around: int = 0, limit: int = 60) -> str:
    """``text`` quoted for an error message, clipped near ``around`` when long.

    A fragmented nodelist can be 400,000 characters; the message must stay readable.
    """
    if len(text) <= limit:
        return repr(text)
    start = max(0, min(around - limit // 2, len(text) - limit))
    clipped = text[start:start + limit]
    return ("..." if start else "") + repr(clipped) + ("..." if start + limit < len(text) else "")


def _parse(hostlist: str) -> list[_Item]:
    if not isinstance(hostlist, str):
        raise HostlistError(f"a hostlist must be a string, not {type(hostlist).__name__}")
    text = hostlist.strip()
    if not text:
        raise HostlistError("empty hostlist", "hostlist.empty")
    if text.isprintable() and " " not in text:  # no whitespace: maybe the common shapes
        items = _parse_simple(text)
        if items is not None:
            return items
    items: list[_Item] = []
    pos, end = 0, len(text)
    while True:
        match = _ITEM.match(text, pos)
        if match is None or (match.end() < end and text[match.end()] in "[]"):
            _diagnose(text)  # always raises
        items.append(_parse_item(match.group()))
        pos = match.end()
        if pos == end:
            return items
        separator = _SEPARATOR.match(text, pos)
        pos = separator.end()  # _ITEM stopped at a separator character
        if pos == end:
            shown = _show(text, len(text))
            raise HostlistError(f"{shown} ends with a separator (empty last item)",
                                "hostlist.trailing_separator", text=shown)


_SIMPLE_ITEM = re.compile(r"([^\[\],\s]*)\[([0-9]+)(?:-([0-9]+))?\]([^\[\],\s]*)")


def _parse_simple(text: str) -> list[_Item] | None:
    """Items of the shapes SLURM prints most, ``login,n[1-4]``: plain names and one range per
    item, read with one split and one match per item; None for anything else (the general
    parser then reads it, and finds any error)."""
    if "[" not in text:
        if "]" in text:
            return None
        names = text.split(",")
        return [(name,) for name in names] if all(names) else None
    items: list[_Item] = []
    for part in text.split(","):
        if "[" not in part:
            if not part or "]" in part:
                return None
            items.append((part,))
            continue
        match = _SIMPLE_ITEM.fullmatch(part)
        if match is None:
            return None
        prefix, lo_text, hi_text, suffix = match.groups()
        lo = int(lo_text)
        hi = int(hi_text) if hi_text is not None else lo
        if lo > hi:
            return None
        items.append((prefix, _Group((lo,), (hi + 1,), (len(lo_text),)), suffix))
    return items


def _diagnose(text: str) -> None:
    """Find the first bracket or separator problem and raise a precise error."""
    depth, opened = 0, -1
    item_start = 0
    for index, char in enumerate(text):
        if char == "[":
            if depth:
                shown = _show(text, index)
                raise HostlistError(
                    f"nested '[' at column {index + 1} of {shown}: brackets cannot contain brackets",
                    "hostlist.nested", column=index + 1, text=shown)
            depth, opened = 1, index
        elif char == "]":
            if not depth:
                shown = _show(text, index)
                raise HostlistError(f"']' at column {index + 1} of {shown} closes no '['",
                                    "hostlist.stray_close", column=index + 1, text=shown)
            depth = 0
        elif char == "," and not depth:
            if index == item_start or not text[item_start:index].strip():
                shown = _show(text, index)
                raise HostlistError(f"empty item before the comma at column {index + 1} of {shown}",
                                    "hostlist.empty_item", column=index + 1, text=shown)
            item_start = index + 1
    if depth:
        shown = _show(text, opened)
        raise HostlistError(f"'[' at column {opened + 1} of {shown} is never closed",
                            "hostlist.never_closed", column=opened + 1, text=shown)
    raise HostlistError(f"cannot parse hostlist {_show(text)}", "hostlist.unparsable", text=_show(text))


def _parse_item(item: str) -> _Item:
    pieces = _BRACKET.split(item)
    if len(pieces) == 1:
        return (item,)
    parts: list[Union[str, _Group]] = []
    for index, piece in enumerate(pieces):
        parts.append(piece if index % 2 == 0 else _parse_group(piece, item))
    return tuple(parts)


def _parse_group(body: str, item: str) -> _Group:
    if "," not in body:  # one number or one range: the usual group, parsed without regexes
        lo_text, dash, hi_text = body.partition("-")
        if lo_text.isdigit() and lo_text.isascii() and (
                not dash or (hi_text.isdigit() and hi_text.isascii())):
            lo = int(lo_text)
            hi = int(hi_text) if dash else lo
            if lo <= hi:
                return _Group((lo,), (hi + 1,), (len(lo_text),))
    if not body:
        raise HostlistError(f"empty brackets '[]' in {_show(item)}", "hostlist.empty_brackets",
                            text=_show(item))
    if _GROUP_BODY.fullmatch(body) is None:
        for part in body.split(","):
            if not part:
                raise HostlistError(f"empty entry between commas in the brackets of {_show(item)}",
                                    "hostlist.empty_entry", text=_show(item))
            if _ONE_RANGE.fullmatch(part) is None:
                shown = _show(item, item.find(part))
                raise HostlistError(
                    f"{_show(part)} in {shown} is not a number or a LO-HI range of numbers",
                    "hostlist.not_a_range", part=_show(part), text=shown)
        raise HostlistError(f"cannot parse the brackets of {_show(item)}")  # pragma: no cover
    # Validated above (ASCII digits, dashes, commas): now a few C-level passes, no loop per
    # range in Python (a fragmented group has 40,000 of them).
    bounds = list(map(str.split, body.split(","), itertools.repeat("-")))
    lo_texts = list(map(operator.itemgetter(0), bounds))
    los = tuple(map(int, lo_texts))
    his = tuple(map(int, map(operator.itemgetter(-1), bounds)))
    if any(map(operator.gt, los, his)):
        lo_text, hi_text = next((b[0], b[-1]) for b, lo, hi in zip(bounds, los, his) if lo > hi)
        shown = _show(item, item.find(f"{lo_text}-{hi_text}"))
        raise HostlistError(
            f"range '{lo_text}-{hi_text}' in {shown} runs backwards ({int(lo_text)} > {int(hi_text)})",
            "hostlist.backwards", lo=lo_text, hi=hi_text, text=shown, lo_value=int(lo_text),
            hi_value=int(hi_text))
    stops = tuple(map(operator.add, his, itertools.repeat(1)))
    return _Group(los, stops, tuple(map(len, lo_texts)))


def abbreviate(hostlist: str, limit: int = 120) -> str:
    """``hostlist`` as shown to a person: whole when short, else its start and how much is
    left out (a fragmented list of 80,000 nodes is 400,000 characters)."""
    if len(hostlist) <= limit:
        return hostlist
    return f"{hostlist[:limit]}... ({len(hostlist) - limit:,} more characters)"


# ---------------------------------------------------------------- count


def _item_size(item: _Item) -> int:
    size = 1
    for part in item[1::2]:
        size *= part.size()
    return size


def count(hostlist: str) -> int:
    """Number of hosts in ``hostlist`` (duplicates included), without expanding it."""
    if type(hostlist) is str:
        match = _SIMPLE_ITEM.fullmatch(hostlist)
        if match is not None:
            lo, hi = int(match.group(2)), int(match.group(3) or match.group(2))
            if lo <= hi:
                return hi - lo + 1
        scattered = _scattered(hostlist)
        if scattered is not None:
            parts, los, his = scattered[1], scattered[4], scattered[5]
            return len(parts) + sum(his) - sum(los)
    return sum(_item_size(item) for item in _parse(hostlist))


# ---------------------------------------------------------------- scattered allocations

def _scattered(hostlist: str):
    """The shape of a job scattered over a machine, ``nid[000001,000003-000005,...]``: one
    item, one bracket group, every number of the same width. Returns (prefix, entries,
    width, suffix, range starts, range ends) with the entries as written, or None for any
    other shape (the general parser then reads it, and finds any error).

    Checked and read with a few C-level passes over the text and no loop per entry in
    Python: such a list has 40,000 entries.
    """
    if len(hostlist) < 64:
        return None  # short lists: the general path is as fast
    opened, closed = hostlist.find("["), hostlist.rfind("]")
    if opened < 0 or closed < opened:
        return None
    prefix, body, suffix = hostlist[:opened], hostlist[opened + 1:closed], hostlist[closed + 1:]
    if (_NOT_IN_NAMES.search(prefix) or _NOT_IN_NAMES.search(suffix) or not body.isascii()
            or body.encode().translate(None, b"0123456789,-")):
        return None  # only digits, commas and dashes inside; their places are checked below
    parts = body.split(",")
    width = len(parts[0].partition("-")[0])
    if not width:
        return None
    span = 2 * width + 1
    lengths = list(map(len, parts))
    ranges = list(itertools.compress(parts, map(operator.eq, lengths, itertools.repeat(span))))
    if (lengths.count(width) + len(ranges) != len(parts)
            or body.count("-") != len(ranges)
            or not all(map(operator.eq, map(operator.itemgetter(width), ranges), itertools.repeat("-")))):
        return None  # mixed widths (n[8-10]), or a dash out of place
    los = list(map(int, map(operator.itemgetter(slice(width)), ranges)))
    his = list(map(int, map(operator.itemgetter(slice(width + 1, None)), ranges)))
    if any(map(operator.gt, los, his)):
        return None  # a backwards range: the general parser names it
    return prefix, parts, width, suffix, los, his


_SCATTERED_CHUNK = 4096
"""Entries rendered at a time by :func:`_expand_scattered`: lazy, yet one list per chunk."""


def _expand_scattered(prefix: str, parts: list[str], width: int, suffix: str,
                      los: list[int], his: list[int]) -> Iterator[str]:
    """Names of a scattered allocation, a chunk of entries at a time. A single number is
    its own text (all numbers have the width, so none needs padding) and a range of two is
    its two texts: only longer ranges are formatted. Each chunk becomes one string of
    numbers split once (names hold no newline)."""
    number = f"%0{width}d".__mod__
    span = 2 * width + 1
    where = itertools.compress(range(len(parts)), map(operator.eq, map(len, parts), itertools.repeat(span)))
    ranges = zip(where, los, his)
    between = f"{suffix}\n{prefix}"
    pending = next(ranges, None)
    for start in range(0, len(parts), _SCATTERED_CHUNK):
        stop = start + _SCATTERED_CHUNK
        chunk = parts[start:stop]
        while pending is not None and pending[0] < stop:
            index, lo, hi = pending
            entry = chunk[index - start]
            chunk[index - start] = (entry.replace("-", "\n") if hi - lo == 1
                                    else "\n".join(map(number, range(lo, hi + 1))))
            pending = next(ranges, None)
        numbers = "\n".join(chunk)
        if prefix or suffix:
            numbers = prefix + numbers.replace("\n", between) + suffix
        yield from numbers.split("\n")


# ---------------------------------------------------------------- expand


def _escape(literal: str) -> str:
    return literal.replace("%", "%%")


# Names are rendered in blocks of 100 that share everything but the last two
# digits: one format per block and a C-level concatenation per name, about
# twice as fast as formatting each number.
_LAST_TWO_DIGITS = tuple(f"{n:02d}" for n in range(100))


def _split_blocks(run: _Range) -> tuple[range, range, range]:
    """(head numbers, full block indices t >= 1, tail numbers) of a run.

    Block t holds the numbers 100*t .. 100*t+99; block 0 is never used because
    numbers below 100 may be shorter than two digits.
    """
    first = max(-(-run.lo // 100), 1)
    stop = (run.hi + 1) // 100
    if first >= stop:
        return range(run.lo, run.hi + 1), range(0), range(0)
    return range(run.lo, 100 * first), range(first, stop), range(100 * stop, run.hi + 1)


def _render_run(run: _Range, prefix: str, suffix: str) -> Iterator[str]:
    """Lazy names ``prefix<number>suffix`` for every number of one range."""
    single = f"{_escape(prefix)}%0{run.width}d{_escape(suffix)}".__mod__
    head, blocks, tail = _split_blocks(run)
    if not blocks:
        return map(single, head)
    tails = [two + suffix for two in _LAST_TWO_DIGITS] if suffix else _LAST_TWO_DIGITS
    block_width = max(run.width - 2, 1)
    return itertools.chain(
        map(single, head),
        itertools.chain.from_iterable(
            map(f"{prefix}{t:0{block_width}d}".__add__, tails) for t in blocks
        ),
        map(single, tail),
    )


def _render_run_joined(run: _Range, prefix: str, suffix: str) -> str:
    """The names of :func:`_render_run` joined by newlines, one join per block of 100."""
    single = f"{_escape(prefix)}%0{run.width}d{_escape(suffix)}".__mod__
    head, blocks, tail = _split_blocks(run)
    block_width = max(run.width - 2, 1)
    pieces = list(map(single, head))
    for t in blocks:
        stem = f"{prefix}{t:0{block_width}d}"
        pieces.append(stem + f"{suffix}\n{stem}".join(_LAST_TWO_DIGITS) + suffix)
    pieces.extend(map(single, tail))
    return "\n".join(pieces)


def _short_padded_run(lo: int, stop: int, width: int, prefix: str, suffix: str) -> list[str]:
    """Names of a short zero-padded run (width >= 2), a hundred at a time: the digits but the
    last two are formatted once per hundred, the last two come from a table."""
    names: list[str] = []
    for hundred in range(lo // 100, (stop - 1) // 100 + 1):
        if hundred:
            stem = f"{prefix}{hundred:0{max(width - 2, 1)}d}"
        else:
            stem = prefix + "0" * (width - 2)
        first, last = max(lo - 100 * hundred, 0), min(stop - 100 * hundred, 100)
        digits = _LAST_TWO_DIGITS[first:last]
        if suffix:
            names.extend([f"{stem}{two}{suffix}" for two in digits])
        else:
            names.extend(map(stem.__add__, digits))
    return names


def _render_group(group: _Group, prefix: str, suffix: str) -> Iterator[str]:
    """Lazy names ``prefix<number>suffix`` for every number of the group."""
    if len(group.los) == 1:
        lo, stop = group.los[0], group.stops[0]
        if stop - lo < 200:  # a short run: one format, no blocks to plan
            width = group.widths[0]
            if width == 1 or lo >= 10 ** (width - 1):  # no number needs padding
                return iter([f"{prefix}{n}{suffix}" for n in range(lo, stop)])
            return iter(_short_padded_run(lo, stop, width, prefix, suffix))
        return _render_run(_Range(lo, stop - 1, group.widths[0]), prefix, suffix)
    width = group.widths[0]
    if group.size() < 100 * len(group.los) and group.widths.count(width) == len(group.widths):
        # A fragmented list of short runs (one job scattered over a machine):
        # chain all numbers and format them in a single C-level pass.
        numbers = itertools.chain.from_iterable(map(range, group.los, group.stops))
        return map(f"{_escape(prefix)}%0{width}d{_escape(suffix)}".__mod__, numbers)
    return itertools.chain.from_iterable(_render_run(r, prefix, suffix) for r in group.runs())


_TAIL_NAMES = 1 << 16
"""Names of the trailing groups of an item rendered once and reused for every stem (when
there are at most this many): a stem's names are then one C-level concatenation each."""

_FIRST_CHUNK = 64
_LAST_CHUNK = 8192
"""A block's names come in chunks that grow from 64 to 8,192 names, so its first names cost
little (``first``, a 50-name head) and a whole expansion still joins thousands at a time."""


def _expand_item(item: _Item) -> Iterator[str]:
    if len(item) == 1:
        return iter(item)
    if len(item) == 3:  # the common case: prefix[ranges]suffix
        return _render_group(item[1], item[0], item[2])
    # Several groups: the trailing groups whose product is small (the block) are rendered once
    # and reused as suffixes; the leading ones stay lazy, one stem at a time.
    split, size = len(item) - 2, item[-2].size()
    while split > 1 and size * item[split - 2].size() <= _TAIL_NAMES:
        split -= 2
        size *= item[split].size()
    if size > _TAIL_NAMES:
        return _expand_from(item[0], item, 1)
    if split == 1:  # the whole item is small: its names are the block itself
        return itertools.chain.from_iterable(_block_chunks(item, 1, item[0]))
    return itertools.chain.from_iterable(_stems_with_block(_expand_from(item[0], item[:split], 1),
                                                           _block_chunks(item, split, "")))


def _block_chunks(item: _Item, index: int, prefix: str) -> Iterator[list[str]]:
    """The names of ``item``'s groups from ``index`` on, after ``prefix``, in growing chunks.

    The first head (the group's first name) takes the later groups' names as they are
    rendered; the other heads are put before all of them, a chunk of heads at a time, as one
    join and one split (names hold no newline): a third faster than name by name.
    """
    heads = _render_group(item[index], prefix, item[index + 1])
    if index + 2 == len(item):  # the last group: its names are the chunks
        size = _FIRST_CHUNK
        while chunk := list(itertools.islice(heads, size)):
            yield chunk
            size = min(2 * size, _LAST_CHUNK)
        return
    head = next(heads)
    tails: list[str] = []
    for chunk in _block_chunks(item, index + 2, ""):
        tails += chunk
        yield list(map(head.__add__, chunk))
    size = max(_FIRST_CHUNK, len(tails))
    while some := list(itertools.islice(heads, max(1, size // len(tails)))):
        yield "\n".join([stem + ("\n" + stem).join(tails) for stem in some]).split("\n")
        size = min(2 * size, _LAST_CHUNK)


def _stems_with_block(stems: Iterator[str], chunks: Iterator[list[str]]) -> Iterator[Iterator[str]]:
    """Each stem before every name of the block: the first stem while the block is rendered
    chunk by chunk, the others with the block kept from then."""
    stem = next(stems)
    block: list[str] = []
    for chunk in chunks:
        block += chunk
        yield map(stem.__add__, chunk)
    yield from map(_with_tails, stems, itertools.repeat(block))


def _with_tails(stem: str, tails: list[str]) -> Iterator[str]:
    return map(stem.__add__, tails)


def _expand_from(prefix: str, item: _Item, index: int) -> Iterator[str]:
    """Names of ``item`` from its group at ``index`` on, after ``prefix``.

    Lazy in every group: each leading group yields one stem at a time and the groups after
    it are rendered for that stem only, so ``x[1-100000000]y[1-2]`` gives its first name at
    once and never holds more than one stem of each group.
    """
    group, literal = item[index], item[index + 1]
    if index + 2 == len(item):
        return _render_group(group, prefix, literal)
    return itertools.chain.from_iterable(
        map(_expand_from, _render_group(group, prefix, literal),
            itertools.repeat(item), itertools.repeat(index + 2))
    )


def first(hostlist: str) -> str:
    """The first host name of ``hostlist`` (validated whole; at most a first chunk of names
    is rendered)."""
    return next(expand(hostlist))


def expand(hostlist: str) -> Iterator[str]:
    """Lazily yield every host name of ``hostlist`` in order (no size cap).

    The string is parsed and validated immediately, so a malformed hostlist
    raises here rather than at the first ``next()``.
    """
    if type(hostlist) is str:  # the usual SLURM_JOB_NODELIST, n[1-4]: straight to the names
        match = _SIMPLE_ITEM.fullmatch(hostlist)
        if match is not None:
            prefix, lo_text, hi_text, suffix = match.groups()
            lo = int(lo_text)
            stop = int(hi_text) + 1 if hi_text is not None else lo + 1
            if lo < stop <= lo + 200 and (len(lo_text) == 1 or lo >= 10 ** (len(lo_text) - 1)):
                return iter([f"{prefix}{n}{suffix}" for n in range(lo, stop)])
        scattered = _scattered(hostlist)
        if scattered is not None:
            return _expand_scattered(*scattered)
    items = _parse(hostlist)
    if len(items) == 1:
        return _expand_item(items[0])
    return itertools.chain.from_iterable(map(_expand_item, items))


# ---------------------------------------------------------------- compress


def _check_names(names: list[str]) -> str:
    """Validate every name and return them joined by newlines.

    The joined string lets the checks (and the contiguous fast path) run as a
    few C-level passes instead of a Python loop per name.
    """
    try:
        joined = "\n".join(names)
    except TypeError:
        joined = None
    if (
        joined is not None
        and joined.count("\n") == len(names) - 1
        and _no_forbidden_characters(joined)
        and "\n\n" not in joined
        and not joined.startswith("\n")
        and not joined.endswith("\n")
        and joined
    ):
        return joined
    for name in names:  # something is wrong: find the first culprit
        if not isinstance(name, str):
            raise HostlistError(f"host names must be strings, not {type(name).__name__}: {name!r}")
        if not name:
            raise HostlistError("an empty host name cannot be part of a hostlist")
        if _NOT_IN_NAMES.search(name):
            raise HostlistError(
                f"host name {name!r} contains a bracket, comma or whitespace and cannot be compressed"
            )
    raise HostlistError("cannot compress these host names")  # pragma: no cover


def _format_ranges(ranges: list[_Range]) -> str:
    parts = []
    for r in ranges:
        lo = f"{r.lo:0{r.width}d}"
        parts.append(lo if r.lo == r.hi else f"{lo}-{r.hi:0{r.width}d}")
    return ",".join(parts)


def _format_item(prefix: str, ranges: list[_Range], suffix: str) -> str:
    if len(ranges) == 1 and ranges[0].lo == ranges[0].hi:
        return f"{prefix}{ranges[0].lo:0{ranges[0].width}d}{suffix}"
    return f"{prefix}[{_format_ranges(ranges)}]{suffix}"


def _compress_contiguous(names: list[str], joined: str) -> str | None:
    """Fastest path: the names are exactly one run ``prefix[lo-hi]suffix``.

    Rendering the candidate run and comparing strings is one C-level pass,
    which keeps a 158,976-node list well under the 20 ms budget.
    """
    prefix, digits, suffix = _LAST_NUMBER.match(names[0]).groups()
    if not digits or len(names) < 2:
        return None
    run = _Range(int(digits), int(digits) + len(names) - 1, len(digits))
    if _render_run_joined(run, prefix, suffix) != joined:
        return None
    return _format_item(prefix, [run], suffix)


def _compress_uniform(names: list[str]) -> str | None:
    """Fast path: every name is prefix + same-width digits + suffix.

    Works with C-level ``map`` passes only, which keeps a 158,976-node list
    near ten milliseconds. Returns None when the names do not fit.
    """
    prefix, digits, suffix = _LAST_NUMBER.match(names[0]).groups()
    if not digits:
        return None
    start, stop, width = len(prefix), len(prefix) + len(digits), len(digits)
    if not all(map(str.startswith, names, itertools.repeat(prefix))):
        return None
    if suffix and not all(map(str.endswith, names, itertools.repeat(suffix))):
        return None
    if any(map(operator.ne, map(len, names), itertools.repeat(stop + len(suffix)))):
        return None
    numbers_text = list(map(operator.itemgetter(slice(start, stop)), names))
    joined = "".join(numbers_text)
    if not (joined.isascii() and joined.isdigit()):
        return None
    numbers = list(map(int, numbers_text))
    breaks = list(
        itertools.compress(
            range(1, len(numbers)),
            map(operator.ne, numbers[1:], map(operator.add, numbers, itertools.repeat(1))),
        )
    )
    starts = [0, *breaks]
    ends = [*breaks, len(numbers)]
    ranges = [_Range(numbers[a], numbers[b - 1], width) for a, b in zip(starts, ends)]
    return _format_item(prefix, ranges, suffix)


def compress(names: Iterable[str]) -> str:
    """The shortest hostlist that expands back to exactly ``names``, in order.

    Like ``scontrol show hostlist`` it folds runs of consecutive numbers and
    keeps zero padding; unlike it, order and duplicates are preserved, so
    ``list(expand(compress(names))) == list(names)`` always holds. Only
    neighbouring names that share prefix and suffix share a bracket.
    """
    names = list(names)
    if not names:
        raise HostlistError("cannot compress an empty list of host names")
    joined = _check_names(names)
    fast = _compress_contiguous(names, joined) or _compress_uniform(names)
    if fast is not None:
        return fast

    return _fold(_fold_last_numbers(names))


# An item under construction: (head, rest). ``head`` is plain text whose last number may still
# be folded with the neighbours'; ``rest`` is hostlist text (brackets allowed) already folded.
_Pending = tuple


def _plain_or_bracket(ranges: list[_Range]) -> str:
    if len(ranges) == 1 and ranges[0].lo == ranges[0].hi:
        return f"{ranges[0].lo:0{ranges[0].width}d}"
    return f"[{_format_ranges(ranges)}]"


def _fold_last_numbers(names: list[str]) -> list[_Pending]:
    """First pass: neighbours that differ only in their last number share a bracket."""
    items: list[_Pending] = []
    key: tuple[str, str] | None = None
    ranges: list[_Range] = []

    def flush() -> None:
        if key is not None:
            items.append((key[0], _plain_or_bracket(ranges) + key[1]))

    for name in names:
        prefix, digits, suffix = _LAST_NUMBER.match(name).groups()
        if not digits:
            flush()
            key, ranges = None, []
            items.append((name, ""))
            continue
        value = int(digits)
        if (prefix, suffix) == key:
            last = ranges[-1]
            if value == last.hi + 1 and f"{value:0{last.width}d}" == digits:
                ranges[-1] = last._replace(hi=value)
            else:
                ranges.append(_Range(value, value, len(digits)))
            continue
        flush()
        key, ranges = (prefix, suffix), [_Range(value, value, len(digits))]
    flush()
    return items


def _fold(items: list[_Pending]) -> str:
    """Further passes, one number further left each time: ``r1n[001-128],r2n[001-128]``
    becomes ``r[1-2]n[001-128]``. Only neighbours whose whole remainder is the same text
    merge, so the expansion order (last group fastest) is exactly the names' order."""
    while True:
        folded: list[_Pending] = []
        key: tuple[str, str] | None = None
        ranges: list[_Range] = []
        more = False
        for head, rest in items:
            stem, digits, tail = _LAST_NUMBER.match(head).groups()
            if not digits:
                if key is not None:
                    folded.append((key[0], _plain_or_bracket(ranges) + key[1]))
                key = None
                folded.append((head, rest))
                continue
            more = True
            value, remainder = int(digits), tail + rest
            if key is not None and key[0] == stem and key[1] == remainder:
                last = ranges[-1]
                if value == last.hi + 1 and f"{value:0{last.width}d}" == digits:
                    ranges[-1] = last._replace(hi=value)
                else:
                    ranges.append(_Range(value, value, len(digits)))
                continue
            if key is not None:
                folded.append((key[0], _plain_or_bracket(ranges) + key[1]))
            key, ranges = (stem, remainder), [_Range(value, value, len(digits))]
        if key is not None:
            folded.append((key[0], _plain_or_bracket(ranges) + key[1]))
        items = folded
        if not more:
            return ",".join(head + rest for head, rest in items)
