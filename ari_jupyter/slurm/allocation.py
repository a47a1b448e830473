"""The SLURM allocation this process runs in, read from environment variables.

``Allocation.from_env()`` never raises on a bad value: a notebook must still
open when a site exports something odd. The field becomes None and
``problems`` says which variable held what, and what was expected, so the
wizard and ``ari-jupyter allocation`` can show it next to the rest.

Values reach shell lines later (``sbatch -p``, ``squeue -j``), so identifiers
are validated here against the characters SLURM itself allows.
"""
import os
import re
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Optional

from ..i18n import message, text


def _hostlist():
    """The hostlist parser, loaded where a nodelist is read: outside an allocation (a laptop,
    a demo site) the wizard's first step never needs it."""
    from . import hostlist  # cold start: hostlist loads with the first nodelist (none outside an allocation)

    return hostlist


__all__ = ["Allocation", "parse_counts", "format_counts", "CountsError"]

# The first variable present wins; SLURM_JOB_* describe the job, the older
# names are also set by srun inside a step (where they describe the step).
_JOB_ID = ("SLURM_JOB_ID", "SLURM_JOBID")
_NODELIST = ("SLURM_JOB_NODELIST", "SLURM_NODELIST")
_NUM_NODES = ("SLURM_JOB_NUM_NODES", "SLURM_NNODES")
_NTASKS = ("SLURM_NTASKS", "SLURM_NPROCS")
# Set by srun in a job step only (not in the batch script): there SLURM_NTASKS,
# SLURM_TASKS_PER_NODE and SLURM_CPUS_ON_NODE describe the step, e.g. the step batchspawner's
# default ``srun`` starts the single-user server in.
_STEP_ID = ("SLURM_STEP_ID", "SLURM_STEPID")

