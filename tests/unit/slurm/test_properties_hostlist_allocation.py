"""Properties of hostlists and of Allocation.from_env over generated inputs.

Examples per property come from the Hypothesis profile (HYPOTHESIS_PROFILE=ci: 1000,
dev: 100); see tests/_hypothesis_profiles.py.
"""
from __future__ import annotations

import json
import string

from hypothesis import assume, given
from hypothesis import strategies as st

from _hypothesis_profiles import MAX_EXAMPLES, settings
from ari_jupyter.slurm.allocation import Allocation, CountsError, format_counts, parse_counts
from ari_jupyter.slurm.hostlist import HostlistError, compress, count, expand

# ------------------------------------------------------------------ strategies

NAME_CHARS = string.ascii_letters + string.digits + "-_."
PREFIXES = st.text(alphabet=string.ascii_lowercase + "-_.", min_size=0, max_size=4)
SUFFIXES = st.text(alphabet=string.ascii_lowercase + "-_.", min_size=0, max_size=3)


@st.composite
def numbered_names(draw) -> str:
    """Names like ``nid000042``, ``a7-ib``: the shapes clusters use, so runs form."""
    prefix, suffix = draw(PREFIXES), draw(SUFFIXES)
    number = draw(st.integers(min_value=0, max_value=1200))
    width = draw(st.integers(min_value=1, max_value=6))
    return f"{prefix}{number:0{width}d}{suffix}"


@st.composite
def runs_of_names(draw) -> list[str]:
    """A few consecutive runs, as an allocation's node list looks once expanded."""
    names: list[str] = []
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        prefix, suffix = draw(PREFIXES), draw(SUFFIXES)
        start = draw(st.integers(min_value=0, max_value=1000))
        length = draw(st.integers(min_value=1, max_value=30))
        width = draw(st.integers(min_value=1, max_value=5))
        names.extend(f"{prefix}{n:0{width}d}{suffix}" for n in range(start, start + length))
    return names


HOST_NAMES = st.one_of(
    numbered_names(),
    st.text(alphabet=NAME_CHARS, min_size=1, max_size=12),
)
NAME_LISTS = st.one_of(
    st.lists(HOST_NAMES, min_size=1, max_size=40),
    runs_of_names(),
)


@st.composite
def hostlists(draw) -> str:
    """Valid SLURM hostlists: items with zero to three bracket groups of ranges."""
    items = []
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        parts = [draw(PREFIXES)]
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            ranges = []
            for _ in range(draw(st.integers(min_value=1, max_value=3))):
                lo = draw(st.integers(min_value=0, max_value=120))
                hi = lo + draw(st.integers(min_value=0, max_value=12))
                width = draw(st.integers(min_value=1, max_value=4))
                ranges.append(f"{lo:0{width}d}" if lo == hi else f"{lo:0{width}d}-{hi}")
            parts.append(f"[{','.join(ranges)}]")
            parts.append(draw(SUFFIXES))
        item = "".join(parts)
        assume(item)
        items.append(item)
    return ",".join(items)


# ------------------------------------------------------------------ hostlists


@settings(max_examples=MAX_EXAMPLES)
@given(NAME_LISTS)
def test_compress_then_expand_gives_the_names_back(names):
    folded = compress(names)
    assert list(expand(folded)) == names
    assert count(folded) == len(names)
    assert compress(expand(folded)) == folded  # compress is a fixed point


@settings(max_examples=MAX_EXAMPLES)
@given(PREFIXES, SUFFIXES, st.integers(0, 10**6), st.integers(2, 300), st.integers(1, 7))
def test_a_run_of_consecutive_names_folds_into_one_range(prefix, suffix, start, length, width):
    names = [f"{prefix}{n:0{width}d}{suffix}" for n in range(start, start + length)]
    assert compress(names) == f"{prefix}[{start:0{width}d}-{start + length - 1:0{width}d}]{suffix}"


@settings(max_examples=MAX_EXAMPLES)
@given(hostlists())
def test_count_is_the_length_of_the_expansion(hostlist):
    names = list(expand(hostlist))
    assert count(hostlist) == len(names)
    assert list(expand(compress(names))) == names


@settings(max_examples=MAX_EXAMPLES)
@given(st.text(max_size=40))
def test_any_text_either_parses_or_raises_hostlist_error(text):
    try:
        total = count(text)
    except HostlistError as error:
        assert str(error)
        try:
            expand(text)
        except HostlistError:
            return
        raise AssertionError(f"count rejected {text!r} but expand accepted it")
    if total <= 10_000:
        assert len(list(expand(text))) == total


