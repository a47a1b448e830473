"""Which kind of text the user handed the doctor: a run log, a reproduce.sh or an experiment.md."""
from __future__ import annotations

import re

KINDS = ("log", "reproduce", "experiment", "handoff")
"""handoff: a script that starts ARI itself (``ari run``/``resume``/``viz``), e.g. the wizard's
launch script - checked for what makes ARI ignore the checkpoint, not for compute-node rules."""

_SHEBANG = re.compile(r"^#!\s*\S*(?:/|env\s+)(?:ba|z|k|da)?sh\b")
_MD_HEADING = re.compile(r"^#{1,3} \S", re.MULTILINE)
_EXPERIMENT_LINE = re.compile(r"^(?:Partition:|Metrics?\s*:|## (?:Research Goal|Provided Files|Hardware Limits|"
                              r"Evaluation Metric))", re.MULTILINE | re.IGNORECASE)
_SHELL_LINE = re.compile(r"^\s*(?:set -[euxo]|module load|srun |mpirun |export [A-Z_]+=|cd |python3? )",
                         re.MULTILINE)
_STARTS_ARI = re.compile(r"^\s*(?:[A-Za-z_]\w*=\S*\s+)*(?:exec\s+|nohup\s+)?(?:ari\s+(?:run|resume|paper|viz)\b|"
                         r"python3?\s+-m\s+ari\.)", re.MULTILINE)
_LOG_MARK = re.compile(r"(?:error|warning|traceback|submitted batch job|\[exit \d+\]|^\$ )",
                       re.IGNORECASE | re.MULTILINE)

RANK_ON_HOST = re.compile(r"^(?>.*?\brank\s*[=:#]?\s*(?P<rank>\d+)\b).*?\b(?:on|host(?:name)?\s*[=:])\s*"
                          r"(?P<host>[A-Za-z][\w.-]*)", re.IGNORECASE)
"""A task saying where it ran: ``srun rank 2 of 4 on n2``, ``rank=0 host=n1``. The first
"rank N" of the line only (an atomic group): when no host follows it, none follows a later one
either, and retrying each "rank N" rescanned the line (quadratic on a long line)."""
METRIC_LINE = re.compile(r"^\s*(?P<name>[A-Za-z_][\w.-]{0,63})\s*[:=]\s*[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\s*$")
"""A job printing a measured value: ``triad_mbps: 197.694`` (what ARI's evaluator parses)."""
STEP_LINE = re.compile(r"^\s*(?:srun|salloc|sbatch|slurmstepd(?:-[\w.-]+)?)\s*:\s|\*\*\* (?:JOB|STEP) \d")
"""SLURM's own lines in a job's output: ``srun: Warning: ...``, ``slurmstepd-n1: error: *** JOB 4 ...``."""


def job_output_lines(text: str) -> dict[str, list[tuple[int, str]]]:
    """A job's output read line by line: its rank lines, metric lines and SLURM step lines."""
    found: dict[str, list[tuple[int, str]]] = {"ranks": [], "metrics": [], "steps": []}
    for number, line in enumerate(text.splitlines(), start=1):
        if STEP_LINE.search(line):
            found["steps"].append((number, line))
        elif RANK_ON_HOST.search(line):
            found["ranks"].append((number, line))
        elif METRIC_LINE.match(line):
            found["metrics"].append((number, line))
    return found


def is_job_output(text: str) -> bool:
    """A SLURM job's output (a reproduce job's ``reproduce.log``, a BFTS job's ``slurm_job_N.out``):
    a rank or SLURM step line, or at least two metric lines."""
    found = job_output_lines(text)
    return bool(found["ranks"] or found["steps"] or len(found["metrics"]) >= 2)


def detect_kind(text: str, filename: str | None = None) -> str:
    """Decide from the file name first, then the content; "log" when nothing else fits."""
    name = (filename or "").lower()
    if name.endswith((".md", ".markdown")):
        return "experiment"
    if name.endswith((".sh", ".bash")):
        return "handoff" if _STARTS_ARI.search(text) else "reproduce"
    if name.endswith((".log", ".out", ".err")):
        return "log"
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    if _SHEBANG.match(first):
        return "handoff" if _STARTS_ARI.search(text) else "reproduce"
    if _EXPERIMENT_LINE.search(text) and _MD_HEADING.search(text):
        return "experiment"
    shell = len(_SHELL_LINE.findall(text))
    found = job_output_lines(text)
    if shell >= 2 and not _LOG_MARK.search(text) and not (found["ranks"] or found["steps"]):
        return "reproduce"
    return "log"


def unrecognized(text: str, given_kind: str | None, kind: str) -> bool:
    """Whether the doctor looked at nothing it knows: no kind was given, and the text it took
    for a log (``detect_kind``'s last resort) has nothing a run's output has (an error, a
    warning, a traceback, a submitted job, a command with its exit). Its "no problems" would
    then read as a clean log; the CLI and the wizard say so instead. A job's output (ranks,
    metric lines, SLURM's step lines) is a log the doctor reads."""
    return not given_kind and kind == "log" and not _LOG_MARK.search(text) and not is_job_output(text)
