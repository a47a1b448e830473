"""ARI's own reproduce step on the test bed: ``run_reproduce(sandbox_kind="slurm")`` from
ari-skill-paper-re, fed the ors_run_reproduce inputs of the workflow.yaml we write and a
reproduce.sh that starts with our prelude, submits through the real slurmctld (``sbatch --wait``
for real). The job is accepted exactly where our validator found no error, the argv is the one
``ari-jupyter preview sbatch`` showed, and an accepted two-node job's reproduce.log shows ranks
on both nodes."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

from ari_jupyter.ari import render
from ari_jupyter.ari.prelude import render_prelude
from ari_jupyter.ari.profile import ExecutionProfile
from ari_jupyter.ari.sbatch import ReproduceArgs
from ari_jupyter.ari.validate import blocking, validate
from ari_jupyter.wizard.state import WizardState

from test_ari_real_sbatch import DRIVER, record_counts
from testbed.test_ari_sbatch_testbed import site_facts

pytestmark = [pytest.mark.ari, pytest.mark.slurm]

RANK_LINE = 'echo "rank ${SLURM_PROCID} of ${SLURM_NTASKS} on $(hostname)"'

# id, execution_profile, wizard choices (partition, Max CPUs, walltime, nodes), accepted?
SCENARIOS = [
    ("mpi-2x2", {"kind": "mpi", "requested_nodes": 2, "ntasks_per_node": 2, "min_ranks": 4,
                 "module_loads": ["openmpi/4.1"]}, dict(max_cpus=1, nodes=2), True),
    ("mpi-three-nodes", {"kind": "mpi", "requested_nodes": 3, "min_ranks": 3},
     dict(max_cpus=1, nodes=3), False),
    ("ranks-exceed-slots", {"kind": "mpi", "requested_nodes": 2, "ntasks_per_node": 4, "min_ranks": 8},
     dict(max_cpus=2, nodes=2), False),
]


def _state(profile: dict, choices: dict, workspace: Path) -> WizardState:
    return WizardState(title="Reproduce on the test bed", goal="Run the ranks.", metrics=["GFlops"],
                       partition="small", walltime="00:05:00", workspace=str(workspace),
                       profile=ExecutionProfile.from_json(profile), **choices)


def _stage_inputs(ari_env, state: WizardState, checkpoint: Path) -> dict:
    """The ors_run_reproduce inputs of the workflow.yaml we write, as ARI's pipeline fills them."""
    package = (ari_env.root / "ari-core" / "config" / "workflow.yaml").read_text()
    document = yaml.safe_load(render.render_workflow_yaml(package, state.choices()))
    stage = next(s for s in document["pipeline"] if s.get("stage") == render.REPRODUCE_STAGE)
    return {k: v.replace("{{checkpoint_dir}}", str(checkpoint)) if isinstance(v, str) else v
            for k, v in stage["inputs"].items()}


@pytest.fixture
def shared_base(shared_mount):
    """A fresh directory on the test bed's shared filesystem, removed afterwards."""
    base = shared_mount / f"ari-reproduce-{uuid.uuid4().hex[:8]}"
    yield base
    shutil.rmtree(base, ignore_errors=True)


def test_aris_run_reproduce_submits_where_the_validator_says(ari_env, testbed_nogres, shared_base,
                                                             tmp_path):
    bed, base = testbed_nogres, shared_base
    env = {**{k: v for k, v in bed.env.items() if not k.startswith(("ARI_SLURM_", "ARI_PHASE1_"))},
           **{k: v for k, v in ari_env.env.items() if k != "PATH"}, "HOME": str(tmp_path)}
    probes, bind_flags = site_facts(bed)
    cases, expected = [], {}
    for name, profile, choices, accepted in SCENARIOS:
        checkpoint = base / "checkpoints" / f"20261201100000_{name}"
        repo = checkpoint / "repro_sandbox"
        repo.mkdir(parents=True)
        state = _state(profile, choices, base)
        inputs = _stage_inputs(ari_env, state, checkpoint)
        assert inputs["sandbox_kind"] == "slurm"
        rubric = Path(inputs.pop("rubric_path"))
        rubric.write_text(json.dumps({"reproduce_contract": {"execution_profile": state.profile.to_json()}}))
        (repo / "reproduce.sh").write_text(
            render_prelude(state.profile, nodes=state.nodes, command=["sh", "-c", RANK_LINE]))
        args = {k: v for k, v in inputs.items() if k not in ("repo_dir", "sandbox_kind", "container_image")
                and v not in (0, "", None)}
        errors = blocking(validate(state.profile, ReproduceArgs(**args), probes=probes, env=env,
                                   partition=state.partition, bind_flags=bind_flags))
        assert (not errors) == accepted, f"{name}: the validator says {errors}"
        expected[name] = (accepted, errors)
        cases.append({"id": name, "repo_dir": inputs["repo_dir"], "rubric_path": str(rubric),
                      "args": args, "env": env})
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    proc = ari_env.run(DRIVER.read_text(), ari_env.root / "ari-skill-paper-re" / "src",
                       tmp_path / "cases.json", "--submit", cwd=tmp_path, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = {r["id"]: r for r in json.loads(proc.stdout.strip().splitlines()[-1])}

    for case in cases:
        name, ari = case["id"], results[case["id"]]
        accepted, errors = expected[name]
        assert "error" not in ari, f"{name}: ARI raised {ari.get('error')}"
        outcome = ari["result"]
        # the argv ARI submitted is the one the preview shows
        (tmp_path / f"{name}-args.json").write_text(json.dumps(case["args"]))
        preview = subprocess.run(
            [sys.executable, "-m", "ari_jupyter", "preview", "sbatch", "--json", "--repo-dir",
             case["repo_dir"], "--profile", case["rubric_path"], "--args", str(tmp_path / f"{name}-args.json")],
            capture_output=True, text=True, env=env, timeout=120)
        assert json.loads(preview.stdout)["argv"] == ari["argv"], name
        if accepted:
            assert outcome["executed"] and outcome["exit_code"] == 0, f"{name}: {outcome}"
            log = Path(outcome["log_path"]).read_text()
            ranks = sorted(line for line in log.splitlines() if line.startswith("rank "))
            assert [line.split()[1] for line in ranks] == ["0", "1", "2", "3"], log
            assert {line.rsplit(" ", 1)[1] for line in ranks} == {"n1", "n2"}, log
            report_dir = os.environ.get("ARI_TEST_REPORT_DIR")
            if report_dir:  # the evidence: ARI's own submission, ranks on both nodes
                Path(report_dir, f"ari-real-reproduce-{name}.log").write_text(
                    f"$ {shlex.join(ari['argv'])}\n{log}")
        else:
            assert not outcome["executed"] and outcome.get("error"), f"{name}: {outcome}"
    record_counts("run_reproduce on the SLURM test bed",
                  {"cases": len(cases), "accepted": sum(a for a, _ in expected.values()),
                   "refused": sum(not a for a, _ in expected.values()), "disagreements": 0})
