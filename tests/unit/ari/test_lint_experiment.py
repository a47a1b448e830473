"""experiment.md parse rules R1-R8 (ARI's vectors from the spec) and lints E1-E8, plus the CLI."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ari_jupyter.ari.lint_experiment import lint_experiment, parse_experiment

# -- what ARI reads (spec §1.2 vectors) ------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("Metrics: GB/s, GFlops/s\n", "GB/s"),
    ("  metric - accuracy; top1\n", "accuracy"),
    ("Metrics\n- acc\n", "acc"),  # the optional space before the separator spans the newline
    ("- Metrics: x\n", ""),  # bullet: no match
    ("**Metrics:** x\n", ""),
    ("the metric is x\n", ""),
    ("Metrics: runtime.\n", "runtime"),
])
def test_r1_primary_metric(text, expected):
    assert parse_experiment(text).primary_metric == expected


@pytest.mark.parametrize("text, expected, source", [
    ("Metrics: GB/s, GFlops/s\n", ("GB/s", "GFlops/s"), "inline"),
    ("  Metrics: a\n", (), ""),  # R2 needs column 0
    ("## Success Metrics (ours)\n- throughput: higher\n- latency : lower\n\nMetrics: x\n",
     ("throughput", "latency"), "section"),
    ("<!-- metric_keyword: speedup -->\n", ("speedup",), "keyword"),
])
def test_r2_evaluator_metrics(text, expected, source):
    parsed = parse_experiment(text)
    assert parsed.evaluator_metrics == expected
    assert parsed.evaluator_metrics_source == source


@pytest.mark.parametrize("text, agent, evaluator", [
    ("<!-- min_expected_metric: 12 -->", 12, 12.0),
    ("min_expected_metric: 0.5", 0, 0.5),
    ("min_expected_metric: 12.5", 12, 12.5),
    ("nothing", None, None),
])
def test_r3_min_expected_metric(text, agent, evaluator):
    parsed = parse_experiment(text)
    assert parsed.min_expected_metric == agent
    assert parsed.min_expected_metric_evaluator == evaluator


@pytest.mark.parametrize("text, trigger", [
    ("plain text", False), ("uses sbatch", True), ("non-SLURM cluster", True),
    ("Partition: x", True), ("srun it", True),
])
def test_r4_slurm_text_trigger(text, trigger):
    assert parse_experiment(text).slurm_text_trigger is trigger


@pytest.mark.parametrize("text, expected", [
    ("Partition: small, Max CPUs: 8", "small"),
    ("We partition the matrix", "the"),
    ("Partition: gpu.a100", "gpu"),
    ("PARTITION: big", None),
    ("#SBATCH --partition=gpu", None),
    ("Partition: `gpu`\nwe partition data", "data"),
    ("partition\n  big-mem", "big-mem"),
])
def test_r5_partition(text, expected):
    assert parse_experiment(text).partition == expected


@pytest.mark.parametrize("text, expected", [
    ("Max CPUs: 64", 64), ("max cpu 32", 32), ("Max CPUs=8", None), ("Max CPUs per task: 8", None),
])
def test_r6_max_cpus(text, expected):
    assert parse_experiment(text).max_cpus == expected


def test_r7_required_workflow():
    text = "## Required Workflow\n1. build\n2. run\n### detail\nmore\n## Next\n"
    assert parse_experiment(text).required_workflow == "1. build\n2. run"
    assert parse_experiment("## Required Workflow \nx").required_workflow is None


@pytest.mark.parametrize("text, expected", [
    ("## Provided Files\n- /a/x.c\n* /b/y.c\n/c/z.c # note\nrel.c\n## Next\n- /d/no.c",
     ("/a/x.c", "/b/y.c", "/c/z.c")),
    ("## Provided Files (optional)\n- /a/x.c\n", ()),
    ("### files\n- /a/x.c\n", ("/a/x.c",)),
    ("## 提供ファイル\n- /a/x.c\n", ("/a/x.c",)),
    ("## Local File\n/a/#b.c\n", ("/a/",)),
    ("## Files\n`/a/x.c`\n1. /b/y.c\n", ("`/a/x.c`", "1. /b/y.c")),
])
def test_r8_provided_files(text, expected):
    assert parse_experiment(text).provided_files == expected


# -- lints -------------------------------------------------------------------------------------

GOOD = """\
Partition: small, Max CPUs: 8

# Title

## Evaluation Metric
Metrics: GFlops, GB/s
<!-- min_expected_metric: 5 -->

## Provided Files
- {a}
- {b}

