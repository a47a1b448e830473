"""``ari-jupyter allocation [--json]`` as a real subprocess with controlled environments."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from probe_support import captured_env as captured


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {key: value for key, value in os.environ.items()
            if not key.startswith("SLURM_") and key != "CUDA_VISIBLE_DEVICES"}
    return subprocess.run(
        [sys.executable, "-m", "ari_jupyter", "allocation", *args],
        env={**base, **env}, capture_output=True, text=True, timeout=60,
    )


def test_json_is_the_allocation_to_json():
    from ari_jupyter.slurm.allocation import Allocation

    env = captured("batch_env.txt")
    result = run_cli("--json", env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data == Allocation.from_env(env).to_json()
    assert (data["job_id"], data["partition"], data["tasks_per_node"]) == ("3", "small", [3, 1])
    assert result.stderr == ""


def test_human_output_has_aligned_lines():
    result = run_cli(env=captured("alloc_env.txt"))
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines == [
        "job          1 (interactive) on cluster lab",
        "partition    small  account -  qos -",
        "nodes        2: n[1-2], first n1",
        "tasks        4, per node 3,1",
        "cpus         per node 3,1, on this node -, per task -",
        "gpus         on this node -, job GPUs -, per task -",
        "memory       -",
        "submit dir   /tmp/slurmlab/jobs",
    ]
    assert result.stderr == ""


def test_human_output_shows_gpus_and_repeats():
    result = run_cli(env=captured("step_env_rank3.txt"))
    assert "tasks        4, per node 2(x2)" in result.stdout
    assert "gpus         on this node 1, job GPUs -, per task -, CUDA_VISIBLE_DEVICES='0'" in result.stdout


def test_outside_an_allocation():
    result = run_cli(env={})
    assert result.returncode == 0
    assert result.stdout == "not inside a SLURM allocation (SLURM_JOB_ID is not set)\n"
    data = json.loads(run_cli("--json", env={}).stdout)
    assert data["inside_allocation"] is False and data["job_id"] is None


@pytest.mark.parametrize("json_flag", [False, True])
def test_problems_go_to_stderr_in_human_mode_and_exit_is_zero(json_flag):
    env = {"SLURM_JOB_ID": "7", "SLURM_TASKS_PER_NODE": "2(x", "SLURM_JOB_NODELIST": "cn[5-2]"}
    result = run_cli(*(["--json"] if json_flag else []), env=env)
    assert result.returncode == 0
    if json_flag:
        problems = json.loads(result.stdout)["problems"]
        assert [p.split("=")[0] for p in problems] == ["SLURM_JOB_NODELIST", "SLURM_TASKS_PER_NODE"]
        assert result.stderr == ""
    else:
        assert "problem: SLURM_TASKS_PER_NODE='2(x' is not per-node counts" in result.stderr
        assert "problem: SLURM_JOB_NODELIST='cn[5-2]'" in result.stderr
        assert "job          7" in result.stdout
        assert "problem" not in result.stdout


def test_registered_in_the_command_line():
    from ari_jupyter.cli import build_parser

    args = build_parser().parse_args(["allocation", "--json"])
    assert args.json is True and args.handler.__module__ == "ari_jupyter.cli.allocation"


@pytest.mark.parametrize("site", ["rccs-cloud", "sx40", "laptop"])
def test_a_demo_site_shows_the_allocation_the_wizard_shows_there(site):
    from ari_jupyter.widgets import Wizard

    # the shell's own job is not the demo's: --site replaces it
    result = run_cli("--json", "--site", site, env=captured("alloc_env.txt"))
    assert result.returncode == 0, result.stderr
    wizard = Wizard(site=site, run_probes=False)
    assert json.loads(result.stdout) == wizard.state.allocation.to_json()


def test_an_unknown_demo_site_is_a_usage_error():
    result = run_cli("--lang", "ja", "--site", "nope", env={})
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("ari-jupyter allocation: エラー: ")
    assert "rccs-cloud" in result.stderr  # the sites that exist
