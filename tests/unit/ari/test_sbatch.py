"""ARI's 35 reproduce-dispatch test vectors (spec §3.5), each as its own test id ``vNN-...``.

The fixture mirrors ARI's ``_setup_slurm``: ``<tmp>/repro_sandbox/reproduce.sh`` and, "with
partition", ``<tmp>/launch_config.json`` = ``{"partition": "sx40"}`` (the parent of the repo).
Where ARI's test patches ``_slurm_has_gres``/``_sbatch_supports``/``_has_bin``, these tests
pass the same facts as arguments.
"""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from ari_jupyter.ari.errors import AriRuntimeError, AriValueError
from ari_jupyter.ari.partition import resolve_partition
from ari_jupyter.ari.profile import ExecutionProfile
from ari_jupyter.ari.sbatch import (
    ArgsError, ReproduceArgs, ari_thinks_shared, bind_flags_from_help, build_sbatch_argv,
    has_gres_from_sinfo, merge_with_profile, plan_slurm_dispatch, select_sandbox, slurm_result,
    unknown_sandbox_error, walltime_str, wrapper_script,
)

NEW_PAIR_FLAGS = ("--nodes", "--ntasks", "--ntasks-per-node", "--nodelist", "--exclude",
                  "--exclusive", "--gpus-per-task", "--gpus-per-node")
NEW_EQ_PREFIXES = ("--gres=", "--mem=", "--mem-per-cpu=", "--constraint=", "--cpu-bind=",
                   "--mem-bind=", "--hint=")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """ARI's _setup_slurm(with_partition=True)."""
    sandbox = tmp_path / "repro_sandbox"
    sandbox.mkdir()
    (sandbox / "reproduce.sh").write_text("#!/usr/bin/env bash\nset -euo pipefail\necho hello\n")
    (tmp_path / "launch_config.json").write_text(json.dumps({"partition": "sx40"}))
    return sandbox


@pytest.fixture
def bare_repo(tmp_path: Path) -> Path:
    """ARI's _setup_slurm(with_partition=False)."""
    sandbox = tmp_path / "repro_sandbox"
    sandbox.mkdir()
    (sandbox / "reproduce.sh").write_text("#!/usr/bin/env bash\necho hello\n")
    return sandbox


def argv_for(repo: Path, env: dict | None = None, *, has_gres: bool = True,
             bind_flags: bool = True, profile=None, **kwargs) -> list[str]:
    return build_sbatch_argv(ReproduceArgs(timeout_global_sec=600, **kwargs), env or {}, repo,
                             has_gres=has_gres, bind_flags=bind_flags, profile=profile)