## Research Goal
Measure things.
"""


@pytest.fixture()
def files(tmp_path):
    a, b = tmp_path / "a.mtx", tmp_path / "b.c"
    a.write_text("x")
    b.write_text("y")
    return str(a), str(b)


def _rules(findings, severity=None):
    return sorted({f.rule for f in findings if severity is None or f.severity == severity})


def test_good_file_has_no_findings(files):
    text = GOOD.format(a=files[0], b=files[1])
    assert lint_experiment(text, partition="small", cpus=8, env={"ARI_SLURM_PARTITION": "small"}) == []


@pytest.mark.parametrize("edit, rule, severity", [
    # E1: a partition word before the Partition line / no Partition line / prose only
    (lambda t: "We partition the grid.\n" + t, "E1", "error"),
    (lambda t: t.replace("Partition: small, Max CPUs: 8", "Max CPUs: 8"), "E1", "error"),
    (lambda t: t.replace("Partition: small", "Partition: `small`"), "E1", "error"),
    # E2: the read value differs from the choice
    (lambda t: t.replace("Partition: small", "Partition: large"), "E2", "error"),
    # E3: Max CPUs missing / different from ARI_SLURM_CPUS
    (lambda t: t.replace(", Max CPUs: 8", ""), "E3", "warning"),
    (lambda t: t.replace("Max CPUs: 8", "Max CPUs: 16"), "E3", "error"),
    # E4: no column-0 Metrics line
    (lambda t: t.replace("Metrics: GFlops", "- Metrics: GFlops"), "E4", "error"),
    (lambda t: t.replace("Metrics: GFlops", "  Metrics: GFlops"), "E4", "error"),
    # E5: decimal threshold
    (lambda t: t.replace("min_expected_metric: 5", "min_expected_metric: 5.5"), "E5", "error"),
    # E6: heading with trailing text, relative path, missing file, '#', duplicate basename
    (lambda t: t.replace("## Provided Files", "## Provided Files (optional)"), "E6", "error"),
    (lambda t: t.replace("## Research Goal", "- rel/x.c\n\n## Research Goal"), "E6", "error"),
    (lambda t: t.replace("## Research Goal", "- /nonexistent/x.c\n\n## Research Goal"), "E6", "error"),
    (lambda t: t.replace("## Research Goal", "- /tmp/a#b.c\n\n## Research Goal"), "E6", "error"),
    (lambda t: t.replace("## Research Goal", "- `/tmp/x.c`\n\n## Research Goal"), "E6", "error"),
    # E7: VirSci marker
    (lambda t: t + "<!-- AUTO-APPENDED BY VirSci (idea.json) — DO NOT EDIT -->\n", "E7", "error"),
])
def test_each_lint_fires_on_its_cause(files, edit, rule, severity):
    text = edit(GOOD.format(a=files[0], b=files[1]))
    findings = lint_experiment(text, partition="small", cpus=8, env={"ARI_SLURM_PARTITION": "small"})
    assert (rule, severity) in {(f.rule, f.severity) for f in findings}, findings
    assert all(f.line is None or f.line >= 1 for f in findings)


def test_e2_names_the_truncation(files):
    text = GOOD.format(a=files[0], b=files[1]).replace("Partition: small", "Partition: gpu.a100")
    chosen = lint_experiment(text, partition="gpu.a100", cpus=8, env={"ARI_SLURM_PARTITION": "x"})
    e2 = [f for f in chosen if f.rule == "E2"]
    assert e2[0].severity == "error" and "'gpu'" in e2[0].message and "stops" in e2[0].message
    unknown_choice = lint_experiment(text, cpus=8, env={})
    assert ("E2", "warning") in {(f.rule, f.severity) for f in unknown_choice}


def test_duplicate_basename_is_an_error(tmp_path, files):
    other = tmp_path / "sub"
    other.mkdir()
    (other / "a.mtx").write_text("z")
    text = GOOD.format(a=files[0], b=str(other / "a.mtx"))
    findings = lint_experiment(text, partition="small", cpus=8, env={"ARI_SLURM_PARTITION": "small"})
    dup = [f for f in findings if f.rule == "E6"]
    assert dup and "basename" in dup[0].message and dup[0].line == 11


def test_later_partition_words_are_only_noted(files):
    text = GOOD.format(a=files[0], b=files[1]) + "We partition the matrix by rows.\n"
    findings = lint_experiment(text, partition="small", cpus=8, env={"ARI_SLURM_PARTITION": "small"})
    assert [(f.rule, f.severity, f.line) for f in findings] == [("E1", "info", 15)]


def test_e1_fix_names_the_partition_line_to_move():
    text = "We partition the data.\n\nPartition: small, Max CPUs: 8\nMetrics: x\n"
    e1 = [f for f in lint_experiment(text, partition="small", cpus=8, check_files=False)
          if f.rule == "E1"]
    assert [(f.severity, f.line) for f in e1] == [("error", 1)]
    assert e1[0].fix == "move line 3 ('Partition: small, Max CPUs: 8') to the top"


def test_e3_uses_ari_slurm_cpus_from_env_when_no_choice_given(files):
    text = GOOD.format(a=files[0], b=files[1])
    findings = lint_experiment(text, env={"ARI_SLURM_CPUS": "16", "ARI_SLURM_PARTITION": "small"})
    assert [(f.rule, f.severity) for f in findings] == [("E3", "error")]


def test_e8_slurm_mode(files):
    text = GOOD.format(a=files[0], b=files[1])
    laptop = lint_experiment(text, env={"ARI_SLURM_PARTITION": "small"}, ari_profile="laptop")
    assert ("E8", "warning") in {(f.rule, f.severity) for f in laptop}
    not_exported = lint_experiment(text, partition="small", env={})
    assert any(f.rule == "E8" and "auto" in f.message for f in not_exported)
    no_trigger = lint_experiment("# t\nMetrics: x\n", env={}, check_files=False)
    assert any(f.rule == "E8" and "nothing switches" in f.message for f in no_trigger)


@pytest.mark.parametrize("text, expected", [
    # a blank line above the Metrics line is not an empty Metrics line (R1's ^\s* spans it)
    ("# t\n\nPartition: small, Max CPUs: 8\n\nMetrics: GFlops\n", []),
    ("# t\n\nPartition: small, Max CPUs: 8\n\n\n\nMetrics: GFlops, GB/s\n", []),
    # a bare Metrics line whose value ARI reads from the next line: named on the Metrics line
    ("# t\n\nPartition: small, Max CPUs: 8\n\nMetrics:\nGFlops\n", [("E4", "error", 5)]),
])
def test_e4_empty_metrics_line_is_the_line_of_the_word(text, expected):
    findings = lint_experiment(text, partition="small", cpus=8, check_files=False,
                               env={"ARI_SLURM_PARTITION": "small"})
    assert [(f.rule, f.severity, f.line) for f in findings if f.rule == "E4"] == expected


def test_pasted_file_lines_are_reported(files):
    pasted = ("# My run\n\nWe partition the work.\n\nPartition: small, Max CPUs: 8\n"
              "- Metrics: acc\n")
    findings = lint_experiment(pasted, env={"ARI_SLURM_PARTITION": "small"}, check_files=False)
    by_rule = {f.rule: f for f in findings if f.severity == "error"}
    assert by_rule["E1"].line == 3
    assert by_rule["E4"].line == 6


# -- CLI ---------------------------------------------------------------------------------------

def _cli(*args, env=None, cwd=None):
    import os

    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ARI_SLURM")}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "ari_jupyter", "lint", *args],
                          capture_output=True, text=True, env=full_env, cwd=cwd)


def test_cli_lint_clean_file_exits_0_and_reads_sibling_env(tmp_path, files):
    path = tmp_path / "experiment.md"
    path.write_text(GOOD.format(a=files[0], b=files[1]))
    (tmp_path / ".env").write_text("ARI_SLURM_PARTITION=small\nARI_SLURM_CPUS=8\n")
    out = _cli(str(path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "errors: 0" in out.stdout


def test_cli_lint_json_and_exit_1_on_errors(tmp_path):
    path = tmp_path / "experiment.md"
    path.write_text("We partition the matrix.\nPartition: small\n- Metrics: x\n")
    out = _cli(str(path), "--json", "--no-check-files")
    assert out.returncode == 1
    report = json.loads(out.stdout)
    assert report["parsed"]["partition"] == "the"
    rules = {(f["rule"], f["severity"]) for f in report["findings"]}
    assert ("E1", "error") in rules and ("E4", "error") in rules
    assert set(report["findings"][0]) == {"rule", "field", "severity", "line", "message", "fix",
                                           "message_id", "fix_id", "params"}


def test_cli_lint_unreadable_file_exits_2(tmp_path):
    out = _cli(str(tmp_path / "missing.md"))
    assert out.returncode == 2 and out.stderr.strip().endswith("missing.md does not exist")
    (tmp_path / "folder.md").mkdir()  # exists, but cannot be read as a file
    out = _cli(str(tmp_path / "folder.md"))
    assert out.returncode == 2 and "folder.md is a directory, not a regular file" in out.stderr
