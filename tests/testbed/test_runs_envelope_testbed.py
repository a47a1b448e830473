"""On the real test bed: a BFTS job that asks more nodes than the user approved is flagged and
its cancel ends it (and nothing else); a job of the run that reaches its 1-minute time limit
ends TIMEOUT and the run says it was interrupted by the time limit, with ``ari resume``.

The BFTS jobs are submitted as ARI's hpc skill submits them (``ari-skill-hpc`` ``submit``,
spec §3.3): its ``#SBATCH`` header (job name, partition, nodes, time, cpus-per-task, output
``$SLURM_LOG_DIR/slurm_job_%j.out``, ``-D`` the node's work dir under
``<workspace>/experiments/<run_id>/``) and ``sbatch --export=NONE <file>``.
"""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ari_jupyter.ari.resume_rule import resume_command

from ari_jupyter.runs.localize import status_in_language

from runs_support import copy_case
from testbed.test_runs_testbed import wait_for

pytestmark = pytest.mark.slurm


def cli(bed, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return bed.run([sys.executable, "-m", "ari_jupyter", *args], timeout=timeout)


def status(bed, ckpt: Path, *extra: str) -> dict:
    done = cli(bed, "status", "--json", *extra, str(ckpt))
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def approved_checkpoint(tmp_path: Path, partition: str, *, nodes: int, walltime: str) -> Path:
    """A run the wizard wrote: the user approved ``partition``, ``nodes`` nodes, 1 CPU, no GPU."""
    ws = tmp_path / "ws"
    ckpt = copy_case("exploring", ws)
    (ckpt / ".ari_pid").unlink()  # ari's process is gone: only its jobs are alive
    logs = ws / "slurm_logs"
    logs.mkdir()
    (ckpt / ".env").write_text(f"ARI_SLURM_PARTITION={partition}\nARI_SLURM_CPUS=1\n"
                               f"ARI_SLURM_WALLTIME={walltime}\nSLURM_LOG_DIR={logs}\n")
    config = json.loads((ckpt / "launch_config.json").read_text())
    config.update(partition=partition, hpc_cpus=1, hpc_walltime=walltime)
    config["ari_jupyter"]["state"].update(partition=partition, max_cpus=1, walltime=walltime,
                                         nodes=nodes)
    (ckpt / "launch_config.json").write_text(json.dumps(config, indent=2))
    return ckpt


def submit_bfts(bed, ckpt: Path, node: str, *, partition: str, nodes: int, walltime: str,
                body: str = "echo node starts\nsleep 600\n") -> str:
    """``sbatch`` a job the way ARI's hpc skill does; its job id."""
    work = ckpt.parent.parent / "experiments" / ckpt.name / node
    work.mkdir(parents=True)
    logs = ckpt.parent.parent / "slurm_logs"
    script = work.parent / f".{node}.sbatch"  # the hpc skill writes it to a temp file
    script.write_text("\n".join([
        "#!/bin/bash", f"#SBATCH --job-name={node}", f"#SBATCH --partition={partition}",
        f"#SBATCH --nodes={nodes}", f"#SBATCH --time={walltime}", "#SBATCH --cpus-per-task=1",
        f"#SBATCH --output={logs}/slurm_job_%j.out", f"#SBATCH --error={logs}/slurm_job_%j.out",
        f"#SBATCH -D {work}", "export PATH=/usr/bin:/bin:/usr/local/bin", body]))
    done = bed.run(["sbatch", "--export=NONE", str(script)], timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[-1]


def in_queue(bed) -> dict[str, str]:
    rows = bed.run(["squeue", "-h", "-o", "%i %T"]).stdout.split("\n")
    return dict(row.split() for row in rows if row.strip())


def test_job_asking_more_nodes_than_approved_is_flagged_and_its_cancel_ends_it(testbed_nogres,
                                                                               tmp_path):
    bed = testbed_nogres
    partition = bed.default_partition
    ckpt = approved_checkpoint(tmp_path, partition, nodes=1, walltime="00:05:00")
    other = bed.run(["sbatch", "--export=NONE", "-p", partition, "-N", "1", "-t", "5",
                     "--chdir", str(tmp_path), "--wrap", "sleep 600"], timeout=30)
    assert other.returncode == 0, other.stderr
    unrelated = other.stdout.split()[-1]  # the user's own job, not the run's
    jobs = []
    try:
        wide = submit_bfts(bed, ckpt, "node_wide", partition=partition, nodes=2, walltime="00:05:00")
        jobs.append(wide)
        fits = submit_bfts(bed, ckpt, "node_fits", partition=partition, nodes=1, walltime="00:05:00")
        jobs.append(fits)

        def flagged():
            answer = status(bed, ckpt)
            listed = {j["job_id"]: j for j in answer["jobs"]["jobs"]}
            return answer if wide in listed and fits in listed else None

        answer = wait_for(flagged, 60, "both BFTS jobs listed as the run's")
        listed = {j["job_id"]: j for j in answer["jobs"]["jobs"]}
        assert listed[wide]["kind"] == listed[fits]["kind"] == "bfts"
        assert [(o["what"], o["asked"], o["approved"]) for o in listed[wide]["outside"]] == \
            [("nodes", "2", "1")]
        assert listed[fits]["outside"] == []
        assert answer["envelope"]["bfts"]["nodes"] == 1
        [flag] = [f for f in answer["findings"] if f["rule"] == "run-job-outside-envelope"]
        assert flag["params"]["job"] == wide
        assert flag["message"] == (f"Job {wide} (a BFTS job) asks more than you approved in the "
                                   "wizard: 2 nodes, you approved 1")
        said = status_in_language(answer, "ja")  # what the Runs panel shows in Japanese
        [ja] = [f for f in said["findings"] if f["rule"] == "run-job-outside-envelope"]
        assert "2 ノード（承認したのは 1 ノード）" in ja["message"]
        text = cli(bed, "status", str(ckpt)).stdout
        assert "OUTSIDE what you approved: 2 nodes, you approved 1" in text

        # The cancel the finding offers, as the user would paste it (confirmed with --yes).
        offered = shlex.split(flag["params"]["cancel"])
        assert offered[:2] == ["ari-jupyter", "cancel"]
        done = cli(bed, *offered[1:], "--yes", "--json")
        assert done.returncode == 0, done.stderr
        outcomes = json.loads(done.stdout)["outcomes"]
        assert [(o["job_id"], o["result"]) for o in outcomes] == [(wide, "cancelled")]
        queue = in_queue(bed)
        assert wide not in queue
        assert fits in queue and unrelated in queue  # nothing else was touched
        after = status(bed, ckpt)
        assert [f for f in after["findings"] if f["rule"] == "run-job-outside-envelope"] == []
    finally:
        for job_id in jobs + [unrelated]:
            bed.run(["scancel", job_id])


def test_job_reaching_its_time_limit_interrupts_the_run_with_resume(testbed_nogres, tmp_path):
    bed = testbed_nogres
    partition = bed.default_partition
    ckpt = approved_checkpoint(tmp_path, partition, nodes=1, walltime="00:01:00")
    job_id = submit_bfts(bed, ckpt, "node_long", partition=partition, nodes=1, walltime="00:01:00")
    try:
        wait_for(lambda: status(bed, ckpt)["phase"] == "exploring", 60, "the job to be the run's")

        def timed_out():
            answer = status(bed, ckpt)
            jobs = [j for j in answer["jobs"]["jobs"] if j["job_id"] == job_id]
            return answer if jobs and jobs[0]["state"] == "TIMEOUT" else None

        answer = wait_for(timed_out, 240, "SLURM to end the job at its 1-minute limit",
                          lambda: bed.run(["squeue", "-h", "-t", "all", "-o", "%i %T %l %M"]).stdout
                          + json.dumps(status(bed, ckpt)["jobs"]))
        assert answer["phase"] == "interrupted"
        [limit] = [f for f in answer["findings"] if f["rule"] == "run-time-limit"]
        resume = resume_command(str(ckpt))
        assert limit["params"] == {"job": job_id, "limit": "1:00", "resume": resume}
        assert limit["message"] == (f"Job {job_id} of this run reached its SLURM time limit (1:00) "
                                    "and SLURM ended it: the run was interrupted by the time limit")
        assert f"`{resume}`" in limit["fix"]
        tail = answer["jobs"]["jobs"][0]["tail"]
        assert any("DUE TO TIME LIMIT" in line for line in tail), tail
        said = status_in_language(answer, "ja")  # the Runs panel's answer in Japanese
        [ja] = [f for f in said["findings"] if f["rule"] == "run-time-limit"]
        assert "制限時間" in ja["message"] and f"`{resume}`" in ja["fix"]
        text = cli(bed, "status", str(ckpt)).stdout
        assert f"`{resume}`" in text and "[run-time-limit]" in text
    finally:
        bed.run(["scancel", job_id])
