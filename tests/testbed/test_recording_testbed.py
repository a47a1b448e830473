"""A recording made inside a real allocation on the two-node test bed replays without SLURM:
``ari-jupyter probe --record-site`` under ``salloc -N2 -n4``, then ``--site FILE`` in an
environment with no SLURM at all gives the same allocation and the same probe results, to the
byte (evidence included), but one sentence: an ``ari`` missing from the recording is said to be
missing there (nothing to install for a lesson), with the same verdict. This is how a teacher
turns a real cluster into a demo site."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slurm


def _as_recorded(probes: list[dict]) -> list[dict]:
    """The replayed results with the one sentence a replay says differently put back: the ari
    probe's verdict, command and data stay; its words name the recording."""
    from ari_jupyter.base.verdict import ProbeResult

    out = []
    for probe in probes:
        if probe["id"] == "ari" and probe["message_id"] == "probe.ari.missing_demo":
            assert probe["status"] == "fail" and probe["params"]["site"] == "testbed", probe
            probe = {**ProbeResult.of("ari", "fail", "probe.ari.missing",
                                      fix_id="probe.ari.missing.fix").to_json(),
                     **{key: probe[key] for key in ("command", "data", "evidence")}}
        out.append(probe)
    return out


def test_recorded_allocation_replays_identically_without_slurm(testbed_gres, tmp_path):
    site_file, workspace = tmp_path / "testbed.json", tmp_path / "ws"
    probe = [sys.executable, "-m", "ari_jupyter", "probe", "--json", "--timeout", "20",
             "--checkpoint-dir", str(workspace)]
    live = testbed_gres.run(["salloc", "-N2", "-n4", "-t", "30", *probe, "--record-site", str(site_file)],
                            cwd=tmp_path, timeout=120)
    assert live.returncode in (0, 1) and "Granted job allocation" in live.stderr, live.stderr
    recorded = json.loads(live.stdout)
    assert recorded["allocation"]["num_nodes"] == 2 and recorded["allocation"]["ntasks"] == 4

    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
            "PYTHONPATH": os.pathsep.join(sys.path)}  # no SLURM_*, no SLURM_CONF, no Lmod
    with testbed_gres.controller_down():  # and no controller: nothing live could answer
        replay = subprocess.run([*probe, "--site", str(site_file)], env=bare, cwd=tmp_path,
                                capture_output=True, text=True, timeout=120)
    assert replay.returncode == live.returncode, replay.stderr
    replayed = json.loads(replay.stdout)
    assert replayed["allocation"] == recorded["allocation"]
    assert _as_recorded(replayed["probes"]) == recorded["probes"]
    statuses = {p["id"]: p["status"] for p in recorded["probes"]}
    assert statuses["sbatch"] == statuses["partitions"] == statuses["gres"] == "ok", statuses
    site = json.loads(site_file.read_text())
    assert {"sinfo", "sbatch", "squeue", "srun"} <= set(site["which"])
