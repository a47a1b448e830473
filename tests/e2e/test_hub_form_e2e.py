"""A spawner form made from the site card, on the test bed's hub, in Chromium.

The admin's way of docs/admin.md: ``ari-jupyter site-card`` on the test bed reads its two
partitions from SLURM (small: 1 hour at most; large: no limit), ``--hub-config form`` turns the
card into batchspawner's ``options_form``, and the hub (tests/testbed/hub.sh with
ARI_HUB_CONFIG_EXTRA) shows it. A user who asks small for 2 hours is told why on the form and no
job is submitted; the same user's choice of large, 2 nodes, 2 tasks per node, 1 hour becomes
exactly that job.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import ARTIFACTS, assert_no_console_errors
from .jupyter_process import REPO
from .lab_helpers import LAUNCHER_CARD
from .test_hub_e2e import HUB_SCRIPT, _env_file, _user_jobs

pytestmark = [pytest.mark.e2e, pytest.mark.slurm]

DOCS_SCREENSHOTS = REPO / "docs" / "screenshots"


def _site_card(slurm_env: dict, *argv: str) -> subprocess.CompletedProcess:
    """``ari-jupyter site-card`` on the test bed, as the admin runs it on a login node."""
    return subprocess.run([sys.executable, "-m", "ari_jupyter", "site-card", *argv],
                          capture_output=True, text=True, timeout=120, env=slurm_env,
                          stdin=subprocess.DEVNULL)


def _scontrol_job(slurm_env: dict, job_id: str) -> dict[str, str]:
    out = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True,
                         env=slurm_env, timeout=30, check=True).stdout
    return dict(pair.split("=", 1) for pair in out.split() if "=" in pair)


@pytest.fixture
def form_hub(testbed_nogres, tmp_path):
    """The test bed's hub with the form from the test bed's own site card."""
    slurm_env = {**os.environ, **testbed_nogres.env}
    card = _site_card(slurm_env, "--json")
    assert card.returncode == 0, card.stderr
    fragment = _site_card(slurm_env, "--hub-config", "form")
    assert fragment.returncode == 0, fragment.stderr
    extra = tmp_path / "form_config.py"
    extra.write_text(fragment.stdout)
    started = subprocess.run(["bash", str(HUB_SCRIPT), "start", str(REPO)], capture_output=True,
                             text=True, timeout=1500, stdin=subprocess.DEVNULL,
                             env={**slurm_env, "ARI_HUB_CONFIG_EXTRA": str(extra)})
    assert started.returncode == 0, f"the hub did not start:\n{started.stderr[-4000:]}"
    env = _env_file(Path(started.stdout.strip().splitlines()[-1]))
    yield {**env, "slurm_env": slurm_env, "card": json.loads(card.stdout)}
    stopped = subprocess.run(["bash", str(HUB_SCRIPT), "stop"], capture_output=True, text=True,
                             timeout=300, stdin=subprocess.DEVNULL, env=slurm_env)
    assert stopped.returncode == 0, stopped.stderr


def test_a_user_starts_the_server_the_form_of_the_site_card_describes(form_hub, page):
    # the card: what slurm.conf says (n[1-2], CPUs=4, RealMemory=4000; small MaxTime=60)
    partitions = {p["name"]: p for p in form_hub["card"]["partitions"]}
    assert set(partitions) == {"small", "large"}
    small, large = partitions["small"], partitions["large"]
    assert (small["default"], small["max_time_minutes"], large["max_time_minutes"]) == (True, 60, None)
    for partition in (small, large):
        assert (partition["nodes"], partition["cpus_per_node"], partition["memory_mb_per_node"],
                partition["gres"]) == (2, 4, 4000, [])
    assert form_hub["card"]["modules"]["mpi"] == ["openmpi/4.1"]

    user, base, slurm_env = form_hub["ARI_HUB_USER"], form_hub["ARI_HUB_URL"], form_hub["slurm_env"]
    page.goto(f"{base}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", form_hub["ARI_HUB_PASSWORD"])
    page.click("#login_submit")
    page.wait_for_selector("#spawn_form #ari-partition", timeout=120_000)
    choices = page.locator("#ari-partition option")
    assert [choices.nth(i).get_attribute("value") for i in range(choices.count())] == ["small", "large"]
    assert "up to 1:00:00 per job" in choices.nth(0).inner_text()
    assert "no time limit" in choices.nth(1).inner_text()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(DOCS_SCREENSHOTS / "hub-spawner-form.png"))

    # small allows an hour: 2 hours is refused on the form, and nothing reaches SLURM
    page.select_option("#ari-partition", "small")
    page.fill("#ari-hours", "2")
    page.click("#spawn_form button[type=submit]")
    error = page.locator(".spawn-error-msg")
    error.wait_for(timeout=60_000)
    assert "Hours: 2 is not a whole number from 1 to 1, which is what small allows" in error.inner_text()
    assert _user_jobs(slurm_env, user) == []

    # large, 2 nodes, 2 tasks per node, 1 hour: that job
    page.select_option("#ari-partition", "large")
    page.fill("#ari-nodes", "2")
    page.fill("#ari-tasks_per_node", "2")
    page.fill("#ari-hours", "1")
    page.click("#spawn_form button[type=submit]")
    page.wait_for_url(re.compile(rf".*/user/{user}/lab.*"), timeout=240_000)
    page.wait_for_selector(LAUNCHER_CARD, timeout=120_000)
    jobs = _user_jobs(slurm_env, user)
    assert len(jobs) == 1, jobs
    job = _scontrol_job(slurm_env, jobs[0].split()[0])
    assert (job["Partition"], job["NumNodes"], job["NumTasks"], job["TimeLimit"]) == \
        ("large", "2", "4", "01:00:00"), job
    assert job["NtasksPerN:B:S:C"].startswith("2:"), job
    assert_no_console_errors(page)

    page.goto(f"{base}/hub/home")
    page.click("#stop")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _user_jobs(slurm_env, user):
        time.sleep(0.5)
    assert _user_jobs(slurm_env, user) == []
