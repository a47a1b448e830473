"""The class's hub settings: docs/teaching.md shows the ones the test bed's class runs, and the
spawner's command (``ari-jupyter lessons path --place``) gives each learner their own copy."""
from __future__ import annotations
from repo_paths import REPO

import json
import os
import subprocess
import sys
from pathlib import Path

from test_docs_commands import blocks_of

REPO = REPO
CLASS_CONFIG = REPO / "tests" / "testbed" / "class_config.py"


def test_the_teachers_guide_shows_the_class_settings_the_test_bed_runs():
    for page in ("teaching.md", "teaching.ja.md", "teaching.zh.md"):
        shown = [b.text for b in blocks_of(REPO / "docs" / page)
                 if b.marker == ("covered-by", "tests/testbed/test_hub_class_testbed.py")]
        assert shown == [CLASS_CONFIG.read_text()], page


def _place(home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "JUPYTER"))}
    return subprocess.run([sys.executable, "-m", "ari_jupyter", "lessons", "path", "--place",
                           "--lang", "en"], capture_output=True, text=True, timeout=120,
                          env={**env, "HOME": str(home)}, cwd=home)


def test_place_puts_the_student_lessons_in_the_learners_home_and_keeps_their_edits(tmp_path):
    placed = _place(tmp_path)
    assert placed.returncode == 0, placed.stderr
    folder = Path(placed.stdout.strip())
    assert folder == tmp_path / ".local/share/ari-jupyter/lessons/student/en"
    lesson = folder / "01_allocation_and_hostlists.ipynb"
    assert "BEGIN SOLUTION" not in lesson.read_text()
    notebook = json.loads(lesson.read_text())
    notebook["cells"][0]["source"] = "the learner's own note"
    lesson.write_text(json.dumps(notebook))
    again = _place(tmp_path)
    assert again.returncode == 0 and Path(again.stdout.strip()) == folder
    assert json.loads(lesson.read_text())["cells"][0]["source"] == "the learner's own note"


def test_path_without_place_writes_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "JUPYTER"))}
    shown = subprocess.run([sys.executable, "-m", "ari_jupyter", "lessons", "path", "--lang", "en"],
                           capture_output=True, text=True, timeout=120, env={**env, "HOME": str(tmp_path)})
    assert shown.returncode == 0 and not Path(shown.stdout.strip()).exists()
