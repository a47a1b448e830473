"""The per-user list of workspaces checkpoints were written to, which the Runs panel and
``ari-jupyter runs`` list beside the default one (a run written to step 4's Workspace)."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ari_jupyter.checkpoint.known_workspaces import (FILE_ENV, MAX_RECORDED, record_workspace,
                                               recorded_workspaces, recorded_workspaces_file)
from ari_jupyter.runs.service import listed_workspaces, runs_json

from runs_support import copy_case


@pytest.fixture
def env(tmp_path):
    return {FILE_ENV: str(tmp_path / "data" / "ari_jupyter" / "workspaces.json")}


@pytest.mark.parametrize("content, expected", [
    (None, []),                                              # never written
    (b"", []),
    (b"{not json", []),                                      # cut or corrupt
    (b"[\"/a\"]", []),                                       # not the list's shape
    (b'{"workspaces": "/a"}', []),
    (b'{"workspaces": ["/a", 3, null, "relative", "/b/../c", "/a/"]}', ["/a", "/c"]),
    (b"\xff\xfe garbage", []),
])
def test_a_missing_or_damaged_list_is_read_as_what_it_still_says(env, content, expected):
    path = Path(env[FILE_ENV])
    if content is not None:
        path.parent.mkdir(parents=True)
        path.write_bytes(content)
    assert recorded_workspaces(env) == expected


@pytest.mark.parametrize("written, expected", [
    (["/w/a"], ["/w/a"]),
    (["/w/a", "/w/b"], ["/w/b", "/w/a"]),                       # newest first
    (["/w/a", "/w/b", "/w/a/"], ["/w/a", "/w/b"]),              # once each, however spelled
    (["/w/a", "/w/x/../b", "/w/b"], ["/w/b", "/w/a"]),
])
def test_recording_puts_the_workspace_first_once(env, written, expected):
    for workspace in written:
        assert record_workspace(workspace, env) is True
    assert recorded_workspaces(env) == expected


def test_the_list_is_bounded_and_written_whole(env):
    for number in range(MAX_RECORDED + 5):
        record_workspace(f"/w/{number}", env)
    recorded = recorded_workspaces(env)
    assert len(recorded) == MAX_RECORDED and recorded[0] == f"/w/{MAX_RECORDED + 4}"
    path = Path(env[FILE_ENV])
    assert json.loads(path.read_text())["workspaces"] == recorded
    assert [p.name for p in path.parent.iterdir() if not p.name.startswith(".workspaces.json.lock")] \
        == ["workspaces.json"]  # no temp file left beside it
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_list_that_cannot_be_written_is_not_an_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    env = {FILE_ENV: str(blocker / "workspaces.json")}
    assert record_workspace("/w/a", env) is False and recorded_workspaces(env) == []


def test_the_list_lives_in_jupyters_data_dir_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jdata"))
    assert recorded_workspaces_file({}) == tmp_path / "jdata" / "ari_jupyter" / "workspaces.json"


def test_listed_workspaces_are_the_default_then_the_recorded_ones_that_exist(tmp_path, env):
    default, shared, gone = tmp_path / "default", tmp_path / "shared", tmp_path / "gone"
    default.mkdir()
    shared.mkdir()
    for workspace in (default, gone, shared):
        record_workspace(workspace, env)
    assert listed_workspaces(f"{default}/", env) == [str(default), str(shared)]


def test_runs_of_several_workspaces_are_one_list_each_row_with_its_workspace(tmp_path):
    default, shared = tmp_path / "default", tmp_path / "shared"
    older = copy_case("failed", default)
    newer = copy_case("not-started", shared)
    newer = newer.rename(newer.parent / "20261202080000_stream_triad")
    answer = asyncio.run(runs_json([str(default), str(shared)]))
    assert answer["workspace"] == str(default)
    assert answer["workspaces"] == [str(default), str(shared)]
    assert [(r["run_id"], r["workspace"]) for r in answer["runs"]] == [
        (newer.name, str(shared)), (older.name, str(default))]


def test_one_workspace_is_still_a_list_of_one(tmp_path):
    copy_case("failed", tmp_path)
    answer = asyncio.run(runs_json(tmp_path))
    assert answer["workspaces"] == [str(tmp_path)]
    assert {r["workspace"] for r in answer["runs"]} == {str(tmp_path)}


@pytest.mark.parametrize("present, workspaces, missing", [
    (("default", "shared"), ["default", "shared"], []),
    (("shared",), ["shared", "default"], ["default"]),      # the missing default is not shown first
    (("default",), ["default", "shared"], ["shared"]),
    ((), ["default", "shared"], ["default", "shared"]),
])
def test_a_workspace_that_does_not_exist_is_listed_last_and_named_missing(tmp_path, present,
                                                                         workspaces, missing):
    for name in present:
        (tmp_path / name).mkdir()
    answer = asyncio.run(runs_json([str(tmp_path / "default"), str(tmp_path / "shared")]))
    assert answer["workspace"] == str(tmp_path / "default")  # still the default one
    assert answer["workspaces"] == [str(tmp_path / w) for w in workspaces]
    assert answer["missing_workspaces"] == [str(tmp_path / w) for w in missing]


def test_forget_workspace_drops_only_that_one(tmp_path):
    from ari_jupyter.checkpoint.known_workspaces import forget_workspace, record_workspace, recorded_workspaces

    env = {"ARI_JUPYTER_WORKSPACES_FILE": str(tmp_path / "workspaces.json")}
    for name in ("a", "b", "c"):
        record_workspace(tmp_path / name, env)
    assert forget_workspace(tmp_path / "b", env) is True
    assert recorded_workspaces(env) == [str(tmp_path / "c"), str(tmp_path / "a")]
    assert forget_workspace(tmp_path / "b", env) is False  # not recorded (any more)
