"""A hidden browser tab does not poll the server (and so never makes it ask SLURM).

Every open tab polls: the Runs panel watches for new runs every 4 s and follows a run, the
status bar asks for the time left. In Chromium, the tab is hidden the way the browser says it
(``document.hidden`` and a ``visibilitychange`` event): the polls stop, and showing the tab
again polls once at once.
"""
from __future__ import annotations

import time

import pytest

from .conftest import assert_no_console_errors
from .lab_helpers import open_lab

pytestmark = [pytest.mark.e2e]

WATCH = "/ari-jupyter/runs/ids"
SET_HIDDEN = """(hidden) => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => hidden});
  Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => hidden ? 'hidden' : 'visible'});
  document.dispatchEvent(new Event('visibilitychange')); }"""


def _polls_during(page, seconds: float, seen: list) -> int:
    before = len(seen)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        page.wait_for_timeout(250)
    return len(seen) - before


def test_a_hidden_tab_stops_polling_and_a_shown_one_polls_at_once(lab, page):
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url) if WATCH in request.url else None)
    open_lab(page, lab)
    assert _polls_during(page, 9, seen) >= 2, "the visible tab's Runs panel watches every 4 s"
    page.evaluate(SET_HIDDEN, True)
    page.wait_for_timeout(500)  # a request already out when the tab was hidden
    assert _polls_during(page, 12, seen) == 0, seen[-3:]
    before = len(seen)
    page.evaluate(SET_HIDDEN, False)
    page.wait_for_timeout(1500)
    assert len(seen) - before == 1, "shown again, the tab polls once at once"
    assert _polls_during(page, 9, seen) >= 2, "and then every 4 s again"
    assert_no_console_errors(page)
