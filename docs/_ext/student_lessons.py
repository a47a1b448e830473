"""The docs show the lessons as a class gets them: MyST-NB reads each lesson through
``reads`` (its ``nb_custom_formats`` reader for ``.ipynb``), which gives the student version
(``ari_jupyter.wizard.assignment``): no solution, the checks answering the starting answers."""
from __future__ import annotations

import json


def reads(text: str, **_):
    import nbformat

    from ari_jupyter.wizard.assignment import student_version

    return nbformat.reads(json.dumps(student_version(json.loads(text))), as_version=4)
