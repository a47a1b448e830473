"""The doctor on texts captured from real ARI and the real test bed (whole files, every rule).

tests/fixtures/doctor/ari/: the log the hand-off script wrote (``ari_run_<time>.log``) when real
ARI (the snapshot in ../shared/ari-snapshot, installed as its README says) ran a checkpoint
written by ``ari-jupyter emit`` with its LLM at 127.0.0.1:9, where nothing listens
(``tests/testbed/capture_ari_logs.py``): with ari-skill-idea's ``semanticscholar`` uninstalled,
and with mcp 2.x installed (every skill fails to import). tests/fixtures/doctor/testbed/:
``tests/testbed/capture_doctor_texts.py`` (bash on a test-bed node, shared filesystem; srun on
the test bed's ``mem`` variant, where memory is a consumable resource).
"""
from __future__ import annotations
from repo_paths import TESTS


import pytest

from ari_jupyter.doctor import diagnose_file, diagnose_text
from ari_jupyter.doctor.paths import judge_path

DOCTOR = TESTS / "fixtures" / "doctor"
HOME = {"HOME": "/root"}  # where the test bed's shared filesystem was mounted when captured

CAPTURED = {
    # file: ($HOME of the reader, {rule: lines}) - nothing else may be reported
    "ari/skill_missing_llm_unreachable.log": (HOME, {"skill-import-failed": (22,),
                                                     "llm-unreachable": (41,)}),
    "ari/mcp2_skills_llm_unreachable.log": (HOME, {
        "skill-import-failed": (11, 17, 23, 29, 35, 41, 46, 52, 57, 62, 68, 74, 80),
        "llm-unreachable": (91,)}),
    "testbed/permission_denied_shared.txt": (HOME, {"permission-denied-shared": (1,),
                                                    "task-exit-nonzero": (2,)}),
    "testbed/step_memory_unavailable.txt": (HOME, {"step-memory-unavailable": (2,)}),
}


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_captured_text(name):
    env, expected = CAPTURED[name]
    findings = diagnose_file(str(DOCTOR / name), kind="log", env=env)
    assert {f.rule: f.lines for f in findings} == expected


def test_every_captured_file_is_in_the_table():
    files = {str(p.relative_to(DOCTOR)) for folder in ("ari", "testbed") for p in (DOCTOR / folder).iterdir()}
    assert files == set(CAPTURED)


def test_a_missing_skill_package_names_the_skill_and_the_package():
    (finding,) = [f for f in diagnose_file(str(DOCTOR / "ari/skill_missing_llm_unreachable.log"),
                                           kind="log", env=HOME) if f.rule == "skill-import-failed"]
    assert finding.message.startswith("skill ari-skill-idea failed to start")
    assert "without its tools" in finding.message
    assert "`pip install semanticscholar`" in finding.fix


def test_mcp_2_is_told_to_pin_mcp_1():
    (finding,) = [f for f in diagnose_file(str(DOCTOR / "ari/mcp2_skills_llm_unreachable.log"),
                                           kind="log", env=HOME) if f.rule == "skill-import-failed"]
    assert "ari-skill-idea" in finding.message and "ari-skill-evaluator" in finding.message
    assert "pip install 'mcp>=1.28.1,<2'" in finding.fix


def test_llm_unreachable_says_what_to_check():
    (finding,) = [f for f in diagnose_file(str(DOCTOR / "ari/skill_missing_llm_unreachable.log"),
                                           kind="log", env=HOME) if f.rule == "llm-unreachable"]
    assert "ARI_LLM_API_BASE" in finding.fix and "root node" in finding.message


def test_the_step_memory_refusal_says_the_handoff_unsets_the_variables():
    text = (DOCTOR / "testbed" / "step_memory_unavailable.txt").read_text()
    (finding,) = diagnose_text(text, kind="log")
    assert finding.rule == "step-memory-unavailable"
    assert "SLURM_MEM_PER_NODE" in finding.message
    assert "hand-off script ari-jupyter writes already runs `unset SLURM_MEM_PER_CPU" in finding.fix


def test_the_handoff_script_really_unsets_them():
    from unit.ari.test_render import golden_state

    from ari_jupyter.ari import render

    script = render.render_handoff_script(golden_state().choices(), "/work/alice/ari/checkpoints/x",
                                          "/work/alice/ari/launch/x.sh")
    assert "unset SLURM_MEM_PER_CPU SLURM_MEM_PER_GPU SLURM_MEM_PER_NODE" in script


@pytest.mark.parametrize("line, env, rule", [
    ("/work/alice/ari/checkpoints/r/repro_sandbox/reproduce.sh: line 5: ./app: Permission denied",
     {}, "permission-denied-shared"),
    ("/home/bob/r/reproduce.sh: line 5: ./app: Permission denied", {}, "permission-denied-shared"),
    ("/u/bob/r/reproduce.sh: line 5: ./app: Permission denied", {"HOME": "/u/bob"},
     "permission-denied-shared"),
    ("/u/bob/r/reproduce.sh: line 5: ./app: Permission denied", {"HOME": "/u/carol"},
     "permission-denied"),
    ("/tmp/ckpt/repro_sandbox/reproduce.sh: line 5: ./app: Permission denied", {}, "permission-denied"),
    ("/dev/shm/x/reproduce.sh: line 5: ./app: Permission denied", {}, "permission-denied"),
    ("./reproduce.sh: line 5: ./app: Permission denied", {}, "permission-denied"),
])
def test_permission_denied_judges_the_path(line, env, rule):
    assert [f.rule for f in diagnose_text(line + "\n", kind="log", env=env)] == [rule]


@pytest.mark.parametrize("path, env, verdict", [
    ("/work/a/b", {}, "shared"), ("/tmp/a", {}, "node-local"), ("/scratch/local/a", {}, "node-local"),
    ("/scratch/a", {}, "shared"), ("/gs/bs/work/a/f", {}, "shared"), ("/opt/x/f", {}, None),
    ("/root/.cache/x/f", {"HOME": "/root"}, "shared"), ("/root/.cache/x/f", {"HOME": "/"}, None),
    ("/tmp/work/x", {}, "node-local"),
])
def test_judge_path(path, env, verdict):
    assert judge_path(path, env) == verdict


@pytest.mark.ari
def test_the_doctor_reads_what_real_ari_prints_when_its_llm_is_unreachable(ari_env, tmp_path):
    """Today's ARI, not only the stored log: its root node fails on the connection error, and the
    skills this ARI build lacks packages for fail to import; the doctor names both."""
    from testbed.capture_ari_logs import _processes_of, run_until_llm_fails

    text = run_until_llm_fails(ari_env.python.parent, tmp_path,
                               env={k: v for k, v in ari_env.env.items() if k != "HOME"})
    assert "Connection error" in text, text[-3000:]
    rules = {f.rule for f in diagnose_text(text, kind="log", env=HOME)}
    assert "llm-unreachable" in rules
    if "ModuleNotFoundError" in text:
        assert "skill-import-failed" in rules
    assert _processes_of(tmp_path / "ws" / "checkpoints" / "20261201100000_llm_down") == []
