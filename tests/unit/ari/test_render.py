"""Checkpoint file renderers: golden files, and the safety rules every rendered value obeys.

Regenerate the golden files after an intended change with ``ARI_UPDATE_GOLDEN=1``.
"""
from __future__ import annotations
from repo_paths import TESTS

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from golden_support import assert_matches_golden

from ari_jupyter import __version__
from ari_jupyter.slurm.allocation import Allocation
from ari_jupyter.ari import choices, render
from ari_jupyter.ari.decided import decide
from ari_jupyter.ari.lint_experiment import lint_experiment, parse_experiment
from ari_jupyter.ari.profile import PRESETS
from ari_jupyter.ari.run_settings import RunSettings
from ari_jupyter.i18n import t as i18n_t
from ari_jupyter.wizard.state import WizardState
from ari_jupyter.base.verdict import ProbeResult

GOLDEN = TESTS / "golden" / "checkpoint"
WORKSPACE = "/work/alice/ari"
RUN_ID = "20260706120000_spgemm_scaling_on_two_nodes"
CHECKPOINT = f"{WORKSPACE}/checkpoints/{RUN_ID}"
SCRIPT = f"{WORKSPACE}/launch/{RUN_ID}.sh"
WRITTEN_AT = "2026-07-06T12:00:00+09:00"

ALLOC_ENV = {
    "SLURM_JOB_ID": "4242", "SLURM_JOB_NAME": "jupyter", "SLURM_CLUSTER_NAME": "rccs",
    "SLURM_JOB_PARTITION": "small", "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_JOB_NUM_NODES": "2",
    "SLURM_NTASKS": "4", "SLURM_TASKS_PER_NODE": "2(x2)", "SLURM_JOB_CPUS_PER_NODE": "8(x2)",
    "SLURM_CPUS_ON_NODE": "8", "SLURM_SUBMIT_DIR": "/work/alice",
}


CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def golden_state(**overrides) -> WizardState:
    """A complete, valid state with fixed values (the golden files are rendered from it)."""
    state = WizardState(
        allocation=Allocation.from_env(ALLOC_ENV),
        site_name="rccs-cloud",
        partition="small", partition_source="SLURM_JOB_PARTITION",
        profile=PRESETS["mpi"](),
        module_loads=["openmpi/4.1"],
        title="SpGEMM scaling on two nodes",
        goal=("Measure how a sparse matrix-matrix multiply scales from one to two nodes.\n"
              "We partition the matrix by rows across ranks.\n"
              "Metrics: the harness also prints bandwidth"),
        metrics=["GFlops", "GB/s"],
        min_expected_metric=5,
        provided_files=["/work/alice/inputs/matrix.mtx", "/work/alice/inputs/baseline.c"],
        max_cpus=4, walltime="01:00:00", nodes=2,
        workspace=WORKSPACE, run_id=RUN_ID, lang="en",
    )
    state.set_probe_result(ProbeResult("sbatch", "ok", "sbatch found", command="which sbatch",
                                       data={"path": "/usr/bin/sbatch"}))
    state.set_probe_result(ProbeResult("shared_fs", "ok", f"{WORKSPACE} is on nfs4 (/work): shared",
                                       data={"path": WORKSPACE, "fstype": "nfs4", "shared": True}))
    for name, value in overrides.items():
        setattr(state, name, value)
    return state


def _check_golden(name: str, text: str) -> None:
    """Compare with the golden file; the tool version is a placeholder there."""
    text = text.replace(f"ari-jupyter {__version__}", "ari-jupyter @VERSION@").replace(
        f'"version": "{__version__}"', '"version": "@VERSION@"')
    assert_matches_golden(GOLDEN / name, text)


