"""``ari-jupyter lessons export DIR`` into a shared hand-out folder the class can write.

A student plants ``ja -> <the teacher's own teacher copies>`` (or makes ``zh/`` himself, or
puts the whole DIR as a link) before the teacher exports. Before, the export wrote through the
link and replaced the teacher's edited Japanese copies with student versions (five files, no
backup). Now it writes only into folders the teacher owns, each opened without following a
link, and writes nothing at all when one is refused. ``export --teacher`` (the solutions)
refuses a git work tree, as the teacher's copies themselves do.
"""
from __future__ import annotations

import os
import subprocess

import pytest

from ari_jupyter.cli import main
from ari_jupyter.wizard import lesson_copies

from .figures import record
from unit.wizard.test_lesson_copies import home  # noqa: F401  (the fixture: a HOME of the test's own)

EDITED = '{"cells": [], "metadata": {}, "note": "the teacher\'s own edits"}\n'


@pytest.fixture
def teacher(home):
    """The teacher's own edited Japanese copies, and the class's shared hand-out folder."""
    tmp_path = home.parent
    copies = lesson_copies.copies_folder("ja", teacher=True)
    copies.mkdir(parents=True)
    for name in ("01_allocation_and_hostlists.ipynb", "02_site_probes_on_demo_sites.ipynb",
                 "03_execution_profiles_and_sbatch.ipynb", "04_failure_modes.ipynb",
                 "05_following_a_run.ipynb"):
        (copies / name).write_text(EDITED)
    handout = tmp_path / "handout"
    handout.mkdir()
    handout.chmod(0o1777)  # the class's shared folder
    return copies, handout


def _copies(copies) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(copies.iterdir())}


def _plant_link_ja(copies, handout):
    (handout / "ja").symlink_to(copies)
    return handout, "symbolic link"


def _plant_whole_dir_link(copies, handout):
    (handout / "out").symlink_to(copies.parent)
    return handout / "out", "symbolic link"


def _plant_foreign_zh(copies, handout):
    (handout / "zh").mkdir()
    (handout / "zh").chmod(0o777)
    os.chown(handout / "zh", 65534, 65534)
    return handout, "belongs to"


PLANTS = {"ja linked to the teacher's copies": _plant_link_ja,
          "DIR itself a link": _plant_whole_dir_link}
if os.geteuid() == 0:  # giving a folder to another user needs root
    PLANTS["zh made by another user"] = _plant_foreign_zh


@pytest.mark.parametrize("plant", PLANTS)
@pytest.mark.parametrize("version", [[], ["--teacher"]])
def test_export_never_writes_through_a_planted_link_or_into_another_users_folder(
        teacher, capsys, plant, version):
    copies, handout = teacher
    before = _copies(copies)
    target, says = PLANTS[plant](copies, handout)
    code = main(["lessons", "export", str(target), *version, "--lang", "en"])
    kept = _copies(copies) == before
    record("Attacks", "lessons export into a class's shared folder with planted links or "
           "folders: the teacher's own copies unchanged", cases=1, survived=int(kept),
           lost=int(not kept), unit="exports")
    assert kept
    assert code == 1 and says in capsys.readouterr().err
    written = [p for p in handout.glob("*/*.ipynb") if not p.parent.is_symlink()]
    assert not list(handout.glob("*.ipynb")) and written == []  # nothing at all


def test_export_teacher_refuses_a_git_work_tree_as_the_copies_do(tmp_path, capsys):
    tree = tmp_path / "course-repo"
    tree.mkdir()
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    code = main(["lessons", "export", str(tree / "handout"), "--teacher", "--lang", "en"])
    written = list(tree.rglob("*.ipynb"))
    record("Attacks", "lessons export --teacher (the solutions) into a git work tree: refused",
           cases=1, survived=int(not written), lost=int(bool(written)), unit="exports")
    assert code == 1 and "git work tree" in capsys.readouterr().err
    assert written == []
    assert main(["lessons", "export", str(tree / "handout"), "--lang", "en"]) == 0  # students' is fine


def test_export_into_the_users_own_folders_still_writes_and_rewrites(tmp_path, capsys):
    out = tmp_path / "mine"
    for _ in range(2):
        assert main(["lessons", "export", str(out), "--lang", "ja"]) == 0
    assert len(list(out.rglob("*.ipynb"))) == 15
    assert "15" in capsys.readouterr().out
