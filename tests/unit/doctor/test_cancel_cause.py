"""A cancelled job's "*** JOB n ON host CANCELLED AT ..." line: when the checkpoint's cancel
record (written by ari-jupyter's cancel, or placed with a recorded run whose panel cancelled
the job) holds the job, the doctor names that cause; otherwise it keeps the guess and lists
the ways to tell. First the recorded demo run's cancelled job, then a table."""
from __future__ import annotations

import asyncio
import os

import pytest

from ari_jupyter.doctor import diagnose_file, diagnose_text
from ari_jupyter.hosts.host import LocalHost
from ari_jupyter.hosts.recorded_run import RecordedRun
from ari_jupyter.hosts.recorded_site import RecordedSite
from ari_jupyter.doctor.log_checks import read_cancels
from ari_jupyter.runs.jobs import run_jobs
from ari_jupyter.slurm.cancel_record import RECORD, render_cancels

(RUN_ID,) = RecordedSite.load("rccs-cloud").runs  # the run every demo site shows
LINE = "slurmstepd-n1: error: *** JOB {job} ON n1 CANCELLED AT 2026-12-05T22:45:37 ***\n"


def _cancelled(findings):
    return [f for f in findings if f.rule == "job-cancelled"]


@pytest.mark.parametrize("job", ["4", "5"])
def test_the_recorded_runs_cancelled_jobs_name_the_runs_panel(tmp_path, job):
    checkpoint = RecordedRun.load(RUN_ID).place(tmp_path, "me")
    assert set(read_cancels(str(checkpoint))) == {"4", "5"}
    # the job reads as accounting recorded its end, CANCELLED, and the doctor names the cause
    jobs = {j.job_id: j for j in asyncio.run(run_jobs(checkpoint, LocalHost(), user="me")).jobs}
    assert (jobs[job].state, jobs[job].source, jobs[job].kind) == ("CANCELLED", "sacct", "bfts")
    (finding,) = _cancelled(diagnose_file(str(tmp_path / "slurm_logs" / f"slurm_job_{job}.out")))
    assert finding.severity == "info"
    assert "Runs panel" in finding.message and f"job {job}" in finding.message
    assert "someone" not in finding.message and "scancel" not in finding.message
    assert f"job {job}" in finding.fix
    for lang in ("ja", "zh"):
        assert "Runs" in finding.text(lang) and job in finding.fix_text(lang)


def _place(root, where, record):
    """A workspace with one checkpoint, a log at ``where`` and the record ``record`` in it."""
    checkpoint = root / "checkpoints" / RUN_ID
    (checkpoint / "repro_sandbox").mkdir(parents=True)
    (root / "slurm_logs").mkdir()
    if record == "ari-jupyter-7":
        (checkpoint / RECORD).write_text(render_cancels({}, ["7"], user="me"))
    elif record == "ari-jupyter-8":
        (checkpoint / RECORD).write_text(render_cancels({}, ["8"], user="me"))
    elif record == "not-json":
        (checkpoint / RECORD).write_text("{not json")
    elif record == "fifo":
        os.mkfifo(checkpoint / RECORD)
    elif record == "unknown-by":
        (checkpoint / RECORD).write_text('{"cancelled": [{"job_id": "7", "by": "someone"}]}')
    log = root / where
    log.write_text("rank 0 on n1\n" + LINE.format(job=7))
    return log


# (id, where the log is, the record, expected severity, a word in the cause)
TABLE = [
    ("record-beside-slurm-logs", "slurm_logs/slurm_job_7.out", "ari-jupyter-7", "info", "ari-jupyter cancel"),
    ("record-above-repro-sandbox", f"checkpoints/{RUN_ID}/repro_sandbox/reproduce.log", "ari-jupyter-7", "info",
     "ari-jupyter cancel"),
    ("another-job-recorded", "slurm_logs/slurm_job_7.out", "ari-jupyter-8", "warning", "someone"),
    ("no-record", "slurm_logs/slurm_job_7.out", "", "warning", "someone"),
    ("record-not-json", "slurm_logs/slurm_job_7.out", "not-json", "warning", "someone"),
    ("record-a-fifo", "slurm_logs/slurm_job_7.out", "fifo", "warning", "someone"),
    ("record-unknown-by", "slurm_logs/slurm_job_7.out", "unknown-by", "warning", "someone"),
]


@pytest.mark.parametrize("case", TABLE, ids=[row[0] for row in TABLE])
def test_cancel_cause_table(case, tmp_path):
    _id, where, record, severity, word = case
    log = _place(tmp_path, where, record)
    (finding,) = _cancelled(diagnose_file(str(log)))
    assert (finding.severity, word in finding.message) == (severity, True)
    if severity == "warning":  # the guess, with the ways to tell
        for way in ("sacct -j <id>", "scontrol show job <id>", RECORD):
            assert way in finding.fix


def test_a_pasted_log_with_the_checkpoint_given_finds_the_record(tmp_path):
    (tmp_path / RECORD).write_text(render_cancels({}, ["7"]))
    (finding,) = _cancelled(diagnose_text(LINE.format(job=7), kind="log", checkpoint_dir=str(tmp_path)))
    assert finding.severity == "info" and "ari-jupyter cancel" in finding.message
    (guess,) = _cancelled(diagnose_text(LINE.format(job=7), kind="log"))
    assert guess.severity == "warning"
