"""The lessons' check cells: right answers are told they are right, wrong ones why not.

The check functions (``ari_jupyter.teaching``) are table-tested with right and wrong answers;
then each teaching notebook is executed as a class would run it, and its exercise check (the
starting answer, which is wrong) must say "Not yet" while its solution cell says "Correct":
what docs/teaching.md promises a class that opens the lessons with jupyter lab.
"""
from __future__ import annotations
from repo_paths import REPO

import json
from pathlib import Path

import pytest

from ari_jupyter import teaching

REPO = REPO
SOURCE = REPO / "ari_jupyter" / "notebooks" / "teaching"
LESSONS = sorted(SOURCE.glob("*.ipynb"))
TRANSLATED = {lang: sorted((SOURCE / lang).glob("*.ipynb")) for lang in ("ja", "zh")}
HEADINGS = {"ja": ("## 学習目標", "## 演習", "**時間:**"),
            "zh": ("## 学习目标", "## 练习", "**时间：**")}
VERDICTS = {"en": ("Not yet: ", "Correct: "), "ja": ("まだです: ", "正解: "), "zh": ("还不对：", "正确：")}
NOGRES_GPU = {"kind": "gpu_single", "requested_gpus_per_task": 1, "gpu_type": "v100"}
FAILED_LOG = ("+ module list\nNo modules loaded\n./reproduce.sh: line 7: mpirun: command not found\n"
              "srun: error: rc02: task 1: Exited with exit code 127\n")


@pytest.fixture(autouse=True)
def _hermetic_config(tmp_path, monkeypatch):
    """No user or site config file changes a verdict; the demo workspace lives in tmp."""
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for key in ("ARI_JUPYTER_DEMO_SITE", "JUPYTER_CONFIG_PATH"):
        monkeypatch.delenv(key, raising=False)


@pytest.mark.parametrize("profile, max_cpus, passed, says", [
    # the wizard's rccs-cloud: Nodes 2 (the allocation's), Max CPUs 3, nodes of `small` have 4
    ("mpi", None, False, "4 tasks × 3 CPUs = 12 per node, nodes have 4: sbatch refuses"),
    ({"kind": "cpu_single", "ntasks_per_node": 2}, None, False, "sbatch refuses"),
    ({"kind": "mpi", "ntasks_per_node": 1}, None, False, "kind 'mpi' does not fit this site"),
    ({"requested_nodes": 2, "ntasks_per_node": 1}, None, False, "once, on the first node"),
    ("gpu_single", None, False, "ARI refuses this profile"),
    ("no-such-preset", None, False, "is not a preset"),
    (42, None, False, "give a preset name"),
    ({"kind": "cpu_single", "requested_nodes": 2, "ntasks_per_node": 1}, None, True, "rc01: 1, rc02: 1"),
    ({"kind": "cpu_single", "ntasks_per_node": 4}, 1, True, "rc01: 4, rc02: 4"),
])
def test_ranks_on_both_nodes(profile, max_cpus, passed, says):
    result = teaching.check_ranks_on_both_nodes(profile, max_cpus=max_cpus)
    assert result.passed is passed and says in result.message, result
    assert str(result).startswith("Correct" if passed else "Not yet")


def test_a_wrong_kind_is_named_with_its_fix():
    """`mpi` on a site with no GPU: the check names the kind and says which kind fits."""
    result = teaching.check_ranks_on_both_nodes({"kind": "mpi", "ntasks_per_node": 1})
    assert "'mpi'" in result.message and "no GPU" in result.message, result
    assert "cpu_single" in result.hint, result


PLACEMENT_PROFILES = [
    "mpi", "cpu_single", "gpu_single", "gpu_single_nogres",
    {"kind": "mpi", "ntasks_per_node": 1},
    {"kind": "cpu_single", "requested_nodes": 2, "ntasks_per_node": 1},
    {"kind": "cpu_single", "ntasks_per_node": 2},
    {"requested_nodes": 2, "ntasks_per_node": 1},
]


