"""The jupyter_server extension: GET /ari-jupyter/allocation.

Real ``jupyter server`` processes with the shipped config file, the environment of a captured
``salloc -N2 -n4`` and a stand-in ``squeue`` that records its argv.
"""
from __future__ import annotations
from repo_paths import TESTS

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest

from e2e.jupyter_process import REPO, http_get, start_jupyter

from ari_jupyter.base.verdict import STATUSES

FIXTURE_ENV = TESTS / "e2e" / "fixtures" / "alloc_env.txt"
ROUTE = "/ari-jupyter/allocation"

FAKE_SQUEUE = """#!/bin/sh
# Stand-in squeue: records argv, sleeps as told by $FAKE_SQUEUE_DIR/sleep, prints a time left.
dir=$(dirname "$0")
printf '%s\\n' "$*" >> "$dir/calls"
[ -f "$dir/sleep" ] && sleep "$(cat "$dir/sleep")"
echo "59:10"
"""


def captured_alloc_env() -> dict[str, str]:
    lines = FIXTURE_ENV.read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def fake_squeue_dir(tmp: Path, sleep: float = 0.0) -> Path:
    bin_dir = tmp / "fakebin"
    bin_dir.mkdir()
    script = bin_dir / "squeue"
    script.write_text(FAKE_SQUEUE)
    script.chmod(0o755)
    if sleep:
        (bin_dir / "sleep").write_text(f"{sleep}\n")
    return bin_dir


def squeue_calls(bin_dir: Path) -> list[str]:
    calls = bin_dir / "calls"
    return calls.read_text().splitlines() if calls.exists() else []


