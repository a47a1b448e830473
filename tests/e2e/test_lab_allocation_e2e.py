"""JupyterLab started inside a real test-bed allocation: the status bar shows it."""
from __future__ import annotations

import json
import re
import time

import pytest

from .conftest import LAB_ARGS, LAB_SETTINGS, assert_no_console_errors, lab_env
from .jupyter_process import http_get, start_jupyter
from .lab_helpers import STATUS_ITEM, open_lab

pytestmark = [pytest.mark.e2e, pytest.mark.slurm]

# The "large" partition: "small" caps jobs at 1 h, below which the core probe warns.
SALLOC = ["salloc", "-p", "large", "-N2", "-n4", "-t", "90", "-J", "ari-e2e-lab"]
GRANTED = re.compile(r"Granted job allocation (\d+)")


@pytest.fixture
def lab_in_allocation(testbed_gres, tmp_path):
    """``salloc -p large -N2 -n4 -t 90 jupyter lab ...``: the server process is the allocation's shell."""
    env = lab_env(tmp_path, testbed_gres.env)
    server = start_jupyter(tmp_path, app="lab", env=env, settings=LAB_SETTINGS, args=LAB_ARGS,
                           prefix=SALLOC)
    yield server
    server.stop()
    assert server.leftovers() == [], "the server started under salloc outlived the test"


def granted_job_id(server, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = GRANTED.search(server.log())
        if match:
            return match.group(1)
        time.sleep(0.1)
    raise AssertionError(f"salloc never granted an allocation:\n{server.log()}")


def test_status_bar_shows_the_allocation_the_server_runs_in(lab_in_allocation, page):
    server = lab_in_allocation
    job_id = granted_job_id(server)

    status, body = http_get(server.url("/ari-jupyter/allocation"))
    assert status == 200
    data = json.loads(body)
    assert data["allocation"]["job_id"] == job_id
    assert data["allocation"]["num_nodes"] == 2
    assert data["allocation"]["nodelist"] == "n[1-2]"
    assert data["allocation"]["partition"] == "large"
    assert data["time_left"]["status"] == "ok", data["time_left"]
    assert 85 * 60 <= data["time_left"]["data"]["seconds"] <= 90 * 60

    open_lab(page, server)
    item = page.locator(f"{STATUS_ITEM}:visible")
    item.wait_for(timeout=30_000)
    text = item.inner_text()
    assert f"SLURM {job_id}" in text
    assert "2 nodes n[1-2]" in text
    assert re.search(r"\b1:(2\d|30):\d\d left", text), text
    assert_no_console_errors(page)
