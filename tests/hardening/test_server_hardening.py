"""The jupyter_server endpoint against odd requests (beyond tests/unit/server/test_extension.py):
other methods, odd and oversized paths, tokens in the wrong place, and secrets in the
server's environment or in squeue's output, which the endpoint must never return."""
from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from e2e.jupyter_process import http_get, start_jupyter

from ._support import SECRETS, secrets_in, write_command
from .figures import record

ROUTE = "/ari-jupyter/allocation"
ALLOC = {"SLURM_JOB_ID": "1027", "SLURM_JOB_NAME": "interactive", "SLURM_JOB_PARTITION": "small",
         "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_JOB_NUM_NODES": "2", "SLURM_NTASKS": "4",
         "SLURM_TASKS_PER_NODE": "3,1", "SLURM_JOB_CPUS_PER_NODE": "3,1", "SLURM_CPUS_ON_NODE": "3"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    import os

    tmp = tmp_path_factory.mktemp("server-hardening")
    bin_dir = tmp / "bin"
    # squeue answers, and also prints the environment on stderr, like a chatty wrapper would
    write_command(bin_dir, "squeue", 'env >&2\necho "token $HF_TOKEN" >&2\necho "59:10"')
    env = {**ALLOC, **SECRETS, "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    process = start_jupyter(tmp, env=env)
    yield process
    process.stop()


def _request(url: str, method: str, headers=None, data: bytes | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, method=method, headers=dict(headers or {}), data=data)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_other_methods_never_answer_the_document(server, method):
    outcomes = []
    for with_token in (False, True):
        url = server.url(ROUTE, token=with_token)
        status, body = _request(url, method, data=b"{}" if method != "DELETE" else None,
                                headers={"Content-Type": "application/json"})
        outcomes.append(status)
        assert status in (401, 403, 405), (method, with_token, status)
        assert b"inside_allocation" not in body
    record("Server", "POST/PUT/DELETE/PATCH, with and without token", cases=2, survived=2,
           unit="requests", method=method)


ODD_PATHS = [
    "//ari-jupyter/allocation", ROUTE + "/", ROUTE.upper(), ROUTE + ";/../../etc/passwd",
    ROUTE + "%00/../../etc/passwd", "/ari-jupyter/%2e%2e%5c%2e%2e%5cetc%5cpasswd",
    "/ari-jupyter/..%252f..%252fetc%252fpasswd", ROUTE + "/" + "a" * 6000,
    "/ari-jupyter/allocation/..", "/ari-jupyter/./allocation/../../../etc/passwd",
    "/ari-jupyter/%C0%AE%C0%AE/%C0%AE%C0%AE/etc/passwd", "/ari-jupyter/allocation?path=/etc/shadow",
    "/files/../../../../etc/passwd", "/ari-jupyter/", "/ari-jupyter",
]


def test_odd_paths_read_no_file_and_leak_nothing(server):
    bad = []
    for path in ODD_PATHS:
        for with_token in (True, False):
            status, body = http_get(server.url(path, token=with_token))
            text = body.decode("utf-8", "replace")
            if "root:" in text or secrets_in(text):
                bad.append((path, with_token, status))
            if not with_token and status == 200 and "inside_allocation" in text:
                bad.append((path, "served without a token", status))
            if status == 200 and "inside_allocation" in text:
                assert json.loads(text)["allocation"]["job_id"] == "1027"
    record("Server", "odd, encoded and oversized paths, with and without token",
           cases=len(ODD_PATHS) * 2, survived=len(ODD_PATHS) * 2 - len(bad), lost=len(bad),
           unit="requests")
    assert bad == []


def _wrong(token: str) -> str:
    """The token with its last character changed (to one it is not: a fixed "0" was the right
    token whenever the token ended in 0)."""
    return token[:-1] + ("1" if token.endswith("0") else "0")


@pytest.mark.parametrize("how", ["Token query name", "bearer scheme with wrong token",
                                 "token in a cookie", "empty token", "token as path segment"])
def test_tokens_in_the_wrong_place_are_refused(server, how):
    base = server.url(ROUTE, token=False)
    url, headers = {
        "Token query name": (base + f"?Token={server.token}x", {}),
        "bearer scheme with wrong token": (base, {"Authorization": "Bearer " + _wrong(server.token)}),
        "token in a cookie": (base, {"Cookie": f"token={server.token}"}),
        "empty token": (base + "?token=", {}),
        "token as path segment": (server.base + f"/{server.token}{ROUTE}", {}),
    }[how]
    status, body = http_get(url, headers=headers)
    assert status in (401, 403, 404), status
    assert b"inside_allocation" not in body


def test_the_endpoint_returns_no_secret_from_the_environment_or_squeue(server):
    status, body = http_get(server.url(ROUTE))
    assert status == 200
    data = json.loads(body)
    assert data["time_left"]["status"] in ("ok", "warn")  # squeue really answered
    environ = Path(f"/proc/{server.proc.pid}/environ").read_bytes().decode(errors="replace")
    assert secrets_in(environ)  # control: the server does hold the secrets
    leaks = secrets_in(body.decode())
    record("Server", "endpoint JSON with secrets in the server env and squeue output", cases=1,
           survived=int(not leaks), lost=len(leaks), unit="responses")
    assert leaks == []
