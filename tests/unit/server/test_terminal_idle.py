"""GET /ari-jupyter/terminal-idle/<name>: "Open in terminal" reuses the terminal it opened only
while its shell waits at the prompt; typed into a running command, the words would be its input.
A real ``jupyter server`` with a real terminal, driven over its websocket."""
from __future__ import annotations

import asyncio
import json
import time
import urllib.request

import pytest
from tornado.websocket import websocket_connect

from e2e.jupyter_process import http_get, start_jupyter

from ari_jupyter.server.terminal_handlers import shell_is_idle


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_jupyter(tmp_path_factory.mktemp("terminals"))
    yield server
    server.stop()


def new_terminal(server) -> str:
    request = urllib.request.Request(server.url("/api/terminals"), data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())["name"]


def idle(server, name):
    status, body = http_get(server.url(f"/ari-jupyter/terminal-idle/{name}"))
    return status, (json.loads(body)["idle"] if status == 200 else None)


def wait_for(server, name, expected, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if idle(server, name) == (200, expected):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("typed, expected", [
    ("", True),                          # a fresh shell at its prompt
    ("sleep 30\r", False),               # a command holds the terminal
    ("echo typed, not run", True),       # words at the prompt are not a command yet
    ("sleep 30 &\r", True),              # a background job leaves the prompt free
])
def test_the_shell_is_idle_only_at_its_prompt(server, typed, expected):
    name = new_terminal(server)
    assert wait_for(server, name, True)

    async def send():
        ws = await websocket_connect(server.url(f"/terminals/websocket/{name}").replace("http", "ws", 1))
        await asyncio.sleep(0.5)
        if typed:
            ws.write_message(json.dumps(["stdin", typed]))
        await asyncio.sleep(0.5)
        ws.close()

    asyncio.run(send())
    assert wait_for(server, name, expected), idle(server, name)


def test_an_unknown_terminal_is_404(server):
    assert idle(server, "no-such-terminal")[0] == 404


def test_needs_the_token(server):
    status, _ = http_get(server.url("/ari-jupyter/terminal-idle/1", token=False))
    assert status in (401, 403)


@pytest.mark.parametrize("stat, expected", [
    ("10 (bash) S 1 10 10 34816 10 4194560", True),             # tpgid == pgrp
    ("10 (bash) S 1 10 10 34816 22 4194560", False),            # another group in front
    ("10 (my shell) x) S 1 10 10 34816 10 0", True),             # comm with ") " in it
    ("10 (bash) S 1 10 10 0 -1 0", None),                        # no terminal
    ("garbage", None),
])
def test_proc_stat_is_read_as_the_kernel_writes_it(tmp_path, stat, expected):
    (tmp_path / "10").mkdir()
    (tmp_path / "10" / "stat").write_text(stat)
    assert shell_is_idle(10, proc=tmp_path) is expected
    assert shell_is_idle(11, proc=tmp_path) is None
