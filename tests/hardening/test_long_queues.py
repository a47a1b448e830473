"""A long queue, and job names that are free text, never make a live run look ended.

A real ``LocalHost`` runs a scripted ``squeue`` (so this machine's real 1 MiB output cap cuts
the answer) in front of a real checkpoint cut while its root node ran. The user has 8,000
other rows in the queue (an array's tasks, ``-t all``); the run's RUNNING job comes last. A
cut answer must be said as such (scheduler ``partial``), and ``requeue`` and ``cancel`` must
refuse to act on it: before, the parser dropped the ``[truncated]`` line, said ``ok``,
``cancel --all`` found nothing and ``requeue`` marked the running node failed.

A job name holding the field separator (``\\x1f``) or a line break (``\\n``, ``\\r`` and the
other characters ``str.splitlines`` breaks at) used to drop its row the same way.
"""
from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest

from ari_jupyter.hosts.host import DEFAULT_OUTPUT_CAP, LocalHost
from ari_jupyter.runs.jobs import SEP, SQUEUE_FIELDS, cancel_jobs, current_user, run_jobs
from ari_jupyter.runs.requeue import BACKUP, requeue
from ari_jupyter.runs.status import run_status

from runs_support import copy_case
from .figures import record

RUN_JOB = "9001"

FAKE_SQUEUE = """#!{python}
import os, sys
rows = open(os.environ["FAKE_QUEUE"], encoding="utf-8", newline="").read().split("\\x1e\\x1d")
argv = sys.argv[1:]
if "-j" in argv:
    wanted = argv[argv.index("-j") + 1].split(",")
    rows = [r for r in rows if r.split("\\x1f", 1)[0] in wanted]
if argv[argv.index("-o") + 1] == "%i\\x1f%Z":  # ids and work dirs only
    rows = [r.split("\\x1f")[0] + "\\x1f" + r.split("\\x1f")[7] for r in rows if r]
sys.stdout.write("".join(r + "\\n" for r in rows if r))
"""
FAKE_SCANCEL = """#!/bin/sh
echo "$@" >> "$FAKE_SCANCELLED"
"""


def _row(job_id: str, name: str, state: str, work_dir: str, user: str) -> str:
    fields = [job_id, name, state, "1:02:03", "1", "node7", user, work_dir, "small", "8",
              "gres/gpu:1", "2:00:00"]
    assert len(fields) == len(SQUEUE_FIELDS)
    return SEP.join(fields)


@pytest.fixture
def cut(tmp_path):
    """A real checkpoint cut while its root node ran, its files an hour old, no .ari_pid."""
    ckpt = copy_case("exploring", tmp_path / "ws")
    (ckpt / ".ari_pid").unlink()
    old = time.time() - 3600
    for path in ckpt.iterdir():
        os.utime(path, (old, old))
    return ckpt


