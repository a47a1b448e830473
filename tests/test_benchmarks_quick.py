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
HOSTLIST_CASES = ("small", "login", "multi", "fugaku", "fragmented")
EXPECTED_IDS = {"P1", "P1g", "P1a", "P2", "P2m", "P3", "P3k", "P3r", "P3j", "P4k-compact", "P5",
                "P3ja", "P6", "P6m", "P7", "S1", "S2", "R1", "R1s", "R2"} | {
    f"P4{op}-{case}" for op in "eck" for case in HOSTLIST_CASES}
NOT_MEASURED_OK = {"P3", "P3k", "P3r", "P3j", "P3ja", "P1a"}  # no ipywidgets / kernel / ARI snapshot


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
        if figure_id in NOT_MEASURED_OK and figure["value"] is None:
            assert figure["note"].startswith("not measured: "), figure
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
    assert figures["P6m"]["extra"]["modules_seen"] == 20_000
    assert "node-local message every time: True" in figures["P7"]["note"]
    assert figures["P4k-compact"]["extra"]["compressed"] == "r[1-40]n[001-128]"
    # Every hostlist row names each peer: a time, or why there is none.
    for op in "eck":
        for case in HOSTLIST_CASES:
            assert set(figures[f"P4{op}-{case}"]["extra"]["peers"]) == {
                "ClusterShell", "python-hostlist", "submitit"}
    assert "README.md" not in result.stderr  # --quick never rewrites the README


def test_script_form_parses_its_options(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--only", "nope"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2 and "unknown group(s) nope" in result.stderr


def test_readme_region_is_rewritten_between_its_markers(tmp_path):
    sys.path.insert(0, str(ROOT))
    from benchmarks.common import Figure
    from benchmarks.run import README_END, README_START, write_readme

    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\nbefore\n{README_START}\nold table\n{README_END}\nafter\n")
    report = {"started": "2026-12-01T10:00:00+0000", "seconds": 12.0,
              "settings": {"repeats": 5, "cold_repeats": 10},
              "machine": {"platform": "Linux-test", "cpus": 2, "python": "3.11.7", "ari_jupyter": "0.1"}}
    assert write_readme([Figure("P9", "a figure", 0.25, "s", 0.5, "half", "≤ 1.0×", True)], report, readme)
    text = readme.read_text()
    assert "old table" not in text and text.startswith("# x\n\nbefore\n") and text.endswith("after\n")
    assert "Measured 2026-12-01T10:00:00+0000 on Linux-test, 2 CPUs" in text
    assert "| P9 " in text and "0.50×" in text
    unmarked = tmp_path / "unmarked.md"
    unmarked.write_text("no markers\n")
    assert not write_readme([], report, unmarked) and unmarked.read_text() == "no markers\n"


def test_the_readme_has_the_generated_region():
    text = (ROOT / "README.md").read_text()
    from benchmarks.run import README_END, README_START

    assert text.count(README_START) == 1 and text.count(README_END) == 1


def test_the_controller_load_tab_polls_on_the_lab_extensions_own_schedule():
    """benchmarks/controller_load.py's tab reads its schedule from the lab extension (no copy):
    every constant it needs is found there, as the panel and the status bar use them."""
    from benchmarks.controller_load import LAB_SCHEMA, LAB_SRC, lab_schedule

    every = lab_schedule()
    source = LAB_SRC.read_text(encoding="utf-8")
    for name, key in (("WATCH_MS", "watch"), ("POLL_FIRST_MS", "run_first"), ("POLL_MAX_MS", "run_max")):
        assert f"export const {name} = {int(every[key] * 1000)};" in source
    schema = json.loads(LAB_SCHEMA.read_text(encoding="utf-8"))
    assert every["status"] == schema["properties"]["refreshInterval"]["default"]
    assert 0 < every["run_first"] < every["run_max"] and every["watch"] > 0
