"""The status bar on a demo site: the site's recorded allocation, marked as a demo."""
import asyncio

import pytest

from ari_jupyter.server.status import AllocationStatus


def test_a_demo_site_shows_its_recorded_allocation_marked_as_demo(tmp_path):
    env = {"ARI_JUPYTER_DEMO_SITE": "rccs-cloud", "HOME": str(tmp_path)}
    snapshot = asyncio.run(AllocationStatus(env=env).snapshot())
    assert snapshot["demo"] == {"site": "rccs-cloud"}
    assert snapshot["allocation"]["inside_allocation"] and snapshot["allocation"]["job_id"] == "1027"
    assert snapshot["allocation"]["nodelist"] == "rc[01-02]"
    assert snapshot["time_left"]["status"] == "ok" and "1027" in snapshot["time_left"]["summary"]


@pytest.mark.parametrize("env", [
    {},                                                  # no demo site: nothing to show
    {"ARI_JUPYTER_DEMO_SITE": "laptop"},                 # a demo site outside any allocation
    {"ARI_JUPYTER_DEMO_SITE": "no-such-site"},           # a broken name: no line, no failure
])
def test_without_a_demo_allocation_the_item_stays_hidden(tmp_path, env):
    snapshot = asyncio.run(AllocationStatus(env={**env, "HOME": str(tmp_path)}).snapshot())
    assert "demo" not in snapshot and not snapshot["allocation"]["inside_allocation"]


def test_a_real_allocation_is_never_replaced_by_the_demo(tmp_path):
    env = {"ARI_JUPYTER_DEMO_SITE": "rccs-cloud", "HOME": str(tmp_path), "SLURM_JOB_ID": "77",
           "SLURM_JOB_NODELIST": "n1", "SLURM_JOB_NUM_NODES": "1"}

    async def no_squeue(allocation):
        return {"id": "time_left", "status": "unknown", "summary": "not asked"}

    snapshot = asyncio.run(AllocationStatus(env=env, time_left_probe=no_squeue).snapshot())
    assert "demo" not in snapshot and snapshot["allocation"]["job_id"] == "77"
