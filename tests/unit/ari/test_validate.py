"""Profile validation against a site: one table row per rule, exact (field, severity) sets.

The site is the project's test bed as the probes report it (2 nodes n1,n2 × 4 CPUs × 4000 MB;
partitions small (default, 1 h) and large (infinite); GRES gpu:v100:4 per node or none).
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from ari_jupyter.ari.profile import PRESETS, ExecutionProfile
from ari_jupyter.ari.sbatch import ReproduceArgs
from ari_jupyter.base.verdict import Finding
from ari_jupyter.ari.validate import SiteFacts, blocking, validate
from ari_jupyter.base.verdict import ProbeResult


def partitions(gres: list[str]) -> list[dict]:
    return [
        {"name": "small", "default": True, "avail": "up", "timelimit": "1:00:00", "nodes": 2,
         "cpus": 4, "memory_mb": 4000, "gres": list(gres)},
        {"name": "large", "default": False, "avail": "up", "timelimit": "infinite", "nodes": 2,
         "cpus": 4, "memory_mb": 4000, "gres": list(gres)},
    ]


def site(*, gres=("gpu:v100:4",), sbatch=True, srun=True, mpirun=False, modules=None,
         gpus=None, partition_has_gres=None, down=False) -> list[ProbeResult]:
    gres = list(gres)
    parts = partitions(gres)
    if down:
        parts[1]["avail"] = "down"
    out = [
        ProbeResult("sbatch", "ok" if sbatch else "fail", "",
                    data={"path": "/usr/bin/sbatch" if sbatch else None}),
        ProbeResult("partitions", "ok", "", data={"partitions": parts, "default": "small"}),
        ProbeResult("gres", "ok" if gres else "warn", "",
                    data={"has_gres": bool(gres), "gres": gres,
                          "partition_has_gres": partition_has_gres}),
        ProbeResult("mpi", "ok", "", data={"srun": {"path": "/usr/bin/srun"} if srun else None,
                                           "mpirun": {"path": "/usr/bin/mpirun"} if mpirun else None,
                                           "mpiexec": None}),
        ProbeResult("modules", "ok" if modules != [] else "skip", "",
                    data={"modules": ["openmpi/4.1", "cuda/12.4"] if modules is None else modules}),
    ]
    if gpus is not None:
        out.append(ProbeResult("gpus", "ok", "", data={"count": gpus}))
    return out


@dataclass
class FakeAllocation:
    num_nodes: int
    inside_allocation: bool = True


GOOD_ENV = {"ARI_SLURM_CPUS": "2", "ARI_SLURM_WALLTIME": "00:30:00"}

CASES = [
    # id, profile, args, site kwargs, env (merged over GOOD_ENV), extra kwargs, expected
    ("clean-cpu-single", {"kind": "cpu_single"}, {}, {}, {}, {}, set()),
    ("clean-mpi-2x2", {"kind": "mpi", "requested_nodes": 2, "ntasks_per_node": 2,
                       "min_ranks": 4, "module_loads": ["openmpi/4.1"]}, {}, {}, {}, {},
     {("kind", "info")}),
    # a site known to have no GPU: ARI's prompt would ask kind mpi/gpu_* for CUDA code
    ("mpi-kind-on-a-site-without-gpus", {"kind": "mpi", "requested_nodes": 2, "min_ranks": 2},
     {}, {"gres": (), "gpus": 0}, {}, {}, {("kind", "warning")}),
    ("gpu-kind-on-a-site-without-gpus", {"kind": "gpu_single"}, {}, {"gres": (), "gpus": 0},
     {}, {}, {("kind", "warning")}),
    ("cpu-single-on-a-site-without-gpus", {"kind": "cpu_single", "requested_nodes": 2,
                                           "min_ranks": 2}, {}, {"gres": (), "gpus": 0}, {}, {},
     set()),
    ("mpi-kind-gpus-seen-without-gres", {"kind": "mpi", "requested_nodes": 2, "min_ranks": 2},
     {}, {"gres": (), "gpus": 4}, {}, {}, {("kind", "info")}),
    ("mpi-kind-gpu-gres-but-no-gpu-here", {"kind": "mpi", "requested_nodes": 2,
                                           "min_ranks": 2}, {}, {"gpus": 0}, {}, {},
     {("kind", "info")}),
    ("ari-default-8-cpus-on-4-cpu-nodes", {}, {}, {}, {"ARI_SLURM_CPUS": None}, {},
     {("max_cpus", "error")}),
    ("malformed-ari-slurm-cpus", {}, {}, {}, {"ARI_SLURM_CPUS": "four"}, {},
     {("max_cpus", "error")}),
    ("default-6h-walltime-over-1h-limit", {}, {}, {}, {"ARI_SLURM_WALLTIME": None}, {},
     {("walltime", "error")}),
    ("walltime-not-slurm-syntax", {}, {"walltime": "1h"}, {}, {}, {}, {("walltime", "error")}),
    # SLURM reads "1:00" (MM:SS) and "2" (MM) as minutes: a short job said out loud
    ("walltime-mm-ss-one-minute", {}, {"walltime": "1:00"}, {}, {}, {}, {("walltime", "warning")}),
    ("walltime-mm-two-minutes", {}, {"walltime": "2"}, {}, {}, {}, {("walltime", "warning")}),
    ("walltime-mm-ss-half-an-hour", {}, {"walltime": "30:00"}, {}, {}, {}, set()),
    ("walltime-hh-mm-ss-one-minute", {}, {"walltime": "00:01:00"}, {}, {}, {}, set()),
    ("infinite-partition-accepts-default-walltime", {}, {"partition": "large"}, {},
     {"ARI_SLURM_WALLTIME": None}, {}, set()),
    ("partition-down", {}, {"partition": "large"}, {"down": True}, {}, {},
     {("partition", "warning")}),
    ("unknown-partition", {}, {"partition": "gpu"}, {}, {}, {}, {("partition", "error")}),
    ("no-partition-anywhere", {}, {}, {}, {}, {"partition": None}, {("partition", "error")}),
    ("no-partition-with-fallback", {}, {}, {}, {"ARI_PHASE1_ALLOW_FALLBACK": "1"},
     {"partition": None}, {("partition", "warning")}),
    ("sbatch-missing", {}, {}, {"sbatch": False}, {}, {}, {("sbatch", "error")}),
    ("sbatch-missing-with-fallback", {}, {}, {"sbatch": False},
     {"ARI_PHASE1_ALLOW_FALLBACK": "1"}, {}, {("sbatch", "warning")}),
    ("gpu-without-gres-and-no-gpus", {"requested_gpus_per_task": 1}, {}, {"gres": ()}, {}, {},
     {("requested_gpus_per_task", "error")}),
    ("gpu-without-gres-sx40", {"gpu_type": "v100", "requested_gpus_per_task": 1}, {},
     {"gres": (), "gpus": 4}, {}, {}, {("gpu_type", "error")}),
    ("gpu-without-gres-opted-in-gpus-visible", {"requested_gpus_per_node": 1}, {},
     {"gres": (), "gpus": 4}, {"ARI_SLURM_ALLOW_NO_GRES": "1"}, {},
     {("requested_gpus_per_node", "info")}),
    ("gpu-without-gres-opted-in-no-gpus", {"requested_gpus_per_node": 1}, {}, {"gres": ()},
     {"ARI_SLURM_ALLOW_NO_GRES": "1"}, {}, {("requested_gpus_per_node", "warning")}),
    ("sx40-preset-is-clean-without-gres", "gpu_single_nogres", {}, {"gres": (), "gpus": 4}, {},
     {}, set()),
    ("gpu-kind-without-request-on-gres-cluster", "gpu_single_nogres", {}, {}, {}, {},
     {("requested_gpus_per_task", "warning")}),
    ("gpu-type-not-configured", {"gpu_type": "a100", "requested_gpus_per_task": 1}, {}, {}, {},
     {}, {("gpu_type", "error")}),
    ("gpu-type-with-colon", {"gpu_type": "v100:2"}, {}, {}, {}, {}, {("gpu_type", "error")}),
    ("too-many-gpus-per-node", {"requested_gpus_per_node": 5}, {}, {}, {}, {},
     {("requested_gpus_per_node", "error")}),
    ("typed-gres-shared-by-tasks", {"gpu_type": "v100", "requested_gpus_per_task": 1,
                                    "ntasks_per_node": 2}, {}, {}, {}, {},
     {("gpu_type", "warning")}),
    ("untyped-per-task-times-tasks-exceeds-node", {"requested_gpus_per_task": 3,
                                                   "ntasks_per_node": 2, "requested_nodes": 1},
     {"cpus": 1}, {}, {}, {}, {("requested_gpus_per_task", "error")}),
    ("partition-without-gres", {"requested_gpus_per_node": 1}, {}, {"partition_has_gres": False},
     {}, {}, {("requested_gpus_per_node", "error")}),
    ("gres-unknown", {"requested_gpus_per_node": 1}, {}, {}, {}, {"probes": "no-gres-probe"},
     {("requested_gpus_per_node", "info")}),
    ("more-nodes-than-partition", {"requested_nodes": 3}, {}, {}, {}, {},
     {("requested_nodes", "error")}),
    ("more-nodes-than-allocation", {"requested_nodes": 2}, {}, {}, {},
     {"allocation": FakeAllocation(1)}, {("requested_nodes", "warning")}),
    # the count typed into the Nodes box (caller's nodes, emit --nodes) is told there, even
    # when the profile asks otherwise: the box the user edited is the one that shows it
    ("more-nodes-than-partition-from-the-nodes-box", {"requested_nodes": 2}, {"nodes": 3}, {}, {},
     {}, {("nodes", "error")}),
    ("more-nodes-than-allocation-from-the-nodes-box", {}, {"nodes": 2}, {}, {},
     {"allocation": FakeAllocation(1)}, {("nodes", "warning")}),
    ("outside-allocation-no-node-warning", {"requested_nodes": 2}, {}, {}, {},
     {"allocation": FakeAllocation(1, inside_allocation=False)}, set()),
    ("ranks-exceed-slots", {"requested_nodes": 2, "ntasks_per_node": 1, "min_ranks": 4},
     {"cpus": 1}, {}, {}, {}, {("min_ranks", "error")}),
    ("ranks-below-slots", {"requested_nodes": 2, "ntasks_per_node": 2, "min_ranks": 3},
     {"cpus": 1}, {}, {}, {}, {("min_ranks", "warning")}),
    ("fewer-ranks-than-nodes", {"requested_nodes": 2, "min_ranks": 1}, {}, {}, {}, {},
     {("min_ranks", "warning")}),
    ("mpi-kind-single-task", {"kind": "mpi"}, {}, {}, {}, {},
     {("min_ranks", "warning"), ("kind", "info")}),
    ("tasks-per-node-times-cpus-exceed-node", {"requested_nodes": 2, "ntasks_per_node": 4,
                                               "min_ranks": 8}, {}, {}, {}, {},
     {("ntasks_per_node", "error")}),
    ("ranks-times-cpus-exceed-partition", {"min_ranks": 6}, {}, {}, {}, {},
     {("min_ranks", "error")}),
    ("mem-and-mem-per-cpu", {"memory_gb_per_node": 1, "memory_gb_per_cpu": 1}, {}, {}, {}, {},
     {("memory_gb_per_cpu", "error")}),
    ("mem-over-node", {"memory_gb_per_node": 8}, {}, {}, {}, {},
     {("memory_gb_per_node", "error")}),
    ("mem-per-cpu-over-node", {"memory_gb_per_cpu": 3}, {}, {}, {}, {},
     {("memory_gb_per_cpu", "error")}),
    ("bind-flags-unsupported", {"cpu_bind": "cores", "mem_bind": "local"}, {}, {}, {},
     {"bind_flags": False}, {("cpu_bind", "warning"), ("mem_bind", "warning")}),
    ("bind-flags-partly-supported", {"cpu_bind": "cores", "mem_bind": "local"}, {}, {}, {},
     {"bind_flags": {"--mem-bind"}}, {("cpu_bind", "warning")}),
    ("bind-flags-unknown", {"cpu_bind": "cores"}, {}, {}, {}, {"bind_flags": None},
     {("cpu_bind", "info")}),
    ("module-missing", {"module_loads": ["openmpi/5.0"]}, {}, {}, {}, {},
     {("module_loads", "error")}),
    # `module load openmpi` loads the site's default version: it works, and is said
    ("module-without-version-matches", {"module_loads": ["openmpi", "cuda"]}, {}, {}, {}, {},
     {("module_loads", "warning")}),
    ("site-module-missing", {}, {}, {}, {}, {"modules": ["gcc/12"]}, {("module_loads", "error")}),
    # No module system: `module load` fails in reproduce.sh, so Write is blocked.
    ("no-module-system", {"module_loads": ["openmpi/4.1"]}, {}, {"modules": []}, {}, {},
     {("module_loads", "error")}),
    ("mpi-without-any-launcher", {"kind": "mpi_gpu", "min_ranks": 2,
                                  "requested_gpus_per_task": 1}, {}, {"srun": False}, {}, {},
     {("kind", "error")}),
    ("mpi-with-mpirun-only", {"kind": "mpi", "min_ranks": 2}, {}, {"srun": False,
                                                                   "mpirun": True}, {}, {},
     {("kind", "warning"), ("kind", "info")}),
    ("extra-arg-bare-word", {"extra_sbatch_args": ["projX"]}, {}, {}, {}, {},
     {("extra_sbatch_args", "error")}),
    ("extra-arg-repeats-managed-flag", {"extra_sbatch_args": ["--time=00:05:00"]}, {}, {}, {},
     {}, {("extra_sbatch_args", "warning")}),
    ("extra-ntasks-invisible-to-pairing", {"requested_gpus_per_task": 1,
                                           "extra_sbatch_args": ["--ntasks=2"]}, {}, {}, {}, {},
     {("extra_sbatch_args", "warning")}),
    ("unknown-profile-key", {"requested_node": 2}, {}, {}, {}, {}, {("requested_node", "warning")}),
]


def _run(profile, args, site_kwargs, env_over, extra):
    if isinstance(profile, str):
        profile = PRESETS[profile]()
    else:
        profile = ExecutionProfile.from_json(profile)
    env = dict(GOOD_ENV)
    for key, value in env_over.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    extra = dict(extra)
    probes = site(**site_kwargs)
    if extra.pop("probes", None) == "no-gres-probe":
        probes = [p for p in probes if p.id != "gres"]
    extra.setdefault("partition", "small")
    extra.setdefault("bind_flags", True)
    return validate(profile, ReproduceArgs(**args), probes=probes, env=env, **extra)


@pytest.mark.parametrize("profile, args, site_kwargs, env, extra, expected",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validate(profile, args, site_kwargs, env, extra, expected):
    problems = _run(profile, args, site_kwargs, env, extra)
    assert {(p.field, p.severity) for p in problems} == expected, problems
    for problem in problems:
        assert problem.message
        if problem.severity != "info":
            assert problem.fix, problem


def _one(case_id: str) -> Finding:
    case = next(c for c in CASES if c[0] == case_id)
    (problem,) = _run(*case[1:-1])
    return problem


def test_gres_messages_say_what_ari_does_and_when_to_opt_in():
    no_gpus = _one("gpu-without-gres-and-no-gpus")
    assert "ARI raises RuntimeError" in no_gpus.message
    assert "not the answer" in no_gpus.fix
    sx40 = _one("gpu-without-gres-sx40")
    assert "Allow GPU requests without GRES" in sx40.fix and "GPUs (4)" in sx40.fix
    assert "drops every GPU flag" in _one("gpu-without-gres-opted-in-gpus-visible").message


def test_messages_name_the_numbers():
    assert "4 CPUs" in _one("ari-default-8-cpus-on-4-cpu-nodes").message
    walltime = _one("default-6h-walltime-over-1h-limit")
    # The fix names the form field, not the environment variable it becomes.
    assert "Set Walltime to at most 01:00:00" in walltime.fix
    assert "ARI_SLURM_WALLTIME" not in walltime.fix
    assert "Did you mean 'requested_nodes'" in _one("unknown-profile-key").fix
    assert "openmpi/4.1" in _one("module-missing").fix


def test_a_walltime_read_as_minutes_says_how_slurm_reads_it_and_how_to_write_hours():
    said = _one("walltime-mm-ss-one-minute")
    assert "'1:00' is 00:01:00 to SLURM" in said.message and "01:00:00" in said.fix


def test_errors_come_first_and_blocking_filters_them():
    problems = _run({"requested_nodes": 3, "cpu_bind": "x"}, {}, {}, {"ARI_SLURM_CPUS": None},
                    {"bind_flags": None})
    assert [p.severity for p in problems] == sorted(
        (p.severity for p in problems), key=["error", "warning", "info"].index)
    assert {p.field for p in blocking(problems)} == {"requested_nodes", "max_cpus"}


def test_spgemm_preset_on_the_test_bed_is_refused_for_several_reasons():
    problems = _run("mpi_gpu", {}, {}, {}, {})
    fields = {p.field for p in blocking(problems)}
    assert {"requested_nodes", "memory_gb_per_node", "ntasks_per_node"} <= fields


def test_unknown_probe_status_is_ignored():
    probes = [ProbeResult("gres", "unknown", "timed out", data={"has_gres": False})]
    facts = SiteFacts.from_probes(probes)
    assert facts.has_gres is None


def test_finding_rejects_bad_severity():
    with pytest.raises(ValueError):
        Finding("x", "fatal", message="m")


def test_every_finding_carries_its_message_id_params_and_json():
    problems = _run({"requested_nodes": 3, "cpu_bind": "x", "module_loads": ["openmpi/5.0"]},
                    {}, {}, {"ARI_SLURM_CPUS": None}, {"bind_flags": None})
    assert len(problems) >= 4
    for problem in problems:
        assert problem.message_id == f"validate.{problem.rule}"
        assert problem.text("en") == problem.message
        for lang in ("ja", "zh"):
            assert problem.text(lang) != problem.message, (lang, problem.rule)
            if problem.fix_id:
                assert problem.fix_text(lang) != problem.fix, (lang, problem.rule)
        data = problem.to_json()
        assert data["message"] == problem.message and data["message_id"] == problem.message_id
        assert data["params"] == dict(problem.params)


@pytest.mark.parametrize("site_name, partition, preset, expected", [
    ("sx40", "sx40", "gpu_single", {("requested_gpus_per_task", "error")}),
    ("sx40", "sx40", "gpu_single_nogres", set()),
    ("gres-cluster", "gpu", "gpu_single", set()),
    ("gres-cluster", "cpu", "gpu_single", {("requested_gpus_per_task", "error")}),
])
def test_demo_sites_through_the_real_probes(site_name, partition, preset, expected):
    """The validator reads the probes' real data shapes (recorded demo sites)."""
    from ari_jupyter.slurm.allocation import Allocation
    from ari_jupyter.hosts.recorded_site import RecordedSite
    from ari_jupyter.probes import ProbeContext, run_probes_sync

    host = RecordedSite.load(site_name)
    probes = run_probes_sync(host, ProbeContext(allocation=Allocation.from_env(host.env),
                                                partition=partition, timeout=20))
    problems = validate(PRESETS[preset](), probes=probes, partition=partition,
                        env={"ARI_SLURM_CPUS": "4", "ARI_SLURM_WALLTIME": "00:30:00"})
    assert {(p.field, p.severity) for p in problems if p.severity != "info"} == expected
    if site_name == "sx40" and expected:
        assert "Allow GPU requests without GRES" in problems[0].fix and "GPUs (4)" in problems[0].fix


