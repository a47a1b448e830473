"""Real SLURM error texts the doctor reads, as a table: how to provoke each on the test bed.

``capture_fixtures.py`` runs every case and stores sbatch/srun/sinfo's exact stderr in
tests/fixtures/slurm/<name>.txt plus manifest.json (argv, exit code, variant, version).
The integration tests run the same cases again and compare the live text with the stored
one after ``normalize`` (job ids and timestamps are the only parts that may change).
"""
from __future__ import annotations

import json
import re
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Mapping

FIXTURE_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "slurm"
MANIFEST = FIXTURE_DIR / "manifest.json"
COMMAND_TIMEOUT_S = 60.0

# The volatile parts of otherwise fixed messages.
_VOLATILE = (
    (re.compile(r"\bJob \d+\b"), "Job <id>"),
    (re.compile(r"\bbatch job \d+\b"), "batch job <id>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\b"), "<time>"),
)


def normalize(text: str) -> str:
    """The stable part of a message: job ids and timestamps replaced by placeholders."""
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


@dataclass(frozen=True)
class ErrorCase:
    name: str
    variant: str  # gres | nogres
    argv: tuple[str, ...]
    controller: str = "up"  # up | down (stopped) | hung (paused)
    why: str = ""

    @property
    def fixture(self) -> Path:
        return FIXTURE_DIR / f"{self.name}.txt"


CASES: tuple[ErrorCase, ...] = (
    ErrorCase("nogres_gres_request", "nogres", ("sbatch", "--gres=gpu:v100:1", "--wrap", "true"),
              why="GPU request on a cluster without GRES"),
    ErrorCase("nogres_gpus_request", "nogres", ("sbatch", "--gpus=1", "--wrap", "true"),
              why="--gpus on a cluster without GRES"),
    ErrorCase("gres_count_unavailable", "gres", ("sbatch", "--gres=gpu:v100:5", "--wrap", "true"),
              why="more GPUs per node than configured"),
    ErrorCase("gres_type_unavailable", "gres", ("sbatch", "--gres=gpu:a100:1", "--wrap", "true"),
              why="a GPU type the cluster does not have"),
    ErrorCase("gpus_per_task_without_ntasks", "gres", ("sbatch", "--gpus-per-task=1", "--wrap", "true"),
              why="--gpus-per-task without --gpus or -n/--ntasks"),
    ErrorCase("invalid_partition", "nogres", ("sbatch", "-p", "nope", "--wrap", "true"),
              why="partition that does not exist"),
    ErrorCase("node_count_invalid", "nogres", ("sbatch", "-N", "3", "--wrap", "true"),
              why="more nodes than the partition has (EnforcePartLimits=ALL)"),
    ErrorCase("srun_node_count_invalid", "nogres", ("srun", "-N", "3", "true"),
              why="srun's wording of the same"),
    ErrorCase("srun_more_processors", "nogres", ("srun", "-n", "9", "true"),
              why="more tasks than CPUs in the partition"),
    ErrorCase("time_limit_invalid", "nogres", ("sbatch", "-p", "small", "-t", "120", "--wrap", "true"),
              why="time limit over the partition's MaxTime"),
    ErrorCase("memory_unsatisfiable", "nogres", ("sbatch", "--mem=5000", "--wrap", "true"),
              why="more memory than a node has"),
    ErrorCase("test_only_accepted", "gres", ("sbatch", "--test-only", "-N", "2", "-n", "4", "--wrap", "true"),
              why="what an accepted --test-only prints (on stderr, exit 0)"),
    ErrorCase("controller_down_sbatch", "nogres", ("sbatch", "--wrap", "true"), controller="down",
              why="slurmctld not running"),
    ErrorCase("controller_down_sinfo", "nogres", ("sinfo",), controller="down"),
    ErrorCase("controller_down_squeue", "nogres", ("squeue",), controller="down"),
    ErrorCase("controller_down_srun", "nogres", ("srun", "hostname"), controller="down"),
    ErrorCase("controller_hung_sinfo", "nogres", ("sinfo",), controller="hung",
              why="slurmctld accepts connections but never answers"),
)


@dataclass(frozen=True)
class Outcome:
    name: str
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    elapsed_s: float


def run_case(case: ErrorCase, env: Mapping[str, str], cwd: str) -> Outcome:
    started = time.monotonic()
    proc = subprocess.run(list(case.argv), env=dict(env), cwd=cwd, capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT_S, stdin=subprocess.DEVNULL)
    return Outcome(case.name, list(case.argv), proc.returncode, proc.stdout, proc.stderr,
                   round(time.monotonic() - started, 2))


def run_cases(cases: Iterable[ErrorCase], env: Mapping[str, str]) -> dict[str, Outcome]:
    """Run cases concurrently (each controller outage costs ~10 s per command otherwise)."""
    cases = list(cases)
    with tempfile.TemporaryDirectory(prefix="ari-slurm-cases-") as cwd, \
            ThreadPoolExecutor(max_workers=max(1, len(cases))) as pool:
        outcomes = list(pool.map(lambda c: run_case(c, env, cwd), cases))
    return {o.name: o for o in outcomes}


def load_manifest() -> dict[str, dict]:
    return {entry["name"]: entry for entry in json.loads(MANIFEST.read_text())["cases"]}


def manifest_entry(case: ErrorCase, outcome: Outcome, slurm_version: str) -> dict:
    entry = asdict(case)
    entry.update(argv=list(case.argv), returncode=outcome.returncode, stdout=outcome.stdout,
                 file=case.fixture.name, slurm_version=slurm_version, elapsed_s=outcome.elapsed_s)
    return entry
