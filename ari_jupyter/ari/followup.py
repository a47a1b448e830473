"""Follow-up allocations: the rules of a run that continues after its allocation ends.

At Write the user may approve up to ``followups`` follow-up jobs with the same envelope as the
run (the wizard's partition, nodes and time limit). The hand-off, run inside an allocation,
submits ONE follow-up that starts once that allocation has ended (``afterany``); the follow-up
makes the cut run resumable (``ari-jupyter requeue``), submits the next one while the count
allows, and runs ``ari resume``. Pure: values in, values out (``runs/chain`` does the I/O).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from ..base.redact import is_secret_name
from ..slurm.parsers import parse_slurm_duration
from .choices import PARTITION_NAME, Choices

MAX_FOLLOWUPS = 10
"""The most follow-ups a user may approve for one run."""

FOLLOWUP_JOB_NAME = "ari-followup"
FOLLOWUP_SCRIPT = "followup.sh"
"""The follow-up job's script, a checkpoint file written at Write when follow-ups are approved."""
CHAIN_FILE = "followups.json"
"""The chain's record in the checkpoint: each follow-up submitted, in order (atomic writes)."""

_JOB_ID = re.compile(r"[0-9]{1,12}\Z")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

FOLLOWUP_ENV = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "TMPDIR",
    "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_NUMERIC", "LC_TIME",
    "LD_LIBRARY_PATH", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
    "MODULEPATH", "MODULESHOME", "BASH_ENV",
    "NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"})
"""What a follow-up job takes from the shell that submits it, by name: where programs and
modules are, the user's locale, and how the network is reached (ARI's LLM calls)."""
FOLLOWUP_ENV_PREFIXES = ("ARI_", "LITELLM_")
"""Settings of ARI (``ARI_ROOT``, ``ARI_MEMORY_BACKEND``, ...) and of its LLM library, each
taken only when its name is not a secret's (``base.redact.is_secret_name``)."""


class FollowupError(ValueError):
    """A value that cannot reach sbatch (named in the message)."""


@dataclass(frozen=True)
class Envelope:
    """What every follow-up job asks, nothing more: one partition, node count and time limit."""

    partition: str
    nodes: int
    time: str

    def to_json(self) -> dict[str, Any]:
        return {"partition": self.partition, "nodes": self.nodes, "time": self.time}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Envelope":
        return cls(str(data.get("partition", "")), data.get("nodes"), str(data.get("time", "")))


def envelope_of(choices: Choices) -> Envelope:
    """The run's envelope: the partition, nodes (0 or unset: one) and time limit chosen."""
    nodes = choices.nodes if isinstance(choices.nodes, int) and choices.nodes > 0 else 1
    return Envelope(choices.partition, nodes, choices.walltime)


def envelope_problem(envelope: Envelope) -> str:
    """Why ``envelope`` cannot go to sbatch, or "" when it can."""
    if not envelope.partition or not PARTITION_NAME.match(envelope.partition):
        return f"partition {envelope.partition!r} is not a partition name"
    if isinstance(envelope.nodes, bool) or not isinstance(envelope.nodes, int) or envelope.nodes < 1:
        return f"nodes {envelope.nodes!r} is not a positive count"
    try:
        if parse_slurm_duration(envelope.time) <= 0:
            return f"time {envelope.time!r} is not a positive time limit"
    except ValueError:
        return f"time {envelope.time!r} is not a SLURM time limit"
    return ""


def next_step(approved: int, used: int, finished: bool) -> str:
    """What a link of the chain does next: "finished" (the search is done: nothing more),
    "exhausted" (every approved follow-up was submitted) or "submit"."""
    if finished:
        return "finished"
    if used >= approved:
        return "exhausted"
    return "submit"


def followup_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``environ`` a follow-up job is given: those named in ``FOLLOWUP_ENV``
    and the ``FOLLOWUP_ENV_PREFIXES`` settings whose names are not a secret's; a proxy whose
    address carries a user or password is left out, as is anything that is not a plain name."""
    sent = {}
    for name, value in environ.items():
        if not _ENV_NAME.match(name):
            continue
        if name in FOLLOWUP_ENV:
            if name.lower().endswith("_proxy") and "@" in value:
                continue
        elif not (name.startswith(FOLLOWUP_ENV_PREFIXES) and not is_secret_name(name)):
            continue
        sent[name] = value
    return sent


def export_option(environ: Mapping[str, str]) -> str:
    """sbatch's ``--export`` for a follow-up: the names ``followup_environment`` keeps, each
    taking its value from the submitting shell (sbatch reads it; no value is on the command
    line), or ``NIL`` (only SLURM's own variables) when none is set."""
    names = sorted(followup_environment(environ))
    return f"--export={','.join(names) if names else 'NIL'}"


def sbatch_argv(envelope: Envelope, after: str, script: str, checkpoint: str, output: str,
                environ: Mapping[str, str]) -> list[str]:
    """The follow-up's ``sbatch``: after job ``after`` ends however it ends (``afterany``),
    killed rather than left pending when that job is unknown, inside ``envelope`` exactly,
    with only the non-secret variables of ``environ`` named (``export_option``).
    Raises ``FollowupError`` on a value that cannot be passed."""
    problem = envelope_problem(envelope)
    if problem:
        raise FollowupError(problem)
    if not _JOB_ID.match(after):
        raise FollowupError(f"job id {after!r} is not a job id")
    for value, what in ((script, "script"), (checkpoint, "checkpoint"), (output, "output")):
        if not value.startswith("/") or any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
            raise FollowupError(f"{what} {value!r} must be an absolute path without control characters")
    return ["sbatch", "--parsable", f"--dependency=afterany:{after}", "--kill-on-invalid-dep=yes",
            export_option(environ), f"--partition={envelope.partition}", f"--nodes={envelope.nodes}",
            f"--time={envelope.time}", f"--job-name={FOLLOWUP_JOB_NAME}", f"--chdir={checkpoint}",
            f"--output={output}", script]
