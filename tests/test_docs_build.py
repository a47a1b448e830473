"""The docs build: Sphinx with MyST-NB, warnings as errors, the lessons executed, and the CLI
reference written from the argument parser (``docs/_ext/cli_reference.py``).

Needs the ``docs`` extra (``pip install '.[docs]'``; ``bash tests/run`` installs it). Skipped
without it, except in CI (``CI=true``), which fails instead.
"""
from __future__ import annotations

import argparse
import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LESSONS = sorted((REPO / "ari_jupyter" / "notebooks" / "teaching").glob("*.ipynb"))


def _need(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        reason = f"{module} is not installed (pip install '.[docs]')"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI builds the docs, but {reason}")
        pytest.skip(reason)


def _reference():
    sys.path.insert(0, str(REPO / "docs" / "_ext"))
    try:
        import cli_reference
    finally:
        sys.path.pop(0)
    return cli_reference


def _all_options(parser: argparse.ArgumentParser, reference) -> set[str]:
    options = {opt for action in parser._actions for opt in action.option_strings}
    for _, _, sub in reference._subcommands(parser):
        options |= _all_options(sub, reference)
    return options


def test_the_cli_reference_lists_every_command_and_flag_of_the_parser():
    from ari_jupyter.cli import build_parser

    reference = _reference()
    text = reference.render_reference()
    parser = build_parser()
    commands = [name for name, _, _ in reference._subcommands(parser)]
    assert {"lab", "emit", "probe", "doctor", "check-handoff", "lint", "preview"} <= set(commands)
    for name in commands:
        assert f"## `ari-jupyter {name}`" in text
    assert "### `ari-jupyter preview sbatch`" in text
    for option in _all_options(parser, reference):
        assert option in text, option
    assert reference.MARKER in (REPO / "docs" / "cli.md").read_text(encoding="utf-8")


def test_the_committed_cli_reference_is_the_parsers():
    """docs/cli.md carries the reference itself (read as a file it is not an empty page), and
    it is the parser's of this version: rewrite it with `python docs/_ext/cli_reference.py`."""
    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    reference = _reference()
    assert "usage: ari-jupyter emit" in page and page.count(reference.END_MARKER) == 1
    assert reference.with_reference(page) == page, "python docs/_ext/cli_reference.py"


@pytest.mark.slow
def test_the_docs_build_with_warnings_as_errors_and_run_the_lessons(tmp_path):
    _need("sphinx")
    _need("myst_nb")
    out = tmp_path / "html"
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           "-c", "docs", ".", str(out), "-d", str(tmp_path / "doctrees")],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    warnings = [line for line in done.stderr.splitlines()
                if ("WARNING" in line or "ERROR" in line) and "IPKernelApp" not in line]
    assert done.returncode == 0, "\n".join(warnings[-30:]) or done.stderr[-3000:]
    for page in ("wizard", "configuration", "cli", "reliability", "teaching"):
        assert (out / "docs" / f"{page}.html").is_file(), page
    cli = html.unescape(re.sub(r"<[^>]+>", "", (out / "docs" / "cli.html").read_text()))
    assert "usage: ari-jupyter emit" in cli and "--checkpoint-dir" in cli
    for lesson in LESSONS:  # the student version, executed: the check's answer, no solution
        page = (out / "ari_jupyter" / "notebooks" / "teaching" / f"{lesson.stem}.html").read_text(
            encoding="utf-8")
        assert "Not yet: " in page and "Correct: " not in page, lesson.name
        assert "BEGIN SOLUTION" not in page and "HIDDEN TESTS" not in page, lesson.name