def value_after(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def bins(*present: str):
    return lambda name: name in present


# -- v01-v04: sandbox selection -----------------------------------------------------------------

@pytest.mark.parametrize("env, present, docker, expected", [
    pytest.param({"ARI_SLURM_PARTITION": "sx40"}, ("sbatch", "apptainer"), True, "slurm",
                 id="v01-auto-picks-slurm-with-sbatch-and-partition"),
    pytest.param({}, ("sbatch", "apptainer"), True, "docker",
                 id="v02-auto-skips-slurm-without-partition"),
    pytest.param({"ARI_SLURM_PARTITION": "sx40"}, ("apptainer",), False, "apptainer",
                 id="v03-auto-skips-slurm-without-sbatch"),
    pytest.param({"ARI_PHASE1_SANDBOX": "local", "ARI_SLURM_PARTITION": "sx40"},
                 ("sbatch", "apptainer", "docker", "singularity"), True, "local",
                 id="v04-explicit-env-override-wins"),
])
def test_sandbox_selection(env, present, docker, expected):
    assert select_sandbox("", env, has_bin=bins(*present), docker_works=docker) == expected


def test_auto_never_picks_docker_inside_an_allocation():
    env = {"SLURM_JOB_ID": "42"}
    assert select_sandbox("", env, has_bin=bins("singularity"), docker_works=True) == "singularity"
    assert select_sandbox("auto", env, has_bin=bins(), docker_works=True) == "local"


# -- v05-v08: partition precedence ------------------------------------------------------------

def test_v05_partition_arg_wins_over_env(tmp_path):
    choice = resolve_partition("from-arg", {"ARI_SLURM_PARTITION": "from-env"}, tmp_path)
    assert (choice.partition, choice.source) == ("from-arg", "explicit")


def test_v06_partition_env_wins_over_launch_config(tmp_path):
    ckpt = tmp_path / "ckpt"
    (ckpt / "repro_sandbox").mkdir(parents=True)
    (ckpt / "launch_config.json").write_text(json.dumps({"partition": "from-launch"}))
    choice = resolve_partition("", {"ARI_SLURM_PARTITION": "from-env"}, ckpt / "repro_sandbox")
    assert (choice.partition, choice.source) == ("from-env", "ARI_SLURM_PARTITION")


def test_v07_partition_falls_back_to_launch_config(tmp_path):
    ckpt = tmp_path / "ckpt"
    (ckpt / "repro_sandbox").mkdir(parents=True)
    (ckpt / "launch_config.json").write_text(json.dumps({"partition": "sx40"}))
    choice = resolve_partition("", {}, ckpt / "repro_sandbox")
    assert (choice.partition, choice.source) == ("sx40", "launch_config.json")
    assert choice.detail == str(ckpt / "launch_config.json")


def test_v08_partition_empty_when_nothing_resolves(tmp_path):
    (tmp_path / "repo").mkdir()
    choice = resolve_partition("", {}, tmp_path / "repo")
    assert (choice.partition, choice.source) == ("", "none")


# -- v09: walltime -------------------------------------------------------------------------

@pytest.mark.parametrize("seconds, expected", [
    pytest.param(3600, "01:00:00", id="v09a-3600"),
    pytest.param(90, "00:01:30", id="v09b-90"),
    pytest.param(0, "00:01:00", id="v09c-floor-60"),
])
def test_walltime_str(seconds, expected):
    assert walltime_str(seconds) == expected


# -- v10-v17: command construction, preconditions, results --------------------------------

def test_v10_constructs_correct_sbatch_command(repo):
    plan = plan_slurm_dispatch(ReproduceArgs(timeout_global_sec=600), {"ARI_SLURM_CPUS": "16"},
                               repo, has_gres=True, bind_flags=True)
    cmd = list(plan.argv)
    assert cmd[0] == "sbatch" and "--wait" in cmd
    assert value_after(cmd, "--partition") == "sx40"
    assert value_after(cmd, "--cpus-per-task") == "16"
    assert value_after(cmd, "--chdir") == str(repo)
    assert value_after(cmd, "--output") == str(repo / "reproduce.log")
    assert cmd[-1] == str(repo / ".slurm_wrap.sh")
    wrapper = wrapper_script(repo)
    assert "exec bash" in wrapper and str(repo / "reproduce.sh") in wrapper
    result = slurm_result(plan, returncode=0, log_exists=True)
    assert (result["executed"], result["exit_code"], result["partition"], result["cpus"]) == \
        (True, 0, "sx40", 16)
    # The full legacy line, token by token (the "8 options plus the wrapper" of spec §9 item 6).
    assert cmd == ["sbatch", "--wait", "--partition", "sx40", "--cpus-per-task", "16",
                   "--time", "00:10:00", "--job-name", "ari-ors", "--chdir", str(repo),
                   "--output", str(repo / "reproduce.log"), "--export", "ALL",
                   str(repo / ".slurm_wrap.sh")]


def test_v11_sbatch_missing_raises(repo):
    with pytest.raises(AriRuntimeError, match=r"sbatch.*not on PATH"):
        build_sbatch_argv(ReproduceArgs(), {"ARI_SLURM_PARTITION": "sx40"}, repo,
                          has_gres=True, bind_flags=True, has_sbatch=False)


def test_v12_sbatch_missing_with_fallback_runs_locally(repo):
    plan = plan_slurm_dispatch(ReproduceArgs(), {"ARI_SLURM_PARTITION": "sx40",
                                                 "ARI_PHASE1_ALLOW_FALLBACK": "1"},
                               repo, has_gres=True, bind_flags=True, has_sbatch=False)
    assert plan.argv == () and "sbatch not on PATH" in plan.local_fallback
    assert "partition" not in plan.result_fields()


def test_v13_no_partition_raises(bare_repo):
    with pytest.raises(AriRuntimeError, match="no partition could be resolved"):
        build_sbatch_argv(ReproduceArgs(), {}, bare_repo, has_gres=True, bind_flags=True)


def test_v14_no_partition_with_fallback_runs_locally(bare_repo):
    plan = plan_slurm_dispatch(ReproduceArgs(), {"ARI_PHASE1_ALLOW_FALLBACK": "1"}, bare_repo,
                               has_gres=True, bind_flags=True)
    assert plan.argv == () and "no partition" in plan.local_fallback
    assert build_sbatch_argv(ReproduceArgs(), {"ARI_PHASE1_ALLOW_FALLBACK": "1"}, bare_repo,
                             has_gres=True, bind_flags=True) == []


def test_v15_sbatch_error_is_surfaced(repo):
    plan = plan_slurm_dispatch(ReproduceArgs(), {"ARI_SLURM_PARTITION": "sx40"}, repo,
                               has_gres=True, bind_flags=True)
    result = slurm_result(plan, returncode=1, stdout="", stderr="bad partition\n",
                          log_exists=False)
    assert result["executed"] is False and result["exit_code"] == 1
    assert "bad partition" in result["error"] and result["partition"] == "sx40"


def test_v16_explicit_slurm_kind_dispatches_to_slurm(repo):
    env = {"ARI_SLURM_PARTITION": "sx40"}
    kind = select_sandbox("slurm", env, has_bin=bins("sbatch"), docker_works=False)
    assert kind == "slurm" and unknown_sandbox_error(kind) == ""
    plan = plan_slurm_dispatch(ReproduceArgs(partition="sx40", cpus=8), env, repo,
                               has_gres=True, bind_flags=True, rubric_max_runtime_sec=60)
    assert "sbatch" in plan.argv[0]
    result = {"sandbox_kind": kind, **slurm_result(plan, returncode=0, log_exists=True)}
    assert (result["sandbox_kind"], result["executed"], result["exit_code"],
            result["partition"]) == ("slurm", True, 0, "sx40")
    assert value_after(list(plan.argv), "--time") == "00:01:00"


def test_v17_unknown_sandbox_kind():
    kind = select_sandbox("quantum-foam", {}, has_bin=bins(), docker_works=False)
    assert "unknown sandbox_kind" in unknown_sandbox_error(kind)


# -- v18-v19: site heuristics ---------------------------------------------------------------

@pytest.mark.parametrize("path, expected", [
    pytest.param("/home/alice", True, id="v18a-home"),
    pytest.param("/tmp/foo", False, id="v18b-tmp"),
    pytest.param("/var/tmp/x", False, id="v18c-var-tmp"),
    pytest.param("/work/user/repo", True, id="v18d-work"),
    pytest.param("/scratch/run-42", True, id="v18e-scratch"),
    pytest.param("/lustre/foo", True, id="v18f-lustre"),
    pytest.param("/nfs/bar", True, id="v18g-nfs"),
    pytest.param("/workshop/x", False, id="v18h-prefix-needs-a-slash"),
])
def test_is_shared_fs(path, expected):
    assert ari_thinks_shared(path, "/u/alice", realpath=lambda p: p.replace("/home/alice", "/u/alice")) \
        is expected


def as_is(path: str) -> str:
    """A realpath for paths that are already resolved."""
    return path


@pytest.mark.parametrize("path, expected", [
    ("/home/alice", True), ("/home/alice/ckpt", True), ("/data", True), ("/workspace/x", False),
    ("/gpfs/work/x", False), ("/opt/x", False),
])
def test_is_shared_fs_prefix_boundaries(path, expected):
    assert ari_thinks_shared(path, "/home/alice", realpath=as_is) is expected


def test_is_shared_fs_uses_the_resolved_home_component_wise():
    assert ari_thinks_shared("/gpfs/home/bob/x", "/gpfs/home/bob", realpath=as_is) is True
    assert ari_thinks_shared("/gpfs/home/bobby", "/gpfs/home/bob", realpath=as_is) is False


def test_is_shared_fs_without_a_home_only_the_prefixes_count():
    assert ari_thinks_shared("/work/alice/x", None, realpath=as_is) is True
    assert ari_thinks_shared("/gpfs/home/bob/x", None, realpath=as_is) is False


def test_is_shared_fs_judges_symlinks_by_target(tmp_path):
    target = tmp_path / "gpfs-work"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target)
    assert ari_thinks_shared(link, tmp_path) is True          # under "home"
    assert ari_thinks_shared(link, "/nonexistent-home") is False


