"""The Runs endpoints of a real ``jupyter server``: authenticated, run ids only, and the same
answers as ``ari-jupyter runs|status --json`` (the CLI and the panel cannot disagree)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from e2e.jupyter_process import http_get, start_jupyter

from runs_support import copy_case, live_ari

FAKE_SQUEUE = "#!/bin/sh\nexit 0\n"  # an empty queue
FAKE_SACCT = "#!/bin/sh\necho 'Slurm accounting storage is disabled' >&2\nexit 1\n"


def _fake_bin(tmp: Path) -> Path:
    bin_dir = tmp / "fakebin"
    bin_dir.mkdir()
    for name, text in (("squeue", FAKE_SQUEUE), ("sacct", FAKE_SACCT)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return bin_dir


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs-server")
    workspace = tmp / "ws"
    runs = {case: copy_case(case, workspace / case) for case in ("failed", "interrupted-paper")}
    # One workspace holding all the cases: move them under ws/checkpoints.
    (workspace / "checkpoints").mkdir(parents=True)
    for case, path in runs.items():
        target = workspace / "checkpoints" / path.name
        path.rename(target)
        runs[case] = target
    not_started = workspace / "checkpoints" / "20261201100000_not_yet"
    not_started.mkdir()
    (not_started / "experiment.md").write_text("# Not yet\n")
    (workspace / "checkpoints" / "20261201110000_foreign").mkdir()  # nothing of ARI's
    (tmp / "config").mkdir()
    (tmp / "config" / "ari_jupyter_config.json").write_text(
        json.dumps({"AriWizard": {"workspace_template": str(workspace)}}))
    bin_dir = _fake_bin(tmp)
    # a list of known workspaces of its own: a module fixture starts before each test's own
    # list is set (conftest), and other modules' servers and kernels may have written theirs
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "ARI_JUPYTER_WORKSPACES_FILE": str(tmp / "workspaces.json")}
    server = start_jupyter(tmp, env=env)
    yield server, workspace, runs, env
    server.stop()


def get(server, path, token=True):
    status, body = http_get(server.url(path, token=token))
    return status, body


def cli(env, *args) -> dict:
    full = {**os.environ, **env}
    done = subprocess.run([sys.executable, "-m", "ari_jupyter", *args], capture_output=True, text=True,
                          env=full, timeout=60)
    return json.loads(done.stdout)


def test_list_matches_the_cli(lab):
    server, workspace, runs, env = lab
    status, body = get(server, "/ari-jupyter/runs")
    assert status == 200, body[:300]
    answer = json.loads(body)
    assert answer == cli(env, "runs", "--json", "--workspace", str(workspace))
    assert [(r["run_id"], r["phase"]) for r in answer["runs"]] == [
        ("20261201100000_not_yet", "not-started"),
        ("20261201094500_stream_triad", "failed"),
        ("20261201093000_stream_triad", "interrupted")]
    assert answer["accounting"] == "no"


def test_run_ids_are_the_listed_runs_without_reading_them(lab):
    """The panel's watch for a new run: the ids of the list, newest first (the foreign folder
    left out as the list leaves it out), a run written meanwhile included at once."""
    server, workspace, runs, env = lab
    status, body = get(server, "/ari-jupyter/runs/ids")
    assert status == 200, body[:300]
    listed = [r["run_id"] for r in json.loads(get(server, "/ari-jupyter/runs")[1])["runs"]]
    assert json.loads(body) == {"run_ids": listed}
    new = workspace / "checkpoints" / "20261202090000_just_written"
    new.mkdir()
    try:
        assert json.loads(get(server, "/ari-jupyter/runs/ids")[1])["run_ids"] == listed  # empty yet
        (new / "experiment.md").write_text("# Just written\n")
        assert json.loads(get(server, "/ari-jupyter/runs/ids")[1])["run_ids"] == [new.name, *listed]
        assert get(server, "/ari-jupyter/runs/ids", token=False)[0] == 403
    finally:
        import shutil

        shutil.rmtree(new)


@pytest.mark.parametrize("case", ["failed", "interrupted-paper"])
def test_status_matches_the_cli(lab, case):
    server, _, runs, env = lab
    status, body = get(server, f"/ari-jupyter/runs/{runs[case].name}")
    assert status == 200, body[:300]
    answer = json.loads(body)
    # the panel's one addition: where the lab can put a notebook (this workspace is outside
    # the server's root: nowhere)
    assert answer.pop("lab_folder") is None
    assert answer == cli(env, "status", "--json", str(runs[case]))
    assert answer["wizard"] is True  # written by ari-jupyter emit: it can be reopened


def test_a_live_run_is_active(lab):
    server, _, runs, _ = lab
    with live_ari(runs["failed"]):
        (runs["failed"] / ".pipeline_started").touch()
        try:
            answer = json.loads(get(server, f"/ari-jupyter/runs/{runs['failed'].name}")[1])
        finally:
            (runs["failed"] / ".pipeline_started").unlink()
    assert (answer["phase"], answer["active"], answer["alive"]) == ("paper", True, True)


@pytest.mark.parametrize("path,code", [
    ("/ari-jupyter/runs/20261201110000_foreign", 404),   # a directory, but not a run's
    ("/ari-jupyter/runs/20990101000000_missing", 404),
    ("/ari-jupyter/runs/not-a-run-id", 404),              # no route matches
    ("/ari-jupyter/runs/20261201094500_..%2F..%2Fetc", 404),
])
def test_bad_run_ids(lab, path, code):
    server, *_ = lab
    status, body = get(server, path)
    assert status == code
    assert b"Traceback" not in body


@pytest.mark.parametrize("path", ["/ari-jupyter/runs", "/ari-jupyter/runs/20261201094500_stream_triad"])
def test_refused_without_token(lab, path):
    server, *_ = lab
    status, body = get(server, path, token=False)
    assert status in (401, 403)
    assert b"stream_triad" not in body


def _post(server, path, body: bytes, token=True):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"token {server.token}"
    request = urllib.request.Request(server.url(path, token=False), data=body, headers=headers,
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_cancel_endpoint(lab):
    server, _, runs, _ = lab
    path = f"/ari-jupyter/runs/{runs['failed'].name}/cancel"
    status, body = _post(server, path, b"{}", token=False)
    assert status in (401, 403)
    status, body = _post(server, path, b'{"job_ids": "12"}')
    assert status == 400
    status, body = _post(server, path, b'{"job_ids": ["12"]}')
    assert status == 200, body[:300]
    answer = json.loads(body)
    assert answer["outcomes"] == [{"job_id": "12", "result": "gone",
                                   "message": "job 12 is no longer in the queue",
                                   "message_id": "runs.cancel.gone", "params": {"job": "12"}}]
    assert answer["status"]["phase"] == "failed"
    # The panel's pop-up: the outcome in JupyterLab's language, its id and English kept.
    status, body = _post(server, path + "?lang=ja", b'{"job_ids": ["12"]}')
    assert status == 200, body[:300]
    outcome = json.loads(body)["outcomes"][0]
    assert outcome["message"] == "ジョブ 12 はもうキューにありません"
    assert outcome["message_id"] == "runs.cancel.gone" and outcome["result"] == "gone"


def test_status_gives_message_ids_for_findings_and_the_process(lab):
    """The Runs panel renders these in the UI language; the English text stays beside them."""
    server, workspace, runs, env = lab
    status, body = get(server, f"/ari-jupyter/runs/{runs['interrupted-paper'].name}")
    assert status == 200, body[:300]
    answer = json.loads(body)
    by_rule = {f["rule"]: f for f in answer["findings"]}
    assert by_rule["run-interrupted"]["message_id"] == "runs.finding.interrupted"
    assert by_rule["run-interrupted"]["fix_id"] == "runs.finding.interrupted.fix_scope"  # no resume.yaml yet
    assert by_rule["run-interrupted"]["message"].startswith("The run stopped without ARI's end")
    assert by_rule["llm-unreachable"]["message_id"] == "runs.finding.doctor"
    assert answer["process_message"] == {"message_id": "runs.process.no_pid", "params": {}}


@pytest.mark.parametrize("lang", ["ja", "zh"])
@pytest.mark.parametrize("case", ["failed", "interrupted-paper"])
def test_status_in_the_panel_language_has_no_english_sentence(lab, case, lang):
    """?lang= renders findings, fixes and the process sentence from the catalog; ids stay."""
    import re

    from widget_text import english_sentences

    server, _, runs, _ = lab
    english = json.loads(get(server, f"/ari-jupyter/runs/{runs[case].name}")[1])
    status, body = get(server, f"/ari-jupyter/runs/{runs[case].name}?lang={lang}")
    assert status == 200, body[:300]
    answer = json.loads(body)
    assert answer["findings"] and len(answer["findings"]) == len(english["findings"])
    sentences = [answer["process"]] + [f["message"] for f in answer["findings"]] + [
        f["fix"] for f in answer["findings"] if f["fix"]] + answer["notes"] + answer["cost"]["text"]
    for sentence in sentences:
        assert re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", sentence), sentence
    assert english_sentences(sentences) == [], sentences
    assert [(f["rule"], f["message_id"], f["params"]) for f in answer["findings"]] == [
        (f["rule"], f["message_id"], f["params"]) for f in english["findings"]]
    assert answer["process_message"] == english["process_message"]
    said = ("findings", "process", "notes", "cost")
    assert {k: v for k, v in answer.items() if k not in said} == {
        k: v for k, v in english.items() if k not in said}
    assert {k: v for k, v in answer["cost"].items() if k != "text"} == {
        k: v for k, v in english["cost"].items() if k != "text"}


@pytest.mark.parametrize("lang", ["fr", "ja_JP", "en;rm -rf"])
def test_status_refuses_a_language_it_does_not_speak(lab, lang):
    server, _, runs, _ = lab
    status, body = get(server, f"/ari-jupyter/runs/{runs['failed'].name}?lang={urllib.parse.quote(lang)}")
    assert status == 400, body[:300]


def test_a_run_written_to_another_workspace_is_listed_by_the_panel_and_the_cli_alike(tmp_path):
    """Step 4's Workspace changed to a shared folder (the default one is node-local): the run
    `emit` writes there is in the panel's list and in `ari-jupyter runs`, with no more to do;
    `runs --workspace` still lists one workspace only."""
    default, shared = tmp_path / "default", tmp_path / "shared"
    old = copy_case("failed", default)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "ari_jupyter_config.json").write_text(
        json.dumps({"AriWizard": {"workspace_template": str(default)}}))
    env = {"PATH": f"{_fake_bin(tmp_path)}{os.pathsep}{os.environ.get('PATH', '')}",
           "ARI_JUPYTER_WORKSPACES_FILE": str(tmp_path / "data" / "ari_jupyter" / "workspaces.json"),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config")}
    written = cli(env, "emit", "--site", "rccs-cloud", "--workspace", str(shared), "--force",
                  "--title", "Stencil", "--goal", "g", "--metric", "GFlops", "--json")
    new = Path(written["checkpoint_dir"])
    server = start_jupyter(tmp_path, env=env)
    try:
        status, body = get(server, "/ari-jupyter/runs")
        assert status == 200, body[:300]
        answer = json.loads(body)
        assert answer["workspaces"] == [str(default), str(shared)]
        assert [(r["run_id"], r["workspace"]) for r in answer["runs"]] == [
            (new.name, str(shared)), (old.name, str(default))]
        assert answer == cli(env, "runs", "--json")  # the CLI and the panel agree
        status, body = get(server, f"/ari-jupyter/runs/{new.name}")  # found in its workspace
        assert status == 200 and json.loads(body)["checkpoint_dir"] == str(new)
    finally:
        server.stop()
    only = cli(env, "runs", "--json", "--workspace", str(default))
    assert only["workspaces"] == [str(default)] and [r["run_id"] for r in only["runs"]] == [old.name]


def test_forget_takes_a_recorded_workspace_off_the_list_and_keeps_its_runs(lab, tmp_path):
    """The panel's "Forget" on a workspace group: the list no longer holds it, its checkpoints
    stay; the default workspace and a folder never recorded cannot be forgotten."""
    from ari_jupyter.checkpoint.known_workspaces import record_workspace, recorded_workspaces

    server, workspace, _, env = lab
    elsewhere = tmp_path / "elsewhere"
    run = copy_case("not-started", elsewhere)
    record_workspace(elsewhere, env)
    status, body = get(server, "/ari-jupyter/runs")
    assert str(elsewhere) in json.loads(body)["workspaces"]
    path = "/ari-jupyter/runs/forget"
    assert _post(server, path, json.dumps({"workspace": str(elsewhere)}).encode(), token=False)[0] in (401, 403)
    assert _post(server, path, json.dumps({"workspace": str(workspace)}).encode())[0] == 400
    assert _post(server, path, json.dumps({"workspace": "/never/recorded"}).encode())[0] == 404
    status, body = _post(server, path, json.dumps({"workspace": str(elsewhere)}).encode())
    assert status == 200, body[:300]
    assert json.loads(body)["forgotten"] is True
    assert str(elsewhere) not in recorded_workspaces(env) and run.is_dir()
    status, body = get(server, "/ari-jupyter/runs")
    assert str(elsewhere) not in json.loads(body)["workspaces"]


@pytest.mark.parametrize("lang, words", [("en", "could not be read"), ("ja", "読め"), ("zh", "无法读取")])
def test_what_could_not_be_read_is_said_once_in_the_panels_language(lang, words):
    """The list route's answer carries ``skipped_text`` in the panel's language when entries of
    the workspace could not be read (the real-user case: tests/hardening/test_unreadable_runs)."""
    from ari_jupyter.i18n import t
    from ari_jupyter.runs.localize import runs_in_language

    skipped = ["/w/checkpoints/20261201093000_bob"]
    answer = {"runs": [], "skipped": skipped,
              "skipped_message": {"message_id": "runs.skipped",
                                  "params": {"count": 1, "paths": skipped[0]}}}
    said = runs_in_language(answer, lang)["skipped_text"]
    assert said == t("runs.skipped", lang, count=1, paths=skipped[0]) and skipped[0] in said
    assert words in said, said
    assert "skipped_text" not in runs_in_language({"runs": []}, lang)  # nothing left out: no line