# SLURM prints "(null)" for some unset values (e.g. SLURM_NODE_ALIASES).
_UNSET_VALUES = ("", "(null)")
# Patterns as text, compiled by ``re``'s own cache at their first use: outside an allocation
# (a laptop, a demo site) none is needed, and a kernel's cold start pays for none.
_DIGITS = r"[0-9]+"
_NAME = r"[A-Za-z0-9_.+-]+"  # partition, account, QOS, cluster names
_MEMORY = r"(?i)([0-9]+)([KMGT]?)"
_MB_PER_UNIT = {"": 1, "K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}
_GPUS_PER_TASK = r"(?:[A-Za-z0-9_.-]+:)?([0-9]+)"
_COUNT_ITEM = r"([0-9]+)(?:\(x([0-9]+)\))?"

# No real machine has more nodes than this; the cap keeps a corrupt
# "1(x99999999999)" from allocating gigabytes.
MAX_NODES = 1_000_000


class CountsError(ValueError):
    """A SLURM per-node count list such as ``2(x3),1`` is malformed."""


def parse_counts(value: str) -> tuple[int, ...]:
    """Expand SLURM's per-node count syntax: ``"3,1"`` -> (3, 1), ``"2(x3),1"`` -> (2, 2, 2, 1)."""
    counts: list[int] = []
    for item in value.strip().split(","):
        match = re.fullmatch(_COUNT_ITEM, item.strip())
        if match is None:
            raise CountsError(f"{item!r} is not N or N(xM)")
        number, repeat = int(match.group(1)), int(match.group(2) or 1)
        if repeat < 1:
            raise CountsError(f"{item!r} repeats zero times")
        if len(counts) + repeat > MAX_NODES:
            raise CountsError(f"more than {MAX_NODES:,} nodes")
        counts.extend([number] * repeat)
    return tuple(counts)


def format_counts(counts: tuple[int, ...]) -> str:
    """The inverse of :func:`parse_counts`, folding repeats: (2, 2, 2, 1) -> ``"2(x3),1"``."""
    items: list[str] = []
    index = 0
    while index < len(counts):
        end = index
        while end < len(counts) and counts[end] == counts[index]:
            end += 1
        repeat = end - index
        items.append(str(counts[index]) if repeat == 1 else f"{counts[index]}(x{repeat})")
        index = end
    return ",".join(items)


class Allocation(NamedTuple):
    """What SLURM told this process about its job; None means unknown or malformed.

    An immutable record. A NamedTuple rather than a frozen dataclass: the dataclass compiles
    six methods from source when its module is imported, 3 ms of a kernel's cold start. (And
    this module evaluates its annotations: as strings, NamedTuple would compile each one.)
    """

    job_id: Optional[str] = None
    job_name: Optional[str] = None
    cluster: Optional[str] = None
    partition: Optional[str] = None
    account: Optional[str] = None
    qos: Optional[str] = None
    nodelist: Optional[str] = None
    num_nodes: Optional[int] = None
    ntasks: Optional[int] = None
    tasks_per_node: Optional[tuple[int, ...]] = None
    cpus_per_node: Optional[tuple[int, ...]] = None
    cpus_on_node: Optional[int] = None
    cpus_per_task: Optional[int] = None
    gpus_on_node: Optional[int] = None
    job_gpus: Optional[str] = None  # as given, e.g. "0,1"
    gpus_per_task: Optional[int] = None
    cuda_visible_devices: Optional[str] = None  # as given; "" hides every GPU
    mem_per_node_mb: Optional[int] = None
    mem_per_cpu_mb: Optional[int] = None
    submit_dir: Optional[str] = None
    step_id: Optional[str] = None  # the job step this process runs in; None in the batch script
    inside_allocation: bool = False
    problems: tuple[str, ...] = ()

    # ------------------------------------------------------------ building

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None) -> "Allocation":
        """Read the allocation from ``env`` (default ``os.environ``); never raises."""
        reader = _Reader(os.environ if env is None else env)
        fields: dict[str, Any] = {
            "job_id": reader.get(_JOB_ID, _digits, "job_id"),
            "job_name": reader.get(("SLURM_JOB_NAME",), _text, "text"),
            "cluster": reader.get(("SLURM_CLUSTER_NAME",), _name, _NAME_EXPECTED),
            "partition": reader.get(("SLURM_JOB_PARTITION",), _name, _NAME_EXPECTED),
            "account": reader.get(("SLURM_JOB_ACCOUNT",), _name, _NAME_EXPECTED),
            "qos": reader.get(("SLURM_JOB_QOS",), _name, _NAME_EXPECTED),
            "nodelist": reader.get(_NODELIST, _nodelist, "hostlist"),
            "num_nodes": reader.get(_NUM_NODES, _positive, "positive"),
            "ntasks": reader.get(_NTASKS, _positive, "positive"),
            "tasks_per_node": reader.get(
                ("SLURM_TASKS_PER_NODE",), _counts, "counts"
            ),
            "cpus_per_node": reader.get(
                ("SLURM_JOB_CPUS_PER_NODE",), _counts, "counts"
            ),
            "cpus_on_node": reader.get(("SLURM_CPUS_ON_NODE",), _positive, "positive"),
            "cpus_per_task": reader.get(("SLURM_CPUS_PER_TASK",), _positive, "positive"),
            "gpus_on_node": reader.get(("SLURM_GPUS_ON_NODE",), _count, "count"),
            "job_gpus": reader.get(("SLURM_JOB_GPUS",), _device_list, "gpu_indices"),
            "gpus_per_task": reader.get(
                ("SLURM_GPUS_PER_TASK",), _gpus_per_task, "gpus_per_task"
            ),
            "cuda_visible_devices": reader.get(
                ("CUDA_VISIBLE_DEVICES",), _device_list, "devices",
                empty_is_value=True,
            ),
            "mem_per_node_mb": reader.get(
                ("SLURM_MEM_PER_NODE",), _megabytes, "megabytes"
            ),
            "mem_per_cpu_mb": reader.get(
                ("SLURM_MEM_PER_CPU",), _megabytes, "megabytes"
            ),
            "submit_dir": reader.get(("SLURM_SUBMIT_DIR",), _absolute_path, "path"),
            "step_id": reader.get(_STEP_ID, _digits, "job_id"),
        }
        fields["inside_allocation"] = reader.present(_JOB_ID)
        if fields["step_id"] is not None:
            _job_not_step(fields, reader)
        _cross_check(fields, reader)
        return cls(**fields, problems=tuple(reader.problems))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Allocation":
        """Rebuild from :meth:`to_json` output (e.g. a saved checkpoint); unknown keys ignored."""
        names = set(cls._fields)
        values = {}
        for key, value in data.items():
            if key in names:
                values[key] = tuple(value) if isinstance(value, list) else value
        return cls(**values)

    # ------------------------------------------------------------ views

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (tuples become lists)."""
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in self._asdict().items()}

    def nodes(self) -> Iterator[str]:
        """Host names of the allocation, expanded lazily (empty when unknown)."""
        if self.nodelist is None:
            return iter(())
        hostlist = _hostlist()
        return hostlist.expand(self.nodelist)

    @property
    def first_node(self) -> Optional[str]:
        """The first host of the allocation (where the batch script runs), or None."""
        return next(self.nodes(), None)


# ---------------------------------------------------------------- reading


def _expected(slug: str) -> dict:
    return message(f"alloc.expected.{slug}")


class _Invalid(ValueError):
    """Raised by a converter; the message (if any) adds detail to the problem, said in the
    catalog's languages when ``detail`` (a message) is given."""

    def __init__(self, english: str = "", detail: dict | None = None) -> None:
        super().__init__(english)
        self.detail = detail