def test_validate_choices_uses_the_env_the_checkpoint_will_carry():
    from ari_jupyter.ari.validate import validate_choices
    from ari_jupyter.wizard.state import WizardState

    state = WizardState()
    state.probe_results = {p.id: p for p in site(gres=(), gpus=4)}
    state.partition, state.walltime = "small", "00:30:00"
    state.profile = ExecutionProfile(kind="gpu_single", requested_gpus_per_task=1)
    # max_cpus unset: ARI falls back to 8 CPUs per task, more than the test bed's 4.
    assert {(p.field, p.severity) for p in validate_choices(state.choices())} == {
        ("requested_gpus_per_task", "error"), ("max_cpus", "error")}
    state.max_cpus = 4
    state.allow_no_gres = True  # written to .env as ARI_SLURM_ALLOW_NO_GRES=1
    assert {(p.field, p.severity) for p in validate_choices(state.choices())} == {
        ("requested_gpus_per_task", "info")}


def test_a_module_without_version_names_what_it_may_load():
    found = [f for f in _run({"module_loads": ["openmpi/4.1", "cuda"]}, {}, {"modules": [
        "openmpi/4.1", "cuda/11.8", "cuda/12.4", "cudnn/9"]}, {}, {}) if f.field == "module_loads"]
    assert [(f.rule, f.severity) for f in found] == [("module_default_version", "warning")]
    assert "'cuda' names no version" in found[0].message
    assert found[0].params["versions"] == "cuda/11.8, cuda/12.4"  # not cudnn/9
    assert "cuda/<version>" in found[0].fix