def server_with(tmp: Path, alloc: dict[str, str], sleep: float = 0.0):
    import os

    bin_dir = fake_squeue_dir(tmp, sleep)
    env = {**alloc, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    return start_jupyter(tmp, env=env), bin_dir


@pytest.fixture(scope="module")
def inside(tmp_path_factory):
    # under a hub that stops servers idle for 90 min (the site's admin says so, docs/admin.md)
    server, bin_dir = server_with(tmp_path_factory.mktemp("inside"),
                                  {**captured_alloc_env(), "ARI_JUPYTER_IDLE_CULL": "5400"})
    yield server, bin_dir
    server.stop()


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    server, bin_dir = server_with(tmp_path_factory.mktemp("outside"), {})
    yield server, bin_dir
    server.stop()


def get_json(server, path=ROUTE):
    status, body = http_get(server.url(path))
    assert status == 200, body[:500]
    return json.loads(body)


# --- authentication -------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["no token", "wrong token", "token of another server"])
def test_refuses_requests_without_a_valid_token(inside, how):
    server, _ = inside
    url = {
        "no token": server.url(ROUTE, token=False),
        "wrong token": server.url(ROUTE, token=False) + "?token=not-the-token",
        "token of another server": server.url(ROUTE, token=False) + "?token=ari-test-0000000000000000",
    }[how]
    status, body = http_get(url)
    assert status in (401, 403)
    assert b"n[1-2]" not in body and b"interactive" not in body


def test_accepts_the_token_in_the_authorization_header(inside):
    server, _ = inside
    status, body = http_get(server.url(ROUTE, token=False),
                            headers={"Authorization": f"token {server.token}"})
    assert status == 200
    assert json.loads(body)["allocation"]["job_id"] == "1"


# --- payload ---------------------------------------------------------------------------------

def test_inside_an_allocation_reports_it_and_asks_squeue_for_this_job(inside):
    server, bin_dir = inside
    data = get_json(server)
    allocation = data["allocation"]
    assert allocation["inside_allocation"] is True
    assert allocation["job_id"] == "1"
    assert allocation["job_name"] == "interactive"
    assert allocation["nodelist"] == "n[1-2]"
    assert allocation["num_nodes"] == 2
    assert allocation["partition"] == "small"
    assert list(allocation["tasks_per_node"]) == [3, 1]
    time_left = data["time_left"]
    assert time_left["id"] == "time_left"
    assert time_left["status"] in STATUSES
    calls = squeue_calls(bin_dir)
    assert calls and all(call.split() == ["-h", "-j", "1", "-o", "%L"] for call in calls)


@pytest.mark.parametrize("query, code, summary, idle", [
    ("", 200, "job 1 ends in 59:10 (59 min): an `ari run` started here stops with it", "1 h 30 min"),
    ("?lang=en", 200, "job 1 ends in 59:10 (59 min): an `ari run` started here stops with it", "1 h 30 min"),
    ("?lang=ja", 200, "ジョブ 1 は残り 59:10（59 分）で終了します。ここで始めた `ari run` も一緒に止まります",
     "1 時間 30 分"),
    ("?lang=zh", 200, "作业 1 将在 59:10（59 分钟）后结束：在这里启动的 `ari run` 会随之停止", "1 小时 30 分钟"),
    ("?lang=fr", 400, None, None),
])
def test_the_time_left_comes_in_the_status_bars_language(inside, query, code, summary, idle):
    """The status bar asks in JupyterLab's language: its tooltip is one language, not English
    in a Japanese lab; the id and parameters stay (the code marks too: the lab quotes them).
    The hub's idle timeout is worded the same way."""
    server, _ = inside
    status, body = http_get(server.url(ROUTE + query))
    assert status == code, body[:300]
    if summary:
        left = json.loads(body)["time_left"]
        assert left["summary"] == summary and left["message_id"] == "probe.time_left.short"
        said = json.loads(body)["idle_cull"]
        assert (said["seconds"], said["text"]) == (5400, idle), said


def test_outside_an_allocation_reports_nothing_and_runs_no_squeue(outside):
    server, bin_dir = outside
    data = get_json(server)
    assert data["allocation"]["inside_allocation"] is False
    assert data["allocation"]["job_id"] in (None, "")
    assert data["time_left"] is None
    assert squeue_calls(bin_dir) == []


def test_time_left_is_cached_between_requests(tmp_path):
    server, bin_dir = server_with(tmp_path, captured_alloc_env())
    try:
        for _ in range(4):
            get_json(server)
        assert len(squeue_calls(bin_dir)) == 1
    finally:
        server.stop()


def test_a_slow_squeue_does_not_block_the_server(tmp_path):
    server, bin_dir = server_with(tmp_path, captured_alloc_env(), sleep=2.5)
    try:
        results = {}

        def slow_request():
            start = time.monotonic()
            results["allocation"] = http_get(server.url(ROUTE), timeout=20)
            results["allocation_s"] = time.monotonic() - start

        worker = threading.Thread(target=slow_request)
        worker.start()
        deadline = time.monotonic() + 5
        while not squeue_calls(bin_dir) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert squeue_calls(bin_dir), "squeue was never started"
        start = time.monotonic()
        status, _ = http_get(server.url("/api/status"), timeout=5)
        other_request_s = time.monotonic() - start
        worker.join(timeout=20)
        assert status == 200
        assert other_request_s < 1.0, f"/api/status took {other_request_s:.2f} s while squeue ran"
        assert results["allocation"][0] == 200
        assert results["allocation_s"] >= 2.0
    finally:
        server.stop()


# --- no path traversal -----------------------------------------------------------------------

@pytest.mark.parametrize("path", [
    ROUTE + "/../../../../etc/passwd",
    ROUTE + "/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/ari-jupyter/..%2f..%2f..%2fetc%2fpasswd",
    "/ari-jupyter/allocation%2f..%2f..%2fetc%2fpasswd",
    ROUTE + "/etc/passwd",
    ROUTE + "?path=/etc/passwd",
    ROUTE + "?file=../../../../etc/passwd",
])
def test_no_request_reads_a_file(inside, path):
    server, _ = inside
    status, body = http_get(server.url(path))
    assert b"root:" not in body
    assert status in (200, 404)
    if status == 200:  # query arguments are ignored: the same document comes back
        assert json.loads(body)["allocation"]["job_id"] == "1"


def test_the_route_takes_no_parameters():
    from tornado.web import Application

    from ari_jupyter.server.handlers import AllocationHandler, setup_handlers
    from ari_jupyter.server.status import AllocationStatus

    app = Application(base_url="/base/")
    setup_handlers(app, AllocationStatus(env={}))

    def routes(router):
        for rule in router.rules:
            if hasattr(rule.target, "rules"):
                yield from routes(rule.target)
            else:
                yield rule

    ours = [rule for rule in routes(app.default_router) if rule.target is AllocationHandler]
    assert [rule.matcher.regex.pattern.replace("\\", "") for rule in ours] == \
        ["/base/ari-jupyter/allocation$"]
    assert ours[0].matcher.regex.groups == 0


# --- the status cache, in process ------------------------------------------------------------

class CountingProbe:
    def __init__(self, delay: float = 0.0):
        self.calls = 0
        self.delay = delay

    async def __call__(self, allocation):
        self.calls += 1
        await asyncio.sleep(self.delay)
        return {"id": "time_left", "status": "ok", "summary": f"call {self.calls}",
                "command": "", "evidence": "", "fix": "", "data": {}}


def test_concurrent_requests_share_one_probe_and_the_cache_expires():
    from ari_jupyter.server.status import AllocationStatus

    now = [100.0]
    probe = CountingProbe(delay=0.05)
    status = AllocationStatus(env=captured_alloc_env(), time_left_probe=probe,
                              cache_seconds=10.0, clock=lambda: now[0])

    async def scenario():
        first = await asyncio.gather(*(status.snapshot() for _ in range(5)))
        assert probe.calls == 1
        assert {s["time_left"]["summary"] for s in first} == {"call 1"}
        now[0] += 9.9
        assert (await status.snapshot())["time_left"]["summary"] == "call 1"
        now[0] += 0.2
        assert (await status.snapshot())["time_left"]["summary"] == "call 2"

    asyncio.run(scenario())
    assert probe.calls == 2


def test_a_probe_that_hangs_gives_unknown(monkeypatch):
    from ari_jupyter.server import status as status_module

    monkeypatch.setattr(status_module, "TIME_LEFT_TIMEOUT", 0.05)
    monkeypatch.setattr(status_module, "PROBE_GRACE", 0.05)
    status = status_module.AllocationStatus(env=captured_alloc_env(),
                                            time_left_probe=CountingProbe(delay=30))
    result = asyncio.run(asyncio.wait_for(status.snapshot(), 10))
    assert result["time_left"]["status"] == "unknown"
    assert result["time_left"]["summary"] == "`squeue` did not answer within 0.05s: the time left in job " \
        + captured_alloc_env()["SLURM_JOB_ID"] + " is unknown"
    assert result["time_left"]["message_id"] == "probe.unanswered.timeout"
    json.dumps(result)  # what the endpoint sends


def test_the_shipped_config_enables_the_extension():
    config = json.loads((REPO / "jupyter-config" / "server-config" / "ari_jupyter.json").read_text())
    assert config == {"ServerApp": {"jpserver_extensions": {"ari_jupyter.server": True}}}