def _rendered() -> dict[str, str]:
    state = golden_state()
    experiment = render.render_experiment_md(state.choices())
    env = render.render_env(state.choices())
    files = {"experiment.md": hashlib.sha256(experiment.encode()).hexdigest(),
             ".env": hashlib.sha256(env.encode()).hexdigest()}
    # as emit writes it: the script checks the files' hashes, launch_config.json records its own
    script = render.render_handoff_script(state.choices(), CHECKPOINT, SCRIPT, api_key="OPENAI_API_KEY",
                                          ari_jupyter="/opt/ari/venv/bin/ari-jupyter",
                                          files_sha256=files)
    return {
        "experiment.md": experiment,
        "checkpoint.env": env,
        "launch_config.json": render.render_launch_config(
            state.choices(), files=files, written_at=WRITTEN_AT,
            # of the golden handoff.sh (its version normalized), so that the two goldens agree
            handoff_sha256=hashlib.sha256(script.replace(
                f"ari-jupyter {__version__}", "ari-jupyter @VERSION@").encode()).hexdigest(),
            decided=decide(state.choices())),  # as emit gives it
        "handoff.sh": script,
        "bfts_env.sh": render.render_bfts_env(state.choices()),
    }


@pytest.mark.parametrize("name", ["experiment.md", "checkpoint.env", "launch_config.json", "handoff.sh",
                                  "bfts_env.sh"])
def test_rendered_files_match_golden(name):
    _check_golden(name, _rendered()[name])


def test_golden_experiment_md_reads_back_and_lints_clean():
    state = golden_state()
    text = render.render_experiment_md(state.choices())
    parsed = parse_experiment(text)
    assert parsed.partition == "small" and parsed.max_cpus == 4
    assert parsed.primary_metric == "GFlops"
    assert parsed.evaluator_metrics == ("GFlops", "GB/s")
    assert parsed.min_expected_metric == 5
    assert parsed.provided_files == tuple(state.provided_files)
    findings = lint_experiment(text, partition="small", cpus=4, env=render.env_values(state.choices()).values,
                               check_files=False)
    # Only the goal's own "partition the matrix" is noted (after the Partition line: harmless).
    assert [(f.rule, f.severity) for f in findings] == [("E1", "info")]


def test_partition_line_comes_before_every_other_partition_word():
    text = render.render_experiment_md(golden_state(title="Graph partition benchmark").choices())
    first_line = text.splitlines()[0]
    assert first_line == "Partition: small, Max CPUs: 4"
    assert text.index("Graph partition") > text.index("Partition: small")


def test_launch_config_has_aris_types_and_the_state():
    config = json.loads(_rendered()["launch_config.json"])
    assert config["profile"] == "hpc" and config["partition"] == "small"
    assert isinstance(config["hpc_cpus"], int) and isinstance(config["hpc_walltime"], str)
    for key in ("include_ear", "include_review", "include_reproduce"):
        assert config[key] is True
    section = config["ari_jupyter"]
    assert section["version"] and section["written_at"] == WRITTEN_AT
    assert WizardState.from_json(section["state"]).to_json() == golden_state().to_json()


@pytest.mark.parametrize("max_cpus", [None, 0])
def test_launch_config_without_max_cpus_says_so(max_cpus):
    """A fresh wizard has no Max CPUs yet: the preview must name the field, not crash."""
    state = golden_state()
    state.max_cpus = max_cpus
    with pytest.raises(render.RenderError, match="Max CPUs must be a positive integer"):
        render.render_launch_config(state.choices())


def test_env_file_is_valid_bash_and_sets_exactly_its_values(tmp_path):
    state = golden_state()
    env_file = tmp_path / "checkpoint.env"
    env_file.write_text(render.render_env(state.choices()))
    out = subprocess.run(["bash", "-c", f'set -a; . {env_file}; set +a; env -0'],
                         capture_output=True, text=True, check=True, env={"PATH": os.environ["PATH"]})
    seen = dict(item.split("=", 1) for item in out.stdout.split("\0") if "=" in item)
    for key, value in render.env_values(state.choices()).values.items():
        assert seen[key] == value
    for line in render.render_env(state.choices()).splitlines():
        assert line.startswith("#") or ("=" in line and " " not in line and '"' not in line
                                        and "'" not in line and not line.startswith("export"))


def test_env_includes_allow_no_gres_only_when_chosen():
    assert "ARI_SLURM_ALLOW_NO_GRES" not in render.env_values(golden_state().choices()).values
    chosen = render.env_values(golden_state(allow_no_gres=True).choices()).values
    assert chosen["ARI_SLURM_ALLOW_NO_GRES"] == "1"


