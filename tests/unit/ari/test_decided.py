"""What was decided at Write (``ari.decided``): per job kind, from ARI's own merge and env rules;
the same numbers as the sbatch line ARI builds and as the derivation the Runs view used before
the record; its JSON read back, and anything else refused (table-driven)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from ari_jupyter.ari import render
from ari_jupyter.ari.choices import Choices
from ari_jupyter.ari.decided import (READS, SCHEMA, Decided, DecidedError, JobDecision, decide)
from ari_jupyter.ari.profile import PRESETS, ExecutionProfile
from ari_jupyter.ari.run_settings import RunSettings
from ari_jupyter.ari.sbatch import ReproduceArgs, plan_slurm_dispatch
from ari_jupyter.runs.envelope import envelope_of

from unit.ari.test_render import golden_state

REPO = "/work/alice/ari/checkpoints/20260706120000_x/repro_sandbox"

# name, changes to the golden state (mpi preset: 2 nodes x 4 ranks; Max CPUs 4, Nodes 2, 01:00:00),
# then (partition, nodes, CPUs per node, GPUs per node, time limit) of the BFTS and the reproduce job
CASES = [
    ("golden", {}, ("small", 2, 4, 0, "01:00:00"), ("small", 2, 16, 0, "01:00:00")),
    ("nodes-left-to-the-profile", {"nodes": 0},
     ("small", 2, 4, 0, "01:00:00"), ("small", 2, 16, 0, "01:00:00")),
    ("nodes-not-set-no-profile", {"nodes": None, "profile": ExecutionProfile()},
     ("small", 1, 4, 0, "01:00:00"), ("small", None, 4, 0, "01:00:00")),
    ("no-walltime", {"walltime": ""}, ("small", 2, 4, 0, ""), ("small", 2, 16, 0, "")),
    ("gpus-per-bfts-job", {"run_settings": RunSettings(gpus_per_job=2), "profile": PRESETS["cpu_single"]()},
     ("small", 2, 4, 2, "01:00:00"), ("small", 2, 4, 0, "01:00:00")),
    ("typed-gpus-per-task", {"profile": PRESETS["mpi_gpu"](), "nodes": 4, "max_cpus": 2},
     ("small", 4, 2, 0, "01:00:00"), ("small", 4, 16, 1, "01:00:00")),
    ("gpus-per-node", {"profile": PRESETS["gpu_multi"](), "nodes": 0},
     ("small", 1, 4, 0, "01:00:00"), ("small", 1, 4, 4, "01:00:00")),
    # --gpus-per-task is not in squeue's TRES per node: nothing to compare it with
    ("untyped-gpus-per-task", {"profile": PRESETS["gpu_single"]()},
     ("small", 2, 4, 0, "01:00:00"), ("small", 2, 4, 0, "01:00:00")),
    ("no-gres-allowed", {"profile": PRESETS["gpu_multi"](), "allow_no_gres": True, "nodes": 1},
     ("small", 1, 4, 0, "01:00:00"), ("small", 1, 4, 0, "01:00:00")),
    ("another-partition-and-days", {"partition": "long", "walltime": "2-00:00:00", "max_cpus": 48},
     ("long", 2, 48, 0, "2-00:00:00"), ("long", 2, 192, 0, "2-00:00:00")),
]
IDS = [c[0] for c in CASES]


def _shape(job: JobDecision) -> tuple:
    return (job.partition, job.nodes, job.cpus_per_node, job.gpus_per_node, job.time_limit)


def _state(changes: dict[str, Any]):
    return golden_state(**changes).choices()


@pytest.mark.parametrize("name,changes,bfts,reproduce", CASES, ids=IDS)
def test_each_kind_as_decided(name, changes, bfts, reproduce):
    decided = decide(_state(changes))
    assert (_shape(decided.bfts), _shape(decided.reproduce)) == (bfts, reproduce)
    assert (decided.bfts.kind, decided.reproduce.kind, decided.schema) == ("bfts", "reproduce", SCHEMA)


@pytest.mark.parametrize("name,changes,bfts,reproduce", CASES, ids=IDS)
def test_the_values_ari_reads_are_the_checkpoints(name, changes, bfts, reproduce):
    """Each kind's environment is what .env carries, for the keys ARI reads for that kind; the
    reproduce job's arguments are the inputs workflow.yaml gives ``ors_run_reproduce``."""
    state = _state(changes)
    decided = decide(state)
    env = render.env_values(state).values
    for job in (decided.bfts, decided.reproduce):
        assert job.env_values() == {k: env[k] for k in READS[job.kind] if k in env}
    assert decided.reproduce.args_values() == render.reproduce_inputs(state)
    assert decided.bfts.args == ()