@pytest.mark.slow
@pytest.mark.parametrize("site", ["rccs-cloud", "sx40", "gres-cluster", "laptop"])
def test_the_lessons_and_the_wizard_place_ranks_alike(site, tmp_path):
    """What lesson 1's check and figure say (``teaching.placement_on``) is what the wizard's
    step 1 shows on the same site with the same profile: ranks per node, the findings under
    the picture with their severities, and the verdict."""
    import re

    from test_widgets_support import fake_bridge, run

    from ari_jupyter.widgets.wizard import Wizard

    async def settled():
        wizard = Wizard(site=site, bridge=fake_bridge()[0], env={"HOME": str(tmp_path)})
        await wizard.wait()
        return wizard

    wizard = run(settled())
    for profile in PLACEMENT_PROFILES:
        lesson = teaching.placement_on(site, profile)
        wizard.state.profile = teaching._profile(profile)
        panel = wizard.allocation_panel.placement
        shown = panel.value if panel is not None else ""
        ranks = tuple((name, int(count)) for name, count in
                      re.findall(r'data-node="([^"]+)" data-ranks="(\d+)"', shown))
        rules = dict(re.findall(r'data-rule="([^"]+)" data-severity="([^"]+)"', shown))
        assert lesson.ranks_per_node == ranks, (site, profile)
        assert {f.rule: f.severity for f in lesson.findings} == rules, (site, profile)
        assert lesson.verdict == wizard.ctx.placement_verdict().verdict, (site, profile)
        if site == "laptop":
            assert lesson.verdict == "outside" and not shown
        if site == "rccs-cloud" and lesson.placement is not None:  # the job's nodes: sinfo's 4 CPUs
            assert {node.cpus for node in lesson.placement.nodes} == {4}, profile


@pytest.mark.parametrize("profile, allow, passed, says", [
    (NOGRES_GPU, False, False, "ARI still refuses"),
    ("gpu_single", False, False, "ARI still refuses"),
    ("cpu_single", False, False, "asks for no GPU"),
    ({"kind": "gpu_single"}, False, True, "no GPU flags"),
    ("gpu_single_nogres", False, True, "no GPU flags"),
    (NOGRES_GPU, True, True, "no GPU flags"),
])
def test_gres_fix(profile, allow, passed, says):
    result = teaching.check_gres_fix(profile, allow_no_gres=allow)
    assert result.passed is passed and says in result.message, result
    if not passed and "refuses" in result.message:
        assert "no GPU count or type" in result.hint


@pytest.mark.parametrize("path, passed, says", [
    ("/tmp/ari/checkpoints/x", False, "node-local"),
    ("/tmp", False, "node-local"),
    ("relative/ckpt", False, "not an absolute path"),
    ("/work/u12345/ari/checkpoints/x", True, "nfs4"),
    ("/home/u12345/ari", True, "shared"),
])
def test_checkpoint_shared(path, passed, says):
    result = teaching.check_checkpoint_shared(path)
    assert result.passed is passed and says in result.message, result
    if not passed and path.startswith("/tmp"):
        assert "/work" in result.hint


def test_a_warn_verdict_is_shared_and_says_ari_only_warns():
    result = teaching.check_checkpoint_shared("/gpfs/work/bob/ari", site="gres-cluster")
    assert result.passed and "ARI only logs a warning" in result.message, result


@pytest.mark.parametrize("answer, passed, hint", [
    ("", False, "diagnose_text"),
    ("task-exit-nonzero", False, "follows from another"),
    ("gres-invalid", False, "word before the colon"),
    ("mpirun-not-found", True, ""),
    (" MPIRUN-NOT-FOUND ", True, ""),
])
def test_diagnosis(answer, passed, hint):
    result = teaching.check_diagnosis(FAILED_LOG, answer)
    assert result.passed is passed, result
    assert hint in result.hint
    if passed:
        assert "module" in result.message


NODE_LOCAL_LOG = (
    "[ari] reproduce: repo_dir=/tmp/ari-u/ckpt/repro_sandbox appears node-local; tasks on other "
    "nodes may not see it\n+ srun -N 2 -n 2 ./stencil input.bin\nrank 0 on rc01: wrote input.bin\n"
    "./stencil: /tmp/ari-u/ckpt/repro_sandbox/input.bin: Permission denied\n"
    "srun: error: rc02: task 1: Exited with exit code 1\n")


