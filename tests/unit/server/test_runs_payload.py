"""The answers of the Runs routes the lab extension reads, recorded from a real jupyter server.

A checkpoint ``emit`` wrote (its decided record: Nodes 2) with the newer ARI's submission ledger
(``tests/fixtures/ari_typed_hpc_v1/hpc-jobs-v1.json``: jobs SLURM no longer lists, each with its
recorded request and handle), a queue holding one BFTS job of the run on 3 nodes and its
reproduce job, and the server's answers to the panel's requests (the
list, the ids, the run, a cancel) recorded in ``tests/fixtures/runs_payload.json``. This test
holds the server to the recording's shape (every key, every JSON type, in every list item);
``labextension/test/payloads.test.ts`` holds the same file to the TypeScript payload types'
guards and rule ids (``labextension/src/payloads.ts``), so the two sides cannot drift apart
unseen. ``ARI_UPDATE_GOLDEN=1`` records it again after an intended change.
"""
from __future__ import annotations
from repo_paths import REPO, TESTS

import json
import os
import re
import shutil
import urllib.request
from pathlib import Path

import pytest

from ari_jupyter.ari.contracts import LEDGER_FILE
from ari_jupyter.base.verdict import ProbeResult
from ari_jupyter.checkpoint.emit import emit_checkpoint
from ari_jupyter.runs.jobs import SEP, current_user
from e2e.jupyter_process import http_get, start_jupyter
from golden_support import updating
from unit.ari.test_render import golden_state

FIXTURE = TESTS / "fixtures" / "runs_payload.json"
LEDGER = TESTS / "fixtures" / "ari_typed_hpc_v1" / "hpc-jobs-v1.json"
PAYLOADS_TS = REPO / "labextension" / "src" / "payloads.ts"
FINDINGS_PY = REPO / "ari_jupyter" / "runs" / "findings.py"
PLACEHOLDER = "/srv/lab"
"""The test's temporary folder as the recording names it."""


def _queue(ckpt: Path) -> str:
    """squeue's rows: a BFTS job of the run on 3 nodes (2 approved), its reproduce job fitting."""
    user = current_user()
    work = ckpt.parent.parent / "experiments" / ckpt.name / "node_1"
    rows = [("61", "bfts_n1", "RUNNING", "0:42", "3", "n[1-3]", user, str(work), "small", "4",
             "N/A", "1:00:00"),
            ("62", "ari-ors", "PENDING", "0:00", "2", "(Resources)", user,
             str(ckpt / "repro_sandbox"), "small", "16", "N/A", "1:00:00")]
    return "".join(SEP.join(row) + "\n" for row in rows)


def _fake_slurm(tmp: Path, queue: str) -> Path:
    bin_dir = tmp / "fakebin"
    bin_dir.mkdir()
    (tmp / "queue.txt").write_text(queue)
    scripts = {"squeue": f"#!/bin/sh\ncat {tmp / 'queue.txt'}\n",
               "sacct": "#!/bin/sh\necho 'Slurm accounting storage is disabled' >&2\nexit 1\n",
               "scancel": f"#!/bin/sh\necho \"$@\" >> {tmp / 'scancel.calls'}\n"}
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return bin_dir


