"""reproduce.sh lint (spec §5: L1-L7, G1-G3, S2): table of fixture scripts -> exact findings."""
from __future__ import annotations
from repo_paths import TESTS


import pytest

from ari_jupyter.ari.prelude import render_prelude
from ari_jupyter.ari.profile import PRESETS, ExecutionProfile, ProfileError
from ari_jupyter.doctor import diagnose_text
from ari_jupyter.doctor.reproduce_lint import lint_reproduce

SCRIPTS = TESTS / "fixtures" / "doctor" / "reproduce"
FANOUT = "srun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS"

MPI_OPENMPI = {"kind": "mpi", "module_loads": ["openmpi/4.1"]}
CSV_PROFILE = {"kind": "mpi", "metric_columns": ["nodes", "ranks", "runtime_sec"], "accepts_reduced_scale": True}

# (id, script, profile, nodes, extra kwargs, {(rule, severity, line), ...}) - the exact set found.
TABLE = [
    ("L6-two-nodes", "app_no_srun.sh", {"kind": "cpu_single"}, 2, {},
     {("L6", "error", 5), ("L7", "info", 5)}),
    ("L6-one-node-quiet", "app_no_srun.sh", {"kind": "cpu_single"}, 1, {}, {("L7", "info", 5)}),
    ("L6-profile-nodes", "app_no_srun.sh", {"requested_nodes": 4}, None, {},
     {("L6", "error", 5), ("L7", "info", 5)}),
    ("L6-fanout-ok", "app_srun_fanout.sh", None, 2, {}, set()),
    ("L6-srun-without-counts", "srun_without_counts.sh", None, 2, {},
     {("L6", "error", 3), ("L7", "info", 3)}),
    ("L6-env-prefix", "env_prefix.sh", None, 2, {}, {("L6", "error", 2), ("L7", "info", 2)}),
    ("L6-continued-line", "continued_line.sh", None, 2, {}, {("L6", "error", 3), ("L7", "info", 3)}),
    ("L2-mpirun-bare", "mpirun_bare.sh", {**MPI_OPENMPI, "requested_nodes": 2}, None, {},
     {("L2", "error", 4), ("L2b", "warning", 4), ("L5", "error", 4), ("L6", "warning", 4),
      ("L7", "info", 4), ("G1", "warning", None)}),
    ("L2-mpirun-no-kind", "mpirun_bare.sh", None, 1, {},
     {("L2", "warning", 4), ("L2b", "warning", 4), ("L7", "info", 4)}),
    ("L5-module-late", "mpi_modules_late.sh", MPI_OPENMPI, 2, {},
     {("L5", "error", 4), ("L5", "warning", 4), ("L7", "info", 5), ("G1", "warning", None),
      ("G2", "warning", None)}),
    ("L1-multi-node", "node_local_paths.sh", None, 2, {}, {("L1", "error", 4)}),
    ("L1-single-node", "node_local_paths.sh", None, 1, {}, {("L1", "warning", 4)}),
    ("L4-no-init", "conda_no_init.sh", None, None, {}, {("L4", "error", 3)}),
    ("L4-init", "conda_init.sh", None, None, {}, set()),
    ("L5-module-no-init", "module_no_init.sh", {"kind": "gpu_single", "module_loads": ["cuda/12.4"]}, None, {},
     {("L5", "warning", 3)}),
    ("L3-no-gres", "gpu_numpy_only.sh", {"kind": "gpu_multi", "gpu_type": "v100", "requested_gpus_per_node": 4},
     None, {"has_gres": False}, {("L3", "error", None), ("G1", "warning", None)}),
    ("L3-gres", "gpu_numpy_only.sh", {"kind": "gpu_multi", "gpu_type": "v100"}, None, {"has_gres": True},
     {("G1", "warning", None)}),
    ("L3-unknown", "gpu_numpy_only.sh", {"kind": "gpu_multi", "gpu_type": "v100"}, None, {},
     {("L3", "info", None), ("G1", "warning", None)}),
    ("L3-allowed", "gpu_numpy_only.sh", {"requested_gpus_per_task": 1}, None,
     {"has_gres": False, "allow_no_gres": True}, {("L3", "info", None)}),
    ("G1-cpu-kind", "gpu_numpy_only.sh", {"kind": "cpu_single"}, None, {}, set()),
    ("G2-G3", "csv_header.sh", CSV_PROFILE, 2,
     {"expected_artifacts": ["submission/results/scaling.csv", "plots/speedup.png"]},
     {("G1", "warning", None), ("G2", "warning", 4), ("G3", "warning", None)}),
    ("G2-header-ok", "csv_header.sh", {"kind": "mpi", "metric_columns": ["nodes", "ranks", "time"]}, 2,
     {"expected_artifacts": ["submission/results/scaling.csv"]}, {("G1", "warning", None)}),
    ("G3-absolute", "csv_header.sh", None, 2, {"expected_artifacts": ["/abs/out.csv"]},
     {("G3", "warning", None)}),
    ("S2", "sbatch_lines.sh", None, None, {}, {("S2", "info", 2)}),
]