@pytest.mark.parametrize("output, expected", [
    pytest.param(None, False, id="v19a-no-sinfo"),
    pytest.param("gpu:v100:4\ngpu:a100:8\n", True, id="v19b-gpu-gres"),
    pytest.param("(null)\n(null)\n", False, id="v19c-null"),
    pytest.param("(null)\nmps:100\n", True, id="v19d-any-gres-type-counts"),
    pytest.param("\n  \n", False, id="v19e-blank"),
])
def test_slurm_has_gres(output, expected):
    assert has_gres_from_sinfo(output) is expected


# -- v20-v32: the extended sbatch flags ------------------------------------------------------

def test_v20_exclusive(repo):
    assert "--exclusive" in argv_for(repo, exclusive=True)


@pytest.mark.parametrize("kwargs, token", [
    pytest.param({"memory_gb_per_node": 128}, "--mem=128G", id="v21a-mem"),
    pytest.param({"memory_gb_per_cpu": 4}, "--mem-per-cpu=4G", id="v21b-mem-per-cpu"),
])
def test_v21_memory(repo, kwargs, token):
    assert token in argv_for(repo, **kwargs)


def test_v22_typed_gres_only(repo):
    cmd = argv_for(repo, gpus_per_task=2, gpu_type="v100")
    assert "--gres=gpu:v100:2" in cmd
    assert "--gpus-per-task" not in cmd and "--gpus-per-node" not in cmd


