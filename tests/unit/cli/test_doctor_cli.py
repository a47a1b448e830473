"""``ari-jupyter doctor``: kinds detected, JSON contract, exit codes, profile files."""
from __future__ import annotations
from repo_paths import TESTS

import json
import subprocess
import sys

import pytest

from ari_jupyter.cli import main

FIXTURES = TESTS / "fixtures" / "doctor"
APP_NO_SRUN = FIXTURES / "reproduce" / "app_no_srun.sh"


def _json(capsys, argv):
    code = main(["doctor", "--json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_reproduce_under_two_nodes_exit_1_with_L6(capsys, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_NUM_NODES", raising=False)
    code, findings = _json(capsys, ["--nodes", "2", str(APP_NO_SRUN)])
    assert code == 1
    l6 = next(f for f in findings if f["rule"] == "L6")
    assert set(l6) == {"rule", "field", "severity", "line", "message", "fix",
                                           "message_id", "fix_id", "params"}
    assert l6["severity"] == "error" and l6["line"] == 5
    assert "srun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS ./app" in l6["fix"]


def test_single_node_script_exits_0(capsys, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_NUM_NODES", raising=False)
    code, findings = _json(capsys, ["--nodes", "1", str(APP_NO_SRUN)])
    assert code == 0
    assert {f["severity"] for f in findings} <= {"info", "warning"}


def test_nodes_default_from_the_allocation(capsys, monkeypatch):
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "2")
    code, findings = _json(capsys, [str(APP_NO_SRUN)])
    assert code == 1 and any(f["rule"] == "L6" for f in findings)


@pytest.mark.parametrize("wrap", ["bare", "rubric", "launch_config"])
def test_profile_file_forms(tmp_path, capsys, monkeypatch, wrap):
    monkeypatch.delenv("SLURM_JOB_NUM_NODES", raising=False)
    profile = {"kind": "mpi", "requested_nodes": 2, "module_loads": ["openmpi/4.1"]}
    data = {"bare": profile,
            "rubric": {"reproduce_contract": {"execution_profile": profile, "script_path": "reproduce.sh"}},
            "launch_config": {"partition": "small", "execution_profile": profile}}[wrap]
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(data))
    code, findings = _json(capsys, ["--profile", str(path), str(APP_NO_SRUN)])
    rules = {f["rule"] for f in findings}
    assert code == 1 and {"L2", "L5", "L6"} <= rules


def test_invalid_profile_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "profile.json"
    path.write_text(json.dumps({"kind": "quantum"}))
    assert main(["doctor", "--profile", str(path), str(APP_NO_SRUN)]) == 2
    assert "kind" in capsys.readouterr().err


def test_log_file_and_several_files(tmp_path, capsys):
    log = tmp_path / "run.log"
    log.write_text("sbatch: error: Invalid generic resource (gres) specification\n")
    clean = tmp_path / "ok.log"
    clean.write_text("Submitted batch job 3\n")
    code, findings = _json(capsys, [str(clean), str(log)])
    assert code == 1
    assert [(f["rule"], f["file"]) for f in findings] == [("gres-invalid", str(log))]
    assert main(["doctor", str(clean)]) == 0
    assert "no problems found" in capsys.readouterr().out


def test_human_output_names_rule_line_and_fix(capsys):
    assert main(["doctor", "--nodes", "2", str(APP_NO_SRUN)]) == 1
    out = capsys.readouterr().out
    assert "L6" in out and "line 5" in out and "fix: replace line 5 with:" in out


def test_missing_file_is_a_usage_error(tmp_path, capsys):
    assert main(["doctor", str(tmp_path / "nope.log")]) == 2
    assert "nope.log" in capsys.readouterr().err


def test_stdin_and_console_script(tmp_path):
    """End to end through a subprocess: '-' reads stdin; the module entry point works."""
    text = (FIXTURES / "samples_nogres.txt").read_text()
    proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "doctor", "--json", "--kind", "log", "-"],
                          input=text, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    rules = {f["rule"] for f in json.loads(proc.stdout)}
    assert {"gres-invalid", "invalid-partition", "time-limit-invalid"} <= rules


def test_experiment_file_is_delegated_to_the_experiment_lints(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ARI_SLURM_PARTITION", raising=False)
    path = tmp_path / "experiment.md"
    path.write_text("# Sparse matmul\n\nWe partition the matrix by rows.\n\n## Research Goal\nx\n\nMetrics: gflops\n")
    code, findings = _json(capsys, [str(path)])
    assert code == 1
    assert ("E1", 3) in {(f["rule"], f["line"]) for f in findings}


def test_experiment_file_reads_its_checkpoint_env_as_lint_does(tmp_path, capsys, monkeypatch):
    """A checkpoint's experiment.md names a partition its own .env exports: no E8, as lint says."""
    monkeypatch.delenv("ARI_SLURM_PARTITION", raising=False)
    path = tmp_path / "experiment.md"
    path.write_text("# Stencil\n\n## Research Goal\nx\n\n## Evaluation Metric\nMetrics: GFlops\n\n"
                    "## Hardware Limits\nPartition: small, Max CPUs: 1\n")
    _code, findings = _json(capsys, [str(path)])
    assert "E8" in {f["rule"] for f in findings}
    (tmp_path / ".env").write_text("ARI_SLURM_PARTITION=small\nARI_SLURM_CPUS=1\n")
    _code, findings = _json(capsys, [str(path)])
    assert "E8" not in {f["rule"] for f in findings}


@pytest.mark.parametrize("lang, said", [
    ("en", "nothing here reads as an ARI or SLURM log"),
    ("zh", "这里的内容不像 ARI 或 SLURM 的日志"),
])
def test_a_file_the_doctor_does_not_know_is_not_called_clean(tmp_path, capsys, lang, said):
    unknown = tmp_path / "hostname"
    unknown.write_text("my-hostname\n")
    assert main(["doctor", "--lang", lang, str(unknown)]) == 0
    out = capsys.readouterr().out
    assert said in out and "no problems found" not in out and "没有发现问题" not in out
    assert main(["doctor", "--lang", lang, "--kind", "log", str(unknown)]) == 0  # said: looked at
    assert said not in capsys.readouterr().out
