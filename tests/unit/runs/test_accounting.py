"""A run's jobs from the queue and from accounting together (``runs.accounting``, ``jobs.merged``)."""
from __future__ import annotations

import asyncio

import pytest

from ari_jupyter.base.commands import CommandResult
from ari_jupyter.runs.accounting import accounted, log_dir_job_ids
from ari_jupyter.runs.jobs import Job, merged

from unit.slurm.test_accounting import RECORDED


def job(job_id, state, source="squeue", **more):
    return Job(job_id, "n", state, source=source, **more)


# name, queue's jobs, accounting's jobs, queue whole, expected [(id, state, exit code)]
MERGES = [
    ("left the queue: accounting's word", [], [job("5", "FAILED", "sacct", exit_code="3:0")], True,
     [("5", "FAILED", "3:0")]),
    ("in both: the queue's state, accounting's exit code", [job("5", "RUNNING")],
     [job("5", "PENDING", "sacct", exit_code="0:0")], True, [("5", "RUNNING", "0:0")]),
    ("accounting lags: never running once the queue forgot it", [],
     [job("6", "RUNNING", "sacct")], True, [("6", "UNKNOWN", "")]),
    ("queue not whole: accounting's word kept", [], [job("6", "RUNNING", "sacct")], False,
     [("6", "RUNNING", "")]),
    ("numeric order", [job("10", "RUNNING")], [job("9", "COMPLETED", "sacct")], True,
     [("9", "COMPLETED", ""), ("10", "RUNNING", "")]),
]


@pytest.mark.parametrize("name,queued,finished,whole,expected", MERGES, ids=[m[0] for m in MERGES])
def test_merged(name, queued, finished, whole, expected):
    assert [(j.job_id, j.state, j.exit_code) for j in merged(queued, finished, whole)] == expected


class Host:
    is_demo = False

    def __init__(self, answer):
        self.answer, self.calls = answer, []

    async def run(self, argv, timeout, env=None):
        self.calls.append(list(argv))
        return self.answer


# name, sacct's answer, accounting, rows
ANSWERS = [
    ("answers", CommandResult(("sacct",), 0, RECORDED, ""), "yes", 5),
    ("site keeps none", CommandResult(("sacct",), 1, "", "sacct: error: Slurm accounting storage is disabled"),
     "no", 0),
    ("no sacct", CommandResult(("sacct",), None, "", "", not_found=True), "no", 0),
    ("dbd down", CommandResult(("sacct",), 1, "", "sacct: error: Problem talking to the database"),
     "unknown", 0),
]


@pytest.mark.parametrize("name,answer,said,count", ANSWERS, ids=[a[0] for a in ANSWERS])
def test_accounted(name, answer, said, count):
    host = Host(answer)
    rows, accounting = asyncio.run(accounted(host, ["1", "2"], "alice"))
    assert (accounting, len(rows)) == (said, count)
    assert host.calls == [["sacct", "-X", "-P", "-n", "-j", "1,2", "-o", host.calls[0][-1]]]


def test_no_id_known_asks_the_users_jobs():
    host = Host(CommandResult(("sacct",), 0, "", ""))
    asyncio.run(accounted(host, [], "alice", since="2026-12-01"))
    [argv] = host.calls
    assert argv[argv.index("-u") + 1] == "alice" and argv[-2:] == ["-S", "2026-12-01"]


def test_log_dir_job_ids(tmp_path):
    for name in ("slurm_job_12.out", "slurm_job_3.out", "slurm_job_x.out", "other_4.out", "slurm_job_5.err"):
        (tmp_path / name).write_text("")
    assert sorted(log_dir_job_ids(str(tmp_path))) == ["12", "3"]
    assert log_dir_job_ids(str(tmp_path / "missing")) == [] and log_dir_job_ids("") == []


def test_a_pending_job_says_why_and_when(tmp_path):
    """The run's pending job gets squeue --start's reason and expected start (one line for all)."""
    from unit.runs.test_jobs import FakeHost, ME, _rows

    class Starting(FakeHost):
        async def run(self, argv, timeout, env=None):
            if argv[:2] == ["squeue", "--start"]:
                self.calls.append(tuple(argv))
                return CommandResult(tuple(argv), 0, "12|Resources|2026-12-07T03:04:05\n", "")
            return await super().run(argv, timeout, env)

    path = tmp_path / "ws" / "checkpoints" / "20261201094500_stream_triad"
    (path / "repro_sandbox").mkdir(parents=True)
    (path / ".env").write_text("ARI_SLURM_PARTITION=small\n")
    host = Starting(queue=[_rows(path)["reproduce"], _rows(path)["bfts-node"]])
    from ari_jupyter.runs.jobs import run_jobs
    from ari_jupyter.i18n import say
    view = asyncio.run(run_jobs(path, host, user=ME))
    jobs = {j.job_id: j for j in view.jobs}
    assert (jobs["12"].reason, jobs["12"].expected_start) == ("Resources", "2026-12-07T03:04:05")
    assert (jobs["11"].reason, jobs["11"].expected_start) == ("", "")  # running: no reason
    [asked] = [c for c in host.calls if c[:2] == ("squeue", "--start")]
    assert asked[asked.index("-j") + 1] == "12"
    said = jobs["12"].to_json()
    assert said["pending_text"].startswith("pending (Resources), expected start 2026-12-07T03:04:05: the nodes")
    assert "待機中" in say(said["pending"], "ja") and "排队中" in say(said["pending"], "zh")
