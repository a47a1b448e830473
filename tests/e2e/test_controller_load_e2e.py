"""One user's real Chromium tab over 3 minutes costs slurmctld no more than the benchmark says.

``benchmarks/controller_load.py`` simulates each user's tab from the lab extension's own
schedule constants; this check opens the real thing instead: JupyterLab inside a real
allocation of the test bed (the benchmark's own ``followed_run``: ARI's reproduce job running,
submitted, as there, without ``--wait`` so that no ``sbatch`` polls it), the status bar following the run
and the Runs panel open on it. ``sdiag -r`` before the window, ``sdiag`` after: the count of RPCs
slurmctld served in it (a count, not a timing) must stay within the benchmark's one-user figure
(``benchmarks/results/controller_load.json``, the tool's own cost: nothing polls the run's job
there either) for the same time. The figure is written to the test report dir.
"""
from __future__ import annotations

import json
import math
import os

import pytest

from benchmarks.class_hub import parse_sdiag, sdiag
from benchmarks.controller_load import RESULTS, followed_run, lab_schedule

from .conftest import ARTIFACTS, LAB_ARGS, LAB_SETTINGS, assert_no_console_errors
from .lab_helpers import execute_command, open_lab
from .test_runs_panel_e2e import wait_for_run_shown

pytestmark = [pytest.mark.e2e, pytest.mark.slurm]

WINDOW_S = 180.0
PANEL = "#ari-jupyter-runs"


def benchmark_one_user_per_minute() -> float:
    """RPCs a minute the benchmark measured for one user's tab (its run alone, no tab open,
    costs nothing: the figure is the tab's)."""
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    assert results["run_alone"]["total"] == 0, results["run_alone"]
    one = next(case for case in results["cases"] if case["users"] == 1)
    return one["ari_jupyter"]["per_min"]


def test_a_real_tab_following_a_run_costs_what_the_benchmark_says(testbed_nogres, page, tmp_path):
    slurm_env = {**os.environ, **testbed_nogres.env}
    schedule = lab_schedule()
    assert schedule["run_max"] <= WINDOW_S / 3, schedule  # the window sees the slowest poll thrice
    per_minute = benchmark_one_user_per_minute()
    budget = math.floor(per_minute * WINDOW_S / 60)
    with followed_run(slurm_env, 1, tmp_path, app="lab", settings=LAB_SETTINGS,
                      args=LAB_ARGS) as (servers, run_id, _user):
        lab = servers[0]
        open_lab(page, lab)
        # the status bar follows the live run, and the Runs panel is open on it
        page.wait_for_selector(".ari-RunPhaseStatus:text-matches('^ARI run: reproduce')", timeout=60_000)
        execute_command(page, "ari-jupyter:runs")
        page.wait_for_selector(f"{PANEL}[data-view='status'][data-phase='reproduce']")
        wait_for_run_shown(page, run_id)  # the live run, the one shown when the panel opens
        page.wait_for_selector(f"{PANEL} .ari-RunsPanel-job[data-state='RUNNING']", timeout=60_000)
        assert page.locator(PANEL).get_attribute("data-polling") == "yes"
        polls: list[str] = []
        page.on("request", lambda r: polls.append(r.url) if "/ari-jupyter/" in r.url else None)
        sdiag(slurm_env, reset=True)
        page.wait_for_timeout(WINDOW_S * 1000)
        counts = parse_sdiag(sdiag(slurm_env))
        # still following: the run's job is shown running, the panel still polls
        assert page.locator(f"{PANEL} .ari-RunsPanel-job[data-state='RUNNING']").count() == 1
        assert page.locator(PANEL).get_attribute("data-polling") == "yes"
    counts["by_type"].pop("REQUEST_STATS_INFO", None)  # sdiag's own
    total = sum(counts["by_type"].values())
    figure = {"window_s": WINDOW_S, "rpcs": total, "per_min": round(total / (WINDOW_S / 60), 2),
              "by_type": counts["by_type"], "benchmark_per_min": per_minute, "budget": budget,
              "tab_requests": len(polls), "schedule": schedule}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "controller_load_one_real_tab.json").write_text(json.dumps(figure, indent=2) + "\n")
    # the tab did poll on its schedule: the watch every few seconds, so the server was asked
    assert len(polls) >= WINDOW_S / schedule["watch"] / 2, polls[-5:]
    assert total <= budget, (f"{total} RPCs in {WINDOW_S:g} s for one real tab; the benchmark's "
                             f"one-user figure {per_minute:g} a minute allows {budget}: {counts['by_type']}")
    assert_no_console_errors(page)