def _post(server, path: str, body: bytes) -> tuple[int, bytes]:
    request = urllib.request.Request(server.url(path, token=False), data=body, method="POST",
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"token {server.token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.read()


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("runs-payload")
    workspace = tmp / "root" / "ari"  # inside the server's root: the run's lab folder is "ari"
    state = golden_state(workspace=str(workspace), provided_files=[])
    state.set_probe_result(ProbeResult("shared_fs", "ok", "shared", data={"path": str(workspace)}))
    ckpt = Path(emit_checkpoint(state).checkpoint_dir)
    shutil.copyfile(LEDGER, ckpt / LEDGER_FILE)  # ARI's default place for it
    (tmp / "config").mkdir()
    (tmp / "config" / "ari_jupyter_config.json").write_text(
        json.dumps({"AriWizard": {"workspace_template": str(workspace)}}))
    bin_dir = _fake_slurm(tmp, _queue(ckpt))
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "ARI_JUPYTER_WORKSPACES_FILE": str(tmp / "workspaces.json")}
    server = start_jupyter(tmp, env=env)
    try:
        out = {}
        for key, path in (("runs", "/ari-jupyter/runs"), ("run_ids", "/ari-jupyter/runs/ids"),
                          ("status", f"/ari-jupyter/runs/{ckpt.name}")):
            status, body = http_get(server.url(path))
            assert status == 200, body[:300]
            out[key] = json.loads(body)
        # a job the queue does not hold: nothing is cancelled, the answer has its full shape
        status, body = _post(server, f"/ari-jupyter/runs/{ckpt.name}/cancel", b'{"job_ids": ["99"]}')
        assert status == 200, body[:300]
        out["cancel"] = json.loads(body)
    finally:
        server.stop()
    assert not (tmp / "scancel.calls").exists()
    text = json.dumps(out, indent=2, ensure_ascii=False, sort_keys=True)
    for spelled in {str(tmp.resolve()), str(tmp)}:
        text = text.replace(spelled, PLACEHOLDER)
    return json.loads(text)


def shape(value):
    """Every key and every JSON type of ``value``, list items one by one."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    return "null" if value is None else type(value).__name__


def test_the_server_answers_as_recorded(answers):
    if updating():
        FIXTURE.write_text(json.dumps(answers, indent=2, ensure_ascii=False, sort_keys=True) + "\n")
    recorded = json.loads(FIXTURE.read_text())
    assert shape(answers) == shape(recorded)
    # what the panel acts on, as recorded: the job outside, the finding offering its cancel
    status = answers["status"]
    assert [f["rule"] for f in status["findings"]] == [f["rule"] for f in recorded["status"]["findings"]]
    # the queue's two jobs, then the ledger's three SLURM no longer lists (its claim has no job)
    assert [(j["job_id"], j["source"], [o["what"] for o in j["outside"]])
            for j in status["jobs"]["jobs"]] == \
        [("61", "squeue", ["nodes"]), ("62", "squeue", []), ("4101", "ledger", []),
         ("4102", "ledger", ["cpus", "walltime"]), ("4107", "ledger", [])]
    assert [e["job_id"] for e in status["ledger"]["entries"]] == ["4101", "4102", "4107", ""]
    assert status["ledger"] == recorded["status"]["ledger"]
    assert status["envelope"] == recorded["status"]["envelope"]
    assert status["lab_folder"] == "ari"
    assert answers["run_ids"] == {"run_ids": [status["run_id"]]}
    assert [o["result"] for o in answers["cancel"]["outcomes"]] == ["gone"]


def _ts_strings(name: str) -> list[str]:
    """The string literals of ``export const <name>`` in payloads.ts (constants named there
    are read as their value)."""
    source = PAYLOADS_TS.read_text(encoding="utf-8")
    constants = dict(re.findall(r"export const (\w+) = '([^']*)';", source))
    body = re.search(rf"export const {name}\b[^=]*=\s*(\[[^\]]*\]|'[^']*')", source).group(1)
    return [constants.get(token, token.strip("'"))
            for token in re.findall(r"'[^']*'|\b[A-Z_]{3,}\b", body)]


def test_the_lab_extension_knows_every_run_rule():
    """payloads.ts's rule ids are the run-level rules the server gives (runs/findings.py)."""
    served = re.findall(r'Finding\.of\("(run-[a-z-]+)"', FINDINGS_PY.read_text(encoding="utf-8"))
    assert sorted(set(_ts_strings("RUN_RULES"))) == sorted(set(served))
    assert _ts_strings("OUTSIDE_ENVELOPE_RULE") == ["run-job-outside-envelope"]
    recorded = json.loads(FIXTURE.read_text())
    assert {f["rule"] for f in recorded["status"]["findings"]} <= set(served)
