"""The benchmarks still run (quick mode): every group produces its figures and the JSON.

No timing is asserted here; the figures themselves are in benchmarks/results/latest.json.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXPECTED_IDS = {"P1", "P1s", "P2", "P2m", "P3", "P3k", "P3r", "P4a", "P4b", "P4c", "P4d", "P4e", "P4f", "P5", "S1", "S2", "R1", "R1s", "R2"}


@pytest.mark.slow
def test_quick_mode_runs_every_benchmark(tmp_path):
    output = tmp_path / "quick.json"
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--output", str(output)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(output.read_text())
    assert report["quick"] is True
    figures = {f["id"]: f for f in report["figures"]}
    assert EXPECTED_IDS <= set(figures)
    for figure_id, figure in figures.items():
        if figure_id.startswith("P3") and figure["value"] is None:
            assert figure["note"].startswith("not measured: Wizard unavailable")
            continue
        assert figure["value"] is not None and figure["value"] > 0, (figure_id, figure["note"])
    # The table lists every figure.
    for figure_id in EXPECTED_IDS:
        assert f"| {figure_id} " in result.stdout
    # Behaviour (not speed) the benchmarks rely on: hung commands leave nothing behind,
    # the second modules probe is answered from the cache, the big sinfo is read whole.
    assert figures["P2"]["extra"]["processes_started"] >= 2  # the hung stand-ins did run
    assert figures["P2"]["extra"]["processes_left"] == 0
    assert figures["P5"]["note"] == "second answer marked cached: True"
    assert figures["S2"]["extra"]["partitions_seen"] == 200


def test_script_form_parses_its_options(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--only", "nope"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2 and "unknown group(s) nope" in result.stderr


def test_reference_parser_agrees_with_ours():
    sys.path.insert(0, str(ROOT))
    from benchmarks.hostlists import reference_compress, reference_expand
    from ari_jupyter.hostlist import compress, expand

    for hostlist in ("n[1-3,5]", "nid[000098-000102]", "login,n[08-10]", "a-[1-2]-ib"):
        names = list(expand(hostlist))
        assert reference_expand(hostlist) == names
        assert reference_compress(names) == compress(names)
