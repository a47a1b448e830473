"""One verdict shape and one severity scale (base/verdict): the order every view shows, the
words the two JSON vocabularies keep, and one sentence code for findings and probe results."""
from __future__ import annotations

import pytest

from ari_jupyter.base.verdict import (MARKS, SCALE, SEVERITY_OF_STATUS, STATUS_OF_SEVERITY, STATUSES,
                                      Finding, ProbeResult, rank, sort_findings, worst)


def test_the_scale_puts_the_worst_first():
    assert SCALE == ("error", "warning", "unknown", "info", "ok", "skip")
    assert [rank(s) for s in SCALE] == list(range(len(SCALE)))


@pytest.mark.parametrize("status, severity", [("fail", "error"), ("warn", "warning"),
                                              ("unknown", "unknown"), ("ok", "ok"), ("skip", "skip")])
def test_every_probe_status_has_its_place(status, severity):
    assert SEVERITY_OF_STATUS[status] == severity
    assert ProbeResult(id="sbatch", status=status, summary="s").severity == severity


@pytest.mark.parametrize("severity, status", [("error", "fail"), ("warning", "warn"), ("info", "ok")])
def test_a_finding_folds_into_the_probe_status_that_says_the_same(severity, status):
    assert STATUS_OF_SEVERITY[severity] == status
    assert SEVERITY_OF_STATUS[status] == severity or severity == "info"


def test_probe_statuses_in_the_order_of_the_scale():
    assert sorted(STATUSES, key=lambda s: rank(SEVERITY_OF_STATUS[s])) == ["fail", "warn", "unknown",
                                                                            "ok", "skip"]


@pytest.mark.parametrize("given, expected", [(["info", "warning"], "warning"), (["ok", "unknown"], "unknown"),
                                             (["warning", "error", "info"], "error"), ([], None)])
def test_worst(given, expected):
    assert worst(given) == expected


def test_findings_sort_by_severity_then_line():
    found = [Finding(rule="b", severity="info", line=1), Finding(rule="a", severity="error", line=9),
             Finding(rule="c", severity="warning"), Finding(rule="d", severity="error", line=2)]
    assert [f.rule for f in sort_findings(found)] == ["d", "a", "c", "b"]


def test_findings_and_probe_results_say_their_sentence_the_same_way():
    finding = Finding.of("title_empty", "error", "field.title_empty", field="title")
    result = ProbeResult.of("shared_fs", "fail", "field.title_empty")
    assert finding.text("ja") == result.text("ja") != finding.text("en") == result.summary
    plain = ProbeResult(id="gpus", status="ok", summary="4 GPUs")
    assert plain.text("ja") == "4 GPUs" and plain.fix_text("ja") == ""


def test_each_finding_severity_has_its_mark():
    assert set(MARKS) == {"error", "warning", "info"} and len(set(MARKS.values())) == 3
