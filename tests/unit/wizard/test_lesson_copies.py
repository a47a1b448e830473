"""The lessons a class opens: package data, copied into a per-user folder outside any git work
tree, never overwritten once edited, restored by ``ari-jupyter lessons reset`` (what
docs/teaching.md tells a teacher, ``ari-jupyter lab --lessons --teacher`` included)."""
from __future__ import annotations
from repo_paths import REPO

import glob
import json
import os
import subprocess
from pathlib import Path

import pytest

from ari_jupyter.cli import main
from ari_jupyter.wizard import assignment, lesson_copies

REPO = REPO
PACKAGE = REPO / "ari_jupyter"
NAMES = ["01_allocation_and_hostlists.ipynb", "02_site_probes_on_demo_sites.ipynb",
         "03_execution_profiles_and_sbatch.ipynb", "04_failure_modes.ipynb",
         "05_following_a_run.ipynb"]


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A HOME and XDG data home of the test's own, outside the clone."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("JUPYTERLAB_SETTINGS_DIR", raising=False)
    return home


def _inside_git(folder: Path) -> bool:
    done = subprocess.run(["git", "-C", str(folder), "rev-parse", "--is-inside-work-tree"],
                          capture_output=True, text=True)
    return done.returncode == 0 and done.stdout.strip() == "true"


def _lab_lessons(monkeypatch, *argv) -> list[str]:
    """Run ``ari-jupyter lab --lessons ...`` up to the point it becomes JupyterLab."""
    from ari_jupyter.cli import lab

    started: list = []
    monkeypatch.setattr(lab, "_become_jupyterlab", lambda plan: started.append(plan) or 0)
    assert main(["lab", "--lessons", *argv]) == 0
    return started[0].argv


def _root(argv: list[str]) -> Path:
    return Path(next(a for a in argv if a.startswith("--ServerApp.root_dir=")).split("=", 1)[1])


def test_the_lessons_are_package_data():
    """Every lesson file is matched by setup.cfg's package_data (a wheel from an index has
    them all)."""
    import configparser

    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    patterns = [p.strip() for p in config["options.package_data"]["ari_jupyter"].split(",")]
    shipped = {Path(f) for p in patterns for f in glob.glob(str(PACKAGE / p))}
    lessons = set((PACKAGE / "notebooks" / "teaching").rglob("*.ipynb"))
    assert len(lessons) == 3 * len(NAMES) and lessons <= shipped


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_lab_lessons_serves_the_student_version_outside_any_git_work_tree(lang, home, monkeypatch):
    monkeypatch.chdir(REPO)  # started from the clone: nothing may land in it
    before = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain"], capture_output=True,
                            text=True).stdout
    root = _root(_lab_lessons(monkeypatch, "--lang", lang))
    assert root == home / ".local" / "share" / "ari-jupyter" / "lessons" / "student" / lang
    assert not _inside_git(root) and lesson_copies.git_work_tree(root) is None
    assert sorted(p.name for p in root.glob("*.ipynb")) == NAMES
    for path in root.glob("*.ipynb"):
        text = path.read_text(encoding="utf-8")
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text, path
    after = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain"], capture_output=True,
                           text=True).stdout
    assert after == before


def test_lab_lessons_teacher_serves_the_solutions(home, monkeypatch):
    root = _root(_lab_lessons(monkeypatch, "--teacher", "--lang", "en"))
    assert root.parent.name == "teacher" and not _inside_git(root)
    for path in root.glob("*.ipynb"):
        assert "### BEGIN SOLUTION" in path.read_text(encoding="utf-8"), path


def test_xdg_data_home_is_followed(tmp_path, home, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    root = _root(_lab_lessons(monkeypatch, "--lang", "en"))
    assert root == tmp_path / "data" / "ari-jupyter" / "lessons" / "student" / "en"


def test_a_folder_inside_a_git_work_tree_is_refused(tmp_path, home, monkeypatch, capsys):
    tree = tmp_path / "clone"
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    monkeypatch.setenv("XDG_DATA_HOME", str(tree / "data"))
    assert main(["lab", "--lessons", "--lang", "en"]) == 1
    assert "git work tree" in capsys.readouterr().err
    assert not (tree / "data").exists()


def _edit(path: Path, new_answer: str) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    answer, _ = next(assignment.exercises(notebook))
    answer["source"] = [new_answer]
    path.write_text(json.dumps(notebook), encoding="utf-8")


def test_an_edited_lesson_is_never_overwritten_and_reset_restores_it(home, monkeypatch, capsys):
    root = _root(_lab_lessons(monkeypatch, "--lang", "en"))
    first = root / NAMES[0]
    _edit(first, "profile = 'my answer'")
    # an autosave that only touched outputs and metadata is not an edit
    second = root / NAMES[1]
    saved = json.loads(second.read_text(encoding="utf-8"))
    saved["metadata"]["widgets"] = {}
    second.write_text(json.dumps(saved), encoding="utf-8")
    assert lesson_copies.is_edited(first) and not lesson_copies.is_edited(second)

    placed = lesson_copies.place_lessons("en")  # the next open
    assert first in placed.kept and 'my answer' in first.read_text(encoding="utf-8")

    assert main(["lessons", "reset", "01", "--lang", "en"]) == 0
    said = capsys.readouterr().out
    assert "the edited copy is kept as" in said
    assert 'my answer' not in first.read_text(encoding="utf-8")
    kept = list((root / lesson_copies.RESET_FOLDER).glob("01_*.ipynb"))
    assert len(kept) == 1 and 'my answer' in kept[0].read_text(encoding="utf-8")
    assert not lesson_copies.is_edited(first)


def test_an_unedited_copy_of_an_older_version_is_replaced(home):
    placed = lesson_copies.place_lessons("ja")
    old = placed.folder / NAMES[2]
    notebook = json.loads(old.read_text(encoding="utf-8"))
    notebook["cells"][0]["source"] = ["# an older version's lesson\n"]
    notebook["metadata"]["ari_jupyter"]["placed_cells"] = lesson_copies.fingerprint(notebook)
    old.write_text(json.dumps(notebook), encoding="utf-8")
    again = lesson_copies.place_lessons("ja")
    assert old in again.written and "an older version" not in old.read_text(encoding="utf-8")
    assert sorted(p.name for p in again.kept) == sorted(n for n in NAMES if n != NAMES[2])


def test_reset_names_an_unknown_lesson(home, capsys):
    assert main(["lessons", "reset", "09", "--lang", "en"]) == 2
    assert "01_allocation_and_hostlists" in capsys.readouterr().err


def test_export_writes_every_language(tmp_path, home):
    assert main(["lessons", "export", str(tmp_path / "out"), "--lang", "en"]) == 0
    written = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*.ipynb"))
    assert written == sorted(NAMES + [f"{lang}/{n}" for lang in ("ja", "zh") for n in NAMES])
    assert not any("BEGIN SOLUTION" in p.read_text(encoding="utf-8")
                   for p in (tmp_path / "out").rglob("*.ipynb"))


def test_lessons_path_prints_the_folder_lab_opens(home, monkeypatch, capsys):
    assert main(["lessons", "path", "--teacher", "--lang", "zh"]) == 0
    printed = Path(capsys.readouterr().out.strip())
    assert printed == _root(_lab_lessons(monkeypatch, "--teacher", "--lang", "zh"))
    assert os.path.isdir(printed)