def test_lesson_4s_first_finding_is_not_the_cause():
    """The doctor lists the error first; the cause is the warning on the log's first line."""
    from ari_jupyter.doctor import diagnose_text

    first = diagnose_text(NODE_LOCAL_LOG, kind="log")[0]
    assert first.rule == "permission-denied"
    assert not teaching.check_diagnosis(NODE_LOCAL_LOG, first.rule, "/work/u12345/ari").passed


@pytest.mark.parametrize("cause, fix, passed, says", [
    ("permission-denied", "/work/u12345/ari", False, "is not the cause"),
    ("task-exit-nonzero", None, False, "is not the cause"),
    ("repo-dir-node-local", None, False, "Now its fix"),
    ("repo-dir-node-local", "/tmp/ari-u/ckpt", False, "node-local"),
    ("repo-dir-node-local", "/scratch/u12345/ari", False, "node-local"),  # ARI's prefix rule is wrong here
    ("repo-dir-node-local", "/work/u12345/ari/checkpoints/x", True, "shared"),
])
def test_diagnosis_asks_for_the_cause_and_its_fix(cause, fix, passed, says):
    result = teaching.check_diagnosis(NODE_LOCAL_LOG, cause, fix)
    assert result.passed is passed and says in result.message, result


def test_probe_site_agrees_with_the_cli():
    import subprocess
    import sys

    for site in ("gres-cluster", "sx40"):
        done = subprocess.run([sys.executable, "-m", "ari_jupyter", "probe", "--site", site,
                               "--json"], capture_output=True, text=True, timeout=120)
        cli = {p["id"]: p["status"] for p in json.loads(done.stdout)["probes"]}
        assert cli == {k: r.status for k, r in teaching.probe_site(site).items()}


def test_teaching_imports_no_ipywidgets():
    import subprocess
    import sys

    code = "import sys, ari_jupyter.teaching; print('ipywidgets' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"


def _text(cell) -> str:
    out = []
    for output in cell.get("outputs", []):
        for text in (output.get("text", ""), output.get("data", {}).get("text/plain", "")):
            out.append("".join(text) if isinstance(text, list) else text)
        if output.get("output_type") == "error":
            out.append("\n".join(output.get("traceback", [])))
    return "".join(out)


def test_every_lesson_has_objectives_an_exercise_a_check_and_a_solution():
    """One source in nbgrader's format: an answer cell (solution region) and, after it, a
    locked autograded check cell that prints the check and asserts it in a hidden test."""
    from ari_jupyter.wizard import assignment

    assert len(LESSONS) == 5
    for path in LESSONS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        for heading in ("## Objectives", "## Exercise", "**Time:**"):
            assert heading in text, f"{path.name}: no {heading}"
        pairs = list(assignment.exercises(nb))
        assert len(pairs) == 1, path.name
        answer, check = pairs[0]
        assert "### BEGIN SOLUTION" in assignment.source_of(answer), path.name
        check_source = assignment.source_of(check)
        assert "teaching.check_" in check_source and "### BEGIN HIDDEN TESTS" in check_source
        assert check["metadata"]["nbgrader"]["locked"] and check["metadata"]["nbgrader"]["points"]
        ids = [c["metadata"]["nbgrader"]["grade_id"] for c in nb["cells"] if "nbgrader" in c["metadata"]]
        assert len(ids) == len(set(ids)), path.name
        assert all(c.get("outputs", []) == [] for c in nb["cells"] if c["cell_type"] == "code")


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_every_lesson_is_translated_cell_for_cell(lang):
    """The same cells as the English lesson (ids, kinds, tags), the text in ``lang``, and every
    check asked to answer in it."""
    from widget_text import english_sentences

    assert [p.name for p in TRANSLATED[lang]] == [p.name for p in LESSONS]
    for path in TRANSLATED[lang]:
        nb = json.loads(path.read_text(encoding="utf-8"))
        english = json.loads((path.parent.parent / path.name).read_text(encoding="utf-8"))
        shape = [(c["cell_type"], c.get("id"), c["metadata"].get("tags", []),
                  c["metadata"].get("nbgrader")) for c in nb["cells"]]
        assert shape == [(c["cell_type"], c.get("id"), c["metadata"].get("tags", []),
                          c["metadata"].get("nbgrader")) for c in english["cells"]], path
        markdown = [line for c in nb["cells"] if c["cell_type"] == "markdown"
                    for line in "".join(c["source"]).splitlines() if line.strip()]
        for heading in HEADINGS[lang]:
            assert any(line.startswith(heading) for line in markdown), f"{path}: no {heading}"
        assert english_sentences(markdown) == [], path
        for cell in (c for c in nb["cells"] if c["cell_type"] == "code"):
            source = "".join(cell["source"])
            assert cell.get("outputs", []) == []
            # every check answers in the lesson's language (other helpers, print_run, may too)
            assert source.count("teaching.check_") <= source.count(f'lang="{lang}"'), source


