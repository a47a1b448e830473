"""Session-wide figure collection for the hardening tests.

Every figure recorded while a test runs is tied to that test's outcome; at the end of the
session all of them go to ``$ARI_TEST_REPORT_DIR/reliability.json`` (default
``test-artifacts/``), from which ``python -m tests.hardening.report`` writes
``docs/reliability.md``.
"""
from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

import pytest

from .figures import COLLECTOR, REPORT_NAME, report_dir

_HERE = Path(__file__).resolve().parent
if str(_HERE.parent) not in sys.path:  # tests/_hypothesis_profiles.py
    sys.path.insert(0, str(_HERE.parent))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    COLLECTOR.current_test = item.nodeid


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" or (report.when == "setup" and not report.passed):
        if hasattr(report, "wasxfail"):
            state = "xfailed" if report.skipped else "xpassed"
            if report.skipped:
                COLLECTOR.known_bugs[item.nodeid] = report.wasxfail
        else:
            state = report.outcome
        COLLECTOR.mark(item.nodeid, state)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    figures = list(COLLECTOR.figures.values())
    if not figures and not COLLECTOR.known_bugs:
        return
    from _hypothesis_profiles import MAX_EXAMPLES, PROFILE

    directory = report_dir()
    directory.mkdir(parents=True, exist_ok=True)
    payload = {
        "schema": 1,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "hypothesis_profile": PROFILE,
        "examples_per_property": MAX_EXAMPLES,
        "python": platform.python_version(),
        "root": os.geteuid() == 0,
        "rows": [f.to_json() for f in COLLECTOR.merge(figures)],
        "figures": [f.to_json() for f in figures],
        "known_bugs": [{"test": k, "reason": v} for k, v in sorted(COLLECTOR.known_bugs.items())],
    }
    target = directory / REPORT_NAME
    tmp = target.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, target)
