"""Each probe asks the controller everything it can at once: no probe waits for one answer
before asking the next question (a loaded slurmctld would be paid twice)."""
from __future__ import annotations

import time

import pytest

from ari_jupyter.slurm.parsers import SINFO_FORMAT
from probe_support import cmd, output, probe, site

DELAY = 0.4
ONE_DEEP = 0.75  # one command's delay and slack; two in a row take 0.8 s or more


def _slow(*commands):
    return [cmd(argv, stdout, delay=DELAY) for argv, stdout in commands]


CASES = {
    "sbatch with a partition": ("sbatch", {"partition": "small"}, ["sbatch"], _slow(
        (["sbatch", "--version"], output("sbatch/version_debian.txt")),
        (["sbatch", "--help"], "      --cpu-bind=...\n      --mem-bind=...\n"),
        (["sbatch", "--test-only", "-p", "small", "--wrap", "true"],
         "sbatch: Job 3 to start at 2026-01-01T00:00:00 using 4 processors on nodes n1 in partition small\n"),
    )),
    "sbatch without a partition": ("sbatch", {}, ["sbatch"], _slow(
        (["sbatch", "--version"], output("sbatch/version_debian.txt")),
        (["sbatch", "--help"], "      --cpu-bind=...\n"),
    )),
    "srun and its MPI plugins": ("mpi", {}, ["srun"], _slow(
        (["srun", "--version"], "slurm 22.05.8\n"),
        (["srun", "--mpi=list"], output("srun/mpi_list_22.05.txt")),
    )),
    "gpus and ARI's GRES check": ("gpus", {}, ["nvidia-smi", "sinfo"], _slow(
        (["nvidia-smi", "-L"], output("nvidia-smi/v100x4.txt")),
        (["sinfo", "-h", "-o", "%G"], "gpu:v100:4\n"),
    )),
    "gres with the sinfo default partition": ("gres", {}, ["sinfo"], _slow(
        (["sinfo", "-h", "-o", "%G"], "gpu:v100:4\n(null)\n"),
        (["sinfo", "--noheader", "-o", SINFO_FORMAT],
         "small*|up|1:00:00|2|4|4000|gpu:v100:4\nlarge|up|infinite|2|4|4000|(null)\n"),
    )),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_probe_is_one_round_trip_deep(case):
    probe_id, context, programs, commands = CASES[case]
    host = site(programs=programs, commands=commands)
    started = time.monotonic()
    result = probe(host, probe_id, timeout=5, **context)
    elapsed = time.monotonic() - started
    assert result.status in ("ok", "warn"), result
    assert elapsed < ONE_DEEP, f"{probe_id} took {elapsed:.2f}s: commands ran one after another"


def test_gres_reads_the_partitions_gres_from_the_listing():
    host = site(programs=["sinfo"], commands=_slow(
        (["sinfo", "-h", "-o", "%G"], "gpu:v100:4\n(null)\n"),
        (["sinfo", "--noheader", "-o", SINFO_FORMAT],
         "small*|up|1:00:00|2|4|4000|gpu:v100:4\nlarge|up|infinite|1|4|4000|(null)\n"
         "large|up|infinite|1|4|4000|mps:400\n"),
    ))
    small = probe(host, "gres")
    assert (small.data["partition"], small.data["partition_gres"]) == ("small", ["gpu:v100:4"])
    large = probe(host, "gres", partition="large")
    assert large.data["partition_gres"] == ["mps:400"] and large.data["partition_has_gres"] is True
