"""P4: hostlists against the real peers: ClusterShell, python-hostlist and submitit's parser.

Every case is reported, those we lose included. The peers are a bench-only extra
(``pip install '.[bench]'``), never runtime dependencies; one that is not installed, or that
refuses a case (python-hostlist stops at 100,000 hosts), is shown as such. ClusterShell and
python-hostlist sort and de-duplicate when they compress: their output is shorter only
because it answers another question; the compact form is compared on a list where that
makes no difference.
"""
from __future__ import annotations

import random
import time
from typing import Callable

from .common import Figure, median

FUGAKU = "nid[000001-158976]"
FUGAKU_NODES = 158_976
FRAGMENT_SIZE = 80_000
MULTI = "r[1-40]n[001-128]"
COMPACT_TARGET = 20  # characters for MULTI compressed


def fragmented_names(seed: int = 1) -> list[str]:
    """80,000 of the 158,976 Fugaku nodes, chosen at random (a busy machine's allocation)."""
    chosen = sorted(random.Random(seed).sample(range(1, FUGAKU_NODES + 1), FRAGMENT_SIZE))
    return [f"nid{n:06d}" for n in chosen]


def _peers() -> dict[str, dict[str, Callable]]:
    """name -> {"expand", "count", "compress"} of each installed peer."""
    peers: dict[str, dict[str, Callable]] = {}
    try:
        from ClusterShell.NodeSet import NodeSet

        peers["ClusterShell"] = {"expand": lambda h: list(NodeSet(h)), "count": lambda h: len(NodeSet(h)),
                                 "compress": lambda names: str(NodeSet.fromlist(names))}
    except ImportError:
        pass
    try:
        import hostlist as python_hostlist

        peers["python-hostlist"] = {"expand": python_hostlist.expand_hostlist,
                                    "count": lambda h: len(python_hostlist.expand_hostlist(h)),
                                    "compress": python_hostlist.collect_hostlist}
    except ImportError:
        pass
    try:
        from submitit.slurm.slurm import _parse_node_list

        peers["submitit"] = {"expand": _parse_node_list, "count": lambda h: len(_parse_node_list(h))}
    except ImportError:
        pass
    return peers


PEER_NAMES = ("ClusterShell", "python-hostlist", "submitit")
SLOW = 1.0
BIG_CASES = ("fugaku", "fragmented")


def _per_call(function: Callable[[], object], budget: float) -> float:
    """Seconds per call, from enough calls to fill ``budget`` seconds."""
    start = time.perf_counter()
    function()
    once = time.perf_counter() - start
    if once >= budget:
        return once
    calls = max(1, min(100_000, int(budget / max(once, 1e-7))))
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls


def _race(candidates: dict[str, Callable[[], object]], repeats: int, budget: float) -> dict[str, list[float]]:
    """Interleaved samples of every candidate; a candidate that raises is left out."""
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    refused: dict[str, str] = {}
    for _ in range(repeats):
        for name, function in candidates.items():
            if name in refused:
                continue
            if samples[name] and samples[name][-1] > SLOW:
                continue  # one sample of a call that takes seconds is enough
            try:
                samples[name].append(_per_call(function, budget))
            except Exception as error:  # a peer's refusal is a result, not a crash
                refused[name] = f"{type(error).__name__}"
    for name, why in refused.items():
        samples[name] = [why]  # type: ignore[list-item]
    return samples


def p4_hostlists(repeats: int, quick: bool = False) -> list[Figure]:
    from ari_jupyter.slurm.hostlist import compress, count, expand

    peers = _peers()
    budget = 0.005 if quick else 0.05
    fragment = fragmented_names()
    folded = compress(fragment)
    cases = {
        "small": "n[1-4]",
        "login": "login,n[1-4]",
        "multi": MULTI,
        "fugaku": FUGAKU,
        "fragmented": folded,
    }
    names = {case: list(expand(text)) for case, text in cases.items()}
    labels = {"small": "n[1-4]", "login": "login,n[1-4]", "multi": f"{MULTI} (5,120 names)",
              "fugaku": f"{FUGAKU} (158,976)",
              "fragmented": f"80,000 random Fugaku nodes ({len(folded):,} characters)"}
    ours = {"expand": lambda h: list(expand(h)), "count": count, "compress": compress}
    figures = []
    for operation, letter in (("expand", "e"), ("count", "c"), ("compress", "k")):
        for case, text in cases.items():
            argument = names[case] if operation == "compress" else text
            candidates = {"ours": (lambda f=ours[operation], a=argument: f(a))}
            for peer in PEER_NAMES:
                if quick and case in BIG_CASES:
                    break  # --quick: the peers take seconds on these
                if peer in peers and operation in peers[peer]:
                    candidates[peer] = (lambda f=peers[peer][operation], a=argument: f(a))
            samples = _race(candidates, repeats, budget)
            value = median(samples["ours"])
            side = {peer: (median(s) if s and isinstance(s[0], float) else (s[0] if s else None))
                    for peer, s in samples.items() if peer != "ours"}
            for peer in PEER_NAMES:
                if quick and case in BIG_CASES:
                    side[peer] = "skipped (--quick)"
                elif peer not in peers:
                    side[peer] = "not installed"
                elif operation not in peers[peer]:
                    side[peer] = "no such operation"
            timed = {p: v for p, v in side.items() if isinstance(v, float)}
            fastest = min(timed, key=timed.get) if timed else None
            figures.append(Figure(
                f"P4{letter}-{case}", f"{operation} {labels[case]}", value, "s",
                timed.get(fastest), f"fastest peer ({fastest})" if fastest else "no peer",
                "≤ 1.0× every peer", (value <= min(timed.values())) if timed else None,
                repeats=repeats, samples=samples["ours"],
                note="peers: " + ", ".join(f"{p} {_shown(v)}" for p, v in side.items()),
                extra={"peers": side}))
    compact = compress(names["multi"])
    lengths = {}
    for peer in PEER_NAMES:
        if peer in peers and "compress" in peers[peer]:
            lengths[peer] = len(peers[peer]["compress"](names["multi"]))
    figures.append(Figure(
        "P4k-compact", f"compress the 5,120 names of {MULTI}: characters", float(len(compact)),
        "chars", float(min(lengths.values())) if lengths else None,
        "shortest peer", f"≤ {COMPACT_TARGET} characters", len(compact) <= COMPACT_TARGET,
        note=f"ours {compact!r}; peers: " + ", ".join(f"{p} {n}" for p, n in lengths.items()),
        extra={"peers": lengths, "compressed": compact}))
    return figures


def _shown(value) -> str:
    from .common import fmt_seconds

    return fmt_seconds(value) if isinstance(value, float) else str(value)
