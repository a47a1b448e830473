"""The probes against the real two-node SLURM test bed (sinfo, sbatch --test-only, srun, Lmod):
the same verdicts as the recorded tables, from live commands, including a controller that is
down or hung, and ``ari-jupyter probe`` run inside a real allocation."""
from __future__ import annotations

import json
import sys
import time

import pytest

from ari_jupyter.slurm.allocation import Allocation
from ari_jupyter.hosts.host import LocalHost
from ari_jupyter.probes import ProbeContext, run_probes_sync
from ari_jupyter.probes import modules as modules_probe

pytestmark = pytest.mark.slurm


def probe_all(bed, **context):
    modules_probe.clear_cache()
    host = LocalHost(env=bed.env)
    ctx = ProbeContext(allocation=Allocation.from_env(host.env), **context)
    return {r.id: r for r in run_probes_sync(host, ctx)}


def test_live_verdicts(testbed_any):
    results = probe_all(testbed_any, partition="small", timeout=30)
    status = {i: r.status for i, r in results.items()}

    assert status["sbatch"] == "ok", results["sbatch"]
    assert "to start at" in results["sbatch"].data["test_only"]["answer"]
    assert results["sbatch"].data["version"]
    # 22.05 with TaskPlugin=task/none: `sbatch --help` lists --gpu-bind only, so ARI would drop
    # a profile's cpu_bind and mem_bind (the recorded rccs-cloud site says the same).
    assert results["sbatch"].data["bind_flags"] == []

    assert status["partitions"] == "ok"
    assert results["partitions"].data["default"] == "small"
    assert [p["name"] for p in results["partitions"].data["partitions"]] == ["small", "large"]

    if testbed_any.has_gres:
        assert status["gres"] == "ok" and results["gres"].data["gpu_types"] == ["v100"]
    else:
        # fine for the CPU jobs asked so far; a GPU request gets the judge's verdict
        assert status["gres"] == "ok" and results["gres"].data["has_gres"] is False

    assert status["mpi"] == "ok" and results["mpi"].data["launcher"] == "srun"
    assert "none" in results["mpi"].data["srun"]["mpi_plugins"]
    assert status["modules"] == "ok", results["modules"]
    assert "openmpi/4.1" in results["modules"].data["modules"]
    assert results["modules"].data["has_openmpi"] is True
    assert status["gpus"] == "skip"
    assert status["time_left"] == "skip"  # the test process is not inside an allocation


def test_live_controller_down_and_hung_are_unknown(testbed_nogres):
    with testbed_nogres.controller_down():
        down = probe_all(testbed_nogres, timeout=15)
    assert down["partitions"].status == "unknown", down["partitions"]
    assert down["gres"].status == "unknown"
    with testbed_nogres.controller_hung():
        started = time.monotonic()
        hung = probe_all(testbed_nogres, timeout=2)
        elapsed = time.monotonic() - started
    assert hung["partitions"].status == "unknown"
    assert elapsed < 2 + 0.5 + 0.5  # probes run side by side, each within its own timeout


def test_cli_inside_a_real_allocation(testbed_gres):
    done = testbed_gres.run(
        ["salloc", "-N2", "-n4", "-t", "30", sys.executable, "-m", "ari_jupyter", "probe", "--json",
         "--only", "sbatch,time_left,partitions"],
        timeout=120,
    )
    payload = json.loads(done.stdout)
    assert payload["allocation"]["num_nodes"] == 2 and payload["allocation"]["ntasks"] == 4
    probes = {p["id"]: p for p in payload["probes"]}
    assert probes["sbatch"]["data"]["partition"] == "small"
    # a 30-minute allocation: under an hour left, which the probe warns about
    assert probes["time_left"]["status"] == "warn"
    assert 25 * 60 < probes["time_left"]["data"]["seconds"] <= 30 * 60
    assert probes["partitions"]["status"] == "ok"