def test_v23_constraint_and_cpu_bind(repo):
    cmd = argv_for(repo, constraint="skylake", cpu_bind="cores")
    assert "--constraint=skylake" in cmd and "--cpu-bind=cores" in cmd


def test_v24_extra_sbatch_args_verbatim_before_wrapper(repo):
    cmd = argv_for(repo, extra_sbatch_args=["--account=projX", "--reservation=res1"])
    assert cmd[-3:] == ["--account=projX", "--reservation=res1", str(repo / ".slurm_wrap.sh")]


def test_v25_full_argument_set_exact_order(repo):
    cmd = argv_for(repo, nodes=4, ntasks=32, ntasks_per_node=8, nodelist="node[01-04]",
                   exclude_nodes="badnode01", exclusive=True, gpus_per_task=1, gpus_per_node=4,
                   gpu_type="v100", memory_gb_per_node=256, memory_gb_per_cpu=8,
                   constraint="skylake", cpu_bind="cores", mem_bind="local",
                   hint="nomultithread", extra_sbatch_args=["--account=projX"])
    assert cmd == [
        "sbatch", "--wait", "--partition", "sx40", "--cpus-per-task", "8", "--time", "00:10:00",
        "--job-name", "ari-ors", "--chdir", str(repo), "--output", str(repo / "reproduce.log"),
        "--export", "ALL",
        "--nodes", "4", "--ntasks", "32", "--ntasks-per-node", "8", "--nodelist", "node[01-04]",
        "--exclude", "badnode01", "--exclusive", "--gres=gpu:v100:1", "--mem=256G",
        "--mem-per-cpu=8G", "--constraint=skylake", "--cpu-bind=cores", "--mem-bind=local",
        "--hint=nomultithread", "--account=projX", str(repo / ".slurm_wrap.sh")]


