"""Multi-bracket hostlists, generated: huge groups in any position (``x[1-100000000]y[1-2]``),
several per item, padding, lists and garbage. What a user's nodelist reaches (count, the first
names, compress, the allocation as the CLI describes it, the placement plan) must answer at
once: a case that burns over 1 s of CPU counts as a hang. CPU time, not wall time, so a busy
machine does not turn a quick case into a "hang"; a child that answers nothing for
``BLOCKED_SECONDS`` of wall time (blocked, not computing) counts as hung too.

The cases run in a forked child (memory capped at 1 GB) that reports after each one, so an
eager expansion is caught as a hang or a crash instead of filling the machine's memory.
"""
from __future__ import annotations

import gc
import itertools
import multiprocessing
import resource
import signal
import time
import traceback

from hypothesis import given
from hypothesis import strategies as st

from _hypothesis_profiles import settings
from ari_jupyter.slurm.allocation import Allocation
from ari_jupyter.cli.allocation import describe
from ari_jupyter.slurm.hostlist import HostlistError, compress, count, expand, first
from ari_jupyter.ari.placement import placement_for

from .figures import record

HANG_SECONDS = 1.0  # CPU seconds of the product's work per case
MODEL_SECONDS = 10.0  # CPU seconds for the test's own model of the answer, before that
BLOCKED_SECONDS = 20.0  # wall seconds without any answer from the child
HEAD = 50  # names compared with the model and round-tripped through compress
SHOWN_LIMIT = 2_000  # characters of the allocation's description, whatever the nodelist

LITERAL = st.sampled_from(["", "n", "x", "y", "rack", "-", "r", "-ib", "_g", "c"])


@st.composite
def bracket_group(draw):
    """``(body, numbers)``: a bracket body and the numbers it stands for, as lazy ranges."""
    runs = []
    for _ in range(draw(st.integers(1, 3))):
        width = draw(st.integers(1, 4))
        lo = draw(st.integers(0, 10 ** width - 1))
        size = draw(st.one_of(st.integers(1, 5), st.integers(1, 10 ** 9)))
        runs.append((lo, lo + size - 1, width))
    body = ",".join(f"{lo:0{w}d}" if lo == hi else f"{lo:0{w}d}-{hi:0{w}d}" for lo, hi, w in runs)
    return body, runs


@st.composite
def multi_bracket_item(draw):
    """``(text, literals, groups)`` of one item with two to four bracket groups."""
    groups = [draw(bracket_group()) for _ in range(draw(st.integers(2, 4)))]
    literals = [draw(LITERAL) for _ in range(len(groups) + 1)]
    if not literals[0] and not literals[1]:
        literals[0] = "n"
    text = literals[0] + "".join(f"[{body}]{lit}" for (body, _), lit in zip(groups, literals[1:]))
    return text, literals, [runs for _, runs in groups]


def _group_size(runs) -> int:
    return sum(hi - lo + 1 for lo, hi, _ in runs)


def _number(runs, index: int) -> str:
    for lo, hi, width in runs:
        if index <= hi - lo:
            return f"{lo + index:0{width}d}"
        index -= hi - lo + 1
    raise IndexError(index)


def model_names(literals, groups, limit: int) -> list[str]:
    """The first ``limit`` names by mixed-radix counting (the last group varies fastest)."""
    sizes = [_group_size(runs) for runs in groups]
    total = 1
    for size in sizes:
        total *= size
    names = []
    for index in range(min(total, limit)):
        digits, rest = [], index
        for size in reversed(sizes):
            rest, digit = divmod(rest, size)
            digits.append(digit)
        digits.reverse()
        name = literals[0] + "".join(_number(runs, d) + lit
                                     for runs, d, lit in zip(groups, digits, literals[1:]))
        names.append(name)
    return names


CASES = st.one_of(
    st.lists(multi_bracket_item(), min_size=1, max_size=3).map(
        lambda items: (",".join(text for text, _, _ in items), items)),
    st.text(alphabet="nx[]-,0123456789 ", max_size=40).map(lambda text: (text, None)),
)


def _check(case) -> None:
    """Everything a nodelist reaches; raises AssertionError on a wrong answer."""
    text, items = case
    if items is None:  # garbage: a HostlistError or a valid list, never anything else
        _product_clock()
        try:
            count(text)
        except HostlistError:
            return
        names = list(itertools.islice(expand(text), HEAD))
        assert list(expand(compress(names))) == names
        return
    expected_count = 0
    expected_head: list[str] = []
    for _, literals, groups in items:
        size = 1
        for runs in groups:
            size *= _group_size(runs)
        expected_count += size
        if len(expected_head) < HEAD:
            expected_head += model_names(literals, groups, HEAD - len(expected_head))
    _product_clock()
    assert count(text) == expected_count
    assert first(text) == expected_head[0]
    head = list(itertools.islice(expand(text), HEAD))
    assert head == expected_head
    assert list(expand(compress(head))) == head
    allocation = Allocation.from_env({"SLURM_JOB_ID": "7", "SLURM_JOB_NODELIST": text})
    assert allocation.first_node == expected_head[0]
    shown = "\n".join(f"{label} {line}" for label, line in describe(allocation))
    assert len(shown) < SHOWN_LIMIT
    plan = placement_for(allocation, ["sbatch", "--nodes", "2", "--ntasks", "4"], "mpi")
    assert len(plan.nodes) <= 8


class _CpuBoundExceeded(Exception):
    pass


def _on_cpu_bound(signum, frame):
    raise _CpuBoundExceeded


_PRODUCT_STARTED = [0.0]


