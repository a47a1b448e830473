"""Placement model: SLURM block distribution, the 'all ranks on node 1' failure, capacity."""
import itertools

import pytest

from ari_jupyter.ari.profile import fans_out
from ari_jupyter.ari.placement import (
    SHARED_GPU,
    JobRequest,
    NodeShape,
    plan_placement,
    request_from_sbatch_argv,
    resolve_shape,
)


def shapes(n, cpus=8, gpus=4, prefix="n"):
    return [NodeShape(f"{prefix}{i + 1}", cpus, gpus) for i in range(n)]


# Token lists as ARI's dispatcher emits them (spec §3.4.3: pair-style and --flag=value).
SBATCH_CASES = [
    (["sbatch", "--wait", "--partition", "small", "--cpus-per-task", "8", "--time", "01:00:00",
      "/r/.slurm_wrap.sh"], JobRequest(cpus_per_task=8)),
    (["sbatch", "--partition", "p", "--cpus-per-task", "2", "--nodes", "4", "--ntasks", "32",
      "--ntasks-per-node", "8", "--exclusive", "--gres=gpu:v100:1", "--mem=256G", "x.sh"],
     JobRequest(nodes=4, ntasks=32, ntasks_per_node=8, cpus_per_task=2, gpus_per_node=1)),
    (["sbatch", "--cpus-per-task", "8", "--ntasks", "1", "--gpus-per-task", "1", "x.sh"],
     JobRequest(ntasks=1, cpus_per_task=8, gpus_per_task=1)),
    (["sbatch", "--nodes", "2", "--gpus-per-node", "4", "x.sh"],
     JobRequest(nodes=2, gpus_per_node=4)),
]


@pytest.mark.parametrize("argv, expected", SBATCH_CASES)
def test_request_is_read_back_from_the_sbatch_argv(argv, expected):
    assert request_from_sbatch_argv(argv) == expected


@pytest.mark.parametrize("request_, cpus, expected", [
    (JobRequest(), 8, (1, 1)),                                  # no flags: one task
    (JobRequest(nodes=3), 8, (3, 3)),                           # --nodes: one task per node
    (JobRequest(nodes=2, ntasks_per_node=4), 8, (2, 8)),
    (JobRequest(ntasks=20, ntasks_per_node=8), 8, (3, 20)),
    (JobRequest(ntasks=20), 8, (3, 20)),                        # packed by CPUs per node
    (JobRequest(ntasks=4, cpus_per_task=4), 8, (2, 4)),
    (JobRequest(ntasks=3, cpus_per_task=40), 64, (3, 3)),        # whole tasks per node: 1 each
    (JobRequest(ntasks=5, cpus_per_task=3), 8, (3, 5)),          # 2 per node (6 of 8 CPUs)
    (JobRequest(ntasks=1, cpus_per_task=999), 64, (1, 1)),       # larger than a node: refused
])
def test_resolve_shape_follows_slurm_defaults(request_, cpus, expected):
    assert resolve_shape(request_, cpus) == expected


def test_block_distribution_puts_extra_ranks_on_the_first_nodes():
    placement = plan_placement(shapes(2), JobRequest(nodes=2, ntasks=5), fan_out=True)
    assert [list(node.ranks) for node in placement.nodes] == [[0, 1, 2], [3, 4]]
    assert placement.findings == ()


def test_ntasks_per_node_caps_each_node():
    placement = plan_placement(shapes(4), JobRequest(nodes=4, ntasks=10, ntasks_per_node=4),
                               fan_out=True)
    assert [node.rank_count for node in placement.nodes] == [4, 4, 2, 0]


def test_without_fan_out_every_rank_lands_on_the_first_node():
    placement = plan_placement(shapes(4), JobRequest(nodes=4, ntasks=32, ntasks_per_node=8),
                               fan_out=False)
    assert [node.rank_count for node in placement.nodes] == [32, 0, 0, 0]
    assert placement.nodes_with_ranks == 1
    codes = [f.code for f in placement.findings]
    assert codes[0] == "all_ranks_on_first_node"
    assert placement.findings[0].params == {"ranks": 32, "nodes": 4, "idle": 3, "node": "n1"}
    assert "cpu_oversubscribed" in codes  # 32 ranks on 8 CPUs


def test_single_node_multi_rank_without_launcher_is_flagged():
    placement = plan_placement(shapes(1), JobRequest(ntasks=4), fan_out=False)
    assert [f.code for f in placement.findings] == ["single_process_many_ranks"]


def test_gpus_are_assigned_per_rank_and_oversubscription_reported():
    placement = plan_placement(shapes(1, cpus=64, gpus=4), JobRequest(nodes=1, ntasks=3,
                               gpus_per_task=2), fan_out=True)
    assert placement.nodes[0].gpu_owner == (0, 0, 1, 1)
    gpu = [f for f in placement.findings if f.code == "gpu_oversubscribed"]
    assert gpu and gpu[0].params == {"node": "n1", "need": 6, "gpus": 4}


def test_node_level_gres_marks_gpus_as_shared():
    placement = plan_placement(shapes(2), JobRequest(nodes=2, gpus_per_node=2), fan_out=True)
    assert placement.nodes[1].gpu_owner == (SHARED_GPU, SHARED_GPU, None, None)


def test_gpus_requested_on_nodes_without_visible_gpus():
    placement = plan_placement(shapes(1, gpus=0), JobRequest(gpus_per_task=1, ntasks=1),
                               fan_out=False)
    assert [f.code for f in placement.findings] == ["gpus_not_visible"]


def test_more_nodes_than_the_allocation_are_drawn_with_the_last_shape():
    placement = plan_placement(shapes(2), JobRequest(nodes=3), fan_out=True)
    assert [node.name for node in placement.nodes] == ["n1", "n2", "+1"]
    assert placement.findings[0].code == "nodes_exceed_allocation"


def test_huge_allocations_are_not_materialised():
    infinite = (NodeShape(f"c{i}", 48, 0) for i in itertools.count())
    placement = plan_placement(infinite, JobRequest(nodes=160_000, ntasks_per_node=48),
                               fan_out=True, available_nodes=160_000, max_shown=6)
    assert len(placement.nodes) == 6
    assert placement.hidden_nodes == 160_000 - 6
    assert placement.total_ranks == 160_000 * 48
    assert placement.nodes[5].first_rank == 5 * 48


@pytest.mark.parametrize("kind, expected", [
    ("mpi", True), ("mpi_gpu", True), ("cpu_single", True), ("gpu_multi", True), ("", False)])
def test_every_kind_of_a_profile_is_told_to_fan_out(kind, expected):
    assert fans_out(kind) is expected


def test_every_finding_code_is_a_placement_finding_with_a_translation():
    import ast
    from pathlib import Path

    import ari_jupyter.ari.placement as placement
    from ari_jupyter.i18n import catalog

    tree = ast.parse(Path(placement.__file__).read_text(encoding="utf-8"))
    codes = {node.args[0].value for node in ast.walk(tree)
             if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "PlacementFinding"}
    assert codes == {"nodes_exceed_allocation", "all_ranks_on_first_node", "single_process_many_ranks",
                     "cpu_oversubscribed", "gpus_not_visible", "gpu_oversubscribed"}
    english = catalog("en")
    assert sorted(f"placement_{code}" for code in codes if f"placement_{code}" not in english) == []
