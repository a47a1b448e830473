"""Allocation.from_env over environments captured inside a real 2-node SLURM allocation,
and over malformed values, which must never raise."""
from __future__ import annotations

import json

import pytest

from probe_support import captured_env as captured

from ari_jupyter.slurm.allocation import (
    Allocation,
    CountsError,
    MAX_NODES,
    format_counts,
    parse_counts,
)


CAPTURED = [
    # (fixture, expected fields)
    ("alloc_env.txt", dict(
        job_id="1", job_name="interactive", cluster="lab", partition="small", account=None,
        qos=None, nodelist="n[1-2]", num_nodes=2, ntasks=4, tasks_per_node=(3, 1),
        cpus_per_node=(3, 1), cpus_on_node=None, cpus_per_task=None, gpus_on_node=None,
        job_gpus=None, gpus_per_task=None, cuda_visible_devices=None, mem_per_node_mb=None,
        mem_per_cpu_mb=None, submit_dir="/tmp/slurmlab/jobs", inside_allocation=True,
        problems=())),
    ("alloc_env_gres.txt", dict(
        job_id="2", job_name="interactive", partition="small", nodelist="n[1-2]", num_nodes=2,
        ntasks=4, tasks_per_node=(2, 2), cpus_per_node=(2, 2), gpus_on_node=None,
        cuda_visible_devices=None, inside_allocation=True, problems=())),
    ("batch_env.txt", dict(
        job_id="3", job_name="wrap", partition="small", nodelist="n[1-2]", num_nodes=2,
        ntasks=4, tasks_per_node=(3, 1), cpus_per_node=(3, 1), cpus_on_node=3,
        gpus_on_node=1, job_gpus="0", cuda_visible_devices="0", inside_allocation=True,
        problems=())),
    ("step_env_rank3.txt", dict(
        job_id="4", job_name="bash", partition="small", nodelist="n[1-2]", num_nodes=2,
        ntasks=4, tasks_per_node=(2, 2), cpus_per_node=(2, 2), cpus_on_node=2,
        gpus_on_node=1, job_gpus=None, cuda_visible_devices="0", inside_allocation=True,
        problems=())),
]


@pytest.mark.parametrize("fixture, expected", CAPTURED, ids=[row[0] for row in CAPTURED])
def test_captured_environments(fixture, expected):
    allocation = Allocation.from_env(captured(fixture))
    for field, value in expected.items():
        assert getattr(allocation, field) == value, field
    assert list(allocation.nodes()) == ["n1", "n2"]
    assert allocation.first_node == "n1"


# A single-user server in a one-task job step of a 2-node job (batchspawner's
# ``req_srun = "srun --nodes=1 --ntasks=1"``): srun overwrote the step-level variables.
SERVER_STEP = {"SLURM_STEP_ID": "0", "SLURM_STEPID": "0", "SLURM_STEP_NUM_NODES": "1",
               "SLURM_STEP_NUM_TASKS": "1", "SLURM_STEP_NODELIST": "n1", "SLURM_NTASKS": "1",
               "SLURM_NPROCS": "1", "SLURM_NNODES": "1", "SLURM_NODELIST": "n1",
               "SLURM_TASKS_PER_NODE": "1", "SLURM_CPUS_ON_NODE": "1", "SLURMD_NODENAME": "n1"}


def test_a_narrow_step_shows_the_job_not_the_step():
    """The wizard's step 1 and the checkpoint's CPUs are the job's: its CPUs on this node (3 on
    n1), its 2 nodes; the job's tasks are in no variable of a step, so they are unknown (not 1)."""
    allocation = Allocation.from_env({**captured("batch_env.txt"), **SERVER_STEP})
    assert (allocation.step_id, allocation.num_nodes, allocation.nodelist) == ("0", 2, "n[1-2]")
    assert allocation.cpus_on_node == 3 and allocation.cpus_per_node == (3, 1)
    assert (allocation.ntasks, allocation.tasks_per_node) == (None, None)
    assert allocation.problems == ()  # no "1 count for 2 nodes" from the step's own list
    on_n2 = Allocation.from_env({**captured("batch_env.txt"), **SERVER_STEP, "SLURMD_NODENAME": "n2"})
    assert on_n2.cpus_on_node == 1


def test_a_step_holding_the_whole_job_keeps_its_tasks():
    """batchspawner's plain ``srun`` inherits the job's tasks: the step's are the job's."""
    allocation = Allocation.from_env(captured("step_env_rank3.txt"))
    assert (allocation.step_id, allocation.ntasks, allocation.tasks_per_node) == ("0", 4, (2, 2))
    batch = Allocation.from_env(captured("batch_env.txt"))
    assert batch.step_id is None and batch.ntasks == 4


