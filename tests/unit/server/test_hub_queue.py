"""A user's server on a hub that offers the queue service (server/hub_queue.py): the user-wide
squeue line is answered by the service, with the server's own token and user; any answer it
must not take (none, slow, stale, private, another user's, refused) and it asks SLURM itself
at once, and leaves the service alone a while. A cancel asks the service for a fresh answer."""
from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from pathlib import Path

import pytest
from tornado import web
from tornado.httpserver import HTTPServer

from ari_jupyter.runs.queue_service import URL_ENV, answer, user_argv
from ari_jupyter.server.hub_queue import BACKOFF_SECONDS, HubQueueClient
from ari_jupyter.server.queue_cache import QueueCachingHost

ROWS = "17\x1fjob\x1fRUNNING\n"
ENVS = [
    ({URL_ENV: "http://127.0.0.1:9/s/", "JUPYTERHUB_USER": "alice", "JUPYTERHUB_API_TOKEN": "t"}, True),
    ({URL_ENV: "http://127.0.0.1:9/s/", "JUPYTERHUB_USER": "alice"}, False),   # no token
    ({URL_ENV: "http://127.0.0.1:9/s/", "JUPYTERHUB_API_TOKEN": "t"}, False),  # no hub user
    ({URL_ENV: "file:///etc/passwd", "JUPYTERHUB_USER": "alice", "JUPYTERHUB_API_TOKEN": "t"}, False),
    ({"JUPYTERHUB_USER": "alice", "JUPYTERHUB_API_TOKEN": "t"}, False),        # no service offered
]


@pytest.mark.parametrize("env,offered", ENVS)
def test_the_service_is_used_only_when_the_hub_offers_it(env, offered):
    assert (HubQueueClient.from_env(env) is not None) is offered


class _Service(web.RequestHandler):
    def initialize(self, seen, behaviour):
        self.seen, self.behaviour = seen, behaviour

    async def get(self, user):
        self.seen.append((user, self.request.headers.get("Authorization"), self.get_argument("fresh", "")))
        code, body, delay = self.behaviour[0]
        await asyncio.sleep(delay)
        self.set_status(code)
        self.finish(json.dumps(body))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


BEHAVIOURS = [
    # (what, the service's (status, body, delay), the server's squeue asked)
    ("a fresh answer", (200, answer("ok", user="alice", rows=ROWS, age_s=2), 0), False),
    ("stale", (200, answer("ok", user="alice", rows=ROWS, age_s=2, stale=True), 0), True),
    ("PrivateData", (200, answer("private", user="alice"), 0), True),
    ("another user's rows", (200, answer("ok", user="bob", rows=ROWS, age_s=2), 0), True),
    ("refused", (403, {"error": 403}, 0), True),
    ("slower than the timeout", (200, answer("ok", user="alice", rows=ROWS, age_s=2), 5), True),
]


def _fake_squeue(tmp_path: Path) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "squeue").write_text(f"#!/bin/sh\necho squeue >> {tmp_path}/calls\necho 99\n")
    (bin_dir / "squeue").chmod(0o755)
    return f"{bin_dir}:{os.environ['PATH']}"


def _run(tmp_path, behaviour, steps, port=None):
    """Serve ``behaviour`` on a port of this machine and run ``steps(host)`` against it."""
    seen = []
    port = port or _free_port()

    async def main():
        server = HTTPServer(web.Application([(r"/s/api/jobs/([^/]+)", _Service,
                                              {"seen": seen, "behaviour": behaviour})]))
        server.listen(port, "127.0.0.1")
        env = {**os.environ, "PATH": _fake_squeue(tmp_path), URL_ENV: f"http://127.0.0.1:{port}/s/",
               "JUPYTERHUB_USER": "alice", "JUPYTERHUB_API_TOKEN": "secret-token"}
        host = QueueCachingHost(env)
        host.service.timeout = 1.0
        try:
            return await steps(host)
        finally:
            server.stop()

    return asyncio.run(main()), seen


def _calls(tmp_path: Path) -> list[str]:
    path = tmp_path / "calls"
    return path.read_text().split() if path.exists() else []


