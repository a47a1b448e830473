"""ExecutionProfile: the schema's 24 keys, types, enums and bounds; JSON round trips; presets."""
from __future__ import annotations

import pytest
from traitlets import TraitError

from ari_jupyter.ari.profile import PRESETS, PROFILE_KEYS, ExecutionProfile, ProfileError, preset_of

# A profile using every key (ARI's own "full profile" schema test, spec §3.5 test_schema.py).
FULL = {
    "kind": "mpi_gpu", "paper_max_ranks": 32, "paper_max_nodes": 4, "min_ranks": 32,
    "min_nodes": 1, "result_aggregation": "rank0_csv",
    "metric_columns": ["nodes", "ranks", "runtime_sec", "gflops"],
    "accepts_reduced_scale": True, "requested_nodes": 4, "ntasks_per_node": 8,
    "requested_nodelist": "node[01-04]", "exclude_nodes": "badnode01", "exclusive": True,
    "requested_gpus_per_task": 1, "requested_gpus_per_node": 4, "gpu_type": "v100",
    "memory_gb_per_node": 256, "memory_gb_per_cpu": 8, "constraint": "skylake",
    "cpu_bind": "cores", "mem_bind": "local", "hint": "nomultithread",
    "module_loads": ["cuda/12.4", "openmpi/4.1"], "extra_sbatch_args": ["--account=projX"],
}


def test_profile_has_exactly_the_24_schema_keys_as_traits():
    assert len(PROFILE_KEYS) == 24 == len(set(PROFILE_KEYS))
    traits = set(ExecutionProfile().trait_names()) - {"extra_keys"}
    assert traits == set(PROFILE_KEYS)
    assert set(FULL) == set(PROFILE_KEYS)


# ARI's schema tests (ari-skill-replicate/tests/test_schema.py as recorded in spec §3.5).
@pytest.mark.parametrize("data", [None, {}, {"kind": "gpu_single"}, FULL],
                         ids=["omitted", "empty", "gpu_single", "full"])
def test_valid_profiles_from_aris_schema_tests(data):
    ExecutionProfile.from_json(data)


@pytest.mark.parametrize("data, key", [
    ({"kind": "warp_drive"}, "kind"),
    ({"paper_max_ranks": 0}, "paper_max_ranks"),
    ({"result_aggregation": "broadcast"}, "result_aggregation"),
    ({"module_loads": [123]}, "module_loads"),
], ids=["kind-warp_drive", "paper_max_ranks-0", "aggregation-broadcast", "module_loads-int"])
def test_invalid_profiles_from_aris_schema_tests(data, key):
    with pytest.raises(ProfileError) as info:
        ExecutionProfile.from_json(data)
    assert len(info.value.messages) == 1
    assert info.value.messages[0].startswith(f"{key}: ")


@pytest.mark.parametrize("key, value, expect", [
    ("min_ranks", 0, "integer >= 1"),
    ("min_nodes", -1, "integer >= 1"),
    ("requested_nodes", 1.5, "integer >= 1"),
    ("requested_nodes", True, "boolean"),
    ("requested_nodes", "4", "string"),
    ("ntasks_per_node", -1, "integer >= 0"),
    ("requested_gpus_per_task", None, "null"),
    ("memory_gb_per_node", float("nan"), "integer >= 0"),
    ("exclusive", 1, "true or false"),
    ("accepts_reduced_scale", "yes", "true or false"),
    ("gpu_type", 100, "must be a string"),
    ("constraint", "sky\nlake", "control characters"),
    ("requested_nodelist", ["n1"], "must be a string"),
    ("metric_columns", "a,b", "array of strings"),
    ("extra_sbatch_args", ["--a", None], "item 1"),
    ("hint", None, "must be a string"),
    ("kind", None, "must be one of"),
])
def test_each_invalid_value_names_its_key(key, value, expect):
    with pytest.raises(ProfileError) as info:
        ExecutionProfile.from_json({key: value})
    (message,) = info.value.messages
    assert message.startswith(f"{key}: ") and expect in message