@settings(max_examples=MAX_EXAMPLES)
@given(st.lists(st.tuples(st.integers(0, 512), st.integers(1, 50)), min_size=1, max_size=8))
def test_per_node_counts_round_trip(pairs):
    counts = tuple(n for n, repeat in pairs for _ in range(repeat))
    assert parse_counts(format_counts(counts)) == counts
    assert parse_counts(",".join(f"{n}(x{r})" for n, r in pairs)) == counts


@settings(max_examples=MAX_EXAMPLES)
@given(st.text(max_size=30))
def test_per_node_counts_never_fail_otherwise(text):
    try:
        parse_counts(text)
    except CountsError:
        pass


# ------------------------------------------------------------------ Allocation

VARIABLES = [
    "SLURM_JOB_ID", "SLURM_JOBID", "SLURM_JOB_NAME", "SLURM_CLUSTER_NAME", "SLURM_JOB_PARTITION",
    "SLURM_JOB_ACCOUNT", "SLURM_JOB_QOS", "SLURM_JOB_NODELIST", "SLURM_NODELIST",
    "SLURM_JOB_NUM_NODES", "SLURM_NNODES", "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_TASKS_PER_NODE",
    "SLURM_JOB_CPUS_PER_NODE", "SLURM_CPUS_ON_NODE", "SLURM_CPUS_PER_TASK", "SLURM_GPUS_ON_NODE",
    "SLURM_JOB_GPUS", "SLURM_GPUS_PER_TASK", "CUDA_VISIBLE_DEVICES", "SLURM_MEM_PER_NODE",
    "SLURM_MEM_PER_CPU", "SLURM_SUBMIT_DIR",
]

PLAUSIBLE_VALUES = st.one_of(
    st.text(max_size=20),
    st.from_regex(r"[0-9]{1,6}", fullmatch=True),
    st.sampled_from(["", "(null)", "0", "-1", "3,1", "2(x3),1", "2(x", "n[1-2]", "cn[5-2]",
                     "cn[01-", "nid[000001-158976]", "a100:2", "64G", "/tmp/x", "relative",
                     "NoDevFiles", "0,1", " 4 ", "٤", "1(x99999999999)"]),
    hostlists(),
)
ENVIRONMENTS = st.dictionaries(
    st.one_of(st.sampled_from(VARIABLES), st.text(max_size=12)),
    st.one_of(PLAUSIBLE_VALUES, st.none(), st.integers(), st.binary(max_size=4)),
    max_size=len(VARIABLES),
)


@settings(max_examples=MAX_EXAMPLES)
@given(ENVIRONMENTS)
def test_from_env_never_raises_and_every_problem_names_its_variable(env):
    allocation = Allocation.from_env(env)
    for problem in allocation.problems:
        variable = problem.split("=", 1)[0]
        assert variable in VARIABLES and variable in env, problem
        shown = repr(env[variable]) if isinstance(env[variable], str) else None
        if shown is not None and " is not " in problem:
            assert problem.startswith(f"{variable}={shown} is not "), problem
    data = allocation.to_json()
    assert Allocation.from_json(json.loads(json.dumps(data))) == allocation
    assert isinstance(allocation.inside_allocation, bool)


@settings(max_examples=MAX_EXAMPLES)
@given(ENVIRONMENTS)
def test_a_field_is_none_exactly_when_its_variable_was_refused(env):
    allocation = Allocation.from_env(env)
    refused = {p.split("=", 1)[0] for p in allocation.problems if " is not " in p or "expected a string" in p}
    simple_fields = {
        "SLURM_JOB_PARTITION": "partition", "SLURM_JOB_ACCOUNT": "account", "SLURM_JOB_QOS": "qos",
        "SLURM_CPUS_ON_NODE": "cpus_on_node", "SLURM_CPUS_PER_TASK": "cpus_per_task",
        "SLURM_TASKS_PER_NODE": "tasks_per_node", "SLURM_JOB_CPUS_PER_NODE": "cpus_per_node",
        "SLURM_SUBMIT_DIR": "submit_dir", "SLURM_MEM_PER_NODE": "mem_per_node_mb",
    }
    for variable, field in simple_fields.items():
        if variable in refused:
            assert getattr(allocation, field) is None, variable
        value = env.get(variable)
        if isinstance(value, str) and value.strip() not in ("", "(null)") and variable not in refused:
            assert getattr(allocation, field) is not None, variable
    if allocation.nodelist is not None:
        first = allocation.first_node
        assert first is not None and first == next(expand(allocation.nodelist))


def test_the_selected_profile_is_in_force():
    assert settings().max_examples == MAX_EXAMPLES
    assert settings().deadline is None