@pytest.mark.parametrize("what,behaviour,own", BEHAVIOURS, ids=[b[0] for b in BEHAVIOURS])
def test_the_services_rows_are_taken_only_when_fresh_and_the_users_own(tmp_path, what, behaviour, own):
    async def steps(host):
        started = time.monotonic()
        result = await host.run(list(user_argv("alice")), timeout=10)
        return result, time.monotonic() - started

    (result, took), seen = _run(tmp_path, [behaviour], steps)
    assert seen[0][:2] == ("alice", "token secret-token")
    assert result.ok and result.stdout == ("99\n" if own else ROWS)
    assert _calls(tmp_path) == (["squeue"] if own else [])
    assert took < 1.0 + 2.0  # never longer than the service's timeout and the own squeue


def test_a_line_the_service_does_not_answer_goes_to_slurm(tmp_path):
    async def steps(host):
        return await host.run(["squeue", "-h", "-u", "alice", "-o", "%i"], timeout=10)

    result, seen = _run(tmp_path, [(200, answer("ok", user="alice", rows=ROWS, age_s=2), 0)], steps)
    assert seen == [] and result.stdout == "99\n"


def test_after_a_failed_ask_the_service_is_left_alone_a_while(tmp_path):
    behaviour = [(500, {}, 0)]

    async def steps(host):
        now = [1000.0]
        host.service._clock = lambda: now[0]
        host._clock = lambda: now[0]
        argv = list(user_argv("alice"))
        await host.run(argv, timeout=10)
        now[0] += 30  # the server's own cache has expired; the service is still left alone
        await host.run(argv, timeout=10)
        behaviour[0] = (200, answer("ok", user="alice", rows=ROWS, age_s=2), 0)
        now[0] += BACKOFF_SECONDS
        return await host.run(argv, timeout=10)

    result, seen = _run(tmp_path, behaviour, steps)
    assert len(seen) == 2 and result.stdout == ROWS
    assert _calls(tmp_path) == ["squeue", "squeue"]


def test_after_a_cancel_the_service_is_asked_for_a_fresh_answer(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "scancel").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "bin" / "scancel").chmod(0o755)

    async def steps(host):
        argv = list(user_argv("alice"))
        await host.run(argv, timeout=10)
        await host.run(["scancel", "17"], timeout=10)
        await host.run(argv, timeout=10)
        await host.run(argv, timeout=10)  # held: within the server's 30 s

    _, seen = _run(tmp_path, [(200, answer("ok", user="alice", rows=ROWS, age_s=2), 0)], steps)
    assert [fresh for _, _, fresh in seen] == ["", "1"]


def test_a_service_that_is_not_there_costs_no_wait(tmp_path):
    async def steps(host):
        started = time.monotonic()
        result = await host.run(list(user_argv("alice")), timeout=10)
        return result, time.monotonic() - started

    port = _free_port()
    seen = []

    async def main():
        env = {**os.environ, "PATH": _fake_squeue(tmp_path), URL_ENV: f"http://127.0.0.1:{port}/s/",
               "JUPYTERHUB_USER": "alice", "JUPYTERHUB_API_TOKEN": "t"}
        return await steps(QueueCachingHost(env))

    result, took = asyncio.run(main())
    assert result.stdout == "99\n" and took < 3 and seen == []


AGES = [
    # (the age the service gives its answer, seconds later the same line is asked, the service asked again)
    (2.0, 20.0, False),
    (25.0, 6.0, True),   # 25 + 6 > 30: a job's state would be older than 30 s
    (29.0, 0.5, False),
    (0.0, 30.0, True),
]


@pytest.mark.parametrize("age,later,again", AGES)
def test_the_services_answer_is_held_only_for_what_is_left_of_30_s(tmp_path, age, later, again):
    async def steps(host):
        now = [1000.0]
        host._clock = lambda: now[0]
        argv = list(user_argv("alice"))
        await host.run(argv, timeout=10)
        now[0] += later
        return await host.run(argv, timeout=10)

    result, seen = _run(tmp_path, [(200, answer("ok", user="alice", rows=ROWS, age_s=age), 0)], steps)
    assert result.stdout == ROWS and _calls(tmp_path) == []
    assert len(seen) == (2 if again else 1), seen