def test_v26_gpu_without_gres_raises(repo):
    with pytest.raises(AriRuntimeError, match=r"GPU resources requested.*no GRES") as info:
        argv_for(repo, has_gres=False, gpus_per_task=1, gpu_type="v100")
    assert "gpu_type='v100', gpus_per_task=1, gpus_per_node=0" in str(info.value)
    assert "ARI_SLURM_ALLOW_NO_GRES=1" in str(info.value)


def test_v27_allow_no_gres_drops_every_gpu_flag(repo):
    plan = plan_slurm_dispatch(
        ReproduceArgs(gpus_per_task=1, gpus_per_node=2, gpu_type="v100"),
        {"ARI_SLURM_ALLOW_NO_GRES": "1"}, repo, has_gres=False, bind_flags=True)
    cmd = list(plan.argv)
    assert not any(tok.startswith("--gres=") for tok in cmd)
    assert "--gpus-per-task" not in cmd and "--gpus-per-node" not in cmd
    assert "--ntasks" not in cmd  # pairing sees the zeroed count
    assert plan.gpu == {"per_task": 0, "per_node": 0, "type": ""}
    assert any("ARI_SLURM_ALLOW_NO_GRES=1" in w for w in plan.warnings)


def test_v28_gpus_per_task_pairs_ntasks_1(repo):
    cmd = argv_for(repo, gpus_per_task=1)
    assert value_after(cmd, "--gpus-per-task") == "1"
    assert value_after(cmd, "--ntasks") == "1"
    assert cmd.index("--ntasks") < cmd.index("--gpus-per-task")


def test_v29_explicit_ntasks_is_not_duplicated(repo):
    cmd = argv_for(repo, ntasks=4, gpus_per_task=2)
    assert cmd.count("--ntasks") == 1 and value_after(cmd, "--ntasks") == "4"


def test_v30_bind_flags_dropped_when_sbatch_does_not_advertise_them(repo):
    plan = plan_slurm_dispatch(ReproduceArgs(cpu_bind="cores", mem_bind="local"), {}, repo,
                               has_gres=True, bind_flags=False)
    assert not any(t.startswith(("--cpu-bind", "--mem-bind")) for t in plan.argv)
    assert len(plan.warnings) == 2 and "srun --cpu-bind=cores" in plan.warnings[0]


def test_v31_nodelist_pair_form(repo):
    cmd = argv_for(repo, nodelist="sx40")
    assert value_after(cmd, "--nodelist") == "sx40"


def test_v32_no_new_args_no_new_flags(repo):
    cmd = argv_for(repo)
    assert not set(NEW_PAIR_FLAGS) & set(cmd)
    assert not any(tok.startswith(NEW_EQ_PREFIXES) for tok in cmd)


# -- v33-v35: the rubric's execution_profile ------------------------------------------------

RUBRIC_33 = {"kind": "mpi_gpu", "requested_nodes": 4, "min_ranks": 32, "ntasks_per_node": 8,
             "exclusive": True, "requested_gpus_per_task": 1, "gpu_type": "v100",
             "memory_gb_per_node": 256, "constraint": "skylake", "cpu_bind": "cores",
             "extra_sbatch_args": ["--account=projX"]}


