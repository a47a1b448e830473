"""``ari-jupyter requeue``: which nodes ``ari resume`` runs again (ARI 0.9.1's rule, table-driven),
and a cut run's ``running`` nodes marked failed, or a refusal that changes nothing.

The checkpoint is a real one cut while its root node ran (fixtures/runs/real/exploring); the
queue is a scripted squeue (the live cut-and-resume is tests/ari_real/test_ari_real_resume.py).
"""
from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from datetime import datetime, timezone

import pytest

from ari_jupyter.ari.resume_rule import (INTERRUPTED_ERROR, RESUME_CONFIG, bfts_scope, left_running,
                                         mark_left_running_failed, requeue_command, requeued,
                                         resume_command, resume_config, resumes, stranded)
from ari_jupyter.runs.jobs import current_user
from ari_jupyter.runs.requeue import BACKUP, requeue
from ari_jupyter.runs.status import read_status, run_status

from runs_support import copy_case, live_ari
from unit.runs.test_jobs import FakeHost, row

NOW = datetime(2026, 12, 5, 22, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("status,again,marked", [
    ("pending", True, False),     # run.py:512: never started
    ("failed", True, False),      # run.py:513: re-queued, its error_log cleared (run.py:517)
    ("running", False, True),     # what a cut leaves: resume keeps it, "No pending nodes."
    ("success", False, False),    # evaluated: kept with its metrics
    ("abandoned", False, False),
    ("", False, False),
    (None, False, False),
])
def test_which_node_states_ari_resume_runs_again(status, again, marked):
    assert resumes(status) is again
    assert stranded(status) is marked


def test_nodes_left_running_are_marked_failed_as_ari_marks_them():
    tree = {"run_id": "r", "nodes": [
        {"id": "root", "status": "success", "metrics": {"m": 1.0}, "completed_at": "t0"},
        {"id": "cut", "status": "running", "metrics": {}, "completed_at": "", "error_log": None},
        {"id": "waiting", "status": "pending"}]}
    assert left_running(tree) == ["cut"]
    assert requeued(tree) == ["waiting"]
    marked = mark_left_running_failed(tree, NOW)
    assert marked["nodes"][0] == tree["nodes"][0] and marked["nodes"][2] == tree["nodes"][2]
    assert marked["nodes"][1] == {"id": "cut", "status": "failed", "metrics": {},
                                  "completed_at": NOW.isoformat(), "error_log": INTERRUPTED_ERROR}
    assert requeued(marked) == ["cut", "waiting"] and left_running(marked) == []
    assert tree["nodes"][1]["status"] == "running"  # the tree read is not changed in place


def test_the_commands_are_shell_quoted_and_set_the_checkpoint_for_ari():
    odd = "/w s/checkpoints/2026_$x'y"
    assert shlex.split(resume_command(odd)) == [f"ARI_CHECKPOINT_DIR={odd}", "ari", "resume", odd]
    assert shlex.split(resume_command(odd, f"{odd}/resume.yaml")) == [
        f"ARI_CHECKPOINT_DIR={odd}", "ari", "resume", odd, "--config", f"{odd}/resume.yaml"]
    assert shlex.split(requeue_command(odd)) == ["ari-jupyter", "requeue", odd]


@pytest.mark.parametrize("dotenv,scope", [
    ({"ARI_MAX_NODES": "3", "ARI_MAX_DEPTH": "2", "ARI_MAX_REACT": "12", "ARI_TIMEOUT_NODE": "600",
      "ARI_PARALLEL": "1", "ARI_FRONTIER_SCORE": "ucb_like", "ARI_BFTS_ALLOW_WEB": "0"},
     {"max_total_nodes": 3, "max_depth": 2, "max_react_steps": 12, "timeout_per_node": 600,
      "max_parallel_nodes": 1, "frontier_score": "ucb_like", "allow_web": False}),
    ({}, {}),                                                  # nothing set: ARI's own defaults
    ({"ARI_MAX_NODES": "three", "ARI_PARALLEL": "-1"}, {}),   # ari run ignores these too
    ({"ARI_FRONTIER_SCORE": "best", "ARI_BFTS_ALLOW_WEB": "yes"}, {"allow_web": True}),
])
def test_the_runs_scope_as_ari_run_reads_it_from_the_env(dotenv, scope):
    assert bfts_scope(dotenv) == scope


def test_the_resume_config_is_the_workflow_with_the_scope_as_its_bfts_section(cut):
    yaml = pytest.importorskip("yaml")  # ARI's loader
    workflow = (cut / "workflow.yaml").read_text()
    scope = {"max_total_nodes": 3, "max_parallel_nodes": 1, "allow_web": False}
    read = yaml.safe_load(resume_config(workflow, scope))
    assert read.pop("bfts") == scope
    assert read == yaml.safe_load(workflow)


@pytest.fixture
def cut(tmp_path):
    """A real checkpoint whose root node was running when ``ari run`` ended."""
    return copy_case("exploring", tmp_path)


def _interrupted(ckpt):
    status = read_status(ckpt)
    assert status.phase == "interrupted", status.phase
    [finding] = [f for f in status.findings if f.rule == "run-interrupted"]
    return finding


def test_requeue_marks_the_cut_node_and_status_then_gives_plain_resume(cut):
    finding = _interrupted(cut)
    assert finding.fix_id == "runs.finding.interrupted.fix_requeue"
    assert finding.params["requeue"] == requeue_command(str(cut))
    assert finding.params["resume"] == resume_command(str(cut), str(cut / RESUME_CONFIG))
    assert f"`{requeue_command(str(cut))}`" in finding.fix
    before = (cut / "tree.json").read_bytes()

    (cut / ".env").write_text((cut / ".env").read_text() + "ARI_MAX_NODES=3\nARI_PARALLEL=1\n")
    # the cut left .ari_pid behind (ARI killed hard) and .env was just written: the user has
    # seen that evidence and confirms (--force); test_requeue_evidence.py has the refusal
    outcome = asyncio.run(requeue(cut, FakeHost(), now=NOW, force=True))
    assert (outcome.result, outcome.nodes) == ("requeued", ("node_20261201094500_stream_triad_root",))
    resume = resume_command(str(cut), str(cut / RESUME_CONFIG))
    assert outcome.command == resume
    assert (cut / RESUME_CONFIG).read_text() == resume_config(
        (cut / "workflow.yaml").read_text(), {"max_total_nodes": 3, "max_parallel_nodes": 1})
    assert (cut / BACKUP).read_bytes() == before
    [node] = json.loads((cut / "tree.json").read_text())["nodes"]
    assert (node["status"], node["error_log"], node["completed_at"]) == ("failed", INTERRUPTED_ERROR,
                                                                        NOW.isoformat())
    assert {k: v for k, v in node.items() if k not in ("status", "error_log", "completed_at")} == \
        {k: v for k, v in json.loads(before)["nodes"][0].items() if k not in ("status", "error_log", "completed_at")}
    after = _interrupted(cut)
    assert after.fix_id == "runs.finding.interrupted.fix"
    assert after.params["resume"] == resume

    (cut / RESUME_CONFIG).unlink()  # no node left running, but no scope for the resume either
    unscoped = _interrupted(cut)
    assert (unscoped.fix_id, unscoped.params["requeue"]) == ("runs.finding.interrupted.fix_scope",
                                                              requeue_command(str(cut)))
    again = asyncio.run(requeue(cut, FakeHost(), now=NOW, force=True))
    assert (again.result, again.command) == ("nothing", resume)
    assert (cut / BACKUP).read_bytes() == before
    assert (cut / RESUME_CONFIG).is_file() and _interrupted(cut).fix_id == "runs.finding.interrupted.fix"


def test_requeue_parses_the_tree_once(cut, monkeypatch):
    """The status requeue asks reads no tree (whether the run is alive does not depend on it);
    the rewrite finds the nodes left running as it goes; the backup is the file's bytes. A 60 MB
    tree.json read three times took 3.4 s."""
    from ari_jupyter.runs import status, tree_stream

    parsed, copied = [], []
    reader_init, chunks = tree_stream._Reader.__init__, tree_stream.chunks
    monkeypatch.setattr(tree_stream._Reader, "__init__",
                        lambda self, path, cap: (parsed.append(path.name), reader_init(self, path, cap))[1])
    monkeypatch.setattr(tree_stream, "chunks", lambda path, cap: (copied.append(path.name), chunks(path, cap))[1])
    monkeypatch.setattr(status, "read_tree", lambda *a, **k: pytest.fail("the status read the tree"))
    outcome = asyncio.run(requeue(cut, FakeHost(), now=NOW, force=True))
    assert outcome.result == "requeued"
    assert (parsed, copied) == (["tree.json"], ["tree.json"])


def _unchanged(ckpt, outcome, message_id):
    assert (outcome.result, outcome.message_id) == ("refused", message_id), outcome
    assert json.loads((ckpt / "tree.json").read_text())["nodes"][0]["status"] == "running"
    assert not (ckpt / BACKUP).exists() and not (ckpt / RESUME_CONFIG).exists()


def test_requeue_refuses_while_ari_is_alive(cut):
    with live_ari(cut):
        _unchanged(cut, asyncio.run(requeue(cut, FakeHost())), "runs.requeue.alive")


def test_requeue_refuses_while_a_job_of_the_run_is_queued(cut):
    job = row("12", "stream_n1", "PENDING", cut.parent.parent / "experiments" / cut.name / "node_1",
              user=current_user(), where="(Priority)")
    outcome = asyncio.run(requeue(cut, FakeHost(queue=[job])))
    _unchanged(cut, outcome, "runs.requeue.alive")
    assert outcome.params["jobs"] == "12"


def test_requeue_refuses_when_the_queue_cannot_be_asked(cut):
    class NoSqueue(FakeHost):
        async def run(self, argv, timeout, env=None):
            from ari_jupyter.base.commands import CommandResult
            return CommandResult(tuple(argv), 1, "", "slurm_load_jobs error: Unable to contact slurm controller")
    _unchanged(cut, asyncio.run(requeue(cut, NoSqueue())), "runs.requeue.queue_unknown")


@pytest.mark.parametrize("change", ["chown", "group-writable", "tree-link"])
def test_requeue_never_touches_a_run_that_is_not_the_users_alone(cut, change):
    if change == "chown":
        os.chown(cut / "tree.json", 65534, 65534)
    elif change == "group-writable":
        os.chmod(cut, 0o770)
    else:
        (cut / "tree.json").rename(cut / "real-tree.json")
        (cut / "tree.json").symlink_to(cut / "real-tree.json")
    outcome = asyncio.run(requeue(cut, FakeHost()))
    assert (outcome.result, outcome.message_id) == ("refused", "runs.requeue.not_ours"), outcome
    assert not (cut / BACKUP).exists()


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_cli_says_why_it_changed_nothing_in_the_users_language(cut, lang):
    done = subprocess.run([sys.executable, "-m", "ari_jupyter", "requeue", "--lang", lang, str(cut)],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PATH": "/usr/bin:/bin"})  # no squeue here
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.startswith("ari-jupyter requeue: ")
    said = {"en": "nothing was changed", "ja": "何も変更していません", "zh": "未做任何更改"}[lang]
    assert said in done.stderr, done.stderr
    assert not (cut / BACKUP).exists()


@pytest.mark.parametrize("state, where", [("PENDING", "(Dependency)"), ("RUNNING", "n[1-2]")])
def test_the_chains_followups_are_not_the_run(cut, state, where):
    """The follow-up running this requeue, and the next one waiting for it, keep no run alive:
    requeue marks the cut node, and status says interrupted, not exploring."""
    job = row("13", "ari-followup", state, cut, user=current_user(), where=where)
    status = asyncio.run(run_status(cut, FakeHost(queue=[job])))
    assert (status.phase, [j.kind for j in status.jobs.jobs]) == ("interrupted", ["followup"])
    outcome = asyncio.run(requeue(cut, FakeHost(queue=[job]), now=NOW, force=True))
    assert outcome.result == "requeued", outcome
