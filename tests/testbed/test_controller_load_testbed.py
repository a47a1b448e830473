"""On the real test bed: one user's Jupyter server, with the status bar and the Runs panel
following a live run, stays within the controller budget (issue 52: one user alone at most 4
RPCs a minute).

The setup and the tab are the benchmark's (``benchmarks/controller_load.py``): a real
allocation, ARI's reproduce job running, a server inside the allocation, and one tab polling it
on the lab extension's own schedule (read from ``labextension/src/runs_text.ts`` and the
settings schema), opened before the window (the allocation's time left is read once per server,
then counted down). The job is submitted without ARI's ``--wait`` (that ``sbatch`` polls the job
itself: the fixture's cost, not ours). ``sdiag -r`` before a fixed window, ``sdiag`` after: the count of RPCs
slurmctld served, not a timing.
"""
from __future__ import annotations

import json
import os
import urllib.request

import pytest

from benchmarks.controller_load import followed_run, lab_schedule, measure, tab

pytestmark = pytest.mark.slurm

WINDOW_S = 120.0
BUDGET_PER_MINUTE = 4.0


def get(server, route: str) -> dict:
    request = urllib.request.Request(server.url(route), headers={"Authorization": f"token {server.token}"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def test_one_user_following_a_run_stays_within_the_budget(testbed_nogres, tmp_path):
    slurm_env = {**os.environ, **testbed_nogres.env}
    schedule = lab_schedule()
    assert schedule["watch"] < schedule["run_max"] <= WINDOW_S / 2, schedule  # the window sees every poll
    with followed_run(slurm_env, 1, tmp_path) as (servers, run_id, _user):
        get(servers[0], "/ari-jupyter/allocation")  # the tab was open before: the allocation read once
        counted = measure(slurm_env, [(tab, (servers[0], run_id))], WINDOW_S)
        shown = get(servers[0], f"/ari-jupyter/runs/{run_id}")
    # the tab followed a live run: its reproduce job was listed from the queue
    assert [job["state"] for job in shown["jobs"]["jobs"] if job["kind"] == "reproduce"] == ["RUNNING"], \
        shown["jobs"]
    budget = BUDGET_PER_MINUTE * WINDOW_S / 60
    assert counted["total"] <= budget, (
        f"{counted['total']} RPCs in {WINDOW_S:g} s for one user (budget {budget:g}): "
        f"{counted['by_type_per_min']} a minute")
