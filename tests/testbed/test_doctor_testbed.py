"""The doctor against the real two-node SLURM test bed.

- Captured transcripts (tests/fixtures/doctor/testbed_capture_*.txt, written by
  tests/fixtures/doctor/testbed_cases.py on the test bed) give each rule its real text; these
  checks run everywhere.
- Marker ``slurm``: the same failures provoked live must still be diagnosed, and the
  reproduce.sh the doctor fixes (L6) really fans out over n1 and n2 under ``sbatch -N2 -n4``.
"""
from __future__ import annotations
from repo_paths import TESTS

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

from ari_jupyter.doctor import diagnose_text

FIXTURES = TESTS / "fixtures" / "doctor"
_spec = importlib.util.spec_from_file_location("doctor_testbed_cases", FIXTURES / "testbed_cases.py")
testbed_cases = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = testbed_cases  # dataclasses look their module up while the file executes
_spec.loader.exec_module(testbed_cases)
CASES = [c for c in testbed_cases.CASES if c.rule]


def captured_sections(variant: str) -> dict[str, str]:
    """command -> its captured output (the transcript format of the test-bed samples)."""
    path = FIXTURES / f"testbed_capture_{variant}.txt"
    sections: dict[str, str] = {}
    current = None
    for line in path.read_text().splitlines(keepends=True):
        if line.startswith("$ "):
            current = line[2:].rstrip("\n")
            sections[current] = ""
        elif current is not None:
            sections[current] += line
    return sections


def _rules(text: str, **kwargs) -> set[str]:
    return {f.rule for f in diagnose_text(text, kind="log", **kwargs)}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_captured_testbed_text_is_diagnosed(case):
    output = captured_sections(case.variant)[case.command]
    rules = _rules(output)
    assert case.rule in rules, f"{case.name}: {rules} in\n{output}"
    assert not rules & set(case.absent), f"{case.name}: also found {rules & set(case.absent)}"


def test_permission_denied_comes_from_rank_1_on_n2():
    output = captured_sections("nogres")[next(c.command for c in CASES if c.name == "permission_denied_rank1")]
    assert "Permission denied" in output
    assert re.search(r"n2: task 1: Exited with exit code 1", output)


# -- live ---------------------------------------------------------------------------------------
@pytest.mark.slurm
@pytest.mark.parametrize("variant,case", [(c.variant, c) for c in CASES], ids=[c.name for c in CASES])
def test_live_failure_is_diagnosed(request, variant, case):
    bed = request.getfixturevalue(f"testbed_{variant}")
    if case.controller == "down":
        with bed.controller_down():
            output, _code = testbed_cases.run_case(case, bed.env)
    else:
        output, _code = testbed_cases.run_case(case, bed.env)
    rules = _rules(output)
    assert case.rule in rules, f"{case.name}: {rules} in\n{output}"
    assert not rules & set(case.absent)


APP = """#!/bin/sh
echo "task ${SLURM_PROCID:-?} of ${SLURM_NTASKS:-?} on $(hostname)"
"""


def _submit(bed, repo: Path, script_text: str, job_fails: bool = False) -> str:
    """Submit reproduce.sh the way ARI does: a wrapper that execs bash on the absolute path,
    --chdir and --output in the repo dir, --export ALL; wait; return reproduce.log.
    ``sbatch --wait`` exits with the job's status: 0, or non-zero when ``job_fails``."""
    (repo / "reproduce.sh").write_text(script_text)
    wrapper = repo / ".slurm_wrap.sh"
    wrapper.write_text(f"#!/bin/bash\nexec bash {repo / 'reproduce.sh'}\n")
    log = repo / "reproduce.log"
    if log.exists():
        log.unlink()
    proc = bed.run(["sbatch", "--wait", "-N2", "-n4", "--job-name", "ari-ors", "--chdir", str(repo),
                    "--output", str(log), "--export", "ALL", str(wrapper)], timeout=120)
    assert (proc.returncode != 0) == job_fails, (proc.returncode, proc.stderr)
    return log.read_text()


@pytest.mark.slurm
def test_fixed_reproduce_sh_runs_on_both_nodes(testbed_nogres, tmp_path):
    repo = tmp_path / "repro_sandbox"
    repo.mkdir()
    os.chmod(tmp_path, 0o755)
    app = repo / "app"
    app.write_text(APP)
    app.chmod(0o755)
    original = (FIXTURES / "reproduce" / "app_no_srun.sh").read_text()

    # Before: the doctor flags ./app (L6) and the job indeed runs on the first node only.
    findings = diagnose_text(original, kind="reproduce", profile={"kind": "cpu_single", "requested_nodes": 2})
    (l6,) = [f for f in findings if f.rule == "L6"]
    assert l6.severity == "error" and l6.line == 5
    before = _submit(testbed_nogres, repo, original)
    assert re.findall(r"^task \S+ of \S+ on (\S+)$", before, re.MULTILINE) == ["n1"]

    # After: apply exactly the proposed line; the doctor is satisfied and the tasks span n1 and n2.
    lines = original.splitlines()
    lines[l6.line - 1] = l6.suggestion
    fixed = "\n".join(lines) + "\n"
    assert not [f for f in diagnose_text(fixed, kind="reproduce", nodes=2) if f.rule == "L6"]
    after = _submit(testbed_nogres, repo, fixed)
    report_dir = os.environ.get("ARI_TEST_REPORT_DIR")
    if report_dir:  # evidence for the reader of the test report
        out = Path(report_dir) / "doctor-fanout"
        out.mkdir(parents=True, exist_ok=True)
        (out / "reproduce.before.sh").write_text(original)
        (out / "reproduce.before.log").write_text(before)
        (out / "reproduce.fixed.sh").write_text(fixed)
        (out / "reproduce.fixed.log").write_text(after)
    hosts = re.findall(r"^task (\d+) of 4 on (\S+)$", after, re.MULTILINE)
    assert sorted(int(rank) for rank, _ in hosts) == [0, 1, 2, 3], after
    assert {host for _, host in hosts} == {"n1", "n2"}, after


@pytest.mark.slurm
def test_unknown_module_in_a_batch_job_stops_it_and_is_diagnosed(testbed_nogres, tmp_path):
    """The wizard's prelude with a module Lmod does not have, run by a real batch job: the job
    stops before the work, and the doctor reads Lmod's error in reproduce.log - the same lines
    tests/fixtures/doctor/module_unknown.txt holds."""
    from ari_jupyter.ari.prelude import render_prelude
    from ari_jupyter.ari.profile import ExecutionProfile

    repo = tmp_path / "repro_sandbox"
    repo.mkdir()
    os.chmod(tmp_path, 0o755)
    script = render_prelude(ExecutionProfile(module_loads=["openmpi/4.1", "nosuch/1.0"])) + "echo started\n"
    log = _submit(testbed_nogres, repo, script, job_fails=True)
    assert "started" not in log, log
    # Lmod wraps this line to the width it finds (COLUMNS may reach the job through --export):
    # compare with runs of whitespace folded
    lmod = 'Lmod has detected the following error: The following module(s) are unknown: "nosuch/1.0"'
    assert lmod in " ".join(log.split()), log
    captured = (FIXTURES / "module_unknown.txt").read_text()
    assert lmod in " ".join(captured.split())
    assert "module-unknown" in _rules(log)