ALL_LESSONS = LESSONS + TRANSLATED["ja"] + TRANSLATED["zh"]


def _student_text(student: dict) -> str:
    """Everything a student's copy shows: sources, outputs and metadata."""
    return json.dumps(student, ensure_ascii=False)


@pytest.mark.parametrize("path", ALL_LESSONS, ids=lambda p: f"{_lang_of(p)}-{p.name}")
def test_the_student_version_holds_no_solution(path):
    """No line of a solution or hidden test, no marker, no output (a teacher's executed copy
    says "Correct" under the check: the student version of it must not), and the check cell
    read-only, in en, ja and zh."""
    from ari_jupyter.wizard import assignment

    source = json.loads(path.read_text(encoding="utf-8"))
    executed = json.loads(path.read_text(encoding="utf-8"))
    for cell in executed["cells"]:  # as a teacher's copy looks after Run All
        if cell["cell_type"] == "code":
            cell["outputs"] = [{"output_type": "stream", "name": "stdout",
                                "text": [VERDICTS[_lang_of(path)][1] + "the solution\n"]}]
    secret = [line.strip() for region in assignment.solution_regions(source)
              for line in region.splitlines() if line.strip()]
    assert secret, path
    for student in (assignment.student_version(source), assignment.student_version(executed)):
        text = _student_text(student)
        for line in secret:
            assert json.dumps(line, ensure_ascii=False)[1:-1] not in text, (path.name, line)
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS"):
            assert marker not in text, path.name
        assert VERDICTS[_lang_of(path)][1] not in text, path.name
        assert all(c.get("outputs", []) == [] for c in student["cells"] if c["cell_type"] == "code")
        _, check = next(assignment.exercises(student))
        assert check["metadata"]["editable"] is False and check["metadata"]["deletable"] is False


@pytest.mark.parametrize("path", ALL_LESSONS, ids=lambda p: f"{_lang_of(p)}-{p.name}")
def test_the_student_version_is_nbgraders(path):
    """What nbgrader's generate_assignment preprocessors make of the source (ClearSolutions
    with an empty code stub, ClearHiddenTests, LockCells, ClearOutput) is our student version."""
    import nbformat
    from nbgrader.preprocessors import ClearHiddenTests, ClearOutput, ClearSolutions, LockCells

    from ari_jupyter.wizard import assignment

    source = json.loads(path.read_text(encoding="utf-8"))
    nb, resources = nbformat.reads(json.dumps(source), as_version=4), {}
    for step in (ClearSolutions(code_stub={"python": assignment.CODE_STUB}), ClearHiddenTests(),
                 LockCells(), ClearOutput()):
        nb, resources = step.preprocess(nb, resources)
    ours = nbformat.reads(json.dumps(assignment.student_version(source)), as_version=4)
    assert json.loads(nbformat.writes(ours)) == json.loads(nbformat.writes(nb))


def test_a_marker_outside_its_cell_is_refused_as_nbgrader_refuses_it():
    from ari_jupyter.wizard import assignment

    cell = {"cell_type": "code", "metadata": {}, "source": "x = 1\n### BEGIN SOLUTION\nx = 2\n### END SOLUTION",
            "outputs": [], "execution_count": None}
    with pytest.raises(assignment.AssignmentError):
        assignment.student_version({"cells": [cell], "metadata": {}})