def test_all_problems_are_collected_not_just_the_first():
    with pytest.raises(ProfileError) as info:
        ExecutionProfile.from_json({"kind": "x", "min_ranks": 0, "exclusive": "no", "hint": 3})
    keys = [m.split(":")[0] for m in info.value.messages]
    assert keys == ["kind", "min_ranks", "exclusive", "hint"]


def test_non_object_is_rejected():
    with pytest.raises(ProfileError, match="execution_profile: must be a JSON object, got array"):
        ExecutionProfile.from_json([1])


def test_integral_floats_are_integers_as_in_json_schema():
    assert ExecutionProfile.from_json({"requested_nodes": 4.0}).requested_nodes == 4


def test_full_profile_round_trips_exactly():
    assert ExecutionProfile.from_json(FULL).to_json() == FULL


def test_to_json_drops_what_ari_treats_as_absent():
    defaults = {"ntasks_per_node": 0, "exclude_nodes": "", "exclusive": False,
                "requested_gpus_per_task": 0, "requested_gpus_per_node": 0, "gpu_type": "",
                "memory_gb_per_node": 0, "memory_gb_per_cpu": 0, "constraint": "",
                "cpu_bind": "", "mem_bind": "", "hint": "", "module_loads": [],
                "extra_sbatch_args": [], "metric_columns": [], "requested_nodelist": None,
                "accepts_reduced_scale": False}
    assert ExecutionProfile.from_json(defaults).to_json() == {}


def test_presence_changing_values_are_kept():
    # min_ranks: 1 makes ARI emit --ntasks 1; accepts_reduced_scale: true changes the prompt.
    data = {"min_ranks": 1, "min_nodes": 1, "accepts_reduced_scale": True}
    assert ExecutionProfile.from_json(data).to_json() == data


def test_unknown_keys_survive_a_round_trip():
    profile = ExecutionProfile.from_json({"kind": "mpi", "requested_node": 4})
    assert profile.extra_keys == {"requested_node": 4}
    assert profile.to_json() == {"kind": "mpi", "requested_node": 4}


@pytest.mark.parametrize("key, value", [
    ("kind", "warp_drive"), ("min_ranks", 0), ("ntasks_per_node", -2),
    ("requested_gpus_per_task", "1"), ("module_loads", [1]),
])
def test_assignment_is_validated_by_traitlets(key, value):
    with pytest.raises(TraitError):
        setattr(ExecutionProfile(), key, value)


def test_requests_gpus_and_is_mpi():
    assert not ExecutionProfile().requests_gpus
    assert ExecutionProfile(gpu_type="a100").requests_gpus
    assert ExecutionProfile(requested_gpus_per_node=2).requests_gpus
    assert ExecutionProfile(kind="mpi_gpu").is_mpi and not ExecutionProfile(kind="gpu_multi").is_mpi


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_are_valid_fresh_and_round_trip(name):
    first, second = PRESETS[name](), PRESETS[name]()
    assert first is not second
    first.module_loads = first.module_loads + ["changed"]
    assert "changed" not in second.module_loads
    assert ExecutionProfile.from_json(second.to_json()) == second
    assert second.kind is not None


def test_preset_shapes():
    assert set(PRESETS) == {"cpu_single", "gpu_single", "gpu_single_nogres", "gpu_multi", "mpi",
                            "mpi_gpu"}
    assert not PRESETS["gpu_single_nogres"]().requests_gpus
    assert PRESETS["gpu_single"]().requests_gpus and not PRESETS["gpu_single"]().gpu_type
    spgemm = PRESETS["mpi_gpu"]()
    assert (spgemm.requested_nodes, spgemm.ntasks_per_node, spgemm.min_ranks) == (4, 8, 32)
    assert spgemm.gpu_type == "v100" and spgemm.exclusive
    assert spgemm.module_loads == ["cuda/12.4", "openmpi/4.1"]


def test_preset_of_names_the_preset_a_profile_equals_and_nothing_else():
    assert {name: preset_of(make()) for name, make in PRESETS.items()} == {n: n for n in PRESETS}
    edited = PRESETS["mpi"]()
    edited.ntasks_per_node = 2
    assert preset_of(edited) is None
    assert preset_of(ExecutionProfile()) is None