@pytest.mark.parametrize("profile", [
    pytest.param(RUBRIC_33, id="v33-rubric-profile-as-json"),
    pytest.param(ExecutionProfile.from_json(RUBRIC_33), id="v33-rubric-profile-as-object"),
])
def test_v33_rubric_profile_fills_the_flags(repo, profile):
    plan = plan_slurm_dispatch(ReproduceArgs(), {}, repo, has_gres=True, bind_flags=True,
                               profile=profile, rubric_max_runtime_sec=7200)
    cmd = list(plan.argv)
    start = cmd.index("--nodes")
    assert cmd[start:-1] == ["--nodes", "4", "--ntasks", "32", "--ntasks-per-node", "8",
                             "--exclusive", "--gres=gpu:v100:1", "--mem=256G",
                             "--constraint=skylake", "--cpu-bind=cores", "--account=projX"]
    assert "--gpus-per-task" not in cmd
    assert value_after(cmd, "--time") == "02:00:00"
    fields = slurm_result(plan, returncode=0, log_exists=True)
    assert (fields["nodes"], fields["ntasks"], fields["exclusive"], fields["gpu"]["type"]) == \
        (4, 32, True, "v100")


def test_v34_caller_wins_and_exclusive_is_ored(repo):
    cmd = argv_for(repo, nodes=2, profile={"requested_nodes": 4, "exclusive": True})
    assert value_after(cmd, "--nodes") == "2" and "--exclusive" in cmd


def test_v35_rubric_without_profile(repo):
    plan = plan_slurm_dispatch(ReproduceArgs(), {}, repo, has_gres=True, bind_flags=True,
                               profile=None, rubric_max_runtime_sec=60)
    assert not set(NEW_PAIR_FLAGS) & set(plan.argv)
    assert not any(tok.startswith(NEW_EQ_PREFIXES) for tok in plan.argv)
    result = slurm_result(plan, returncode=0, log_exists=True)
    assert not {"nodes", "ntasks", "exclusive", "gpu"} & set(result)


# -- beyond ARI's vectors: the corners the preview must also get right ------------------------

def test_ntasks_via_extra_args_does_not_suppress_auto_pair(repo):
    cmd = argv_for(repo, gpus_per_task=1, extra_sbatch_args=["--ntasks=2"])
    assert value_after(cmd, "--ntasks") == "1" and "--ntasks=2" in cmd


def test_typed_gres_count_falls_back_to_per_node_then_1(repo):
    assert "--gres=gpu:a100:4" in argv_for(repo, gpus_per_node=4, gpu_type="a100")
    assert "--gres=gpu:a100:1" in argv_for(repo, gpu_type="a100")


def test_untyped_gpus_keep_both_flags(repo):
    cmd = argv_for(repo, gpus_per_task=1, gpus_per_node=4)
    assert value_after(cmd, "--gpus-per-task") == "1" and value_after(cmd, "--gpus-per-node") == "4"


def test_mem_and_mem_per_cpu_are_both_emitted_as_ari_does(repo):
    cmd = argv_for(repo, memory_gb_per_node=16, memory_gb_per_cpu=2)
    assert "--mem=16G" in cmd and "--mem-per-cpu=2G" in cmd


def test_bind_flags_can_be_partially_supported(repo):
    plan = plan_slurm_dispatch(ReproduceArgs(cpu_bind="cores", mem_bind="local"), {}, repo,
                               has_gres=True, bind_flags=bind_flags_from_help(
                                   "      --mem-bind=BIND    Bind memory to locality domains\n"))
    assert "--mem-bind=local" in plan.argv and "--cpu-bind=cores" not in plan.argv


@pytest.mark.parametrize("env, cpus", [
    ({}, 8), ({"ARI_SLURM_CPUS": "16"}, 16), ({"ARI_SLURM_CPUS": " 4 "}, 4),
])
def test_cpus_from_env(repo, env, cpus):
    assert value_after(argv_for(repo, env), "--cpus-per-task") == str(cpus)


