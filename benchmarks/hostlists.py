"""P4: Fugaku-sized hostlists (158,976 nodes) against a plain reference parser.

The reference is the straightforward parser most projects write (one f-string per
name, like submitit's ``_parse_node_list``): the figure to beat for expansion. For
compression the reference is the straightforward fold (split every name, extend runs).
"""
from __future__ import annotations

import random
import re

from .common import Figure, median, medians

FUGAKU = "nid[000001-158976]"
FUGAKU_NODES = 158_976
FRAGMENT_SIZE = 80_000

_REFERENCE_ITEM = re.compile(r"([^,\[\]]*)(?:\[([^\]]*)\])?([^,\[\]]*)(?:,|$)")
_REFERENCE_NAME = re.compile(r"^(.*?)(\d+)(\D*)$")


def reference_expand(nodelist: str) -> list[str]:
    """A plain, eager expansion: single bracket group per item, no validation."""
    names: list[str] = []
    for prefix, body, suffix in _REFERENCE_ITEM.findall(nodelist):
        if not (prefix or body or suffix):
            continue
        if not body:
            names.append(prefix + suffix)
            continue
        for part in body.split(","):
            lo, _, hi = part.partition("-")
            width = len(lo)
            names.extend(f"{prefix}{n:0{width}d}{suffix}" for n in range(int(lo), int(hi or lo) + 1))
    return names


def reference_compress(names: list[str]) -> str:
    """A plain fold: split each name, extend the current run when the number follows."""
    groups: list[tuple[str, str, list[list]]] = []
    for name in names:
        match = _REFERENCE_NAME.match(name)
        if match is None:
            groups.append((name, "", []))
            continue
        prefix, digits, suffix = match.groups()
        value = int(digits)
        if groups and groups[-1][0] == prefix and groups[-1][1] == suffix and groups[-1][2]:
            run = groups[-1][2][-1]
            if value == run[1] + 1 and len(digits) == run[2]:
                run[1] = value
                continue
            groups[-1][2].append([value, value, len(digits)])
        else:
            groups.append((prefix, suffix, [[value, value, len(digits)]]))
    items = []
    for prefix, suffix, runs in groups:
        if not runs:
            items.append(prefix)
            continue
        parts = [f"{lo:0{w}d}" if lo == hi else f"{lo:0{w}d}-{hi:0{w}d}" for lo, hi, w in runs]
        items.append(f"{prefix}[{','.join(parts)}]{suffix}")
    return ",".join(items)


def fragmented_names(seed: int = 1) -> list[str]:
    """80,000 of the 158,976 Fugaku nodes, chosen at random (a busy machine's allocation)."""
    chosen = sorted(random.Random(seed).sample(range(1, FUGAKU_NODES + 1), FRAGMENT_SIZE))
    return [f"nid{n:06d}" for n in chosen]


def p4_hostlists(repeats: int) -> list[Figure]:
    from ari_jupyter.hostlist import compress, count, expand

    names = list(expand(FUGAKU))
    assert names == reference_expand(FUGAKU) and count(FUGAKU) == FUGAKU_NODES
    fragment = fragmented_names()
    folded = compress(fragment)
    assert list(expand(folded)) == fragment == reference_expand(folded)
    assert reference_compress(fragment) == folded and count(folded) == FRAGMENT_SIZE

    s = medians({
        "count": lambda: count(FUGAKU),
        "compress": lambda: compress(names),
        "ref_compress": lambda: reference_compress(names),
        "expand": lambda: list(expand(FUGAKU)),
        "ref_expand": lambda: reference_expand(FUGAKU),
        "frag_count": lambda: count(folded),
        "frag_compress": lambda: compress(fragment),
        "frag_ref_compress": lambda: reference_compress(fragment),
        "frag_expand": lambda: list(expand(folded)),
        "frag_ref_expand": lambda: reference_expand(folded),
    }, repeats)
    m = {name: median(samples) for name, samples in s.items()}
    ref_expand = "reference parser (eager list)"
    frag = f"{FRAGMENT_SIZE:,} random Fugaku nodes ({len(folded):,} characters folded)"
    return [
        Figure("P4a", f"count {FUGAKU}", m["count"], "s", m["ref_expand"],
               "reference: expand then len()", "≤ 20 ms", m["count"] <= 0.020,
               repeats=repeats, samples=s["count"]),
        Figure("P4b", f"compress the {FUGAKU_NODES:,} names back to {FUGAKU}", m["compress"], "s",
               m["ref_compress"], "reference fold", "≤ 20 ms", m["compress"] <= 0.020,
               repeats=repeats, samples=s["compress"]),
        Figure("P4c", f"expand {FUGAKU} (all names, lazily)", m["expand"], "s", m["ref_expand"],
               ref_expand, "≤ 1.0×", m["expand"] <= m["ref_expand"], repeats=repeats,
               samples=s["expand"]),
        Figure("P4d", f"expand {frag}", m["frag_expand"], "s", m["frag_ref_expand"], ref_expand,
               "≤ 1.0×", m["frag_expand"] <= m["frag_ref_expand"], repeats=repeats,
               samples=s["frag_expand"]),
        Figure("P4e", f"count {frag}", m["frag_count"], "s", m["frag_ref_expand"],
               "reference: expand then len()", "report", None, repeats=repeats,
               samples=s["frag_count"]),
        Figure("P4f", f"compress {frag}", m["frag_compress"], "s", m["frag_ref_compress"],
               "reference fold", "report", None, repeats=repeats, samples=s["frag_compress"]),
    ]
