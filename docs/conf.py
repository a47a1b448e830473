"""Sphinx configuration: the docs pages, the teaching lessons (executed) and the CLI reference.

    python -m sphinx -W --keep-going -b html -c docs . build/docs

The source directory is the repository root so the lessons (package data in
ari_jupyter/notebooks/teaching/) are built where they live; ``include_patterns`` keeps
everything else out. MyST-NB reads each lesson as its student version (``_ext/student_lessons``:
the docs never show a solution) and runs it (a failing cell fails the build); ``docs/_ext/cli_reference.py`` writes the CLI reference from
the argument parser while the build reads docs/cli.md.
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))

project = "ari-jupyter"
author = "ari-jupyter contributors"
copyright = "ari-jupyter contributors, BSD-3-Clause"

extensions = ["myst_nb", "cli_reference"]
root_doc = "docs/index"
include_patterns = ["docs/*.md", "docs/screenshots/*.png", "ari_jupyter/notebooks/teaching/*.ipynb"]
exclude_patterns = ["build", "**/.ipynb_checkpoints", "labextension", "node_modules"]

myst_heading_anchors = 3
nb_execution_mode = "force"
nb_execution_in_temp = True
nb_execution_timeout = 180
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
nb_custom_formats = {".ipynb": ["student_lessons.reads", {}]}

html_theme = "alabaster"
html_title = "ari-jupyter"
html_static_path: list[str] = []
