"""On the real test bed: ARI's reproduce job is listed, tailed and cancelled through the CLI.

The job is submitted as ARI's reproduce step submits it: the argv ARI builds (``sbatch --wait
--job-name ari-ors --chdir <checkpoint>/repro_sandbox --output .../reproduce.log ...
.slurm_wrap.sh``, from ``ari_jupyter.ari.sbatch``, checked against ARI's code elsewhere), run
by a waiting parent process as ARI's ``subprocess.run`` does.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from ari_jupyter.ari.sbatch import ReproduceArgs, build_sbatch_argv, wrapper_script

from runs_support import copy_case

pytestmark = pytest.mark.slurm

TICKS = "#!/usr/bin/env bash\necho reproduce started\nfor i in $(seq 1 600); do echo tick $i; sleep 1; done\n"


def cli(bed, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return bed.run([sys.executable, "-m", "ari_jupyter", *args], timeout=timeout)


def status(bed, ckpt) -> dict:
    done = cli(bed, "status", "--json", str(ckpt))
    return json.loads(done.stdout)


def wait_for(predicate, timeout: float, what: str, seen=lambda: ""):
    """``predicate()`` once it is true; on timeout, fails saying what was awaited and ``seen()``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}: {seen()}"
        time.sleep(1)


def test_reproduce_job_listed_tailed_cancelled(testbed_nogres, tmp_path):
    bed = testbed_nogres
    ckpt = copy_case("exploring", tmp_path / "ws")
    (ckpt / ".ari_pid").unlink()  # the ari process is gone; only its job is alive
    (ckpt / ".pipeline_started").touch()
    repo = ckpt / "repro_sandbox"
    repo.mkdir()
    (repo / "reproduce.sh").write_text(TICKS)
    (repo / ".slurm_wrap.sh").write_text(wrapper_script(repo))
    env = {"ARI_SLURM_PARTITION": bed.default_partition, "ARI_SLURM_CPUS": "1",
           "ARI_SLURM_WALLTIME": "00:05:00"}
    argv = build_sbatch_argv(ReproduceArgs(), env, repo, has_gres=False, bind_flags=False)
    assert argv[:2] == ["sbatch", "--wait"]
    assert argv[argv.index("--job-name") + 1] == "ari-ors"
    assert argv[argv.index("--chdir") + 1] == str(repo)
    waiter = subprocess.Popen(argv, env=bed.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    job_id = None
    try:
        def running():
            answer = status(bed, ckpt)
            jobs = [j for j in answer["jobs"]["jobs"] if j["name"] == "ari-ors"]
            if jobs and jobs[0]["state"] == "RUNNING" and any("tick" in t for t in jobs[0]["tail"]):
                return answer
            return None

        answer = wait_for(running, 90, "the ari-ors job to run and write its log")
        [job] = answer["jobs"]["jobs"]
        job_id = job["job_id"]
        assert job["kind"] == "reproduce" and job["output"] == f"{repo}/reproduce.log"
        assert answer["phase"] == "reproduce" and answer["alive"] is True
        assert answer["jobs"]["accounting"] == "no"  # the test bed has no slurmdbd

        listed = json.loads(cli(bed, "runs", "--json", "--workspace", str(tmp_path / "ws")).stdout)
        assert [(r["run_id"], r["phase"], r["jobs"]) for r in listed["runs"]] == \
            [(ckpt.name, "reproduce", 1)]

        refused = cli(bed, "cancel", str(ckpt))  # which jobs not said: cancels nothing
        assert refused.returncode == 2 and "--all" in refused.stderr and "--job" in refused.stderr
        refused = cli(bed, "cancel", str(ckpt), "--all")  # no terminal, no --yes: asks, cancels nothing
        assert refused.returncode == 2 and "--yes" in refused.stderr
        assert status(bed, ckpt)["jobs"]["jobs"][0]["state"] == "RUNNING"

        done = cli(bed, "cancel", "--yes", "--all", "--json", str(ckpt))
        result = json.loads(done.stdout)
        assert done.returncode == 0, done.stderr
        assert result["outcomes"] == [{"job_id": job_id, "result": "cancelled",
                                       "message": f"job {job_id} cancelled",
                                       "message_id": "runs.cancel.cancelled",
                                       "params": {"job": job_id}}]
        assert result["status"]["jobs"]["jobs"] == []
        assert result["status"]["phase"] == "interrupted"
        assert waiter.wait(timeout=60) != 0  # sbatch --wait returns: the job has ended

        again = cli(bed, "cancel", "--yes", "--job", job_id, "--json", str(ckpt))
        assert json.loads(again.stdout)["outcomes"][0]["result"] == "gone"
    finally:
        if waiter.poll() is None:
            waiter.kill()
        if job_id:
            bed.run(["scancel", job_id])
    queue = bed.run(["squeue", "-h", "-o", "%i %j"]).stdout
    assert "ari-ors" not in queue, queue