def _lang_of(path: Path) -> str:
    return path.parent.name if path.parent.name in TRANSLATED else "en"


def _run(nb: dict, tmp_path) -> dict:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.reads(json.dumps(nb), as_version=4)
    NotebookClient(notebook, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    return json.loads(nbformat.writes(notebook))


@pytest.mark.slow
@pytest.mark.parametrize("version", ["student", "teacher"])
@pytest.mark.parametrize("path", ALL_LESSONS, ids=lambda p: f"{_lang_of(p)}-{p.name}")
def test_the_lesson_runs_and_its_checks_answer_both_ways(path, version, tmp_path):
    """Run All, as a class does: the student version's check says "Not yet" to the starting
    answer, the teacher's says "Correct" to the solution (and its hidden test passes)."""
    from ari_jupyter.wizard import assignment

    source = json.loads(path.read_text(encoding="utf-8"))
    done = _run(assignment.version(source, version == "teacher"), tmp_path)
    _, check = next(assignment.exercises(done))
    wrong, right = VERDICTS[_lang_of(path)]
    said = _text(check)
    if version == "student":
        assert said.startswith(wrong), said
    else:
        assert said.startswith(right) and wrong not in said, said


@pytest.mark.parametrize("lang, wrong, right, hint", [
    ("ja", "まだです: ", "正解: ", "\nヒント: "),
    ("zh", "还不对：", "正确：", "\n提示："),
])
def test_the_checks_answer_in_the_lessons_language(lang, wrong, right, hint):
    """The translated lessons pass lang=: the verdict, the core's sentence and the hint are
    all in it (commands, names and paths aside)."""
    from widget_text import english_sentences

    answers = [
        teaching.check_ranks_on_both_nodes("mpi", lang=lang),
        teaching.check_ranks_on_both_nodes({"kind": "mpi", "ntasks_per_node": 1}, lang=lang),
        teaching.check_ranks_on_both_nodes({}, lang=lang),
        teaching.check_ranks_on_both_nodes("no-such-preset", lang=lang),
        teaching.check_diagnosis(NODE_LOCAL_LOG, "permission-denied", lang=lang),
        teaching.check_diagnosis(NODE_LOCAL_LOG, "repo-dir-node-local", lang=lang),
        teaching.check_diagnosis(NODE_LOCAL_LOG, "repo-dir-node-local", "/scratch/u/ari", lang=lang),
        teaching.check_gres_fix("cpu_single", lang=lang),
        teaching.check_checkpoint_shared("/tmp/ari/checkpoints/x", lang=lang),
        teaching.check_checkpoint_shared("relative/path", lang=lang),
        teaching.check_diagnosis(FAILED_LOG, "", lang=lang),
        teaching.check_diagnosis(FAILED_LOG, "nonsense", lang=lang),
    ]
    for result in answers:
        said = str(result)
        assert said.startswith(wrong) and hint in said, said
        assert english_sentences([said]) == [], said
    solved = [teaching.check_ranks_on_both_nodes(
                  {"kind": "cpu_single", "requested_nodes": 2, "ntasks_per_node": 1}, lang=lang),
              teaching.check_gres_fix("gpu_single_nogres", lang=lang),
              teaching.check_checkpoint_shared("/work/u12345/ari/checkpoints/x", lang=lang),
              teaching.check_diagnosis(NODE_LOCAL_LOG, "repo-dir-node-local", "/work/u12345/ari",
                                       lang=lang)]
    for result in solved:
        assert str(result).startswith(right) and english_sentences([str(result)]) == [], str(result)


@pytest.mark.slow
def test_nbgrader_generates_and_autogrades_the_lessons(tmp_path):
    """The source is a real nbgrader assignment (the recipe of docs/teaching.md, teaching.ja.md
    and teaching.zh.md, its config included): ``nbgrader generate_assignment`` releases it
    (no solution left), and ``nbgrader autograde`` gives a submission whose answers are the
    solutions every point and the untouched student version none."""
    import os
    import shutil
    import subprocess
    import sys

    from nbgrader.api import Gradebook

    from ari_jupyter.wizard import assignment

    course = tmp_path / "course"
    (course / "source" / "lessons").mkdir(parents=True)
    for path in LESSONS:
        shutil.copy(path, course / "source" / "lessons" / path.name)
    (course / "nbgrader_config.py").write_text(
        'c = get_config()\nc.CourseDirectory.course_id = "ari-lessons"\n'
        f'c.ClearSolutions.code_stub = {{"python": {assignment.CODE_STUB!r}}}\n')
    bin_dir = os.path.dirname(sys.executable)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}  # alembic

    def nbgrader(*argv):
        done = subprocess.run([sys.executable, "-m", "nbgrader", *argv], cwd=course, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr

    nbgrader("generate_assignment", "lessons", "--force")
    for path in LESSONS:
        released = json.loads((course / "release" / "lessons" / path.name).read_text(encoding="utf-8"))
        assert "BEGIN SOLUTION" not in json.dumps(released) and "HIDDEN TESTS" not in json.dumps(released)
        source = json.loads(path.read_text(encoding="utf-8"))
        solved = json.loads(json.dumps(released))
        for cell, original in zip(solved["cells"], source["cells"]):
            if assignment.is_solution(cell):  # the answers a right-answering student types
                cell["source"] = [line for line in assignment.source_of(original).splitlines(True)
                                  if "SOLUTION" not in line]
        for student, notebook in (("right", solved), ("untouched", released)):
            folder = course / "submitted" / student / "lessons"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / path.name).write_text(json.dumps(notebook), encoding="utf-8")
    nbgrader("autograde", "lessons", "--create")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        right = gradebook.find_submission("lessons", "right")
        untouched = gradebook.find_submission("lessons", "untouched")
        assert (right.score, right.max_score) == (float(len(LESSONS)),) * 2
        assert untouched.score == 0.0