def test_defaults_to_os_environ(monkeypatch):
    for key in list(__import__("os").environ):
        if key.startswith("SLURM_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("SLURM_JOB_ID", "77")
    monkeypatch.setenv("SLURM_JOB_PARTITION", "large")
    allocation = Allocation.from_env()
    assert (allocation.job_id, allocation.partition, allocation.inside_allocation) == ("77", "large", True)


def test_outside_an_allocation_everything_is_unknown():
    allocation = Allocation.from_env({"HOME": "/home/me", "PATH": "/usr/bin"})
    assert allocation == Allocation()
    assert allocation.inside_allocation is False
    assert allocation.problems == ()
    assert list(allocation.nodes()) == []
    assert allocation.first_node is None


def test_frozen():
    allocation = Allocation.from_env(captured("alloc_env.txt"))
    with pytest.raises(AttributeError):
        allocation.partition = "large"  # type: ignore[misc]


def test_json_round_trip():
    allocation = Allocation.from_env(captured("batch_env.txt"))
    data = json.loads(json.dumps(allocation.to_json()))
    assert data["tasks_per_node"] == [3, 1]
    assert data["job_id"] == "3"
    assert set(data) == set(Allocation._fields)
    assert Allocation.from_json(data) == allocation
    assert Allocation.from_json({**data, "unknown": 1}) == allocation


FALLBACKS = [
    # (env, field, expected): the older names serve when the SLURM_JOB_* ones are absent
    ({"SLURM_JOBID": "9"}, "job_id", "9"),
    ({"SLURM_JOB_ID": "8", "SLURM_JOBID": "9"}, "job_id", "8"),
    ({"SLURM_NODELIST": "c[1-4]"}, "nodelist", "c[1-4]"),
    ({"SLURM_JOB_NODELIST": "a1", "SLURM_NODELIST": "c[1-4]"}, "nodelist", "a1"),
    ({"SLURM_NNODES": "4"}, "num_nodes", 4),
    ({"SLURM_JOB_NUM_NODES": "2", "SLURM_NNODES": "1"}, "num_nodes", 2),  # step inside the job
    ({"SLURM_NPROCS": "6"}, "ntasks", 6),
    ({"SLURM_NTASKS": "5", "SLURM_NPROCS": "6"}, "ntasks", 5),
    ({"SLURM_JOB_NODELIST": "(null)", "SLURM_NODELIST": "c1"}, "nodelist", "c1"),
    ({"SLURM_JOB_ID": "", "SLURM_JOBID": "3"}, "job_id", "3"),
]


@pytest.mark.parametrize("env, field, expected", FALLBACKS)
def test_variable_fallbacks(env, field, expected):
    assert getattr(Allocation.from_env(env), field) == expected


VALUES = [
    # (variable, value, field, expected)
    ("SLURM_TASKS_PER_NODE", "3,1", "tasks_per_node", (3, 1)),
    ("SLURM_TASKS_PER_NODE", "2(x3),1", "tasks_per_node", (2, 2, 2, 1)),
    ("SLURM_TASKS_PER_NODE", "4(x2)", "tasks_per_node", (4, 4)),
    ("SLURM_TASKS_PER_NODE", "1", "tasks_per_node", (1,)),
    ("SLURM_JOB_CPUS_PER_NODE", "48(x3),24", "cpus_per_node", (48, 48, 48, 24)),
    ("SLURM_CPUS_ON_NODE", "3", "cpus_on_node", 3),
    ("SLURM_CPUS_PER_TASK", "8", "cpus_per_task", 8),
    ("SLURM_GPUS_ON_NODE", "0", "gpus_on_node", 0),
    ("SLURM_GPUS_ON_NODE", "4", "gpus_on_node", 4),
    ("SLURM_JOB_GPUS", "0,1,2,3", "job_gpus", "0,1,2,3"),
    ("SLURM_GPUS_PER_TASK", "1", "gpus_per_task", 1),
    ("SLURM_GPUS_PER_TASK", "a100:2", "gpus_per_task", 2),
    ("CUDA_VISIBLE_DEVICES", "0,1", "cuda_visible_devices", "0,1"),
    ("CUDA_VISIBLE_DEVICES", "GPU-8f6e1a2b-1c3d-4e5f-9a0b-112233445566", "cuda_visible_devices",
     "GPU-8f6e1a2b-1c3d-4e5f-9a0b-112233445566"),
    ("CUDA_VISIBLE_DEVICES", "", "cuda_visible_devices", ""),  # set but empty: no GPU visible
    ("CUDA_VISIBLE_DEVICES", "NoDevFiles", "cuda_visible_devices", "NoDevFiles"),
    ("SLURM_MEM_PER_NODE", "192000", "mem_per_node_mb", 192000),
    ("SLURM_MEM_PER_NODE", "64G", "mem_per_node_mb", 65536),
    ("SLURM_MEM_PER_CPU", "2048", "mem_per_cpu_mb", 2048),
    ("SLURM_JOB_ACCOUNT", "proj-01", "account", "proj-01"),
    ("SLURM_JOB_QOS", "normal", "qos", "normal"),
    ("SLURM_CLUSTER_NAME", "fugaku", "cluster", "fugaku"),
    ("SLURM_JOB_PARTITION", "gpu_a100.long", "partition", "gpu_a100.long"),
    ("SLURM_JOB_NAME", "my job; rm -rf /", "job_name", "my job; rm -rf /"),  # text, never a shell word
    ("SLURM_SUBMIT_DIR", "/home/u/ari run", "submit_dir", "/home/u/ari run"),
    ("SLURM_JOB_NODELIST", "nid[000001-158976]", "nodelist", "nid[000001-158976]"),
    ("SLURM_JOB_NODELIST", " n[1-2] ", "nodelist", "n[1-2]"),
    ("SLURM_JOB_NUM_NODES", " 2 ", "num_nodes", 2),
]


@pytest.mark.parametrize("variable, value, field, expected", VALUES,
                         ids=[f"{row[0]}={row[1]}" for row in VALUES])
def test_values(variable, value, field, expected):
    allocation = Allocation.from_env({"SLURM_JOB_ID": "1", variable: value})
    assert getattr(allocation, field) == expected
    assert allocation.problems == ()


MALFORMED = [
    # (variable, value, field, words the problem must contain besides variable and value)
    ("SLURM_JOB_ID", "12a", "job_id", "numeric job id"),
    ("SLURM_JOB_ID", "1;reboot", "job_id", "numeric job id"),
    ("SLURM_JOB_PARTITION", "small; rm -rf ~", "partition", "SLURM name"),
    ("SLURM_JOB_ACCOUNT", "a b", "account", "SLURM name"),
    ("SLURM_JOB_QOS", "$(id)", "qos", "SLURM name"),
    ("SLURM_CLUSTER_NAME", "lab`x`", "cluster", "SLURM name"),
    ("SLURM_JOB_NODELIST", "cn[01-", "nodelist", "never closed"),
    ("SLURM_JOB_NODELIST", "cn[5-2]", "nodelist", "backwards"),
    ("SLURM_JOB_NODELIST", "cn[a-b]", "nodelist", "not a number"),
    ("SLURM_JOB_NUM_NODES", "two", "num_nodes", "positive integer"),
    ("SLURM_JOB_NUM_NODES", "0", "num_nodes", "positive integer"),
    ("SLURM_JOB_NUM_NODES", "-1", "num_nodes", "positive integer"),
    ("SLURM_NTASKS", "4.0", "ntasks", "positive integer"),
    ("SLURM_NTASKS", "٤", "ntasks", "positive integer"),  # int() would accept it
    ("SLURM_TASKS_PER_NODE", "2(x", "tasks_per_node", "N or N(xM)"),
    ("SLURM_TASKS_PER_NODE", "2(x0)", "tasks_per_node", "zero times"),
    ("SLURM_TASKS_PER_NODE", "3,,1", "tasks_per_node", "N or N(xM)"),
    ("SLURM_TASKS_PER_NODE", "1(x99999999999)", "tasks_per_node", "more than"),
    ("SLURM_JOB_CPUS_PER_NODE", "3;1", "cpus_per_node", "per-node counts"),
    ("SLURM_CPUS_ON_NODE", "lots", "cpus_on_node", "positive integer"),
    ("SLURM_CPUS_PER_TASK", "0", "cpus_per_task", "positive integer"),
    ("SLURM_GPUS_ON_NODE", "-1", "gpus_on_node", "non-negative integer"),
    ("SLURM_JOB_GPUS", "0,,1", "job_gpus", "GPU indices"),
    ("SLURM_GPUS_PER_TASK", "a100:", "gpus_per_task", "TYPE:COUNT"),
    ("CUDA_VISIBLE_DEVICES", "0 1", "cuda_visible_devices", "device indices"),
    ("SLURM_MEM_PER_NODE", "lots", "mem_per_node_mb", "megabytes"),
    ("SLURM_MEM_PER_CPU", "2GB", "mem_per_cpu_mb", "megabytes"),
    ("SLURM_SUBMIT_DIR", "relative/dir", "submit_dir", "absolute path"),
]


@pytest.mark.parametrize("variable, value, field, words", MALFORMED,
                         ids=[f"{row[0]}={row[1]}" for row in MALFORMED])
def test_malformed_values_become_none_and_a_problem(variable, value, field, words):
    allocation = Allocation.from_env({"SLURM_JOB_ID": "5", variable: value} if variable != "SLURM_JOB_ID"
                                     else {variable: value})
    assert getattr(allocation, field) is None
    assert allocation.inside_allocation is True
    [problem] = allocation.problems
    assert problem.startswith(f"{variable}={value!r} is not ")
    assert words in problem


def test_non_string_values_are_problems_not_crashes():
    allocation = Allocation.from_env({"SLURM_JOB_ID": 12, "SLURM_NTASKS": None, "SLURM_NNODES": b"2"})
    assert allocation.job_id is None and allocation.num_nodes is None and allocation.ntasks is None
    assert [p.split("=")[0] for p in allocation.problems] == ["SLURM_JOB_ID", "SLURM_NNODES"]
    assert allocation.problems[0] == "SLURM_JOB_ID=12 is a int, expected a string: a numeric job id"


def test_a_mapping_that_raises_is_survived():
    class Hostile(dict):
        def get(self, key, default=None):
            raise RuntimeError("boom")

    assert Allocation.from_env(Hostile()) == Allocation()


INCONSISTENT = [
    # (env, words of the single problem)
    ({"SLURM_JOB_NODELIST": "n[1-2]", "SLURM_JOB_NUM_NODES": "3"},
     ["SLURM_JOB_NODELIST='n[1-2]'", "lists 2 nodes", "SLURM_JOB_NUM_NODES=3"]),
    ({"SLURM_NODELIST": "n[1-2]", "SLURM_NNODES": "1"},
     ["SLURM_NODELIST='n[1-2]'", "SLURM_NNODES=1"]),
    ({"SLURM_TASKS_PER_NODE": "2(x3)", "SLURM_JOB_NUM_NODES": "2", "SLURM_NTASKS": "6"},
     ["SLURM_TASKS_PER_NODE='2(x3)'", "covers 3 nodes", "SLURM_JOB_NUM_NODES=2"]),
    ({"SLURM_JOB_CPUS_PER_NODE": "4", "SLURM_NNODES": "2"},
     ["SLURM_JOB_CPUS_PER_NODE='4'", "covers 1 nodes", "SLURM_NNODES=2"]),
    ({"SLURM_TASKS_PER_NODE": "3,1", "SLURM_NPROCS": "5"},
     ["SLURM_TASKS_PER_NODE='3,1'", "adds up to 4", "SLURM_NPROCS=5"]),
]


@pytest.mark.parametrize("env, words", INCONSISTENT)
def test_contradicting_variables_are_reported_and_values_kept(env, words):
    allocation = Allocation.from_env({"SLURM_JOB_ID": "1", **env})
    [problem] = allocation.problems
    for word in words:
        assert word in problem
    kept = {"SLURM_JOB_NODELIST": "nodelist", "SLURM_NODELIST": "nodelist", "SLURM_JOB_NUM_NODES": "num_nodes",
            "SLURM_NNODES": "num_nodes", "SLURM_TASKS_PER_NODE": "tasks_per_node", "SLURM_NPROCS": "ntasks",
            "SLURM_JOB_CPUS_PER_NODE": "cpus_per_node", "SLURM_NTASKS": "ntasks"}
    for variable in env:
        assert getattr(allocation, kept[variable]) is not None, variable


def test_fugaku_sized_allocation_stays_lazy():
    allocation = Allocation.from_env({
        "SLURM_JOB_ID": "1", "SLURM_JOB_NODELIST": "nid[000001-158976]",
        "SLURM_JOB_NUM_NODES": "158976", "SLURM_TASKS_PER_NODE": "48(x158976)",
        "SLURM_NTASKS": str(48 * 158976),
    })
    assert allocation.problems == ()
    assert allocation.first_node == "nid000001"
    assert len(allocation.tasks_per_node) == 158976


COUNTS = [
    ("3,1", (3, 1)),
    ("2(x3),1", (2, 2, 2, 1)),
    ("1,2(x2),1(x2)", (1, 2, 2, 1, 1)),
    ("0", (0,)),
]


@pytest.mark.parametrize("text, counts", COUNTS)
def test_parse_and_format_counts(text, counts):
    assert parse_counts(text) == counts
    assert format_counts(counts) == text
    assert format_counts(()) == ""


@pytest.mark.parametrize("text", ["", "x", "2(x)", "2(3)", "(x2)", "2(x2", "-1", f"1(x{MAX_NODES + 1})"])
def test_parse_counts_rejects(text):
    with pytest.raises(CountsError):
        parse_counts(text)
