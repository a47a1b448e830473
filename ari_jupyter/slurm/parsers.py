"""Pure parsers for what SLURM prints: sinfo, GRES, durations, squeue times, srun's MPI list.

Each takes the text a command printed and returns plain data (no I/O, table-tested); what the
data means for a run is decided by the probes and ARI's rules.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from ..base.numbers import MAX_DIGITS, count_of

SINFO_FORMAT = "%P|%a|%l|%D|%c|%m|%G"
"""Explicit ``sinfo -o`` format: partition (``*`` marks the default), availability, time
limit, node count, CPUs per node, memory per node (MB), GRES. ``|`` never occurs in these."""


NULL_GRES = "(null)"


PARTITION_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+\-]*")
"""Characters SLURM allows in a partition name; anything else never reaches a command line."""


@dataclass
class SinfoPartitions:
    partitions: list[dict] = field(default_factory=list)
    default: str | None = None
    rejected: list[str] = field(default_factory=list)
    """Lines that did not have the expected shape (kept for the evidence)."""


_LEADING_INT = re.compile(r"\s*(\d+)")


def _leading_int(text: str) -> int | None:
    """``48`` -> 48, ``4+`` -> 4, ``N/A`` -> None."""
    digits = text if text.isdecimal() else (m.group(1) if (m := _LEADING_INT.match(text)) else "")
    # the usual case first, then what \d+ takes (Arabic-Indic digits too, as int() does);
    # more digits than any count has are none (int() refuses past 4,300)
    return int(digits) if digits and len(digits) <= MAX_DIGITS else None


def parse_sinfo(text: str) -> SinfoPartitions:
    """Partitions from ``sinfo --noheader -o SINFO_FORMAT``.

    sinfo prints one line per group of alike nodes, so a partition with mixed nodes appears on
    several lines; they are merged (node counts add up, CPUs and memory keep the minimum, as
    ARI's GUI does, GRES are united). ``4+`` style values (sinfo's "at least") count as 4.
    """
    result = SinfoPartitions()
    by_name: dict[str, dict] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        fields = [f.strip() for f in line.split("|")]
        if len(fields) != 7 or not fields[0] or fields[0] == "*":
            result.rejected.append(raw)
            continue
        name, avail, timelimit, nodes, cpus, memory, gres = fields
        is_default = name.endswith("*")
        name = name.rstrip("*")
        node_count = _leading_int(nodes)
        entry = by_name.get(name)  # a known name was checked on its first line
        if node_count is None or (entry is None and not PARTITION_NAME.fullmatch(name)):
            result.rejected.append(raw)
            continue
        if entry is None:
            entry = {
                "name": name, "default": False, "avail": avail, "timelimit": timelimit,
                "nodes": 0, "cpus": None, "memory_mb": None, "gres": [],
            }
            by_name[name] = entry
            result.partitions.append(entry)
        entry["default"] = entry["default"] or is_default
        entry["nodes"] += node_count
        for key, value in (("cpus", _leading_int(cpus)), ("memory_mb", _leading_int(memory))):
            if value is not None and (entry[key] is None or value < entry[key]):
                entry[key] = value
        for spec in _split_gres(gres):
            if spec not in entry["gres"]:
                entry["gres"].append(spec)
        if is_default and result.default is None:
            result.default = name
    return result


def split_gres(text: str) -> list[str]:
    """``gpu:a100:4(S:0-1),mps:400`` -> ``['gpu:a100:4(S:0-1)', 'mps:400']``; ``(null)`` -> []."""
    return list(_split_gres(text))


@functools.lru_cache(maxsize=1024)
def _split_gres(text: str) -> tuple[str, ...]:
    """split_gres, remembered: a big cluster repeats the same few GRES strings on every line."""
    specs, depth, current = [], 0, ""
    for char in text.strip():
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if char == "," and depth == 0:
            specs.append(current)
            current = ""
        else:
            current += char
    specs.append(current)
    return tuple(s.strip() for s in specs if s.strip() and s.strip() != NULL_GRES)


@dataclass(frozen=True)
class GresSpec:
    name: str
    type: str | None
    count: int | None
    raw: str


_GRES_SPEC = re.compile(
    r"^(?P<name>[A-Za-z][\w.\-]*)"
    r"(?::(?P<type>[A-Za-z][\w.\-]*))?"
    r"(?::(?P<count>[0-9]{1,18})(?P<suffix>[KMGT]?))?"  # more digits: no count int() takes
    r"(?:\(.*\))?$"
)


_SUFFIX = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def parse_gres_spec(spec: str) -> GresSpec | None:
    """One GRES entry (``gpu``, ``gpu:4``, ``gpu:a100:4(S:0-1)``); None when it is not one."""
    match = _GRES_SPEC.match(spec.strip())
    if not match:
        return None
    count = match.group("count")
    return GresSpec(
        name=match.group("name"),
        type=match.group("type"),
        count=int(count) * _SUFFIX[match.group("suffix")] if count else None,
        raw=spec.strip(),
    )


def ari_has_gres(text: str) -> bool:
    """ARI's own rule (``_slurm_has_gres``): any line of ``sinfo -h -o %G`` that is neither
    empty nor ``(null)`` means GRES exist, whatever their kind."""
    return any(line.strip() and line.strip() != NULL_GRES for line in text.splitlines())


def gres_lines(text: str) -> list[str]:
    """Distinct GRES entries listed by ``sinfo -h -o %G`` (one node group per line)."""
    seen: list[str] = []
    for line in text.splitlines():
        for spec in _split_gres(line):
            if spec not in seen:
                seen.append(spec)
    return seen


@dataclass(frozen=True)
class TimeLeft:
    raw: str
    seconds: int | None
    unlimited: bool = False


_DURATION = re.compile(r"^(?:(?P<days>[0-9]+)-)?(?P<rest>[0-9]+(?::[0-9]+){0,2})\Z")
"""ASCII digits only: SLURM reads no others (``\\d`` would take ``０１:００``)."""


def parse_slurm_duration(text: str) -> int:
    """Seconds in a SLURM time string: ``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``,
    ``D-HH:MM:SS`` (sbatch(1) --time). Raises ValueError on anything else."""
    match = _DURATION.match(text.strip())
    if not match:
        raise ValueError(f"not a SLURM duration: {text!r}")
    parts = [int(p) for p in match.group("rest").split(":")]
    days = int(match.group("days") or 0)
    if match.group("days") is not None:
        hours, minutes, seconds = (parts + [0, 0])[:3]
    elif len(parts) == 1:
        hours, minutes, seconds = 0, parts[0], 0
    elif len(parts) == 2:
        hours, (minutes, seconds) = 0, parts
    else:
        hours, minutes, seconds = parts
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def format_slurm_duration(seconds: int) -> str:
    """``seconds`` as squeue prints a time left (``%L``): ``M:SS``, ``H:MM:SS``, ``D-HH:MM:SS``;
    what :func:`parse_slurm_duration` reads back to the same seconds."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def parse_squeue_time(text: str) -> TimeLeft:
    """The time left printed by ``squeue -h -j ID -o %L``. Raises ValueError when the output is
    not one time value (empty, several lines, ``INVALID``, garbage)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) != 1:
        raise ValueError(f"expected one line from squeue, got {len(lines)}")
    raw = lines[0]
    if raw.upper() in ("UNLIMITED", "INFINITE"):
        return TimeLeft(raw, None, unlimited=True)
    return TimeLeft(raw, parse_slurm_duration(raw))


def parse_srun_mpi_list(text: str) -> list[str]:
    """MPI plugin types from ``srun --mpi=list`` (22.05: ``srun: pmix`` lines; 23.02+:
    tab-indented names plus ``specific pmix plugin versions available: pmix_v4``)."""
    plugins: list[str] = []
    for raw in text.splitlines():
        line = re.sub(r"^srun:\s*", "", raw.strip())
        if not line:
            continue
        if "versions available" in line:  # "...versions available: pmix_v4" (no colon: none)
            names = [n.strip() for n in line.partition(":")[2].split(",")]
        elif "types are" in line.lower():
            continue
        else:
            names = [line]
        for name in names:
            if re.fullmatch(r"[a-z][a-z0-9_]*", name) and name not in plugins:
                plugins.append(name)
    return plugins


_NO_VALUE = ("", "N/A", "(NULL)", "NONE", "NOT_SET", "INVALID")


def parse_time_limit(text: str) -> int | None:
    """Seconds of a job's time limit as ``squeue -o %l`` or sacct's ``Timelimit`` print it;
    None for no limit (``UNLIMITED``, ``INFINITE``) or none known (``N/A``, ``NOT_SET``, empty).
    Raises ValueError on anything else."""
    raw = text.strip()
    if raw.upper() in _NO_VALUE or raw.upper() in ("UNLIMITED", "INFINITE", "PARTITION_LIMIT"):
        return None
    return parse_slurm_duration(raw)


def gpus_per_node(tres_per_node: str) -> int:
    """GPUs per node in ``squeue -o %b`` (the job's TRES per node: ``gres/gpu:2``,
    ``gres:gpu:a100:2``, ``gpu:1``, ``gres/gpu=2``, several comma-separated); 0 for none
    (``N/A``, empty, only other GRES). A ``gpu`` entry without a count is one GPU, as sbatch
    reads ``--gres=gpu``."""
    raw = tres_per_node.strip()
    if raw.upper() in _NO_VALUE:
        return 0
    total = 0
    for entry in raw.split(","):
        entry = entry.strip().replace("=", ":")
        for prefix in ("gres/", "gres:"):
            if entry.startswith(prefix):
                entry = entry[len(prefix):]
        spec = parse_gres_spec(entry)
        if spec is None:
            raise ValueError(f"not a TRES per node entry: {entry!r}")
        if spec.name == "gpu":
            total += spec.count if spec.count is not None else 1
    return total


def parse_count(text: str) -> int | None:
    """A count squeue prints (``%D`` nodes, ``%c`` CPUs per node); None when there is none."""
    raw = text.strip()
    if raw.upper() in _NO_VALUE:
        return None
    count = count_of(raw)
    if count is None:
        raise ValueError(f"not a count: {raw[:40]!r}")
    return count