# -- lesson 5: following the recorded run ------------------------------------------------------


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The recorded run of rccs-cloud, placed in a HOME of its own, and what it says is true."""
    import os

    home = tmp_path_factory.mktemp("home")
    saved = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        run = teaching.recorded_run("rccs-cloud")
    finally:
        os.environ["HOME"] = saved or ""
    jobs = run["jobs"]["jobs"]
    best_node = run["best_metric"]["node_id"]
    best = [j["job_id"] for j in jobs if j["kind"] == "bfts" and j["work_dir"].endswith("/" + best_node)]
    other = [j["job_id"] for j in jobs if j["kind"] == "bfts" and j["job_id"] not in best]
    reproduce = next(j for j in jobs if j["kind"] == "reproduce")
    rank_3 = next(line.split()[-1] for line in reproduce["tail"] if line.startswith("srun rank 3 of"))
    return run, best[0], other[0], reproduce, rank_3


def test_the_recorded_run_is_one_to_follow(recorded):
    """What lesson 5 reads: a finished run, BFTS jobs on one node each and a reproduce job
    whose ranks ran on both nodes; the best metric's node had a job of its own."""
    run, best, other, reproduce, rank_3 = recorded
    assert run["phase"] == "finished" and run["timeline"] and run["timeline"][-1]["phase"] == "finished"
    assert reproduce["where"] == "n[1-2]" and rank_3 in ("n1", "n2") and best != other


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_reading_the_run_is_checked_both_ways(recorded, lang):
    from widget_text import english_sentences

    run, best, other, reproduce, rank_3 = recorded
    wrong, right = VERDICTS[lang]
    other_host = "n1" if rank_3 == "n2" else "n2"
    for answer, hint_word in (
            (("", ""), "print_run"),
            (("999", rank_3), "print_run"),
            ((reproduce["job_id"], rank_3), "node_"),     # the reproduce job re-ran the code
            ((other, rank_3), "node_"),                   # a search node that is not the best
            ((best, reproduce["where"]), "srun rank 3"),  # the node list, not a rank's host
            ((best, other_host), "srun rank 3")):
        said = str(teaching.check_run_reading(*answer, run, lang=lang))
        assert said.startswith(wrong) and hint_word in said, (answer, said)
        if lang != "en":
            assert english_sentences([said]) == [], said
    said = str(teaching.check_run_reading(best, rank_3, run, lang=lang))
    assert said.startswith(right) and rank_3 in said and best in said, said