def _argv_value(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


@pytest.mark.parametrize("name,changes,bfts,reproduce", CASES, ids=IDS)
def test_the_reproduce_job_is_the_sbatch_line_ari_builds(name, changes, bfts, reproduce):
    """ARI's dispatch fed with what the record says it reads (its arguments, its environment,
    the rubric's profile) asks SLURM for exactly the recorded reproduce job."""
    state = _state(changes)
    job = decide(state).reproduce
    args = {k: v for k, v in job.args_values().items() if k != "sandbox_kind"}
    plan = plan_slurm_dispatch(ReproduceArgs.from_json(args), job.env_values(), REPO,
                               has_gres=not state.allow_no_gres, bind_flags=True,
                               profile=state.profile)
    argv = list(plan.argv)
    gres = next((a.rsplit(":", 1)[1] for a in argv if a.startswith("--gres=gpu:")), None)
    nodes = _argv_value(argv, "--nodes")
    per_node = int(_argv_value(argv, "--ntasks-per-node") or 1)
    assert _argv_value(argv, "--partition") == job.partition
    assert (int(nodes) if nodes else None) == job.nodes
    assert int(_argv_value(argv, "--cpus-per-task")) * per_node == job.cpus_per_node
    assert int(gres or _argv_value(argv, "--gpus-per-node") or 0) == job.gpus_per_node
    if job.time_limit:  # else ARI's own fallback from the rubric, unknown at Write
        assert _argv_value(argv, "--time") == job.time_limit


@pytest.mark.parametrize("name,changes,bfts,reproduce", CASES, ids=IDS)
def test_the_record_approves_what_the_old_derivation_did(name, changes, bfts, reproduce):
    """No behaviour change for the Runs view: a checkpoint with the record and one written
    before it (the saved state read again) give the same envelope."""
    state = _state(changes)
    before = envelope_of(render.launch_config(state))
    recorded = render.launch_config(state, decided=decide(state))
    assert "decided" in recorded["ari_jupyter"]
    assert envelope_of(recorded) == before


def test_choices_made_by_hand_are_decided_alike():
    state = golden_state(mem_gb=64, run_settings=RunSettings(gpus_per_job=1))
    plain = Choices.of(partition=state.partition, max_cpus=state.max_cpus, walltime=state.walltime,
                       nodes=state.nodes, mem_gb=state.mem_gb, allow_no_gres=state.allow_no_gres,
                       profile=state.profile, run_settings=state.run_settings)
    decided = decide(plain)
    assert decided == decide(state.choices())
    assert decided.bfts.env_values()["ARI_SLURM_MEM_GB"] == "64"
    assert not any(k in ("SLURM_LOG_DIR", "ARI_ENV_FILE") for job in (decided.bfts, decided.reproduce)
                   for k in job.env_values())  # where the run is written is no decision about a job


def test_frozen_and_read_back():
    decided = decide(golden_state(profile=PRESETS["mpi_gpu"]()).choices())
    assert Decided.from_json(decided.to_json()) == decided
    assert hash(decided) == hash(Decided.from_json(decided.to_json()))
    with pytest.raises(AttributeError):
        decided.bfts.nodes = 9  # type: ignore[misc]


GOOD = decide(golden_state().choices()).to_json()


def _with(path: str, value: Any) -> dict:
    """GOOD with one key (``kind.key``, or a top-level key) set to ``value`` (``...``: removed)."""
    data = {k: (dict(v) if isinstance(v, dict) else v) for k, v in GOOD.items()}
    *kind, key = path.split(".")
    target = data[kind[0]] if kind else data
    if value is ...:
        del target[key]
    else:
        target[key] = value
    return data


@pytest.mark.parametrize("data,said", [
    (None, "must be an object"),
    (_with("schema", 2), "schema 2"),
    (_with("schema", ...), "schema None"),
    (_with("schema", True), "schema True"),
    (_with("bfts", ...), "bfts: must be an object"),
    (_with("reproduce.nodes", True), "reproduce.nodes"),
    (_with("reproduce.nodes", -1), "reproduce.nodes"),
    (_with("bfts.cpus_per_node", "4"), "bfts.cpus_per_node"),
    (_with("bfts.gpus_per_node", None), "bfts.gpus_per_node"),
    (_with("bfts.partition", 3), "bfts.partition"),
    (_with("reproduce.time_limit", ...), "reproduce.time_limit"),
    (_with("bfts.env", {"ARI_SLURM_CPUS": 4}), "bfts.env"),
    (_with("reproduce.args", {"nodes": {"n": 2}}), "reproduce.args.nodes"),
    (_with("reproduce.args", ...), "reproduce.args"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_anything_else_is_refused(data, said):
    with pytest.raises(DecidedError, match=said.replace(".", r"\.")):
        Decided.from_json(data)


def test_optional_counts_read_back_as_not_set():
    data = _with("reproduce.nodes", None)
    assert Decided.from_json(data).reproduce == replace(Decided.from_json(GOOD).reproduce, nodes=None)
