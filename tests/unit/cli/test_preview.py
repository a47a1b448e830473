"""``ari-jupyter preview sbatch``: argv JSON, ARI's errors as exit 1, and the site facts probed
from stand-in ``sinfo``/``sbatch`` programs when --gres/--bind-flags are not given."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BASE_ENV_DROP = ("ARI_SLURM_PARTITION", "SLURM_PARTITION", "ARI_SLURM_CPUS", "ARI_SLURM_WALLTIME",
                 "ARI_SLURM_ALLOW_NO_GRES", "ARI_PHASE1_ALLOW_FALLBACK", "SLURM_CONF")


@pytest.fixture
def ckpt(tmp_path: Path) -> Path:
    repo = tmp_path / "ckpt" / "repro_sandbox"
    repo.mkdir(parents=True)
    (tmp_path / "ckpt" / "launch_config.json").write_text(json.dumps({"partition": "small"}))
    return tmp_path / "ckpt"


def preview(*argv: str, env_extra: dict | None = None, path_dir: Path | None = None):
    env = {k: v for k, v in os.environ.items() if k not in BASE_ENV_DROP}
    if path_dir is not None:
        env["PATH"] = f"{path_dir}:/usr/bin:/bin"
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "preview", "sbatch", *argv],
                          capture_output=True, text=True, env=env, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def write(path: Path, data) -> str:
    path.write_text(json.dumps(data))
    return str(path)


def test_argv_and_partition_source(ckpt, tmp_path):
    args = write(tmp_path / "args.json", {"nodes": 2, "cpus": 2, "walltime": "00:10:00"})
    code, out, _ = preview("--json", "--repo-dir", str(ckpt / "repro_sandbox"), "--args", args,
                           "--gres", "no", "--bind-flags", "no", "--sbatch", "yes")
    assert code == 0
    result = json.loads(out)
    repo = str(ckpt / "repro_sandbox")
    assert result["argv"] == [
        "sbatch", "--wait", "--partition", "small", "--cpus-per-task", "2", "--time", "00:10:00",
        "--job-name", "ari-ors", "--chdir", repo, "--output", repo + "/reproduce.log",
        "--export", "ALL", "--nodes", "2", repo + "/.slurm_wrap.sh"]
    assert result["partition_source"] == "launch_config.json"


def test_environment_beats_launch_config(ckpt):
    code, out, _ = preview("--json", "--repo-dir", str(ckpt / "repro_sandbox"), "--gres", "no",
                           "--bind-flags", "no", "--sbatch", "yes",
                           env_extra={"ARI_SLURM_PARTITION": "large", "ARI_SLURM_CPUS": "3"})
    result = json.loads(out)
    assert code == 0 and result["partition_source"] == "ARI_SLURM_PARTITION"
    assert result["argv"][2:6] == ["--partition", "large", "--cpus-per-task", "3"]


def test_rubric_envelope_profile_and_runtime(ckpt, tmp_path):
    rubric = write(tmp_path / "rubric.json", {"reproduce_contract": {
        "script_path": "reproduce.sh", "max_runtime_sec": 1800,
        "execution_profile": {"kind": "mpi", "requested_nodes": 2, "min_ranks": 4,
                              "cpu_bind": "cores"}}})
    code, out, _ = preview("--json", "--repo-dir", str(ckpt / "repro_sandbox"), "--profile",
                           rubric, "--gres", "yes", "--bind-flags", "no", "--sbatch", "yes")
    result = json.loads(out)
    assert code == 0
    assert result["argv"][result["argv"].index("--time") + 1] == "00:30:00"
    assert result["argv"][16:20] == ["--nodes", "2", "--ntasks", "4"]
    assert not any(t.startswith("--cpu-bind") for t in result["argv"])
    assert "cpu_bind" in result["warnings"][0]


@pytest.mark.parametrize("files, extra, env_extra, fragment", [
    ({"args": {"gpus_per_node": 1}}, ["--gres", "no"], {}, "no GRES configured"),
    ({}, ["--gres", "no"], {"ARI_SLURM_CPUS": ""}, "ARI_SLURM_CPUS"),
    ({}, ["--gres", "no", "--sbatch", "no"], {}, "not on PATH"),
    ({"profile": {"constraint": "skylake\nrm -rf"}}, ["--gres", "no"], {},
     "constraint: must not contain control characters"),
    ({"profile": {"requested_nodes": "four"}}, ["--gres", "no"], {}, "ARI's int() fails"),
    ({"profile": {"reproduce_contract": {"max_runtime_sec": "1h"}}}, ["--gres", "no"], {},
     "max_runtime_sec='1h': ARI's int() fails"),
    ({"args": {"nodes": "two"}}, ["--gres", "no"], {}, "nodes: must be an integer"),
])
def test_errors_exit_1_with_json(ckpt, tmp_path, files, extra, env_extra, fragment):
    argv = ["--json", "--repo-dir", str(ckpt / "repro_sandbox"), "--bind-flags", "no", *extra]
    if "--sbatch" not in extra:
        argv += ["--sbatch", "yes"]
    for name, data in files.items():
        argv += [f"--{name}", write(tmp_path / f"{name}.json", data)]
    code, out, _ = preview(*argv, env_extra=env_extra)
    assert code == 1
    assert fragment in json.loads(out)["error"]


@pytest.mark.parametrize("rubric, argv_has, warning", [
    # ARI coerces instead of validating (checked against ARI's run_reproduce in tests/ari_real)
    ({"execution_profile": {"requested_nodes": "4"}}, ["--nodes", "4"],
     "requested_nodes: must be an integer >= 1, got string '4'; ARI's int() makes it 4, so the "
     "job gets --nodes 4"),
    ({"execution_profile": {"exclusive": "false"}}, ["--exclusive"],
     "exclusive: must be true or false, got string 'false'; ARI's bool() makes it True, so the "
     "job gets --exclusive"),
    ({"execution_profile": {"kind": "warp_drive", "min_ranks": 2}}, ["--ntasks", "2"],
     "kind: must be one of cpu_single, gpu_single, gpu_multi, mpi, mpi_gpu; got 'warp_drive'; ARI's "
     "reproduce dispatcher does not read kind, so the sbatch line is unaffected"),
    ({"execution_profile": {"memory_gb_per_node": 7.9}}, ["--mem=7G"],
     "memory_gb_per_node: must be an integer >= 0, got 7.9; ARI's int() makes it 7, so the job "
     "gets --mem=7G"),
    ({"max_runtime_sec": 3600.0}, ["--time", "01:00:00"], None),
    ({"max_runtime_sec": "7200"}, ["--time", "02:00:00"], None),
])
def test_values_ari_coerces_are_previewed_as_ari_runs_them(ckpt, tmp_path, rubric, argv_has, warning):
    profile = write(tmp_path / "rubric.json", {"reproduce_contract": rubric})
    code, out, _ = preview("--json", "--repo-dir", str(ckpt / "repro_sandbox"), "--profile", profile,
                           "--gres", "no", "--bind-flags", "no", "--sbatch", "yes")
    result = json.loads(out)
    assert code == 0, result
    argv = result["argv"]
    assert any(argv[i:i + len(argv_has)] == argv_has for i in range(len(argv))), argv
    if warning is None:
        assert result["warnings"] == []
    else:
        assert any(w.startswith(warning) for w in result["warnings"]), result["warnings"]


def test_no_partition_is_aris_error(tmp_path):
    (tmp_path / "repo").mkdir()
    code, out, _ = preview("--json", "--repo-dir", str(tmp_path / "repo"), "--gres", "no",
                           "--bind-flags", "no", "--sbatch", "yes")
    assert code == 1 and "no partition could be resolved" in json.loads(out)["error"]


def test_fallback_prints_empty_argv(tmp_path):
    (tmp_path / "repo").mkdir()
    code, out, _ = preview("--json", "--repo-dir", str(tmp_path / "repo"), "--gres", "no",
                           "--bind-flags", "no", "--sbatch", "yes",
                           env_extra={"ARI_PHASE1_ALLOW_FALLBACK": "1"})
    result = json.loads(out)
    assert code == 0 and result["argv"] == [] and "no partition" in result["local_fallback"]


def _stand_in(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


@pytest.mark.parametrize("gres_out, help_text, gres_ok, bind", [
    ("gpu:v100:4", "  --cpu-bind=type  bind\n  --mem-bind=type bind\n", True, True),
    ("(null)", "Usage: sbatch [OPTIONS(0)...]\n", False, False),
])
def test_site_facts_are_probed_when_not_given(ckpt, tmp_path, gres_out, help_text, gres_ok,
                                              bind):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _stand_in(bin_dir, "sinfo", f'case "$*" in *%G*) echo "{gres_out}";; '
                                '*) echo "small*|up|1:00:00|2|4|4000|(null)";; esac\n')
    _stand_in(bin_dir, "sbatch", f"cat <<'EOF' >&2\n{help_text}EOF\n")
    args = write(tmp_path / "args.json", {"gpus_per_node": 2, "cpu_bind": "cores"})
    code, out, _ = preview("--json", "--repo-dir", str(ckpt / "repro_sandbox"), "--args", args,
                           path_dir=bin_dir)
    result = json.loads(out)
    if not gres_ok:
        assert code == 1 and "no GRES configured" in result["error"]
        return
    assert code == 0
    assert "--gpus-per-node" in result["argv"]
    assert ("--cpu-bind=cores" in result["argv"]) is bind


def test_missing_sbatch_is_detected_like_ari(ckpt, tmp_path):
    bin_dir = tmp_path / "empty-bin"
    bin_dir.mkdir()
    env = {"PATH": str(bin_dir)}
    proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "preview", "sbatch", "--json",
                           "--repo-dir", str(ckpt / "repro_sandbox")],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 1 and "not on PATH" in json.loads(proc.stdout)["error"]


def test_human_output_is_a_quoted_shell_line(tmp_path):
    repo = tmp_path / "my ckpt" / "repro_sandbox"
    repo.mkdir(parents=True)
    code, out, err = preview("--repo-dir", str(repo), "--gres", "no", "--bind-flags", "no",
                             "--sbatch", "yes", env_extra={"ARI_SLURM_PARTITION": "small"})
    assert code == 0 and f"--chdir '{repo}'" in out and "ARI_SLURM_PARTITION" in err


# -- one rule for the bind flags: preview reads `sbatch --help` as the sbatch probe does ---------

def _sbatch_probe_flags(host):
    from ari_jupyter.slurm.allocation import Allocation
    from ari_jupyter.probes import ProbeContext, run_probes_sync

    (result,) = run_probes_sync(host, ProbeContext(allocation=Allocation.from_env(host.env),
                                                   only=("sbatch",)))
    return result.data.get("bind_flags")


@pytest.mark.parametrize("site_name, flags", [
    ("sx40", {"--mem-bind"}),
    ("gres-cluster", {"--mem-bind"}),
    ("rccs-cloud", set()),
    ("laptop", set()),  # no sbatch: no answer, both flags dropped
])
def test_preview_and_the_sbatch_probe_agree_on_every_demo_site(site_name, flags):
    from ari_jupyter.cli.preview import probe_bind_flags
    from ari_jupyter.hosts.recorded_site import RecordedSite

    host = RecordedSite.load(site_name)
    assert probe_bind_flags(host) == frozenset(flags)
    assert set(_sbatch_probe_flags(host) or ()) == flags


def test_sbatch_help_that_does_not_answer_drops_the_flags(monkeypatch):
    from ari_jupyter.cli import preview as preview_cli
    from ari_jupyter.hosts.recorded_site import RecordedCommand, RecordedSite

    slow = RecordedSite(name="slow", programs={"sbatch": "/usr/bin/sbatch"}, commands=[
        RecordedCommand(("sbatch", "--help"), "      --cpu-bind=type\n      --mem-bind=type\n",
                        delay=0.5)])
    assert preview_cli.probe_bind_flags(slow) == frozenset({"--cpu-bind", "--mem-bind"})
    monkeypatch.setattr(preview_cli, "HELP_TIMEOUT", 0.1)
    assert preview_cli.probe_bind_flags(slow) == frozenset()


def test_launch_config_written_by_emit_previews_the_wizards_line(ckpt):
    """The README passes a checkpoint's launch_config.json: its profile, the wizard's caller
    arguments and the .env beside it give the line the wizard shows, not ARI's defaults."""
    state = {"profile": {"kind": "mpi", "min_ranks": 8, "requested_nodes": 2, "ntasks_per_node": 4},
             "partition": "small", "max_cpus": 1, "walltime": "01:00:00", "nodes": 2}
    config = write(ckpt / "launch_config.json", {"partition": "small",
                                                 "ari_jupyter": {"state": state}})
    (ckpt / ".env").write_text("ARI_SLURM_PARTITION=small\nARI_SLURM_CPUS=1\n"
                               "ARI_SLURM_WALLTIME=01:00:00\n")
    code, out, err = preview("--json", "--repo-dir", str(ckpt / "repro_sandbox"), "--profile", config,
                             "--gres", "no", "--bind-flags", "no", "--sbatch", "yes")
    assert code == 0, err
    argv = json.loads(out)["argv"]
    assert argv[2:8] == ["--partition", "small", "--cpus-per-task", "1", "--time", "01:00:00"]
    assert argv[-7:-1] == ["--nodes", "2", "--ntasks", "8", "--ntasks-per-node", "4"]


@pytest.mark.parametrize("content", [None, "not json"])
def test_a_flag_file_that_cannot_be_read_is_a_usage_error(ckpt, tmp_path, content):
    path = tmp_path / "profile.json"
    if content is not None:
        path.write_text(content)
    code, out, _ = preview("--json", "--repo-dir", str(ckpt / "repro_sandbox"), "--gres", "no",
                           "--sbatch", "yes", "--bind-flags", "no", "--profile", str(path))
    assert code == 2  # as emit says of an unreadable --profile (README: exit codes)
    assert str(path) in json.loads(out)["error"]