def test_a_clean_jobs_output_has_no_cause_to_name():
    """The doctor's note on a clean job's output (what it read) is not a cause lesson 4 asks for."""
    result = teaching.check_diagnosis("srun rank 0 of 2 on n1\nsrun rank 1 of 2 on n2\n", "job-output")
    assert not result.passed
    assert result.message == teaching.check_diagnosis("nothing here\n", "x").message


@pytest.mark.parametrize("form", ["{job}", "job {job}", "Job {job}", "job #{job}", "job id {job}",
                                  " JOB {job}. ", "ジョブ {job}", "作业 {job}", "slurm job {job}"])
def test_the_best_job_is_read_in_the_forms_a_learner_writes(recorded, form):
    """'job 3' for job 3 was answered "job 3 is not a job of this run; its jobs are 3, ..."."""
    run, best, other, reproduce, rank_3 = recorded
    said = teaching.check_run_reading(form.format(job=best), rank_3, run)
    assert said.passed, said
    assert not teaching.check_run_reading(form.format(job=other), rank_3, run).passed


@pytest.mark.parametrize("answer", ["job 3 or 4", "3, 4", "jobs", "n1"])
def test_an_answer_that_is_not_one_job_stays_as_given(recorded, answer):
    run, _, _, _, rank_3 = recorded
    said = teaching.check_run_reading(answer, rank_3, run)
    assert not said.passed and answer.strip() in said.message, said


@pytest.mark.parametrize("profile, lang, overridden", [
    ({"kind": "cpu_single", "requested_nodes": 1, "ntasks_per_node": 1}, "en",
     "requested_nodes: 1 is overridden: the wizard's Nodes (2, this allocation's) sets the job's --nodes 2"),
    ({"kind": "cpu_single", "requested_nodes": 1, "ntasks_per_node": 1}, "ja", "requested_nodes: 1 は上書き"),
    ({"kind": "cpu_single", "requested_nodes": 2, "ntasks_per_node": 1}, "en", None),
    ({"kind": "cpu_single", "ntasks_per_node": 1}, "en", None),
])
def test_a_correct_answer_says_when_the_wizard_overrode_requested_nodes(profile, lang, overridden):
    """Lesson 1 passed requested_nodes: 1 while the line said --nodes 2, without a word."""
    result = teaching.check_ranks_on_both_nodes(profile, lang=lang)
    assert result.passed, result
    assert "--nodes 2" in result.message
    if overridden:
        assert overridden in result.message, result
    else:
        assert "requested_nodes" not in result.message, result


@pytest.mark.parametrize("profile, brought, hint", [
    ("mpi_gpu", "The preset 'mpi_gpu' asks for GPUs by itself (gpu_type='v100')", "kind 'cpu_single'"),
    ({"kind": "mpi_gpu", "gpu_type": "a100", "ntasks_per_node": 1}, None, "kind 'cpu_single'"),
])
def test_a_gpu_request_refused_on_a_site_without_gpus_says_where_it_came_from(profile, brought, hint):
    """Lesson 1's mpi_gpu answer quoted a v100 the learner never typed, with no hint."""
    result = teaching.check_ranks_on_both_nodes(profile)
    assert not result.passed and "ARI refuses this profile" in result.message
    assert hint in result.hint, result
    if brought:
        assert result.message.startswith(brought), result
    else:
        assert "by itself" not in result.message


@pytest.mark.parametrize("lang", ["", "ja", "zh"])
def test_lesson_2_shows_the_gres_command_once(lang, capsys):
    """Lesson 2 printed `$ sinfo -h -o %G` twice: its own line, then the evidence, which
    starts with the command."""
    import json
    from pathlib import Path

    folder = Path(teaching.__file__).parent / "notebooks" / "teaching" / lang
    notebook = json.loads((folder / "02_site_probes_on_demo_sites.ipynb").read_text(encoding="utf-8"))
    code = ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]
    scope: dict = {}
    for source in code[:2]:  # every site's checks, then the GRES answer of sx40
        exec(compile(source, "lesson-02", "exec"), scope)
    printed = capsys.readouterr().out
    assert printed.count("$ sinfo -h -o %G") == 1, printed