_NAME_EXPECTED = "name"
"""``expected`` arguments name an ``alloc.expected.*`` message: what a variable should hold."""


class _Reader:
    """Looks variables up, converts them, and records a problem per bad value."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.problems: list[str] = []
        self.sources: dict[tuple[str, ...], str] = {}

    def _lookup(self, name: str) -> Any:
        try:
            return self.env.get(name)
        except Exception:  # a hostile Mapping must not take the notebook down
            return None

    def present(self, names: tuple[str, ...]) -> bool:
        return any(
            isinstance(value, str) and value.strip() not in _UNSET_VALUES
            for value in map(self._lookup, names)
        )

    def get(
        self,
        names: tuple[str, ...],
        convert: Callable[[str], Any],
        expected: str,
        *,
        empty_is_value: bool = False,
    ) -> Any:
        for name in names:
            raw = self._lookup(name)
            if raw is None:
                continue
            if not isinstance(raw, str):
                self.problems.append(text("alloc.problem.not_string", name=name, raw=repr(raw),
                                          kind=type(raw).__name__, expected=_expected(expected)))
                return None
            if raw.strip() in _UNSET_VALUES and not (empty_is_value and raw == ""):
                continue
            self.sources[names] = name
            try:
                return convert(raw)
            except _Invalid as error:
                if error.detail is not None:
                    self.problems.append(text("alloc.problem.invalid_because", name=name,
                                              raw=repr(raw), expected=_expected(expected),
                                              detail=error.detail))
                    return None
                self.problems.append(text(
                    "alloc.problem.invalid_detail" if str(error) else "alloc.problem.invalid",
                    name=name, raw=repr(raw), expected=_expected(expected), detail=str(error)))
                return None
        return None

    def source(self, names: tuple[str, ...]) -> str:
        return self.sources.get(names, names[0])


def _digits(raw: str) -> str:
    value = raw.strip()
    if not re.fullmatch(_DIGITS, value):
        raise _Invalid()
    return value


def _text(raw: str) -> str:
    return raw


def _name(raw: str) -> str:
    value = raw.strip()
    if not re.fullmatch(_NAME, value):
        raise _Invalid()
    return value


def _count(raw: str) -> int:
    value = raw.strip()
    if not re.fullmatch(_DIGITS, value):
        raise _Invalid()
    return int(value)


def _positive(raw: str) -> int:
    value = _count(raw)
    if value < 1:
        raise _Invalid()  # "0 is not a positive integer" says it all
    return value


def _counts(raw: str) -> tuple[int, ...]:
    try:
        return parse_counts(raw)
    except CountsError as error:
        raise _Invalid(str(error)) from None


def _nodelist(raw: str) -> str:
    hostlist = _hostlist()
    value = raw.strip()
    try:
        hostlist.count(value)  # validates without expanding
    except hostlist.HostlistError as error:
        raise _Invalid(str(error), message(error.message_id, **error.params)
                       if error.message_id else None) from None
    return value


def _device_list(raw: str) -> str:
    """Validated but kept as given: consumers split it the way CUDA does."""
    value = raw.strip()
    if not value:
        return ""  # CUDA_VISIBLE_DEVICES="" hides every GPU
    if not all(re.fullmatch(_NAME, device.strip()) for device in value.split(",")):
        raise _Invalid()
    return value


def _gpus_per_task(raw: str) -> int:
    match = re.fullmatch(_GPUS_PER_TASK, raw.strip())
    if match is None:
        raise _Invalid()
    return int(match.group(1))


def _megabytes(raw: str) -> int:
    match = re.fullmatch(_MEMORY, raw.strip())
    if match is None:
        raise _Invalid()
    return int(int(match.group(1)) * _MB_PER_UNIT[match.group(2).upper()])


def _absolute_path(raw: str) -> str:
    if not raw.startswith("/") or "\0" in raw:
        raise _Invalid()
    return raw


def _job_not_step(fields: dict[str, Any], reader: _Reader) -> None:
    """Inside a job step, keep the job's figures: its CPUs on this node from
    SLURM_JOB_CPUS_PER_NODE, and its tasks only when the step holds the whole job (batchspawner's
    plain ``srun``); a step narrower than the job leaves the job's tasks unknown."""
    job_cpus = _job_cpus_on_node(fields, reader)
    step_nodes = reader.get(("SLURM_STEP_NUM_NODES",), _positive, "positive")
    narrower = ((step_nodes is not None and fields["num_nodes"] is not None
                 and step_nodes < fields["num_nodes"])
                or (job_cpus is not None and fields["cpus_on_node"] is not None
                    and fields["cpus_on_node"] < job_cpus))
    if job_cpus is not None:
        fields["cpus_on_node"] = job_cpus
    if narrower:
        fields["ntasks"] = fields["tasks_per_node"] = None


