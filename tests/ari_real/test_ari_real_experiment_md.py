"""The experiment.md we write, read back by ARI's own parsers (in ARI's venv): the workflow's
partition / Max CPUs / provided-files / min_expected_metric reader, the pipeline's and the
evaluator's metric parsers, and the dashboard's goal extractor. Each must give back exactly
what the user entered, whatever the title and goal say."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ari_jupyter.ari import render
from ari_jupyter.wizard.state import WizardState

from test_ari_real_sbatch import record_counts

pytestmark = pytest.mark.ari

DRIVER = Path(__file__).parent / "drivers" / "experiment_parsers.py"

BASE = dict(title="SpGEMM scaling on two nodes", goal="Measure how SpGEMM scales to two nodes.",
            metrics=["GFlops"], min_expected_metric=None, provided_files=[], partition="small",
            max_cpus=4)

CASES = {
    "plain": {},
    "two-metrics-threshold-files": dict(metrics=["GFlops", "GB/s", "time_s"], min_expected_metric=12,
                                        provided_files=["/work/alice/in/matrix.mtx", "/work/alice/base.c"]),
    "threshold-zero": dict(min_expected_metric=0),
    "dashed-partition": dict(partition="gpu-a100", max_cpus=64),
    "title-says-research-goal": dict(title="Research goal: faster SpMV on A64FX"),
    "title-is-goal": dict(title="Goal"),
    "goal-starts-with-heading": dict(goal="# Background\nSpMV is memory bound.\nWe measure it."),
    "goal-starts-with-h3": dict(goal="### Plan\n1. build\n2. run on two nodes"),
    "goal-starts-with-hashtag": dict(goal="#hpc tuning of the stencil kernel"),
    "goal-heading-in-the-middle": dict(goal="Tune the stencil.\n## Notes\nKeep the baseline."),
    "goal-with-sections-ari-parses": dict(goal="## Success Metrics\n- latency: lower\n## Files\n/etc/passwd\nUse them."),
    "goal-with-prose-ari-could-misread": dict(goal="We partition the matrix by rows.\nMetrics: bandwidth too\n"
                                              "Max CPUs 128 on the big node.\n## Required Workflow\n1. x"),
    "goal-in-japanese": dict(title="二ノードでの性能評価", goal="疎行列積の性能を測定する。\n## 提供ファイル\n/tmp/x.c"),
    "blank-lines-around-goal": dict(goal="\n\n  First line of the goal.  \n\nSecond line.\n\n"),
    "metric-with-slash-inside": dict(metrics=["GB/s"], min_expected_metric=3),
}


def _state(**overrides) -> WizardState:
    return WizardState(**{**BASE, **overrides})


def _plain_words(text: str) -> list[str]:
    return re.sub(r"[#*]", " ", text).split()


def expected_dashboard_goal(user_goal: str) -> str:
    """The user's goal as the dashboard shows one (lines stripped, joined by spaces)."""
    return " ".join(line.strip() for line in user_goal.splitlines() if line.strip())


def check(case: str, state: WizardState, found: dict) -> list[str]:
    problems = []

    def same(what, got, want):
        if got != want:
            problems.append(f"{case}: {what}: ARI reads {got!r}, the user entered {want!r}")

    same("partition (workflow hints)", found["partition"], state.partition)
    same("Max CPUs (workflow hints)", found["max_cpus"], state.max_cpus)
    same("provided files (workflow hints)", found["provided_files"],
         [[p, Path(p).name] for p in state.provided_files])
    same("pipeline Metrics line", found["pipeline_metric"], state.metrics[0])
    same("evaluator metrics", found["evaluator_metrics"], list(state.metrics))
    same("evaluator metric_keyword", found["evaluator_metric_keyword"], None)
    if state.min_expected_metric is None:
        same("min_expected_metric (workflow, default)", found["min_expected_metric_is_default"], True)
        same("min_expected_metric (evaluator)", found["evaluator_min_expected"], None)
    else:
        same("min_expected_metric (workflow)", found["min_expected_metric"], float(state.min_expected_metric))
        same("min_expected_metric (evaluator)", found["evaluator_min_expected"], float(state.min_expected_metric))
    # a Required Workflow section the user writes in the goal is the user's, and ARI follows it
    same("Required Workflow section", found["required_workflow"], "## Required Workflow\n" in state.goal)
    # The dashboard shows the user's goal: all of it when it has no heading lines, else at least
    # its first line and nothing that is not the goal's (ARI stops at a '#' line in the goal).
    shown, entered = found["dashboard_goal"], state.goal
    if "#" not in entered:
        same("dashboard goal", shown, expected_dashboard_goal(entered))
    else:
        words, want = _plain_words(shown), _plain_words(entered)
        first = _plain_words(next(line for line in entered.splitlines() if line.strip()))
        if words[:len(first)] != first or words != want[:len(words)]:
            problems.append(f"{case}: dashboard goal: ARI shows {shown!r}, the user entered {entered!r}")
    return problems


def read_back(ari_env, tmp_path, states: dict) -> dict:
    """What ARI's own parsers read from the experiment.md the wizard writes for each state."""
    texts = {case: render.render_experiment_md(state.choices()) for case, state in states.items()}
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    env = {k: v for k, v in ari_env.env.items() if not k.startswith("ARI_SLURM")}
    proc = ari_env.run(DRIVER.read_text(), ari_env.root, tmp_path / "texts.json", cwd=tmp_path,
                       env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_aris_parsers_read_back_what_the_user_entered(ari_env, tmp_path):
    states = {case: _state(**overrides) for case, overrides in CASES.items()}
    found = read_back(ari_env, tmp_path, states)
    problems = [p for case, state in states.items() for p in check(case, state, found[case])]
    record_counts("experiment.md through ARI's parsers",
                  {"cases": len(CASES), "parsers per case": 6, "disagreements": len(problems)})
    assert not problems, "\n".join(problems)


GOAL_CUTS = {
    "hash-line": "Make the stencil fast.\n#1 priority: speed\nthen memory use.",
    "heading-inside": "Tune the stencil.\n## Notes\nKeep the baseline.",
    "hashtag-late": "Tune it.\nUse the usual flags.\n#hpc #stencil",
    "no-cut": "Tune the stencil.\nKeep the baseline.",
}


def test_the_goal_cut_step_4_and_lint_warn_of_is_the_one_aris_dashboard_makes(ari_env, tmp_path):
    """``dashboard.goal_cut`` (step 4's and lint's E10 warning) against ARI's own goal reader:
    the dashboard shows exactly the goal's lines before the cut, and all of them without one."""
    from ari_jupyter.ari.dashboard import goal_cut

    found = read_back(ari_env, tmp_path, {case: _state(goal=goal) for case, goal in GOAL_CUTS.items()})
    for case, goal in GOAL_CUTS.items():
        written, _notes = render.neutralize_goal(goal)
        cut = goal_cut(written)
        assert (cut is None) == (case == "no-cut"), case
        kept = written.splitlines()[:cut.line - 1] if cut else written.splitlines()
        assert found[case]["dashboard_goal"] == " ".join(l.strip() for l in kept if l.strip()), case
