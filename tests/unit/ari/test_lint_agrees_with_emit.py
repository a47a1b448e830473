"""lint and emit agree: lint reports an error exactly where emit would refuse.

Two directions. Generated wizard states go through the real ``emit_checkpoint``: when it
writes, the experiment.md it wrote lints without an error; when it refuses because of the
title, the metrics or the goal, the same values typed into a written file by hand (the title
line, the ``Metrics:`` line, the goal section) lint with an error on that line. Hand-edited
files are also generated directly: an error from lint on the title/metrics/goal line exactly
when emit refuses the values a user would have typed for them.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from _hypothesis_profiles import settings
from unit.ari.test_render import golden_state

from ari_jupyter.ari import render
from ari_jupyter.ari.lint_experiment import lint_experiment, read_fields
from ari_jupyter.checkpoint.emit import EmitBlocked, emit_checkpoint
from ari_jupyter.base.verdict import ProbeResult

TEXT_FIELDS = {"title", "metrics", "goal"}
# Characters that make ARI and the wizard disagree, among ordinary ones.
TRICKY = st.sampled_from(list("#,;:./ -_\t") + ["##", "Metrics:", "min_expected_metric:",
                                                 "AUTO-APPENDED BY VirSci", "\x07", "é", "漢"])
PIECE = st.one_of(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
                          max_size=6), TRICKY)
LINE = st.lists(PIECE, max_size=5).map("".join)


def _state(workspace: Path, title: str, metrics: list[str], goal: str):
    state = golden_state(workspace=str(workspace), provided_files=[], title=title,
                         metrics=metrics, goal=goal, run_id="20261201120000_property")
    state.set_probe_result(ProbeResult("shared_fs", "ok", f"{workspace} is shared",
                                       data={"path": str(workspace), "shared": True}))
    return state


def _emit(title: str, metrics: list[str], goal: str):
    """(refused text fields, written experiment.md or None) from the real emit."""
    with tempfile.TemporaryDirectory() as tmp:
        state = _state(Path(tmp) / "ws", title, metrics, goal)
        try:
            result = emit_checkpoint(state, ari_workflow=None)
        except EmitBlocked as exc:
            return {p.field for p in exc.problems}, None, state
        return set(), (Path(result.checkpoint_dir) / "experiment.md").read_text(encoding="utf-8"), state


def _lint(text: str, state) -> list:
    return [f for f in lint_experiment(text, partition=state.partition, cpus=state.max_cpus,
                                       env=render.env_values(state.choices()).values, check_files=False)
            if f.is_error]


def _typed_by_hand(written: str, title: str, metrics_line: str, goal: str) -> str:
    """``written`` with the title, the Metrics line and the goal section replaced by hand."""
    lines = written.split("\n")
    out, in_goal = [], False
    for line in lines:
        if in_goal and line.startswith("##"):
            in_goal = False
        if in_goal:
            continue
        if line.startswith("# "):
            line = f"# {title}"
        elif line.startswith("Metrics:"):
            line = f"Metrics: {metrics_line}"
        elif line == "## Research Goal":
            out += [line, goal]
            in_goal = True
            continue
        out.append(line)
    return "\n".join(out)


def _representable(title: str, metrics: list[str], goal: str) -> bool:
    """Values a file can carry as typed: one-line title and metrics, no ',' inside a metric,
    no goal line that starts a new section, no stray line breaks."""
    breaks = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
    one_line = not any(b in text for text in (title, *metrics) for b in breaks)
    return (one_line and not any("," in m or m != m.strip() or not m for m in metrics)
            and not any(line.startswith("#") for line in goal.split("\n"))
            and not any(b in goal for b in breaks[1:]))


VALID_WRITTEN = _emit("Baseline", ["GFlops"], "Measure it.")[1]
assert VALID_WRITTEN is not None


@settings()
@given(title=LINE, metrics=st.lists(LINE, max_size=3), goal=st.lists(LINE, max_size=3).map("\n".join))
@example(title="My experiment ## v2", metrics=[], goal="")
@example(title="ok", metrics=["GFlops"], goal="Partition: big\nmin_expected_metric: 3")
def test_generated_states_emit_and_lint_agree(title, metrics, goal):
    refused, written, state = _emit(title, metrics, goal)
    if written is not None:
        assert _lint(written, state) == [], written
        fields = read_fields(written)
        assert (fields.title, list(fields.metrics)) == (title.strip(), metrics)
        return
    text_refusals = refused & TEXT_FIELDS
    assume(text_refusals and refused <= TEXT_FIELDS | {"experiment.md"})
    assume(_representable(title, metrics, goal))
    edited = _typed_by_hand(VALID_WRITTEN, title, ", ".join(metrics), goal)
    errors = _lint(edited, state)
    fields = read_fields(edited)
    for field in text_refusals:
        assert any(f.line == fields.line_for(field) for f in errors), (field, edited, errors)


@settings()
@given(title=LINE, metrics_line=LINE, goal=st.lists(LINE, max_size=3).map("\n".join))
@example(title="My experiment ## v2", metrics_line="", goal="")
@example(title="fine", metrics_line="GFlops, GB/s", goal="Measure.")
def test_hand_edited_files_get_an_error_exactly_where_emit_refuses(title, metrics_line, goal):
    typed = [m.strip() for m in metrics_line.split(",") if m.strip()]  # as `emit --metric` splits
    assume(_representable(title, typed, goal) and "\n" not in metrics_line
           and "\r" not in metrics_line)
    # an empty item (",GFlops", "a,,b") is dropped by `emit --metric` but read by ARI as a missing
    # metric: E4 rightly flags such a hand-typed line, which no emit can write
    assume(not metrics_line.strip() or all(piece.strip() for piece in metrics_line.split(",")))
    refused, _, state = _emit(title, typed, goal)
    assume(refused <= TEXT_FIELDS)  # other refusals come from other files (.env, the profile)
    edited = _typed_by_hand(VALID_WRITTEN, title, metrics_line, goal)
    fields = read_fields(edited)
    errors = _lint(edited, state)
    e9_lines = {f.line for f in errors if f.rule == "E9"}
    assert e9_lines == {fields.line_for(field) for field in refused}, (edited, errors, refused)
    assert bool(errors) == bool(refused), (edited, errors, refused)


@pytest.mark.parametrize("title, metrics_line, goal, rules", [
    # experiment.md: Metrics: on line 4, the title on line 7, the goal from line 9
    ("My experiment ## v2", "", "", {("E9", 7), ("E9", 4), ("E4", 4), ("E9", 9)}),
    ("Fine", "GFlops", "", {("E9", 9)}),
    ("Fine", "", "Measure.", {("E9", 4), ("E4", 4)}),
])
def test_the_reported_newcomer_file(tmp_path, title, metrics_line, goal, rules):
    edited = _typed_by_hand(VALID_WRITTEN, title, metrics_line, goal)
    errors = _lint(edited, _state(tmp_path, "x", ["m"], "g"))
    assert {(f.rule, f.line) for f in errors} == rules, edited


def test_lint_cli_on_the_reported_file(tmp_path):
    import json
    import subprocess
    import sys

    path = tmp_path / "experiment.md"
    path.write_text(_typed_by_hand(VALID_WRITTEN, "My experiment ## v2", "", ""), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "lint", "--json", "--partition",
                           "small", "--cpus", "4", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    errors = [f for f in json.loads(proc.stdout)["findings"] if f["severity"] == "error"]
    assert [(f["rule"], f["line"]) for f in errors] == [("E4", 4), ("E9", 4), ("E9", 7), ("E9", 9)]