def _product_clock() -> None:
    """From here the case's 1 s budget runs: it bounds what a user's nodelist reaches, not the
    test's own model of the expected names computed before."""
    signal.setitimer(signal.ITIMER_PROF, HANG_SECONDS)
    _PRODUCT_STARTED[0] = time.process_time()


def _child(cases, start: int, connection) -> None:
    # The fork inherits pytest's whole heap; without freezing it, every garbage collection the
    # case triggers walks that heap too, CPU the product would never spend in a real process.
    gc.freeze()
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    signal.signal(signal.SIGPROF, _on_cpu_bound)
    for index in range(start, len(cases)):
        _PRODUCT_STARTED[0] = time.process_time()
        try:
            signal.setitimer(signal.ITIMER_PROF, MODEL_SECONDS)  # until _check starts the product's clock
            try:
                _check(cases[index])
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            outcome = "ok"
        except _CpuBoundExceeded:
            outcome = "hung"
        except AssertionError as error:
            outcome = f"wrong: {error}"
        except Exception:  # noqa: BLE001 - a crash is what is being counted
            outcome = "crash: " + traceback.format_exc(limit=3)
        connection.send((index, time.process_time() - _PRODUCT_STARTED[0], outcome))


def run_cases(cases) -> dict[str, list]:
    """Run every case in forked children; a case over 1 s of CPU is hung, and so is a child
    that answers nothing for ``BLOCKED_SECONDS`` (it is killed; the next child starts after)."""
    context = multiprocessing.get_context("fork")
    verdicts: dict[str, list] = {"ok": [], "hung": [], "crashed": [], "wrong": []}
    start = 0
    while start < len(cases):
        parent, child_end = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(cases, start, child_end), daemon=True)
        child.start()
        child_end.close()
        try:
            while start < len(cases):
                if not parent.poll(BLOCKED_SECONDS):
                    verdicts["hung"].append((cases[start][0], f"no answer within {BLOCKED_SECONDS:g} s"))
                    start += 1
                    break
                try:
                    index, cpu, outcome = parent.recv()
                except EOFError:  # the child died (memory cap): this case crashed it
                    verdicts["crashed"].append((cases[start][0], "child died"))
                    start += 1
                    break
                start = index + 1
                if outcome == "hung" or cpu > HANG_SECONDS:
                    verdicts["hung"].append((cases[index][0], f"{cpu:.2f} s of CPU"))
                elif outcome == "ok":
                    verdicts["ok"].append(cases[index][0])
                else:
                    kind = "crashed" if outcome.startswith("crash") else "wrong"
                    verdicts[kind].append((cases[index][0], outcome))
        finally:
            child.kill()
            child.join()
            parent.close()
    return verdicts


def test_multi_bracket_hostlists_never_hang():
    cases: list = []

    @settings()
    @given(CASES)
    def collect(case):
        cases.append(case)

    collect()
    # The reported shapes, always among the cases.
    for text in ("x[1-100000000]y[1-2]", "a[1-999999999]b[1-999999999]c[1-2]",
                 "r[1-40]n[001-128]", "login,x[1-100000000]y[1-2],n[1-2]"):
        cases.append((text, [(part, *_literals_groups(part)) for part in _items(text)]))
    verdicts = run_cases(cases)
    bad = verdicts["hung"] + verdicts["crashed"] + verdicts["wrong"]
    record("Parsers", "multi-bracket hostlists: count, first names, compress, allocation, "
           f"placement (over {HANG_SECONDS:g} s = hung)", cases=len(cases),
           survived=len(verdicts["ok"]), lost=len(bad), hung=len(verdicts["hung"]),
           crashed=len(verdicts["crashed"]))
    assert not bad, bad[:5]


def _items(text: str) -> list[str]:
    depth, start, items = 0, 0, []
    for index, char in enumerate(text):
        depth += char == "["
        depth -= char == "]"
        if char == "," and not depth:
            items.append(text[start:index])
            start = index + 1
    return items + [text[start:]]


def _literals_groups(item: str):
    """Literals and groups of a hand-written item (the generator's own shape)."""
    literals, groups, rest = [], [], item
    while "[" in rest:
        literal, _, rest = rest.partition("[")
        body, _, rest = rest.partition("]")
        literals.append(literal)
        runs = []
        for part in body.split(","):
            lo, _, hi = part.partition("-")
            runs.append((int(lo), int(hi or lo), len(lo)))
        groups.append(runs)
    literals.append(rest)
    return literals, groups


def test_the_hang_detector_catches_an_eager_expansion():
    """Control: materialising a huge group (what expansion did before) is reported hung or
    crashed, not passed."""
    def eager(case):
        _product_clock()
        list(expand("x[1-100000000]"))

    original = globals()["_check"]
    globals()["_check"] = eager  # the forked child sees it
    try:
        verdicts = run_cases([("x[1-100000000]", None)])
    finally:
        globals()["_check"] = original
    assert verdicts["hung"] or verdicts["crashed"], verdicts


def test_the_hang_detector_counts_cpu_not_a_busy_machine():
    """Control: a case that spins for 1.5 s of CPU is hung; one that waits 1.5 s of wall time
    without computing (a starved process on a loaded machine) is not."""
    def spin(case):
        _product_clock()
        end = time.process_time() + 1.5
        while time.process_time() < end:
            pass

    def wait(case):
        _product_clock()
        time.sleep(1.5)

    original = globals()["_check"]
    try:
        globals()["_check"] = spin
        spun = run_cases([("spin", None)])
        globals()["_check"] = wait
        waited = run_cases([("wait", None)])
    finally:
        globals()["_check"] = original
    assert [name for name, _ in spun["hung"]] == ["spin"], spun
    assert waited["ok"] == ["wait"], waited