@pytest.mark.parametrize("value, ok", [
    ("small", True), ("/work/alice/ari/slurm_logs", True), ("01:00:00", True), ("gpu.a100", True),
    ("a b", False), ("$(id)", False), ("`id`", False), ("a;b", False), ("'q'", False),
    ('"q"', False), ("~/x", False), ("a#b", False), ("line\nbreak", False), ("", False),
])
def test_env_value_rule(value, ok):
    assert (choices.env_value_problem(value) == "") is ok


def test_render_env_refuses_secret_names_and_unsafe_values():
    with pytest.raises(render.RenderError, match="secret"):
        render.render_env(golden_state().choices(), is_secret_name=lambda key: key == "ARI_SLURM_CPUS")
    with pytest.raises(render.RenderError, match="cannot carry"):
        render.render_env(golden_state(walltime="1 hour").choices())


def test_handoff_script_is_bash_n_clean(tmp_path):
    script = tmp_path / "handoff.sh"
    script.write_text(_rendered()["handoff.sh"])
    subprocess.run(["bash", "-n", str(script)], check=True)


@pytest.mark.parametrize("lang, said", [
    ("en", "ari-jupyter hand-off: 'ari' is not on PATH; activate ARI's environment first."),
    ("ja", "ari-jupyter 引き継ぎ: PATH に 'ari' がありません。先に ARI の環境を有効にしてください。"),
    ("zh", "ari-jupyter 交接：PATH 中没有 'ari'；请先激活 ARI 的环境。"),
])
def test_the_handoff_script_speaks_the_runs_language(tmp_path, lang, said):
    """Run for real where nothing is on PATH but bash's own: it stops at ``ari`` in the
    language the run was written in."""
    workspace = tmp_path / "work"
    workspace.mkdir()
    checkpoint = workspace / "checkpoints" / "r"
    script = tmp_path / "handoff.sh"
    script.write_text(render.render_handoff_script(
        golden_state(lang=lang, module_loads=[], workspace=str(workspace), site_name="").choices(),
        str(checkpoint), str(script)), encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("date", "tee"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    ran = subprocess.run(["/bin/bash", str(script)], capture_output=True, text=True, timeout=30,
                         env={"PATH": str(bin_dir), "LANG": "C.UTF-8"})
    assert ran.returncode == 127
    assert ran.stderr.strip() == said


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_the_handoff_scripts_comments_are_in_the_runs_language_too(tmp_path, lang):
    """A researcher reads the script before running it: every comment is in the run's
    language (the command line to run is a command, and stays one), and bash still reads it."""
    text = render.render_handoff_script(golden_state(lang=lang).choices(), CHECKPOINT, SCRIPT,
                                        api_key="OPENAI_API_KEY")
    comments = [line.strip() for line in text.splitlines()
                if line.lstrip().startswith("#") and not line.startswith("#!")]
    commands = (f"#   bash {SCRIPT}", f"#   {text.rstrip().splitlines()[-1]}")
    prose = [line for line in comments if line not in commands]
    assert len(prose) == 10, comments
    assert all(CJK.search(line) for line in prose), [line for line in prose if not CJK.search(line)]
    script = tmp_path / "handoff.sh"
    script.write_text(text, encoding="utf-8")
    subprocess.run(["bash", "-n", str(script)], check=True)


@pytest.mark.parametrize("site, expected", [
    ("rccs-cloud", "demo site rccs-cloud"),
    ("my-site_2.b", "demo site my-site_2.b"),
    ("", "activate ARI's environment first"),             # this machine: a fault to fix
    ('x"; rm -rf ~; "', "activate ARI's environment first"),  # never a name bash would read
])
def test_on_a_demo_site_no_ari_is_where_the_exercise_ends(tmp_path, site, expected):
    """The hand-off written for a demo site stops at ``ari`` on this machine: it says that is
    the end of the exercise and names check-handoff with the checkpoint, not a fault."""
    workspace = tmp_path / "work"
    workspace.mkdir()
    checkpoint = workspace / "checkpoints" / "r"
    script = tmp_path / "handoff.sh"
    script.write_text(render.render_handoff_script(
        golden_state(module_loads=[], workspace=str(workspace), site_name=site).choices(), str(checkpoint),
        str(script)), encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ran = subprocess.run(["/bin/bash", str(script)], capture_output=True, text=True, timeout=30,
                         env={"PATH": str(bin_dir), "LANG": "C.UTF-8"})
    assert ran.returncode == 127 and expected in ran.stderr, ran.stderr
    if site == "rccs-cloud":
        assert f"ari-jupyter check-handoff {checkpoint}" in ran.stderr


@pytest.mark.parametrize("found_by_name", [True, False])
def test_the_check_it_names_works_in_a_terminal_whose_path_lost_ari_jupyter(tmp_path, found_by_name):
    """JupyterLab's terminal is a login shell, and Debian's /etc/profile sets PATH anew: a
    venv's ari-jupyter is then not found by name. The script names the one that wrote it by
    path then, and the one on PATH when there is one; the named command runs."""
    workspace = tmp_path / "work"
    workspace.mkdir()
    checkpoint = workspace / "checkpoints" / "r"
    venv_bin, path_bin = tmp_path / "venv bin", tmp_path / "bin"
    for folder in (venv_bin, path_bin):
        folder.mkdir()
    for folder in (venv_bin, path_bin) if found_by_name else (venv_bin,):
        tool = folder / "ari-jupyter"
        tool.write_text(f'#!/bin/sh\necho "{folder.name} ari-jupyter $*"\n')
        tool.chmod(0o755)
    script = tmp_path / "handoff.sh"
    script.write_text(render.render_handoff_script(
        golden_state(module_loads=[], workspace=str(workspace), site_name="rccs-cloud").choices(),
        str(checkpoint), str(script), ari_jupyter=str(venv_bin / "ari-jupyter")), encoding="utf-8")
    ran = subprocess.run(["/bin/bash", str(script)], capture_output=True, text=True, timeout=30,
                         env={"PATH": str(path_bin), "LANG": "C.UTF-8"})
    named = ran.stderr.strip().split(": ")[-1]
    expected = path_bin if found_by_name else venv_bin
    assert named == f"{expected / 'ari-jupyter'} check-handoff {checkpoint}", ran.stderr
    command = named.rsplit(" check-handoff ", 1)[0]
    assert subprocess.run([command, "check-handoff", str(checkpoint)], capture_output=True,
                          text=True).stdout == f"{expected.name} ari-jupyter check-handoff {checkpoint}\n"


def test_ari_jupyter_command_is_the_console_script_beside_this_python():
    from ari_jupyter.checkpoint.emit import ari_jupyter_command

    command = ari_jupyter_command()
    beside = Path(sys.executable).with_name("ari-jupyter")
    assert command == (str(beside) if beside.is_file() else command)
    assert os.path.isabs(command) or command == "ari-jupyter"


@pytest.mark.parametrize("site, expected", [
    ("rccs-cloud", "demo site rccs-cloud, whose modules exist only in its recording"),
    ("", "module load failed (see the lines above); check this run's modules with"),
])
def test_on_a_demo_site_a_failed_module_load_is_expected_too(tmp_path, site, expected):
    """A real ``module`` that does not know the demo site's modules: the script stops there, and
    on a demo site says that is expected (a class met a red Lmod error with nothing saying so)."""
    workspace = tmp_path / "work"
    workspace.mkdir()
    checkpoint = workspace / "checkpoints" / "r"
    script = tmp_path / "handoff.sh"
    script.write_text(render.render_handoff_script(
        golden_state(module_loads=["openmpi/4.1"], workspace=str(workspace), site_name=site).choices(),
        str(checkpoint), str(script)), encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    module = bin_dir / "module"  # what Lmod answers for a module it does not have
    module.write_text("#!/bin/sh\necho 'Lmod has detected the following error: The following "
                      "module(s) are unknown: \"openmpi/4.1\"' >&2\nexit 1\n")
    module.chmod(0o755)
    ran = subprocess.run(["/bin/bash", str(script)], capture_output=True, text=True, timeout=30,
                         env={"PATH": str(bin_dir), "LANG": "C.UTF-8"})
    assert ran.returncode == 1 and expected in ran.stderr, ran.stderr
    assert f"ari-jupyter check-handoff {checkpoint}" in ran.stderr


@pytest.mark.parametrize("key_where, allowed, runs", [
    ("nowhere", "", False),
    ("shell", "", True),
    ("checkpoint .env", "", True),
    ("~/.env", "", True),
    ("~/.env, exported", "", True),
    ("~/.env, empty", "", False),     # OPENAI_API_KEY= sets nothing
    ("~/.env, commented", "", False),
    ("nowhere", "1", True),           # ARI_HANDOFF_WITHOUT_KEY=1: said, then run anyway
])
def test_the_handoff_stops_before_ari_when_the_backends_key_is_nowhere(tmp_path, key_where,
                                                                       allowed, runs):
    """Every node of a run without its LLM key fails (the SDK's "Missing credentials"): the
    script looks where ari does (the shell, then the .env files it loads) and stops first."""
    workspace, home = tmp_path / "work", tmp_path / "home"
    checkpoint = workspace / "checkpoints" / "r"
    checkpoint.mkdir(parents=True)
    home.mkdir()
    script = tmp_path / "handoff.sh"
    script.write_text(render.render_handoff_script(
        golden_state(module_loads=[], workspace=str(workspace), site_name="").choices(), str(checkpoint),
        str(script), api_key="OPENAI_API_KEY"), encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("date", "tee", "grep", "mv"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    (bin_dir / "ari").write_text("#!/bin/sh\necho ARI RAN\n")
    (bin_dir / "ari").chmod(0o755)
    env = {"PATH": str(bin_dir), "LANG": "C.UTF-8", "HOME": str(home)}
    lines = {"checkpoint .env": (checkpoint / ".env", "OPENAI_API_KEY=sk-abc\n"),
             "~/.env": (home / ".env", "OPENAI_API_KEY=sk-abc\n"),
             "~/.env, exported": (home / ".env", "  export OPENAI_API_KEY = sk-abc\n"),
             "~/.env, empty": (home / ".env", "OPENAI_API_KEY=\n"),
             "~/.env, commented": (home / ".env", "# OPENAI_API_KEY=sk-abc\n")}
    if key_where in lines:
        path, line = lines[key_where]
        path.write_text(line)
    if key_where == "shell":
        env["OPENAI_API_KEY"] = "sk-abc"
    if allowed:
        env["ARI_HANDOFF_WITHOUT_KEY"] = allowed
    ran = subprocess.run(["/bin/bash", str(script)], capture_output=True, text=True, timeout=30, env=env)
    assert ("ARI RAN" in ran.stdout) == runs, (ran.stdout, ran.stderr)
    assert ran.returncode == (0 if runs else 2), ran.stderr
    said = "OPENAI_API_KEY is set neither here nor in a .env file ari reads" in ran.stderr
    assert said == (key_where not in ("shell", "checkpoint .env", "~/.env", "~/.env, exported"))
    assert "sk-abc" not in ran.stdout + ran.stderr


def test_a_backend_without_a_key_gets_no_key_check():
    script = render.render_handoff_script(golden_state().choices(), CHECKPOINT, SCRIPT, api_key="")
    assert "ARI_HANDOFF_WITHOUT_KEY" not in script
    with pytest.raises(render.RenderError):
        render.render_handoff_script(golden_state().choices(), CHECKPOINT, SCRIPT, api_key="X; rm -rf ~")


def test_a_script_sentence_bash_would_expand_is_refused(monkeypatch):
    from ari_jupyter import i18n

    real = i18n.t
    monkeypatch.setattr(render, "t", lambda key, lang=None, **kw: "costs $5"
                        if key.startswith("handoff.script.no_ari") else real(key, lang, **kw))
    with pytest.raises(render.RenderError, match="double quotes"):
        render.render_handoff_script(golden_state().choices(), CHECKPOINT, SCRIPT)


def test_every_script_sentence_is_safe_inside_double_quotes():
    for key in ("handoff.script.no_ari", "handoff.script.no_ari_demo", "handoff.script.log",
                "handoff.script.module_load_failed", "handoff.script.module_load_failed_demo",
                "handoff.script.no_key"):
        for lang in ("en", "ja", "zh"):
            bare = i18n_t(key, lang, log="", checkpoint="", site="", variable="", ari_jupyter="")
            assert not any(ch in bare for ch in '"$`\\!'), (key, lang, bare)


def test_handoff_quotes_every_value():
    weird = "/work/al ice/$(touch x)/`id`/'q'"
    text = render.render_handoff_script(golden_state(workspace=weird, module_loads=["a;b", "$(x)"]).choices(),
                                        weird + "/checkpoints/r", weird + "/launch/r.sh")
    assert "cd '/work/al ice/$(touch x)/`id`/'\"'\"'q'\"'\"''" in text
    assert "module load 'a;b' '$(x)'" in text


@pytest.mark.parametrize("field, value", [
    ("partition", "gpu.a100"), ("partition", "small;id"), ("max_cpus", 0), ("title", "a\nb"),
    ("title", "## Files"), ("metrics", []), ("metrics", ["time (s)"]), ("metrics", ["GB/s."]),
    ("provided_files", ["relative/path"]), ("provided_files", ["/a/b#c"]),
    ("goal", "AUTO-APPENDED BY VirSci"), ("goal", "   "), ("goal", "min_expected_metric: 3"),
    ("title", "metric_keyword: acc"),
])
def test_experiment_renderer_refuses_what_ari_would_misread(field, value):
    with pytest.raises(render.RenderError):
        render.render_experiment_md(golden_state(**{field: value}).choices())


@pytest.mark.parametrize("name", ["-v", "", "a b", "a\nb"])
def test_handoff_refuses_bad_module_names(name):
    with pytest.raises(render.RenderError):
        render.render_handoff_script(golden_state(module_loads=[name]).choices(), CHECKPOINT, SCRIPT)


def test_goal_headings_ari_would_parse_become_bold_text():
    goal = "Intro\n## Success Metrics\n- acc: top-1\n### Files\n/data/x\n## Required Workflow\n1. run"
    text, notes = render.neutralize_goal(goal)
    assert "**Success Metrics**" in text and "**Files**" in text
    assert "## Required Workflow" in text  # a real feature of ARI, kept
    assert len(notes) == 2


def test_a_heading_split_over_two_lines_is_neutralized_too():
    text, notes = render.neutralize_goal("intro\n##\nFiles\n/etc/passwd")
    assert "##" not in text and notes
    from ari_jupyter.ari.lint_experiment import parse_experiment
    assert parse_experiment(text + "\n").provided_files == ()


def test_reproduce_inputs_merge_the_profile_as_ari_would():
    inputs = render.reproduce_inputs(golden_state(profile=PRESETS["mpi_gpu"](), nodes=None).choices())
    assert inputs["sandbox_kind"] == "slurm" and inputs["partition"] == "small"
    assert inputs["nodes"] == 4 and inputs["ntasks"] == 32 and inputs["gpu_type"] == "v100"
    assert inputs["exclusive"] is True and inputs["cpus"] == 4
    caller_wins = render.reproduce_inputs(golden_state(profile=PRESETS["mpi_gpu"](), nodes=2).choices())
    assert caller_wins["nodes"] == 2


WORKFLOW = """\
llm:
  backend: openai
pipeline:
- stage: ors_build_reproduce
  skill: paper-re-skill
  inputs:
    sandbox_kind: auto
- stage: ors_run_reproduce
  skill: paper-re-skill
  tool: run_reproduce
  depends_on:
  - ors_build_reproduce
  inputs:
    rubric_path: '{{checkpoint_dir}}/ors_rubric.json'
    repo_dir: '{{checkpoint_dir}}/repro_sandbox'
    sandbox_kind: ''
    container_image: ''
    timeout_global_sec: 0
    partition: ''
    cpus: 0
    walltime: ''
"""


def test_workflow_yaml_sets_only_the_reproduce_stage_inputs():
    yaml = pytest.importorskip("yaml")
    out = yaml.safe_load(render.render_workflow_yaml(WORKFLOW, golden_state().choices()))
    build, run = out["pipeline"]
    assert build["inputs"] == {"sandbox_kind": "auto"}
    assert run["depends_on"] == ["ors_build_reproduce"]
    assert run["inputs"]["repo_dir"] == "{{checkpoint_dir}}/repro_sandbox"
    assert run["inputs"]["sandbox_kind"] == "slurm"
    assert run["inputs"]["partition"] == "small" and run["inputs"]["cpus"] == 4
    assert run["inputs"]["walltime"] == "01:00:00" and run["inputs"]["nodes"] == 2
    assert run["inputs"]["ntasks"] == 8 and run["inputs"]["ntasks_per_node"] == 4


def test_workflow_without_reproduce_stage_is_refused():
    pytest.importorskip("yaml")
    with pytest.raises(render.RenderError, match="ors_run_reproduce"):
        render.render_workflow_yaml("pipeline: []\n", golden_state().choices())


def test_bfts_env_file_quotes_every_value_and_puts_the_probed_modulepath_first():
    """What ARI's --export=NONE BFTS jobs source: settings quoted for bash, the run's modules with
    the MODULEPATH they were chosen from first; ARI_ENV_FILE in .env points at it."""
    state = golden_state(module_loads=["openmpi/4.1", "cuda/12.4"])
    state.set_probe_result(ProbeResult("modules", "ok", "lmod", data={"modulepath": "/opt/mod files:/sw/mf"}))
    text = render.render_bfts_env(state.choices())
    assert "MODULEPATH='/opt/mod files:/sw/mf'${MODULEPATH:+:$MODULEPATH}\n" in text
    assert text.rstrip().splitlines()[-1].startswith("module load openmpi/4.1 cuda/12.4 || ")
    assert text.index("MODULEPATH=") < text.index("command -v module")
    assert f"ARI_ENV_FILE={CHECKPOINT}/bfts_env.sh\n" in render.render_env(state.choices())
    proc = subprocess.run(["bash", "-n"], input=text, text=True, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    state.run_settings = RunSettings(llm_model="gpt-4o;rm")  # refused by the judge, never written
    with pytest.raises(render.RenderError):
        render.render_env(state.choices())
    without = golden_state(module_loads=[], run_id="")
    assert "ARI_ENV_FILE" not in render.env_values(without.choices()).values  # no checkpoint path yet: nothing to point at
    assert "module load" not in render.render_bfts_env(golden_state(module_loads=[]).choices())


@pytest.mark.parametrize("step_id, exported", [("0", "1"), ("", "unset")])
def test_the_handoff_overlaps_the_servers_step_only_inside_a_step(step_id, exported):
    """In a job step (batchspawner's srun), ARI's sruns get SLURM_OVERLAP (srun's --overlap) or
    wait for the server's step forever; in the batch script nothing is exported."""
    text = render.render_handoff_script(golden_state().choices(), CHECKPOINT, SCRIPT, api_key="")
    lines = [line for line in text.splitlines() if "SLURM_OVERLAP" in line]
    assert lines == list(render.STEP_OVERLAP_LINES)
    env = {"PATH": "/usr/bin:/bin", **({"SLURM_STEP_ID": step_id} if step_id else {})}
    ran = subprocess.run(["/bin/bash", "-c", "\n".join(lines) + '\necho "${SLURM_OVERLAP-unset}"'],
                         capture_output=True, text=True, timeout=30, env=env, check=True)
    assert ran.stdout.strip() == exported


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
@pytest.mark.parametrize("modules", [(), ("openmpi/4.1",)])
def test_the_one_command_the_script_runs_is_said_at_its_top(lang, modules):
    """The script is long (checks, modules, key); its first lines say the command it comes to,
    which is its last line, word for word."""
    choices = golden_state(lang=lang, module_loads=list(modules)).choices()
    text = render.render_handoff_script(choices, CHECKPOINT, SCRIPT, api_key="OPENAI_API_KEY",
                                        files_sha256={"experiment.md": "0" * 64})
    lines = text.rstrip().splitlines()
    assert lines[-1].startswith("ari run ")
    top = lines[:lines.index("set -eo pipefail")]
    assert f"#   {lines[-1]}" in top
