"""``requeue`` never marks a node failed while the run may still run where this machine cannot
see it, unless the user confirms with the evidence shown (``--force``).

The checkpoint is a real one cut while its root node ran (fixtures/runs/real/exploring), its
files an hour old; the queue is empty at that moment (a scripted squeue). Each case adds one
sign that ``ari run`` still runs elsewhere: its ``.ari_pid`` names a pid that is not running on
this machine (ARI on the allocation's node; ARI removes the file when it exits), or a file of
the run, or of its node work dirs, was written a second ago. Before, requeue marked the running
node failed in each.
"""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import pytest

from ari_jupyter.i18n import t
from ari_jupyter.runs.requeue import BACKUP, requeue

from runs_support import copy_case
from unit.runs.test_jobs import FakeHost
from .figures import record


def _a_pid_not_running_here() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid  # ended and reaped: no process of that pid here now


def _age(ckpt, seconds: float) -> None:
    old = time.time() - seconds
    for folder in (ckpt, ckpt.parent.parent / "experiments"):
        for path in [folder, *folder.rglob("*")] if folder.exists() else []:
            os.utime(path, (old, old), follow_symlinks=False)


def _pid_of_another_host(ckpt):
    (ckpt / ".ari_pid").write_text(str(_a_pid_not_running_here()))
    _age(ckpt, 3600)  # written when the run started, an hour ago


def _log_written_a_second_ago(ckpt):
    (ckpt / ".ari_pid").unlink()
    with open(ckpt / "ari.log", "a") as handle:
        handle.write('{"msg": "node root: step 7"}\n')


def _node_output_written_a_second_ago(ckpt):
    (ckpt / ".ari_pid").unlink()
    node = ckpt.parent.parent / "experiments" / ckpt.name / "node_root"
    node.mkdir(parents=True, exist_ok=True)
    (node / "stdout.txt").write_text("epoch 3\n")


SIGNS = {
    "pid of another host": (_pid_of_another_host, "runs.requeue.evidence.pid"),
    "log written a second ago": (_log_written_a_second_ago, "runs.requeue.evidence.recent"),
    "node output written a second ago": (_node_output_written_a_second_ago,
                                         "runs.requeue.evidence.recent"),
}


@pytest.fixture
def cut(tmp_path):
    ckpt = copy_case("exploring", tmp_path / "ws")
    (ckpt.parent.parent / "experiments" / ckpt.name).mkdir(parents=True)
    _age(ckpt, 3600)
    return ckpt


def _tree_status(ckpt) -> str:
    return json.loads((ckpt / "tree.json").read_text())["nodes"][0]["status"]


@pytest.mark.parametrize("sign", SIGNS)
def test_requeue_refuses_while_the_run_may_run_elsewhere_and_says_why(cut, sign):
    plant, evidence_id = SIGNS[sign]
    plant(cut)
    outcome = asyncio.run(requeue(cut, FakeHost()))
    kept = _tree_status(cut) == "running" and not (cut / BACKUP).exists()
    record("Attacks", "requeue while the run may run where this machine cannot see (another "
           "host's pid, files written a second ago): refused with the evidence", cases=1,
           survived=int(kept), lost=int(not kept), unit="runs")
    assert (outcome.result, outcome.message_id) == ("refused", "runs.requeue.maybe_running"), outcome
    assert [e["message_id"] for e in outcome.params["evidence"]] == [evidence_id]
    assert outcome.params["command"].endswith(" --force")
    assert kept
    for lang in ("en", "ja", "zh"):  # the evidence is said in the reader's language
        said = t(outcome.message_id, lang, **outcome.params)
        assert "{" not in said and "--force" in said and str(cut) in said


@pytest.mark.parametrize("sign", SIGNS)
def test_the_user_who_saw_the_evidence_may_requeue_with_force(cut, sign):
    SIGNS[sign][0](cut)
    outcome = asyncio.run(requeue(cut, FakeHost(), force=True))
    assert outcome.result == "requeued" and _tree_status(cut) == "failed", outcome


def test_an_old_cut_without_a_pid_file_needs_no_confirmation(cut):
    (cut / ".ari_pid").unlink()
    _age(cut, 3600)
    assert asyncio.run(requeue(cut, FakeHost())).result == "requeued"


@pytest.mark.parametrize("force", [False, True])
def test_cli_shows_the_evidence_and_takes_force(cut, force):
    _pid_of_another_host(cut)
    bin_dir = cut.parent.parent / "bin"
    bin_dir.mkdir()
    (bin_dir / "squeue").write_text("#!/bin/sh\nexit 0\n")  # an empty queue
    (bin_dir / "squeue").chmod(0o755)
    (bin_dir / "sacct").write_text("#!/bin/sh\nexit 1\n")
    (bin_dir / "sacct").chmod(0o755)
    done = subprocess.run([sys.executable, "-m", "ari_jupyter", "requeue", str(cut),
                           *(["--force"] if force else [])], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"})
    if force:
        assert done.returncode == 0 and _tree_status(cut) == "failed", done.stdout + done.stderr
    else:
        assert done.returncode == 1 and _tree_status(cut) == "running", done.stdout + done.stderr
        assert "is not ARI running on this machine" in done.stderr
        assert "--force" in done.stderr
