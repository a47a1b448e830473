"""WizardState: complete JSON round trip, and problems() from fields, lints and the validator."""
from __future__ import annotations

import json

import pytest

from ari_jupyter.ari.profile import PRESETS, ExecutionProfile
from ari_jupyter.wizard.state import StateError, WizardState
from ari_jupyter.base.verdict import ProbeResult
from unit.ari.test_render import golden_state


@pytest.fixture()
def valid(tmp_path):
    """A state that passes every check: real provided files and a shared workspace verdict."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    paths = []
    for name in ("matrix.mtx", "baseline.c"):
        (inputs / name).write_text(name)
        paths.append(str(inputs / name))
    workspace = str(tmp_path / "ws")
    state = golden_state(provided_files=paths, workspace=workspace)
    state.set_probe_result(ProbeResult("shared_fs", "ok", "shared", data={"path": workspace}))
    return state


def _fields(problems, severity="error"):
    return {p.field for p in problems if p.severity == severity}


# -- round trip ---------------------------------------------------------------------------------

def test_to_json_round_trips_every_field():
    state = golden_state(mem_gb=16, allow_no_gres=True, followups=2, profile=PRESETS["mpi_gpu"]())
    data = state.to_json()
    json.dumps(data)  # JSON-ready
    again = WizardState.from_json(json.loads(json.dumps(data)))
    assert again.to_json() == data
    assert again.allocation == state.allocation
    assert again.probe("shared_fs") == state.probe("shared_fs")
    assert again.profile == state.profile
    names = set(WizardState().trait_names())
    assert names <= set(data) | {"schema"}, names - set(data)


def test_default_state_round_trips():
    assert WizardState.from_json(WizardState().to_json()).to_json() == WizardState().to_json()


@pytest.mark.parametrize("data, key", [
    ({"titel": "x"}, "titel"),
    ({"max_cpus": "eight"}, "max_cpus"),
    ({"metrics": "GFlops"}, "metrics"),
    ({"profile": {"kind": "warp_drive"}}, "profile.kind"),
    ({"probe_results": [{"id": "x", "status": "great", "summary": ""}]}, "probe_results[0]"),
    ({"schema": 99}, "schema"),
    ({"allocation": "n1"}, "allocation"),
])
def test_from_json_names_the_bad_key(data, key):
    with pytest.raises(StateError) as info:
        WizardState.from_json(data)
    assert any(m.startswith(key) for m in info.value.messages), info.value.messages


def test_set_probe_result_notifies_observers():
    state, seen = WizardState(), []
    state.observe(lambda change: seen.append(change["name"]), names=["probe_results"])
    state.set_probe_result(ProbeResult("sbatch", "ok", "found"))
    assert seen == ["probe_results"] and state.probe("sbatch").status == "ok"


# -- problems ----------------------------------------------------------------------------------

def test_valid_state_has_no_blocking_problem(valid):
    assert valid.blocking_problems() == []
    # The goal says "We partition the matrix": noted by the lint, harmless.
    assert any(p.field == "experiment.md" and p.rule == "E1" for p in valid.problems())


@pytest.mark.parametrize("overrides, field", [
    ({"title": ""}, "title"),
    ({"title": "two\nlines"}, "title"),
    ({"title": "a ## b"}, "title"),
    ({"goal": ""}, "goal"),
    ({"goal": "x <!-- min_expected_metric: 3 -->"}, "goal"),
    ({"goal": "metric_keyword: acc"}, "goal"),
    ({"goal": "AUTO-APPENDED BY VirSci"}, "goal"),
    ({"metrics": []}, "metrics"),
    ({"metrics": ["GB/s."]}, "metrics"),
    ({"min_expected_metric": -1}, "min_expected_metric"),
    ({"partition": "gpu.a100"}, "partition"),
    ({"max_cpus": None}, "max_cpus"),
    ({"max_cpus": 0}, "max_cpus"),
    ({"nodes": -1}, "nodes"),  # 0 is ARI's "not given": the profile's requested_nodes
    ({"mem_gb": 0}, "mem_gb"),
    ({"walltime": "1 hour"}, "walltime"),
    ({"module_loads": ["-v"]}, "module_loads"),
    ({"module_loads": ["a b"]}, "module_loads"),
    ({"provided_files": ["relative.c"]}, "provided_files"),
    ({"provided_files": ["/nonexistent/x.c"]}, "provided_files"),
    ({"provided_files": ["/tmp"]}, "provided_files"),
    ({"workspace": ""}, "workspace"),
    ({"workspace": "relative/ws"}, "workspace"),
    ({"run_id": "my run"}, "run_id"),
    ({"run_id": "-x"}, "run_id"),
    ({"run_id": "熱伝導"}, "run_id"),
    ({"run_id": "heat-scaling\n"}, "run_id"),
    # `$` also matches before a final newline: each check must refuse the newline itself
    ({"partition": "small\n"}, "partition"),
    ({"run_id": "20250101120000_x\n"}, "run_id"),
    ({"metrics": ["GFlops\n"]}, "metrics"),
    ({"walltime": "\uff10\uff11:\uff10\uff10:\uff10\uff10"}, "walltime"),  # fullwidth digits
])
def test_field_problems(valid, overrides, field):
    for name, value in overrides.items():
        setattr(valid, name, value)
    assert field in _fields(valid.problems()), [p for p in valid.problems()]


def test_duplicate_provided_basenames(valid, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "matrix.mtx").write_text("z")
    valid.provided_files = [*valid.provided_files, str(other / "matrix.mtx")]
    assert any("share the name" in p.message for p in valid.blocking_problems())


def test_workspace_under_a_checkpoints_directory_is_refused(valid, tmp_path):
    valid.workspace = str(tmp_path / "checkpoints" / "proj")
    assert any(p.field == "workspace" and "checkpoints" in p.message for p in valid.blocking_problems())


def test_shared_fs_verdict_applies_only_to_its_own_path(valid):
    valid.set_probe_result(ProbeResult("shared_fs", "fail", "node-local tmpfs", fix="move it",
                                       data={"path": valid.workspace + "/checkpoints/r"}))
    assert any(p.field == "workspace" and "node-local" in p.message for p in valid.blocking_problems())
    valid.set_probe_result(ProbeResult("shared_fs", "fail", "node-local tmpfs",
                                       data={"path": "/somewhere/else"}))
    assert "workspace" not in _fields(valid.problems())


def test_goal_headings_are_reported_as_info(valid):
    valid.goal = "Intro\n## Files\n/a/b"
    infos = [p for p in valid.problems() if p.field == "goal" and p.severity == "info"]
    assert infos and "**Files**" in infos[0].message
    assert valid.blocking_problems() == []


# -- the validator sees the site ---------------------------------------------------------------

def _partitions(*names):
    return ProbeResult("partitions", "ok", "listed", data={
        "partitions": [{"name": n, "default": i == 0, "avail": "up", "timelimit": "1:00:00",
                        "nodes": 2, "cpus": 8, "memory": 16000, "gres": []} for i, n in enumerate(names)],
        "default": names[0]})


def test_partition_not_listed_by_sinfo_is_blocking(valid):
    valid.set_probe_result(_partitions("large"))
    errors = valid.blocking_problems()
    assert any(p.field == "partition" and "sinfo" in p.message for p in errors)


def test_module_missing_from_module_avail_is_blocking(valid):
    valid.set_probe_result(ProbeResult("modules", "ok", "2 modules",
                                       data={"modules": ["cuda/12.4", "gcc/12"]}))
    errors = valid.blocking_problems()
    assert any(p.field == "module_loads" and "openmpi/4.1" in p.message for p in errors)
    valid.module_loads = ["cuda/12.4"]
    assert valid.blocking_problems() == []


def test_gpu_profile_without_gres_then_allow_no_gres(valid):
    valid.profile = PRESETS["gpu_single"]()
    valid.set_probe_result(ProbeResult("gres", "ok", "no GRES", data={"has_gres": False}))
    valid.set_probe_result(ProbeResult("gpus", "warn", "4 GPUs", data={"count": 4}))
    errors = valid.blocking_problems()
    assert any("GRES" in p.message for p in errors)
    valid.allow_no_gres = True
    assert valid.blocking_problems() == []


def test_allow_no_gres_without_gpu_request_is_a_warning(valid):
    valid.profile = ExecutionProfile(kind="cpu_single")
    valid.allow_no_gres = True
    assert "allow_no_gres" in _fields(valid.problems(), "warning")


# -- site defaults -------------------------------------------------------------------------------

def test_site_defaults_follow_aris_precedence():
    state = golden_state(partition="", partition_source="", max_cpus=None, nodes=None)
    state.apply_site_defaults({"ARI_SLURM_PARTITION": "gpu", "ARI_SLURM_CPUS": "12"})
    assert (state.partition, state.partition_source, state.max_cpus, state.nodes) == \
        ("gpu", "ARI_SLURM_PARTITION", 12, 2)


def test_site_defaults_from_allocation_then_sinfo():
    state = golden_state(partition="", partition_source="", max_cpus=None)
    state.apply_site_defaults({})
    assert (state.partition, state.partition_source, state.max_cpus) == ("small", "SLURM_JOB_PARTITION", 8)
    bare = WizardState()
    bare.set_probe_result(_partitions("debug", "large"))
    bare.apply_site_defaults({})
    assert (bare.partition, bare.partition_source) == ("debug", "sinfo_default")


def test_site_defaults_never_override_a_choice():
    state = golden_state()
    state.apply_site_defaults({"ARI_SLURM_PARTITION": "gpu", "ARI_SLURM_CPUS": "12"})
    assert (state.partition, state.max_cpus) == ("small", 4)


@pytest.mark.parametrize("typed, value, refusal", [
    ("12", 12, None), (" 0 ", 0, None), ("", None, None), ("  ", None, None),
    ("12.5", None, "field.min_metric_fraction"),  # ARI's agent reads digits only: 12
    ("12.", None, "field.min_metric_fraction"),
    ("-1", None, "field.min_metric_not_number"), ("abc", None, "field.min_metric_not_number"),
    ("１２", None, "field.min_metric_not_number"),  # full-width digits: not ASCII
])
def test_min_expected_metric_is_read_as_ari_reads_it(typed, value, refusal):
    from ari_jupyter.wizard.state import min_expected_metric_of

    if refusal is None:
        assert min_expected_metric_of(typed) == value
        return
    with pytest.raises(ValueError) as refused:
        min_expected_metric_of(typed)
    assert refused.value.args[0].message_id == refusal
    if refusal == "field.min_metric_fraction":
        assert refused.value.args[0].params["agent"] == typed.split(".")[0]
