"""Where ARI's dashboard cuts a research goal short (``dashboard.goal_cut``, after ARI's
``_extract_goal_from_md``; tests/ari_real checks it against ARI's own code), and that step 4
and ``lint`` both say so before Write, each once."""
from __future__ import annotations

import subprocess
import sys

import pytest

from ari_jupyter.ari.dashboard import goal_cut
from ari_jupyter.ari.judge import for_step, judge
from ari_jupyter.ari.lint_experiment import lint_experiment
from ari_jupyter.ari.render import render_experiment_md
from ari_jupyter.wizard.state import WizardState


@pytest.mark.parametrize("goal, cut", [
    ("Make it fast.\n#1 priority: speed\nthen memory", (2, "#1 priority: speed", 1, False)),
    ("Tune it.\n\n## Background\nold runs\n\nmore", (3, "## Background", 2, True)),
    ("Tune it.\n   ### Plan", (2, "### Plan", 0, True)),
    ("Tune it.\n#\nrest", (2, "#", 1, True)),               # a bare '#' is an empty heading
    ("Tune it.\nC# and F# code", None),                     # '#' inside a line: kept
    ("Tune it.\n**Background**\nold", None),
    ("#1 first line", (1, "#1 first line", 0, False)),      # lint's case (the wizard bolds it)
])
def test_goal_cut(goal, cut):
    found = goal_cut(goal)
    assert (tuple(found) if found else None) == cut


def state(goal: str) -> WizardState:
    return WizardState(title="Stencil", goal=goal, metrics=["GFlops"], partition="small",
                       max_cpus=2, walltime="00:30:00", workspace="/work/u/ari", lang="en")


@pytest.mark.parametrize("goal, rule, lint_severity", [
    ("Make it fast.\n#1 priority: speed\nthen memory", "goal_cut_hash", "warning"),
    ("Tune it.\n## Background\nold runs", "goal_cut_heading", "info"),
])
def test_step_4_and_lint_say_it_before_write(goal, rule, lint_severity):
    choices = state(goal).choices()
    shown = for_step(judge(choices), "experiment")
    [said] = [f for f in shown if f.rule == rule]
    assert said.severity == "warning" and said.field == "goal"
    assert "ui_helpers.py" in said.message and said.fix
    assert not [f for f in shown if f.rule == "E10"]  # once, at the Goal box
    for lang in ("ja", "zh"):
        assert said.text(lang) != said.message and "ui_helpers.py" in said.text(lang)
    [linted] = [f for f in lint_experiment(render_experiment_md(choices), check_files=False)
                if f.rule == "E10"]
    assert linted.severity == lint_severity and "ui_helpers.py" in linted.message
    text = render_experiment_md(choices)
    assert text.splitlines()[linted.line - 1].strip() == ("#1 priority: speed" if "#1" in goal
                                                         else "## Background")


def test_a_plain_goal_and_the_wizards_own_sections_say_nothing():
    choices = state("Tune it.\nKeep the baseline.").choices()
    assert not [f for f in judge(choices) if f.rule.startswith("goal_cut")]
    assert not [f for f in lint_experiment(render_experiment_md(choices), check_files=False)
                if f.rule == "E10"]


def test_lint_on_the_command_line_says_it(tmp_path):
    path = tmp_path / "experiment.md"
    path.write_text(render_experiment_md(state("Make it fast.\n#1 priority: speed\nthen memory").choices()))
    done = subprocess.run([sys.executable, "-m", "ari_jupyter", "lint", "--lang", "en", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert "#1 priority: speed" in done.stdout + done.stderr and "E10" in done.stdout + done.stderr