@pytest.mark.parametrize("raw", ["", "sixteen", "4.0"])
def test_malformed_ari_slurm_cpus_raises_value_error_as_ari_does(repo, raw):
    with pytest.raises(AriValueError, match="ARI_SLURM_CPUS"):
        argv_for(repo, {"ARI_SLURM_CPUS": raw})


def test_caller_cpus_wins_over_env(repo):
    assert value_after(argv_for(repo, {"ARI_SLURM_CPUS": "bad"}, cpus=2), "--cpus-per-task") == "2"


def test_walltime_precedence(repo):
    assert value_after(argv_for(repo, {"ARI_SLURM_WALLTIME": "02:00:00"}), "--time") == "02:00:00"
    assert value_after(argv_for(repo, {"ARI_SLURM_WALLTIME": "02:00:00"}, walltime="00:30:00"),
                       "--time") == "00:30:00"
    plan = plan_slurm_dispatch(ReproduceArgs(), {}, repo, has_gres=True, bind_flags=True)
    assert plan.walltime == "06:00:00"  # 21600 s default


def test_gres_check_runs_before_the_cpus_parse(repo):
    with pytest.raises(AriRuntimeError, match="GPU resources requested"):
        argv_for(repo, {"ARI_SLURM_CPUS": ""}, has_gres=False, gpus_per_node=1)


def test_shared_fs_warning_only(repo):
    plan = plan_slurm_dispatch(ReproduceArgs(), {}, repo, has_gres=True, bind_flags=True,
                               home="/nonexistent-home")
    assert plan.argv and any("node-local" in w for w in plan.warnings)


def test_merge_takes_caller_values_then_profile():
    merged = merge_with_profile(ReproduceArgs(gpu_type="a100", extra_sbatch_args=["--qos=x"]),
                                {"gpu_type": "v100", "requested_gpus_per_node": 2,
                                 "requested_nodelist": None, "extra_sbatch_args": ["--a=b"],
                                 "module_loads": ["x"]})
    assert (merged.gpu_type, merged.gpus_per_node, merged.nodelist) == ("a100", 2, "")
    assert merged.extra_sbatch_args == ["--qos=x"]


def test_args_json_round_trip_and_errors():
    args = ReproduceArgs.from_json({"partition": "small", "nodes": 2, "exclusive": True,
                                    "extra_sbatch_args": ["--qos=debug"]})
    assert ReproduceArgs.from_json(args.to_json()) == args
    assert args.to_json() == {"partition": "small", "nodes": 2, "exclusive": True,
                              "extra_sbatch_args": ["--qos=debug"]}
    with pytest.raises(ArgsError) as info:
        ReproduceArgs.from_json({"nodes": "2", "exclusive": 1, "colour": "red",
                                 "hint": "a\nb"})
    assert [m.split(":")[0] for m in info.value.messages] == ["nodes", "exclusive", "colour",
                                                              "hint"]


def test_shell_line_is_quoted(tmp_path):
    repo = tmp_path / "my repo"
    plan = plan_slurm_dispatch(ReproduceArgs(partition="small"), {}, repo, has_gres=True,
                               bind_flags=True)
    assert f"--chdir '{repo}'" in plan.shell_line()


@pytest.mark.parametrize("argv, groups", [
    (["sbatch", "--wait", "--partition", "small", "--time", "01:00:00", "/w/c/.slurm_wrap.sh"],
     ["sbatch", "--wait", "--partition small", "--time 01:00:00", "/w/c/.slurm_wrap.sh"]),
    # a switch before the script, --flag=value and a value that needs quotes
    (["sbatch", "--chdir", "/w/my run", "--mem=4G", "--exclusive", "/w/s.sh"],
     ["sbatch", "--chdir '/w/my run'", "--mem=4G", "--exclusive", "/w/s.sh"]),
])
def test_a_command_line_breaks_only_between_flag_value_pairs(argv, groups):
    from ari_jupyter.ari.sbatch import argument_groups

    assert argument_groups(argv) == groups
    assert " ".join(groups) == shlex.join(argv)