def _host(tmp_path: Path, rows: list[str]) -> LocalHost:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, text in (("squeue", FAKE_SQUEUE.format(python=sys.executable)),
                       ("scancel", FAKE_SCANCEL)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    queue = tmp_path / "queue.txt"
    queue.write_text("\x1e\x1d".join(rows), encoding="utf-8", newline="")
    return LocalHost(env={"PATH": f"{bin_dir}:/usr/bin:/bin", "FAKE_QUEUE": str(queue),
                          "FAKE_SCANCELLED": str(tmp_path / "scancelled")})


def _run_job_row(ckpt: Path, name: str = "stream_n1") -> str:
    node = ckpt.parent.parent / "experiments" / ckpt.name / "node_1"
    return _row(RUN_JOB, name, "RUNNING", str(node), current_user())


def _tree_status(ckpt: Path) -> str:
    return json.loads((ckpt / "tree.json").read_text())["nodes"][0]["status"]


def _others(count: int) -> list[str]:
    return [_row(f"5000_{i}", "lr_sweep", "RUNNING",
                 f"/home/u/projects/hyperparameter_sweeps/2026-12/config_{i:05d}/work",
                 current_user()) for i in range(count)]


def test_a_queue_longer_than_the_output_cap_is_asked_again_for_the_runs_jobs_only(cut, tmp_path):
    """8,000 other rows: the user-wide answer is cut, so only the run's jobs are asked for (by
    their ids, found from ids and work dirs alone): the RUNNING job is seen, requeue refuses,
    cancel --all cancels it and nothing else."""
    rows = _others(8000) + [_run_job_row(cut)]
    assert len("\n".join(rows).encode()) > DEFAULT_OUTPUT_CAP  # the whole answer would be cut
    host = _host(tmp_path, rows)

    view = asyncio.run(run_jobs(cut, host))
    outcome = asyncio.run(requeue(cut, host))
    kept = _tree_status(cut) == "running" and not (cut / BACKUP).exists()
    cancelled = asyncio.run(cancel_jobs(cut, host, settle=0))
    record("Attacks", "a queue longer than the output cap (the run's job last): the run's "
           "jobs found, or the answer said partial and requeue and cancel refuse", cases=1,
           survived=int(kept), lost=int(not kept), unit="queues")
    assert (view.scheduler, [(j.job_id, j.state) for j in view.jobs]) == ("ok", [(RUN_JOB, "RUNNING")])
    assert (outcome.result, outcome.message_id) == ("refused", "runs.requeue.alive"), outcome
    assert kept
    assert [(c.job_id, c.result) for c in cancelled] == [(RUN_JOB, "cancelled")]
    assert (tmp_path / "scancelled").read_text().split() == ["--user", current_user(), RUN_JOB]


def test_a_queue_too_long_even_for_the_narrow_question_is_said_and_refused(cut, tmp_path):
    """100,000 other rows: even ids and work dirs are cut. Said as partial (status names it),
    requeue and cancel refuse, nothing is cancelled or marked."""
    rows = _others(100_000) + [_run_job_row(cut)]
    host = _host(tmp_path, rows)

    started = time.monotonic()
    view = asyncio.run(run_jobs(cut, host))
    asked = time.monotonic() - started
    status = asyncio.run(run_status(cut, host))
    cancelled = asyncio.run(cancel_jobs(cut, host, settle=0))
    outcome = asyncio.run(requeue(cut, host))
    kept = (_tree_status(cut) == "running" and not (cut / BACKUP).exists()
            and not (tmp_path / "scancelled").exists())
    record("Attacks", "a queue longer than the output cap (the run's job last): the run's "
           "jobs found, or the answer said partial and requeue and cancel refuse", cases=1,
           survived=int(kept), lost=int(not kept), unit="queues")
    assert (view.scheduler, view.problem.message_id) == ("partial", "runs.squeue.cut"), view
    assert "jobs of this run may be missing" in str(view.problem)
    assert "run-jobs-unknown" in [f.rule for f in status.findings]
    assert [(c.result, c.message.message_id) for c in cancelled] == [("error", "runs.squeue.cut")]
    assert (outcome.result, outcome.message_id) == ("refused", "runs.requeue.queue_unknown"), outcome
    assert kept
    assert asked < 10, asked  # two squeue calls of a 100,000-row queue, the rest drained


NAMES = {
    "separator": "stream\x1fn1",
    "newline": "stream\nn1",
    "carriage return": "stream\rn1",
    "record separator": "stream\x1en1",
    "line separator": "stream\u2028n1",
    "next line": "stream\x85n1",
    "trailing newline": "stream_n1\n",
}


@pytest.mark.parametrize("kind", NAMES)
def test_a_job_name_holding_a_separator_or_line_break_keeps_its_row(cut, tmp_path, kind):
    rows = [_row("77", "other", "RUNNING", "/home/u/x", current_user()),
            _run_job_row(cut, NAMES[kind]),
            _row("78", "other", "PENDING", "/home/u/y", current_user())]
    host = _host(tmp_path, rows)
    view = asyncio.run(run_jobs(cut, host))
    outcome = asyncio.run(requeue(cut, host))
    kept = _tree_status(cut) == "running" and not (cut / BACKUP).exists()
    record("Attacks", "job names holding the field separator or a line break (the run's running "
           "job): its row kept, requeue refuses", cases=1, survived=int(kept), lost=int(not kept),
           unit="names")
    assert view.scheduler == "ok", view
    assert [(j.job_id, j.state, j.kind) for j in view.jobs] == [(RUN_JOB, "RUNNING", "bfts")]
    assert view.jobs[0].name == NAMES[kind].strip()
    assert (outcome.result, outcome.message_id) == ("refused", "runs.requeue.alive"), outcome
    assert kept


@pytest.mark.parametrize("text, jobs, unreadable", [
    ("", 0, 0),
    ("\n", 0, 0),
    ("garbage\n", 0, 1),  # not a row at all: counted, never taken for an empty queue
    (SEP.join(["1"] * 7) + "\n", 0, 1),  # a row cut short
    (SEP.join(["12", "n", "running?", *["x"] * 9]) + "\n", 0, 1),  # no state where it belongs
    (SEP.join(["12_[1-5]", "n", "PENDING", *["x"] * 9]) + "\n", 0, 0),  # a collapsed array: as before
])
def test_rows_that_cannot_be_read_are_counted(text, jobs, unreadable):
    from ari_jupyter.runs.jobs import read_squeue

    found, bad = read_squeue(text)
    assert (len(found), bad) == (jobs, unreadable)
