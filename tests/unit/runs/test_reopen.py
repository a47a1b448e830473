"""Reopen a run in the wizard, or clone it as a new run (a new run id at Write)."""
from __future__ import annotations

import json

from ari_jupyter.checkpoint.load import load_checkpoint
from ari_jupyter.runs.reopen import clone_state, wizard_written

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
