"""Where the teaching lessons are: package data, ``ari_jupyter/notebooks/teaching``.

The lessons ship with the package (English at the top, ``ja``/``zh`` beside), so every
install has them, a wheel from an index too. They are the teacher's version, in nbgrader's
assignment format (``wizard.assignment``); a class never edits them here: ``ari-jupyter lab
--lessons`` opens a per-user copy (``wizard.lesson_copies``).
"""
from __future__ import annotations

from pathlib import Path

LESSONS_DIR = Path("notebooks", "teaching")
"""The lessons' folder inside the package."""
FIRST_LESSON = "01_allocation_and_hostlists.ipynb"


def lessons_folder(lang: str) -> Path | None:
    """The packaged lessons in ``lang`` (English at the top, ``ja``/``zh`` beside), or None
    when this install has none in it."""
    folder = Path(__file__).resolve().parents[1] / LESSONS_DIR / ("" if lang == "en" else lang)
    return folder if (folder / FIRST_LESSON).is_file() else None


def packaged_lessons(lang: str) -> list[Path]:
    """The packaged lesson notebooks in ``lang``, in order (English for an unknown one)."""
    folder = lessons_folder(lang) or lessons_folder("en")
    return sorted(folder.glob("*.ipynb")) if folder is not None else []
