"""Follow-up allocations: the count and envelope rules, the sbatch line, and the rendered
follow-up script (golden file, and what it does when run outside its envelope)."""
from __future__ import annotations

import hashlib
import subprocess

import pytest

from unit.ari.test_render import CHECKPOINT, GOLDEN, SCRIPT, _check_golden, golden_state
from ari_jupyter import __version__
from ari_jupyter.ari import render
from ari_jupyter.ari.followup import (MAX_FOLLOWUPS, Envelope, FollowupError, envelope_of,
                                     envelope_problem, export_option, followup_environment,
                                     next_step, sbatch_argv)
from ari_jupyter.ari.judge import field_findings

ARI_JUPYTER = "/opt/ari/venv/bin/ari-jupyter"


@pytest.mark.parametrize("approved, used, finished, step", [
    (0, 0, False, "exhausted"),   # none approved: never a follow-up
    (1, 0, False, "submit"),
    (1, 1, False, "exhausted"),   # the one approved was submitted
    (3, 2, False, "submit"),
    (3, 3, False, "exhausted"),
    (3, 4, False, "exhausted"),   # a record beyond the count (edited by hand): still no more
    (3, 0, True, "finished"),     # the search is finished: nothing, whatever the count
    (0, 0, True, "finished"),
])
def test_the_next_link_keeps_to_the_approved_count(approved, used, finished, step):
    assert next_step(approved, used, finished) == step


@pytest.mark.parametrize("envelope, problem", [
    (Envelope("small", 2, "00:30:00"), ""),
    (Envelope("small", 1, "5"), ""),
    (Envelope("large", 4, "1-00:00:00"), ""),
    (Envelope("", 2, "00:30:00"), "partition"),
    (Envelope("small;rm -rf ~", 2, "00:30:00"), "partition"),
    (Envelope("small", 0, "00:30:00"), "nodes"),
    (Envelope("small", True, "00:30:00"), "nodes"),
    (Envelope("small", 2, ""), "time"),
    (Envelope("small", 2, "0"), "time"),
    (Envelope("small", 2, "00:30:00 --wrap=x"), "time"),
    (Envelope("small", 2, "UNLIMITED"), "time"),
])
def test_only_an_envelope_sbatch_takes_whole(envelope, problem):
    said = envelope_problem(envelope)
    assert (said.split(" ")[0] if said else "") == problem, said


SHELL = {"PATH": "/opt/ari/venv/bin:/usr/bin:/bin", "HOME": "/home/alice", "LANG": "C.UTF-8"}


def test_the_sbatch_line_waits_for_the_allocation_and_asks_the_envelope_exactly():
    argv = sbatch_argv(Envelope("small", 2, "00:30:00"), "4242", f"{CHECKPOINT}/followup.sh",
                       CHECKPOINT, f"{CHECKPOINT}/followup_%j.out", SHELL)
    assert argv == ["sbatch", "--parsable", "--dependency=afterany:4242", "--kill-on-invalid-dep=yes",
                    "--export=HOME,LANG,PATH",
                    "--partition=small", "--nodes=2", "--time=00:30:00", "--job-name=ari-followup",
                    f"--chdir={CHECKPOINT}", f"--output={CHECKPOINT}/followup_%j.out",
                    f"{CHECKPOINT}/followup.sh"]


@pytest.mark.parametrize("shell, exported", [
    # the shell of a hand-off with the key exported in it: the key is never named
    ({**SHELL, "OPENAI_API_KEY": "sk-canary", "ARI_ROOT": "/opt/ari/src"}, "ARI_ROOT,HOME,LANG,PATH"),
    # every secret-looking name, with or without ARI_'s prefix, stays behind
    ({"PATH": "/bin", "ANTHROPIC_API_KEY": "x", "GEMINI_API_KEY": "x", "ARI_API_KEY": "x",
      "ARI_GITHUB_TOKEN": "x", "ARI_DB_PASSWORD": "x", "LITELLM_MASTER_KEY": "x", "HF_TOKEN": "x",
      "AWS_SECRET_ACCESS_KEY": "x", "OPENAI_API_BASE": "http://llm:4000"}, "PATH"),
    # ARI's and its LLM library's settings go, as do the environment's paths and locale
    ({"ARI_MEMORY_BACKEND": "in_memory", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
      "ARI_JUPYTER_WORKSPACES_FILE": "/home/alice/.w.json", "LD_LIBRARY_PATH": "/opt/py/lib",
      "MODULEPATH": "/etc/modulefiles", "LC_ALL": "ja_JP.UTF-8", "VIRTUAL_ENV": "/opt/ari/venv"},
     "ARI_JUPYTER_WORKSPACES_FILE,ARI_MEMORY_BACKEND,LC_ALL,LD_LIBRARY_PATH,LITELLM_LOCAL_MODEL_COST_MAP,"
     "MODULEPATH,VIRTUAL_ENV"),
    # a proxy: its address goes, not one carrying a user and password
    ({"https_proxy": "http://proxy:3128", "HTTP_PROXY": "http://bob:hunter2@proxy:3128",
      "NO_PROXY": "127.0.0.1,localhost"}, "NO_PROXY,https_proxy"),
    # what the shell has besides: not the follow-up's business
    ({"PATH": "/bin", "SSH_AUTH_SOCK": "/tmp/a", "DISPLAY": ":0", "OLDPWD": "/", "EDITOR": "vi",
      "BASH_FUNC_module%%": "() { :; }", "A,B": "x"}, "PATH"),
    ({}, "NIL"),                                  # nothing to name: SLURM's own variables only
    ({"OPENAI_API_KEY": "sk-canary"}, "NIL"),
])
def test_the_followup_is_given_only_named_non_secret_variables(shell, exported):
    assert export_option(shell) == f"--export={exported}"
    assert set(followup_environment(shell)) == (set() if exported == "NIL" else set(exported.split(",")))
    argv = sbatch_argv(Envelope("small", 2, "00:30:00"), "42", f"{CHECKPOINT}/followup.sh", CHECKPOINT,
                       f"{CHECKPOINT}/o.out", shell)
    assert [a for a in argv if a.startswith("--export")] == [f"--export={exported}"]
    assert not [a for a in argv for value in shell.values() if value in a and len(value) > 3 and a != argv[-1]
                and not a.startswith(("--chdir", "--output"))], argv  # names only, never a value


