"""Where the teaching lessons are: ``notebooks/teaching`` of the clone ari-jupyter came from.

The lessons are notebooks a class edits, kept in the repository beside the tests that run them
(nbval, ``tests/test_teaching.py``), not in the package. An install made from a clone knows
that clone: an editable one imports from it, and ``pip install .`` records the folder in the
distribution's ``direct_url.json`` (PEP 610).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

LESSONS_DIR = Path("notebooks", "teaching")
FIRST_LESSON = "01_allocation_and_hostlists.ipynb"


def lessons_folder(lang: str) -> Path | None:
    """The folder of the lessons in ``lang`` (English at the top, ``ja``/``zh`` beside), or
    None when this install came from no clone that has them (a wheel from an index)."""
    for clone in _clones():
        folder = clone / LESSONS_DIR / ("" if lang == "en" else lang)
        if (folder / FIRST_LESSON).is_file():
            return folder
    return None


def _clones() -> Iterator[Path]:
    yield Path(__file__).resolve().parents[2]  # imported from the clone (editable, or run in it)
    import importlib.metadata
    from urllib.parse import unquote, urlparse

    try:
        dist = importlib.metadata.distribution("ari-jupyter")
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return
    url = urlparse(direct.get("url", "") if isinstance(direct, dict) else "")
    if url.scheme == "file":
        yield Path(unquote(url.path))
