"""A lesson's student version, made from its one source in nbgrader's assignment format.

The lessons are written once, as the teacher's version, with nbgrader's markers and cell
metadata (``metadata.nbgrader``): the exercise's answer cell is a *solution* cell whose
``### BEGIN SOLUTION`` / ``### END SOLUTION`` region holds the solution and the teacher's
explanation; the check cell under it is an *autograded test* cell, locked (read-only), whose
``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS`` region asserts the check passed.

``student_version`` does what ``nbgrader generate_assignment`` does to such a notebook, with
``ClearSolutions.code_stub = {"python": ""}`` (the starting answer above the region stays: the
learner edits it, and the check says "Not yet" until it is right): solution and hidden-test
regions removed, outputs cleared, locked and grade-only cells made read-only (JupyterLab's
``editable``/``deletable``), a marker outside a cell of its kind refused as nbgrader refuses
it. It is done here rather than by nbgrader itself so that a student's ``pip install`` needs
no gradebook database (nbgrader brings SQLAlchemy, Alembic and a course directory); the tests
check the two give the same notebook, and a teacher who wants nbgrader's gradebook runs
``nbgrader generate_assignment`` and ``nbgrader autograde`` on the same source. Pure: no
files, nothing imported from Jupyter.
"""
from __future__ import annotations

import copy
import re
from typing import Iterable

BEGIN_SOLUTION, END_SOLUTION = "BEGIN SOLUTION", "END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"
"""nbgrader's default delimiters (matched anywhere in a line, as nbgrader matches them)."""

CODE_STUB = ""
"""What replaces a solution region in a code cell: nothing (the starting answer stays)."""
TEXT_STUB = "YOUR ANSWER HERE"
"""nbgrader's stub for a written (markdown) solution."""


class AssignmentError(ValueError):
    """The source breaks nbgrader's format (a marker outside its kind of cell, an unclosed or
    nested region): said as nbgrader says it."""


def grader(cell: dict) -> dict:
    return (cell.get("metadata") or {}).get("nbgrader") or {}


def is_solution(cell: dict) -> bool:
    return bool(grader(cell).get("solution"))


def is_grade(cell: dict) -> bool:
    return bool(grader(cell).get("grade"))


def is_locked(cell: dict) -> bool:
    """Read-only in the student version (nbgrader's LockCells): autograded cells and cells
    marked read-only, unless they are solution cells (which the learner edits)."""
    meta = grader(cell)
    return not meta.get("solution") and bool(meta.get("locked") or meta.get("grade"))


def source_of(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def cut_region(text: str, begin: str, end: str, stub: str | None) -> tuple[str, bool]:
    """``text`` without its ``begin``..``end`` regions, each replaced by ``stub`` at the
    marker's indent (None: by nothing at all), and whether there was one."""
    out: list[str] = []
    inside = found = False
    for line in text.split("\n"):
        if begin in line:
            if inside:
                raise AssignmentError(f"encountered nested {begin!r} statements")
            inside = found = True
            if stub is not None:
                indent = re.match(r"\s*", line).group(0)
                out.extend(indent + stub_line for stub_line in stub.split("\n"))
        elif end in line:
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise AssignmentError(f"no {end!r} statement found")
    return "\n".join(out), found


def solution_regions(notebook: dict) -> list[str]:
    """The text of every solution and hidden-test region of ``notebook`` (what a student
    version must not hold)."""
    regions: list[str] = []
    for cell in notebook.get("cells", []):
        for begin, end in ((BEGIN_SOLUTION, END_SOLUTION), (BEGIN_HIDDEN, END_HIDDEN)):
            inside, lines = False, []
            for line in source_of(cell).split("\n"):
                if begin in line:
                    inside, lines = True, []
                elif end in line and inside:
                    inside = False
                    regions.append("\n".join(lines))
                elif inside:
                    lines.append(line)
    return regions


def student_version(notebook: dict) -> dict:
    """The student's copy of a lesson written in nbgrader's format (see the module doc)."""
    student = copy.deepcopy(notebook)
    for cell in student.get("cells", []):
        text = source_of(cell)
        stub = CODE_STUB if cell.get("cell_type") == "code" else TEXT_STUB
        text, solved = cut_region(text, BEGIN_SOLUTION, END_SOLUTION, stub)
        if solved and not is_solution(cell):
            raise AssignmentError("solution region detected in a non-solution cell")
        if is_solution(cell) and not solved:
            text = stub  # nbgrader clears a whole solution cell without a region
        text, hidden = cut_region(text, BEGIN_HIDDEN, END_HIDDEN, None)
        if hidden and not is_grade(cell):
            raise AssignmentError("hidden test region detected in a non-grade cell")
        cell["source"] = _lines(text)
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        metadata = cell.setdefault("metadata", {})
        if is_solution(cell):
            metadata["deletable"] = False  # nbgrader's LockCells: kept, and editable
        elif is_locked(cell):
            metadata["editable"] = False
            metadata["deletable"] = False
    student.get("metadata", {}).pop("celltoolbar", None)
    return student


def teacher_version(notebook: dict) -> dict:
    """The teacher's copy: the source itself, outputs cleared (a lesson is run in class)."""
    teacher = copy.deepcopy(notebook)
    for cell in teacher.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return teacher


def exercises(notebook: dict) -> Iterable[tuple[dict, dict]]:
    """(answer cell, check cell) pairs: each solution cell and the autograded cell after it."""
    cells = notebook.get("cells", [])
    for index, cell in enumerate(cells):
        if is_solution(cell):
            check = next((c for c in cells[index + 1:] if is_grade(c) and not is_solution(c)), None)
            if check is not None:
                yield cell, check


def version(notebook: dict, teacher: bool) -> dict:
    return teacher_version(notebook) if teacher else student_version(notebook)
