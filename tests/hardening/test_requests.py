"""The extension's POST routes against malformed, oversized and deeply nested bodies: a
malformed cancel request never cancels anything (only an explicit ``{"all": true}`` means
every job), a large body is refused before it is held in memory, a deep one is a 400.

A real ``jupyter server`` with a run in its workspace and a fake SLURM whose queue holds two
active jobs of that run; the fake ``scancel`` writes every id it is asked for to a file, so
"cancelled" is measured, not inferred from the answer.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from e2e.jupyter_process import start_jupyter

from ._support import write_command
from .figures import record

RUN_ID = "20261201094500_cancel_me"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("requests")
    workspace = tmp / "ws"
    ckpt = workspace / "checkpoints" / RUN_ID
    ckpt.mkdir(parents=True)
    (ckpt / "experiment.md").write_text("# Cancel me\n")
    (ckpt / ".ari_pid").write_text("999999\n")
    user = subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
    log = tmp / "scancel.log"
    bin_dir = tmp / "bin"
    # two active jobs of this run (its checkpoint as their work dir), in squeue's format
    fields = ["{id}", "ari_{id}", "RUNNING", "0:10", "1", "n1", "{user}", str(ckpt)]
    rows = "\\n".join("\\037".join(fields).format(id=i, user=user) for i in ("4101", "4102"))
    write_command(bin_dir, "squeue", f'printf "{rows}\\n"')
    write_command(bin_dir, "sacct", "exit 1")
    write_command(bin_dir, "scancel", f'echo "$@" >> {log}')
    (tmp / "config").mkdir()
    (tmp / "config" / "ari_jupyter_config.json").write_text(
        json.dumps({"AriWizard": {"workspace_template": str(workspace)}}))
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "ARI_JUPYTER_WORKSPACES_FILE": str(tmp / "workspaces.json")}
    server = start_jupyter(tmp, env=env)
    yield server, log, ckpt
    server.stop()


def _post(server, path: str, body: bytes) -> tuple[int, bytes]:
    headers = {"Content-Type": "application/json", "Authorization": f"token {server.token}"}
    request = urllib.request.Request(server.url(path, token=False), data=body, headers=headers,
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        try:
            return error.code, error.read()
        except ConnectionError:  # answered, then closed before all of the body was read
            return error.code, b""
    except (ConnectionError, urllib.error.URLError):  # the server closed on a too-large body
        return 0, b""


def _cancelled(log: Path) -> str:
    return log.read_text() if log.exists() else ""


def _ids(log: Path) -> list[str]:
    """The job ids scancel was asked for (each call: ``--user NAME ID``)."""
    return sorted(line.split()[-1] for line in _cancelled(log).splitlines())


CANCEL = f"/ari-jupyter/runs/{RUN_ID}/cancel"
MALFORMED = [b"", b"{}", b"[]", b'["4101"]', b'"4101"', b"null", b"42", b'{"job_ids": null}',
             b'{"jobs": ["4101"]}', b'{"job_ids": []}', b'{"job_ids": "4101"}',
             b'{"job_ids": [4101]}', b'{"job_ids": ["4101; rm -rf ~"]}', b'{"job_ids": [null]}',
             b'{"all": 1}', b'{"all": "true"}', b'{"all": false}', b'{"all": true, "job_ids": ["4101"]}',
             b'{"job_ids": ["4101"], "extra": 1}', b"{not json"]


def test_a_malformed_cancel_body_is_400_and_cancels_nothing(lab):
    server, log, _ = lab
    wrong = []
    for body in MALFORMED:
        status, answer = _post(server, CANCEL, body)
        if status != 400 or _cancelled(log):
            wrong.append((body, status, answer[:200], _cancelled(log)))
        log.unlink(missing_ok=True)
    record("Server", "cancel: malformed bodies (list, string, null, misspelled key, ...)",
           cases=len(MALFORMED), survived=len(MALFORMED) - len(wrong), lost=len(wrong),
           unit="requests")
    assert wrong == []


def test_only_an_explicit_all_cancels_every_job_and_named_ids_only_those(lab):
    server, log, _ = lab
    status, body = _post(server, CANCEL, b'{"job_ids": ["4102"]}')
    assert status == 200, body[:300]
    assert _ids(log) == ["4102"]
    log.unlink()
    status, body = _post(server, CANCEL, b'{"all": true}')
    assert status == 200, body[:300]
    assert _ids(log) == ["4101", "4102"]
    log.unlink()


def test_large_and_deep_bodies_are_refused_without_echoing_them(lab):
    server, log, _ = lab
    log.unlink(missing_ok=True)
    cases = {
        "cancel, 8 MB": (CANCEL, b'{"job_ids": ["' + b"1" * (8 << 20) + b'"]}'),
        "cancel, a 60 kB id": (CANCEL, b'{"job_ids": ["' + b"9" * 60000 + b'"]}'),
        "cancel, nested 60000 deep": (CANCEL, b"[" * 60000),
        "cancel, objects nested 20000 deep": (CANCEL, b'{"a":' * 20000),
        "wizard-notebook, nested 60000 deep": ("/ari-jupyter/wizard-notebook", b"[" * 60000),
        "wizard-notebook, 8 MB": ("/ari-jupyter/wizard-notebook", b'{"cwd": "' + b"a" * (8 << 20) + b'"}'),
    }
    wrong = []
    for name, (path, body) in cases.items():
        status, answer = _post(server, path, body)
        if status not in (0, 400, 413) or len(answer) > 2000 or _cancelled(log):
            wrong.append((name, status, answer[:200]))
    status, _ = _post(server, CANCEL, b'{"job_ids": ["4101"]}')  # the server still answers
    record("Server", "cancel and wizard-notebook: 8 MB bodies, 60 kB ids, JSON nested 60000 deep",
           cases=len(cases), survived=len(cases) - len(wrong), lost=len(wrong), unit="requests")
    assert wrong == [] and status == 200
    log.unlink(missing_ok=True)


@pytest.mark.parametrize("args, says", [
    ([], "--job ID (repeatable), or --all"),
    (["--job", "4101; rm -rf ~"], "is not a SLURM job id"),
    (["--job", ""], "is not a SLURM job id"),
    (["--job", "4101", "--all"], "--job and --all together"),
])
def test_cancel_on_the_command_line_needs_well_formed_jobs_or_an_explicit_all(lab, args, says):
    server, log, ckpt = lab
    log.unlink(missing_ok=True)
    env = {**os.environ, "PATH": f"{log.parent / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "-m", "ari_jupyter", "cancel", "--yes", *args, str(ckpt)],
                          capture_output=True, text=True, env=env, timeout=60)
    survived = done.returncode == 2 and says in done.stderr and not _cancelled(log)
    record("Server", "ari-jupyter cancel: no --job/--all, malformed --job, both",
           cases=1, survived=int(survived), lost=int(not survived), unit="commands")
    assert survived, (done.returncode, done.stdout, done.stderr, _cancelled(log))
    log.unlink(missing_ok=True)


FORGET = "/ari-jupyter/runs/forget"


def test_the_forget_body_is_bounded_as_the_others(lab):
    """POST /runs/forget read its body whole with a plain json.loads: deep JSON was a 500, a
    large body was held in memory. Now the bounded body of the other routes."""
    server, _, _ = lab
    cases = {
        "forget, nested 60000 deep": b"[" * 60000,
        "forget, objects nested 20000 deep": b'{"a":' * 20000,
        "forget, 8 MB": b'{"workspace": "/' + b"a" * (8 << 20) + b'"}',
    }
    wrong = []
    for name, body in cases.items():
        status, answer = _post(server, FORGET, body)
        if status not in (0, 400, 413) or len(answer) > 2000:
            wrong.append((name, status, answer[:200]))
    status, _ = _post(server, FORGET, b'{"workspace": "/nowhere/recorded"}')  # still answers
    record("Server", "runs/forget: 8 MB bodies, JSON nested 60000 deep",
           cases=len(cases), survived=len(cases) - len(wrong), lost=len(wrong), unit="requests")
    assert wrong == [] and status == 404
