"""The Runs panel in Chromium: a BFTS job that asks more nodes than the user approved is marked,
its finding carries a "Cancel job N" button, and that button ends that job and nothing else.

The job is real, submitted to the test bed as ARI's hpc skill submits it
(test_runs_envelope_testbed.submit_bfts).
"""
from __future__ import annotations

import json
import time

import pytest

from testbed.test_runs_envelope_testbed import approved_checkpoint, in_queue, status, submit_bfts

from .conftest import ARTIFACTS, LAB_ARGS, LAB_SETTINGS, lab_env
from .jupyter_process import start_jupyter
from .lab_helpers import execute_command, open_lab

pytestmark = [pytest.mark.e2e, pytest.mark.slurm]

PANEL = "#ari-jupyter-runs"


def test_job_outside_the_envelope_is_marked_and_cancelled_from_its_finding(testbed_nogres,
                                                                            tmp_path, page):
    bed = testbed_nogres
    partition = bed.default_partition
    ckpt = approved_checkpoint(tmp_path, partition, nodes=1, walltime="00:05:00")
    jobs = [submit_bfts(bed, ckpt, "node_wide", partition=partition, nodes=2, walltime="00:05:00"),
            submit_bfts(bed, ckpt, "node_fits", partition=partition, nodes=1, walltime="00:05:00")]
    wide, fits = jobs
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "ari_jupyter_config.json").write_text(
        json.dumps({"AriWizard": {"workspace_template": str(ckpt.parent.parent)}}))
    server = start_jupyter(tmp_path, app="lab", env=lab_env(tmp_path, bed.env),
                           settings=LAB_SETTINGS, args=LAB_ARGS)
    try:
        deadline = time.monotonic() + 60
        while len(status(bed, ckpt)["jobs"]["jobs"]) < 2:
            assert time.monotonic() < deadline, "the run's jobs were never listed"
            time.sleep(1)
        open_lab(page, server)
        execute_command(page, "ari-jupyter:runs")
        # the only active run: the panel opens on it
        page.wait_for_selector(f"{PANEL}[data-view='status'] .ari-RunsPanel-job[data-job-id='{wide}']",
                               timeout=60_000)
        marked = page.locator(f"{PANEL} .ari-RunsPanel-job[data-job-id='{wide}']")
        assert marked.get_attribute("data-outside") == "yes"
        assert marked.locator(".ari-RunsPanel-outside").inner_text() == \
            "Outside what you approved: 2 nodes, you approved 1"
        assert page.locator(f"{PANEL} .ari-RunsPanel-job[data-job-id='{fits}']") \
            .get_attribute("data-outside") is None
        finding = page.locator(f"{PANEL} li[data-rule='run-job-outside-envelope']")
        assert f"Job {wide} (a BFTS job) asks more than you approved" in finding.inner_text()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.locator(PANEL).screenshot(path=str(ARTIFACTS / "runs-panel-envelope-en.png"))

        finding.locator("button", has_text=f"Cancel job {wide}").click()
        dialog = page.locator(".jp-Dialog")
        dialog.wait_for()
        asked = dialog.inner_text()
        assert f"scancel {wide} (node_wide, " in asked and "node_fits" not in asked, asked
        dialog.locator("button", has_text="Cancel jobs").click()
        page.wait_for_selector(f"{PANEL} .ari-RunsPanel-job[data-job-id='{wide}']", state="detached",
                               timeout=60_000)
        assert page.locator(f"{PANEL} li[data-rule='run-job-outside-envelope']").count() == 0
        queue = in_queue(bed)
        assert wide not in queue and fits in queue  # that job, and nothing else
    finally:
        server.stop()
        for job_id in jobs:
            bed.run(["scancel", job_id])