def _job_cpus_on_node(fields: dict[str, Any], reader: _Reader) -> Optional[int]:
    """The job's CPUs on the node this process runs on (SLURMD_NODENAME's place in the job's
    node list), or the one count every node has; None when neither is known."""
    counts = fields["cpus_per_node"]
    if not counts:
        return None
    if len(set(counts)) == 1:
        return counts[0]
    node = reader.get(("SLURMD_NODENAME",), _name, _NAME_EXPECTED)
    if node is None or fields["nodelist"] is None:
        return None
    hostlist = _hostlist()
    for index, name in enumerate(hostlist.expand(fields["nodelist"])):
        if name == node:
            return counts[index] if index < len(counts) else None
    return None


def _cross_check(fields: dict[str, Any], reader: _Reader) -> None:
    """Report variables that contradict each other (values are kept as given)."""
    num_nodes = fields["num_nodes"]
    nodelist = fields["nodelist"]
    if num_nodes is not None and nodelist is not None:
        hostlist = _hostlist()
        listed = hostlist.count(nodelist)
        if listed != num_nodes:
            reader.problems.append(text(
                "alloc.problem.nodes_mismatch", list_name=reader.source(_NODELIST),
                nodelist=repr(hostlist.abbreviate(nodelist)), listed=listed,
                count_name=reader.source(_NUM_NODES), count=num_nodes))
    per_node = (("tasks_per_node", "SLURM_TASKS_PER_NODE"), ("cpus_per_node", "SLURM_JOB_CPUS_PER_NODE"))
    for field, variable in per_node:
        counts = fields[field]
        if counts is not None and num_nodes is not None and len(counts) != num_nodes:
            reader.problems.append(text(
                "alloc.problem.counts_mismatch", name=variable, counts=repr(format_counts(counts)),
                covered=len(counts), count_name=reader.source(_NUM_NODES), count=num_nodes))
    tasks = fields["tasks_per_node"]
    ntasks = fields["ntasks"]
    if tasks is not None and ntasks is not None and sum(tasks) != ntasks:
        reader.problems.append(text(
            "alloc.problem.tasks_mismatch", counts=repr(format_counts(tasks)), total=sum(tasks),
            ntasks_name=reader.source(_NTASKS), ntasks=ntasks))

