"""The freshness check of docs/reliability.md: a rerun passes, a stale page fails."""
from __future__ import annotations

import copy

import pytest

from tests.hardening.check_fresh import main, stable_view
from tests.hardening.report import render

DATA = {
    "hypothesis_profile": "ci", "examples_per_property": 1000, "root": True,
    "generated_at": "2026-12-01T10:00:00+0000",
    "rows": [
        {"area": "Fields", "check": "wizard field `title`", "unit": "cases", "cases": 1000,
         "survived": 1000, "lost": 0, "outcome": "passed", "extra": {"refused": 203, "written": 797}},
        {"area": "Writes", "check": "full workspace", "unit": "attempts", "cases": 22,
         "survived": 22, "lost": 0, "outcome": "passed", "extra": {}},
    ],
    "known_bugs": [],
}


def _rerun(data):
    """The same code run again: another timestamp and other random draws."""
    again = copy.deepcopy(data)
    again["generated_at"] = "2026-12-02T11:11:11+0000"
    again["rows"][0]["extra"] = {"refused": 188, "written": 812}
    again["rows"][1].update(cases=23, survived=23)
    return again


def _stale_known_bug(data):
    stale = copy.deepcopy(data)
    stale["rows"][1]["outcome"] = "xfailed"
    stale["known_bugs"] = [{"test": "tests/hardening/test_writes.py::test_full_workspace",
                            "reason": "emit leaves files behind on ENOSPC"}]
    return stale


def _missing_row(data):
    fewer = copy.deepcopy(data)
    fewer["rows"] = fewer["rows"][:1]
    return fewer


def _lost_one(data):
    lost = copy.deepcopy(data)
    lost["rows"][0].update(lost=1, survived=999)
    return lost


@pytest.mark.parametrize("committed, fresh_expected", [
    (DATA, True),
    (_rerun(DATA), True),
    (_stale_known_bug(DATA), False),
    (_missing_row(DATA), False),
    (_lost_one(DATA), False),
])
def test_the_committed_page_against_this_run(committed, fresh_expected, tmp_path, capsys):
    generated, page = tmp_path / "generated.md", tmp_path / "reliability.md"
    generated.write_text(render(DATA), encoding="utf-8")
    page.write_text(render(committed), encoding="utf-8")
    assert main([str(generated), str(page)]) == (0 if fresh_expected else 1)
    if not fresh_expected:
        assert "out of date" in capsys.readouterr().err


def test_table_rows_keep_check_lost_and_result_only():
    view = stable_view(render(DATA))
    assert "| wizard field `title` | lost 0 | pass |" in view
    assert not any(line.startswith("- Generated:") for line in view)


def test_a_missing_file_is_a_usage_error(tmp_path):
    assert main([str(tmp_path / "nope.md"), str(tmp_path / "also-nope.md")]) == 2