@pytest.mark.parametrize("case", TABLE, ids=[row[0] for row in TABLE])
def test_lint_table(case):
    _id, script, profile, nodes, kwargs, expected = case
    findings = lint_reproduce((SCRIPTS / script).read_text(), profile=profile, nodes=nodes, **kwargs)
    assert {(f.rule, f.severity, f.line) for f in findings} == expected
    for f in findings:
        assert f.message and f.fix


def test_two_node_app_without_srun_gets_L6_with_the_line_to_add():
    """The issue's must-show: ./app without srun under a 2-node profile."""
    text = (SCRIPTS / "app_no_srun.sh").read_text()
    profile = ExecutionProfile(kind="cpu_single", requested_nodes=2)
    (l6,) = [f for f in diagnose_text(text, kind="reproduce", profile=profile) if f.rule == "L6"]
    assert l6.severity == "error" and l6.line == 5
    assert text.splitlines()[4] == "./app"
    assert l6.suggestion == f"{FANOUT} ./app"
    assert f"replace line 5 with: {FANOUT} ./app" in l6.fix
    assert l6.to_json()["line"] == 5


def test_proposed_lines_keep_the_users_command_verbatim():
    text = (SCRIPTS / "env_prefix.sh").read_text()
    (l6,) = [f for f in lint_reproduce(text, nodes=2) if f.rule == "L6"]
    assert l6.suggestion == f'OMP_NUM_THREADS=4 {FANOUT} ./app "$@" > out.txt 2>&1'
    text = (SCRIPTS / "srun_without_counts.sh").read_text()
    (l6,) = [f for f in lint_reproduce(text, nodes=2) if f.rule == "L6"]
    assert l6.suggestion == f"{FANOUT} ./app --size 1000"


def test_module_fixes_come_from_the_prelude():
    text = (SCRIPTS / "mpirun_bare.sh").read_text()
    profile = {"kind": "mpi", "module_loads": ["cuda/12.4", "openmpi/4.1"]}
    by_rule = {f.rule: f for f in lint_reproduce(text, profile=profile, nodes=1)}
    assert by_rule["L5"].suggestion == "module load cuda/12.4 openmpi/4.1"
    assert by_rule["L2"].suggestion == "module load openmpi/4.1"


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_prelude_written_script_passes_L5_and_L6(preset):
    """The wizard's own prelude must satisfy the doctor: one source of truth for both."""
    profile = PRESETS[preset]()
    text = render_prelude(profile, nodes=2, command=["./app"])
    if "srun" not in text:  # no fan-out needed by this profile: the body runs the program
        text += "srun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS ./app\n"
    rules = {(f.rule, f.severity) for f in lint_reproduce(text, profile=profile, nodes=2)}
    assert not {r for r in rules if r[0] in ("L5", "L6", "L2")}, rules


def test_invalid_profile_dict_is_rejected_with_the_key_named():
    with pytest.raises(ProfileError, match="requested_nodes"):
        lint_reproduce("./app\n", profile={"requested_nodes": 0})


def test_allocation_object_gives_the_node_count():
    class Alloc:
        num_nodes = 2

    findings = lint_reproduce((SCRIPTS / "app_no_srun.sh").read_text(), nodes=Alloc())
    assert "L6" in {f.rule for f in findings}


def test_seed_dashboard_command_in_a_script_is_flagged():
    text = "#!/bin/bash\npython -m ari.viz.server --host 0.0.0.0\n"
    rules = {(f.rule, f.line) for f in diagnose_text(text)}
    assert ("viz-host-flag", 2) in rules