@pytest.mark.parametrize("after, script", [
    ("", f"{CHECKPOINT}/followup.sh"),
    ("42;scancel -u alice", f"{CHECKPOINT}/followup.sh"),
    ("42 43", f"{CHECKPOINT}/followup.sh"),
    ("afterok:42", f"{CHECKPOINT}/followup.sh"),
    ("42", "followup.sh"),
    ("42", f"{CHECKPOINT}/follow\nup.sh"),
])
def test_a_value_that_cannot_reach_sbatch_is_refused(after, script):
    with pytest.raises(FollowupError):
        sbatch_argv(Envelope("small", 2, "00:30:00"), after, script, CHECKPOINT, f"{CHECKPOINT}/o.out", SHELL)


@pytest.mark.parametrize("overrides, rule", [
    ({"followups": 0}, None),
    ({"followups": 3}, None),
    ({"followups": MAX_FOLLOWUPS}, None),
    ({"followups": MAX_FOLLOWUPS + 1}, "followups_range"),
    ({"followups": -1}, "followups_range"),
    ({"followups": 1, "walltime": ""}, "followups_envelope"),
    ({"followups": 1, "partition": ""}, "followups_envelope"),
    ({"followups": 0, "walltime": ""}, None),  # none approved: no envelope needed
])
def test_the_wizard_field_is_validated(overrides, rule):
    found = {f.rule for f in field_findings(golden_state(**overrides).choices())
             if f.rule.startswith("followups")}
    assert found == ({rule} if rule else set())


def test_the_envelope_is_the_runs_partition_nodes_and_walltime():
    assert envelope_of(golden_state().choices()) == Envelope("small", 2, "01:00:00")
    assert envelope_of(golden_state(nodes=0).choices()).nodes == 1  # the profile decides: one


def _followup_script(**overrides) -> str:
    return render.render_followup_script(golden_state(followups=2, **overrides).choices(), CHECKPOINT,
                                         ari_jupyter=ARI_JUPYTER, api_key="OPENAI_API_KEY")


def test_the_followup_script_matches_golden():
    _check_golden("followup.sh", _followup_script())


def test_the_handoff_with_followups_matches_golden():
    state = golden_state(followups=2)
    # of the golden followup.sh (its version normalized), so the golden stays across versions
    normalized = _followup_script().replace(f"ari-jupyter {__version__}", "ari-jupyter @VERSION@")
    files = {"followup.sh": hashlib.sha256(normalized.encode()).hexdigest()}
    _check_golden("handoff_followups.sh", render.render_handoff_script(
        state.choices(), CHECKPOINT, SCRIPT, api_key="OPENAI_API_KEY", ari_jupyter=ARI_JUPYTER,
        files_sha256=files))


def test_without_followups_the_handoff_submits_none():
    text = render.render_handoff_script(golden_state().choices(), CHECKPOINT, SCRIPT, api_key="OPENAI_API_KEY")
    assert "follow-up" not in text and (GOLDEN / "handoff.sh").is_file()


def test_an_envelope_sbatch_cannot_take_renders_no_script():
    with pytest.raises(render.RenderError):
        _followup_script(walltime="")


@pytest.mark.parametrize("partition, nodes, runs", [
    ("small", "2", True),
    ("large", "2", False),     # another partition
    ("small", "1", False),     # fewer nodes
    ("small", "4", False),     # more nodes
    ("", "", False),           # not inside a job at all
])
def test_the_followup_runs_nothing_outside_its_envelope(tmp_path, partition, nodes, runs):
    """Run the rendered script for real, with a recording ari-jupyter and ari on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    for name in ("ari-jupyter", "ari", "module"):
        tool = bin_dir / name
        tool.write_text(f'#!/bin/sh\necho "{name} $*" >> {calls}\n'
                        + ('[ "$1" = follow-up ] && [ "$3" = --finished ] && exit 0\n' if name == "ari-jupyter" else "")
                        + "exit 0\n")
        tool.chmod(0o755)
    workspace = tmp_path / "ws"
    checkpoint = workspace / "checkpoints" / "r"
    checkpoint.mkdir(parents=True)
    text = render.render_followup_script(
        golden_state(followups=1, workspace=str(workspace), module_loads=[]).choices(), str(checkpoint),
        api_key="")
    script = tmp_path / "followup.sh"
    script.write_text(text)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "SLURM_JOB_ID": "77"}
    if partition:
        env.update(SLURM_JOB_PARTITION=partition, SLURM_JOB_NUM_NODES=nodes)
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60)
    said = calls.read_text() if calls.exists() else ""
    if runs:
        assert done.returncode == 0, done.stderr
        assert said == f"ari-jupyter follow-up {checkpoint} --finished\n"  # finished: ends there
    else:
        assert done.returncode == 3 and said == "", (done.stderr, said)
        assert "as approved: it stops" in done.stderr
