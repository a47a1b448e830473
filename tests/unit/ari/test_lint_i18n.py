"""Every experiment.md lint (E1-E10) speaks en/ja/zh from the message catalogs; the English is
the text ``--json`` and the other tests read."""
from __future__ import annotations

import pytest

from ari_jupyter.ari.lint_experiment import lint_experiment
from ari_jupyter.cli import main
from ari_jupyter.i18n import messages

from unit.ari.test_lint_experiment import GOOD

LINT_IDS = sorted(key for key in messages() if key.startswith("lint."))


def _cases(a, b):
    good = GOOD.format(a=a, b=b)
    chosen = {"partition": "small", "cpus": 8, "env": {"ARI_SLURM_PARTITION": "small"}}
    return [
        ("We partition the grid.\n" + good, chosen),
        (good.replace("Partition: small, Max CPUs: 8", "Max CPUs: 8"), chosen),
        (good.replace("Partition: small", "Partition: `small`"), chosen),
        ("See the partition: small, Max CPUs: 8\nPartition: small\nMetrics: x\n", chosen),
        (good + "We partition the matrix by rows.\n", chosen),
        (good.replace("Partition: small", "Partition: large"), chosen),
        (good.replace("Partition: small", "Partition: gpu.a100"), {**chosen, "partition": "gpu.a100"}),
        (good.replace("Partition: small", "Partition: gpu.a100"), {"cpus": 8, "env": {}}),
        (good.replace(", Max CPUs: 8", ""), chosen),
        (good.replace("Max CPUs: 8", "Max CPUs: 16"), chosen),
        (good.replace("Metrics: GFlops", "- Metrics: GFlops"), chosen),
        (good.replace("Metrics: GFlops, GB/s", "Metrics:"), chosen),
        ("Partition: small, Max CPUs: 8\nThe metric: speed\nMetrics: GFlops\n", chosen),
        (good + "## Success Metrics\n- accuracy\n", chosen),
        ("Partition: small, Max CPUs: 8\n# t\n", chosen),
        (good.replace("min_expected_metric: 5", "min_expected_metric: 5.5"), chosen),
        (good.replace("## Provided Files", "## Provided Files (optional)"), chosen),
        (good.replace("## Research Goal", "- rel/x.c\n- /nonexistent/x.c\n- /tmp/a#b.c\n"
                                          "- `/tmp/x.c`\n- /tmp\nnot a path at all\n- /q/" +
                      b.rsplit("/", 1)[1] + "\n\n## Research Goal"), chosen),
        (good + "<!-- AUTO-APPENDED BY VirSci (idea.json) — DO NOT EDIT -->\n", chosen),
        (good, {"env": {"ARI_SLURM_PARTITION": "small"}, "ari_profile": "laptop"}),
        (good, {"partition": "small", "env": {}}),
        ("# t\nMetrics: x\n", {"env": {}, "check_files": False}),
        (good.replace("Measure things.", ""), chosen),
        ("`partition`=x\nPartition: small, Max CPUs: 8\nMetrics: x\n", chosen),
        ("`partition`=x and partition small, Max CPUs: 8\nMetrics: x\n", chosen),
        (good + "## Success Metrics\n- accuracy: higher\n", chosen),
        ("Partition: small, Max CPUs: 8\n  Metrics: speed\nMetrics: GFlops\n", chosen),
        ("Partition: small, Max CPUs: 8\nMetrics:", chosen),
        (good.replace("Measure things.", "Measure things.\n#1 priority: speed"), chosen),
        (good + "## Background\nold runs\n", chosen),
    ]


@pytest.fixture()
def findings(tmp_path):
    a, b = tmp_path / "a.mtx", tmp_path / "b.c"
    a.write_text("x")
    b.write_text("y")
    out = []
    for text, options in _cases(str(a), str(b)):
        out += lint_experiment(text, **options)
    return out


def test_every_lint_rule_yields_findings_that_render_in_every_language(findings):
    assert {f.rule for f in findings} == {f"E{n}" for n in range(1, 11)}
    for f in findings:
        assert f.message_id.startswith("lint."), f
        assert f.text("en") == f.message and f.fix_text("en") == f.fix
        for lang in ("ja", "zh"):
            assert f.text(lang) != f.message, (lang, f)
            if f.fix and f.rule != "E9":
                assert f.fix_text(lang) != f.fix, (lang, f)
            for value in f.params.values():
                if isinstance(value, (str, int)) and str(value) in f.message:
                    assert str(value) in f.text(lang), (lang, value, f)


def test_every_lint_message_is_used(findings):
    used = {f.message_id for f in findings} | {f.fix_id for f in findings}
    used.add("lint.E5.nothing")  # nested inside E5's message when the agent reads no digits
    assert set(LINT_IDS) - used == set()


def test_lint_lang_prints_japanese(tmp_path, capsys):
    path = tmp_path / "experiment.md"
    path.write_text("# t\nMetrics: x\n")
    main(["lint", "--lang", "ja", str(path)])
    out = capsys.readouterr().out
    assert "ARI を SLURM モードに切り替えるものがありません" in out and "nothing switches" not in out
