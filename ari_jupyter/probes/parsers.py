"""Pure parsers for the raw output of the site's tools: modules, nvidia-smi, MPI versions.

SLURM's own outputs (sinfo, GRES, durations, squeue) are parsed in ``slurm/parsers``.

Each takes the text a command printed and returns plain data; what the data means for a run
is decided by the probes.
"""
from __future__ import annotations

import re

__all__ = ["mpi_flavour", "mpi_modules", "openmpi_modules", "parse_module_avail", "parse_nvidia_smi",
           "parse_version"]


# ---------------------------------------------------------------------------------------------
# modules


_MODULE_NAME = re.compile(r"^[A-Za-z0-9_.+\-]+(?:/[A-Za-z0-9_.+\-]+)*$")
_MODULE_MARKS = re.compile(r"\s*(\([^)]*\)|<[^>]*>)\s*$")


def parse_module_avail(text: str) -> list[str]:
    """Module names from terse ``module -t avail`` output (Lmod or Environment Modules).

    Directory headers (``/path/modulefiles:``), blank lines, Lmod's hints and notes, and bare
    directory entries (``cuda/``) are skipped; markers like ``(default)``, ``(D)``, ``<L>`` are
    stripped. Order is kept, duplicates (same module in two trees) dropped.
    """
    modules: dict[str, None] = {}  # insertion-ordered set: linear in the listing's length
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.endswith(":") or line.endswith("/"):
            continue
        if line.endswith((")", ">")):
            previous = None
            while previous != line:
                previous, line = line, _MODULE_MARKS.sub("", line)
        if line not in modules and _MODULE_NAME.match(line):
            modules[line] = None
    return list(modules)


_MPI_MODULE = re.compile(
    r"^(openmpi|ompi|mpich|mvapich2?|intel-?mpi|impi|hpcx(-mpi)?|cray-mpich)(/|$)", re.I
)


def mpi_modules(modules: list[str]) -> list[str]:
    return [m for m in modules if _MPI_MODULE.match(m)]


def openmpi_modules(modules: list[str]) -> list[str]:
    return [m for m in modules if re.match(r"^(openmpi|ompi)(/|$)", m, re.I)]


# ---------------------------------------------------------------------------------------------
# nvidia-smi


_GPU_LINE = re.compile(r"^GPU\s+(?P<index>\d+):\s*(?P<model>.*?)\s*(?:\(UUID:\s*(?P<uuid>[^)]*)\))?\s*$")


def parse_nvidia_smi(text: str) -> list[dict]:
    """GPUs from ``nvidia-smi -L``: ``[{index, model, uuid}]``. MIG instances (indented
    ``MIG ...`` lines) belong to their GPU and are not counted as GPUs."""
    gpus = []
    for raw in text.splitlines():
        match = _GPU_LINE.match(raw.strip())
        if match and not raw.startswith((" ", "\t")):
            gpus.append(
                {"index": int(match.group("index")), "model": match.group("model"),
                 "uuid": match.group("uuid") or ""}
            )
    return gpus


# ---------------------------------------------------------------------------------------------
# versions and srun


_VERSION = re.compile(r"\b(\d+(?:\.\d+)+(?:[\w.\-+]*)?)")


def parse_version(text: str) -> str | None:
    """The first dotted version number in ``--version`` output (``slurm-wlm 22.05.8`` ->
    ``22.05.8``, ``mpirun (Open MPI) 4.1.4`` -> ``4.1.4``)."""
    for line in text.splitlines():
        match = _VERSION.search(line)
        if match:
            return match.group(1)
    return None


def mpi_flavour(text: str) -> str | None:
    """Which MPI a ``mpirun --version`` banner belongs to."""
    lowered = text.lower()
    for needle, name in (("open mpi", "Open MPI"), ("openrte", "Open MPI"), ("intel(r) mpi", "Intel MPI"),
                         ("hydra", "MPICH"), ("mpich", "MPICH"), ("mvapich", "MVAPICH")):
        if needle in lowered:
            return name
    return None


