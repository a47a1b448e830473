"""The lessons' check cells: right answers are told they are right, wrong ones why not.

The check functions (``ari_jupyter.teaching``) are table-tested with right and wrong answers;
then each teaching notebook is executed as a class would run it, and its exercise check (the
starting answer, which is wrong) must say "Not yet" while its solution cell says "Correct":
what docs/teaching.md promises a class that opens the lessons with jupyter lab.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ari_jupyter import teaching

REPO = Path(__file__).resolve().parent.parent
LESSONS = sorted((REPO / "notebooks" / "teaching").glob("*.ipynb"))
TRANSLATED = {lang: sorted((REPO / "notebooks" / "teaching" / lang).glob("*.ipynb")) for lang in ("ja", "zh")}
HEADINGS = {"ja": ("## 学習目標", "## 演習", "## 解答", "**時間:**"),
            "zh": ("## 学习目标", "## 练习", "## 参考答案", "**时间：**")}
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
    ("task-exit-nonzero", False, "consequence"),
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
        out.append(output.get("text", ""))
        out.append(output.get("data", {}).get("text/plain", ""))
        if output.get("output_type") == "error":
            out.append("\n".join(output.get("traceback", [])))
    return "".join(out)


def test_every_lesson_has_objectives_an_exercise_a_check_and_a_solution():
    assert len(LESSONS) == 4
    for path in LESSONS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        for heading in ("## Objectives", "## Exercise", "## Solution", "**Time:**"):
            assert heading in text, f"{path.name}: no {heading}"
        checks = [c for c in nb["cells"] if "teaching.check_" in "".join(c["source"])]
        assert len(checks) >= 2, f"{path.name}: an exercise check and a solution check"
        assert any("solution" in c["metadata"].get("tags", []) for c in checks), path.name
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
        shape = [(c["cell_type"], c.get("id"), c["metadata"].get("tags", [])) for c in nb["cells"]]
        assert shape == [(c["cell_type"], c.get("id"), c["metadata"].get("tags", []))
                         for c in english["cells"]], path
        markdown = [line for c in nb["cells"] if c["cell_type"] == "markdown"
                    for line in "".join(c["source"]).splitlines() if line.strip()]
        for heading in HEADINGS[lang]:
            assert any(line.startswith(heading) for line in markdown), f"{path}: no {heading}"
        assert english_sentences(markdown) == [], path
        for cell in (c for c in nb["cells"] if c["cell_type"] == "code"):
            source = "".join(cell["source"])
            assert cell.get("outputs", []) == []
            assert source.count("teaching.check_") == source.count(f'lang="{lang}"'), source


def test_the_student_copies_keep_no_solution(tmp_path):
    """docs/teaching.md's nbconvert command (cells tagged ``solution`` removed) hands out
    lessons with the exercise and its check but neither the solution's code nor the
    teacher's explanation of it."""
    import subprocess
    import sys

    lessons = LESSONS + TRANSLATED["ja"] + TRANSLATED["zh"]
    for lang, paths in (("en", LESSONS), ("ja", TRANSLATED["ja"]), ("zh", TRANSLATED["zh"])):
        subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook",
                        "--TagRemovePreprocessor.enabled=True",
                        "--TagRemovePreprocessor.remove_cell_tags", "solution",
                        "--output-dir", str(tmp_path / lang), *map(str, paths)],
                       check=True, capture_output=True)
    solution_heading = {"en": "## Solution", **{lang: HEADINGS[lang][2] for lang in HEADINGS}}
    for path in lessons:
        lang = _lang_of(path)
        student = json.loads((tmp_path / lang / path.name).read_text(encoding="utf-8"))
        sources = ["".join(c["source"]) for c in student["cells"]]
        assert not any(s.startswith(solution_heading[lang]) for s in sources), path
        assert sum("teaching.check_" in s for s in sources) == 1, path  # the exercise's own


def _lang_of(path: Path) -> str:
    return path.parent.name if path.parent.name in TRANSLATED else "en"


@pytest.mark.slow
@pytest.mark.parametrize("path", LESSONS + TRANSLATED["ja"] + TRANSLATED["zh"],
                         ids=lambda p: f"{_lang_of(p)}-{p.name}")
def test_the_lesson_runs_and_its_checks_answer_both_ways(path, tmp_path):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(str(path), as_version=4)
    NotebookClient(nb, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    checks = [c for c in nb.cells if c.cell_type == "code" and "teaching.check_" in c.source]
    exercise = [c for c in checks if "solution" not in c.metadata.get("tags", [])]
    solution = [c for c in checks if "solution" in c.metadata.get("tags", [])]
    assert exercise and solution
    wrong, right = VERDICTS[_lang_of(path)]
    for cell in exercise:  # the starting answer is wrong, and the learner is told so
        assert _text(cell).startswith(wrong), _text(cell)
    for cell in solution:
        assert right in _text(cell) and wrong not in _text(cell), _text(cell)


@pytest.mark.parametrize("lang, wrong, right, hint", [
    ("ja", "まだです: ", "正解: ", "\nヒント: "),
    ("zh", "还不对：", "正确：", "\n提示："),
])
def test_the_checks_answer_in_the_lessons_language(lang, wrong, right, hint):
    """The translated lessons pass lang=: the verdict, the core's sentence and the hint are
    all in it (commands, names and paths aside)."""
    from widget_text import english_sentences

    answers = [
        teaching.check_ranks_on_both_nodes({"kind": "cpu_single"}, lang=lang),
        teaching.check_ranks_on_both_nodes("no-such-preset", lang=lang),
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
              teaching.check_checkpoint_shared("/work/u12345/ari/checkpoints/x", lang=lang)]
    for result in solved:
        assert str(result).startswith(right) and english_sentences([str(result)]) == [], str(result)
