"""Reopen a run in the wizard, or clone it as a new run (a new run id at Write)."""
from __future__ import annotations

import json

import pytest

from ari_jupyter.checkpoint.known_workspaces import FILE_ENV, recorded_workspaces
from ari_jupyter.checkpoint.load import load_checkpoint
from ari_jupyter.runs.reopen import clone_state, reopen_state, wizard_written

from runs_support import copy_case


def test_clone_keeps_the_choices_and_drops_the_run_id(tmp_path):
    ckpt = copy_case("failed", tmp_path)
    original = load_checkpoint(ckpt)
    clone = clone_state(ckpt)
    assert original.run_id == ckpt.name and clone.run_id == ""
    keep = {k: v for k, v in original.to_json().items() if k != "run_id"}
    assert {k: v for k, v in clone.to_json().items() if k != "run_id"} == keep
    assert wizard_written(ckpt)


def test_a_checkpoint_without_the_wizard_state_cannot_be_reopened(tmp_path):
    ckpt = copy_case("failed", tmp_path)
    data = json.loads((ckpt / "launch_config.json").read_text())
    data.pop("ari_jupyter")
    (ckpt / "launch_config.json").write_text(json.dumps(data))
    assert not wizard_written(ckpt)
    (ckpt / "launch_config.json").write_text('{"partition": ')
    assert not wizard_written(ckpt)


@pytest.mark.parametrize("open_run", [reopen_state, clone_state])
def test_reopening_a_run_lists_its_workspace(tmp_path, monkeypatch, open_run):
    """The wizard that opens may look at another site; the Runs panel follows it and must still
    find the run that was reopened, so its workspace becomes one of the user's."""
    monkeypatch.setenv(FILE_ENV, str(tmp_path / "workspaces.json"))
    ckpt = copy_case("failed", tmp_path / "project")
    open_run(ckpt)
    assert recorded_workspaces() == [str(tmp_path / "project")]


def test_a_checkpoint_outside_a_workspace_records_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(FILE_ENV, str(tmp_path / "workspaces.json"))
    ckpt = copy_case("failed", tmp_path / "project")
    loose = ckpt.rename(tmp_path / ckpt.name)
    assert reopen_state(loose).run_id == ckpt.name
    assert recorded_workspaces() == []
