"""On the real test bed with accounting (variant ``acct``: slurmdbd on MariaDB, MinJobAge=2):
sacct answers, and a run's job that has left squeue is shown with how accounting says it ended.

The job is submitted as ARI's BFTS jobs are (work dir inside ``experiments/<run_id>/``, output
``$SLURM_LOG_DIR/slurm_job_<id>.out``), so ``status`` finds it by its output file once the queue
has forgotten it, and attributes it by its work dir from sacct's own answer.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from ari_jupyter.slurm.accounting import assoc_argv, assoc_limits, fair_shares, share_argv

from runs_support import copy_case
from testbed.test_runs_testbed import wait_for

pytestmark = pytest.mark.slurm


def status(bed, ckpt, *args: str) -> subprocess.CompletedProcess:
    return bed.run([sys.executable, "-m", "ari_jupyter", "status", *args, str(ckpt)], timeout=60)


def test_accounting_answers_with_the_cluster_and_the_users_association(testbed_acct):
    bed = testbed_acct
    clusters = bed.run(["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster"], check=True)
    assert clusters.stdout.split() == ["ari-testbed"]
    assoc = bed.run(["sacctmgr", "-n", "-P", "show", "assoc", "where", "user=root", "account=ari",
                     "format=cluster,account,user"], check=True)
    assert assoc.stdout.split() == ["ari-testbed|ari|root"]
    # the limits a user may see (check-handoff's cost check): none set, then one set by the site
    assert assoc_limits(bed.run(assoc_argv("root"), check=True).stdout) == []
    limit = ["sacctmgr", "-i", "modify", "user", "root", "where", "account=ari", "set"]
    bed.run([*limit, "GrpTRESMins=node=600", "MaxJobs=20"], check=True)
    try:
        assert assoc_limits(bed.run(assoc_argv("root"), check=True).stdout) == [
            "ari: GrpTRESMins=node=600, MaxJobs=20"]
    finally:
        bed.run([*limit, "GrpTRESMins=node=-1", "MaxJobs=-1"], check=True)
    config = bed.run(["scontrol", "show", "config"], check=True).stdout
    assert "accounting_storage/slurmdbd" in config
    assert any(line.split() == ["MinJobAge", "=", "2", "sec"] for line in config.splitlines())


def test_a_finished_job_that_left_squeue_is_shown_with_its_sacct_state(testbed_acct, tmp_path):
    bed = testbed_acct
    ckpt = copy_case("exploring", tmp_path / "ws")
    (ckpt / ".ari_pid").unlink()  # ARI has ended; only accounting knows how its job did
    logs = tmp_path / "ws" / "slurm_logs"
    logs.mkdir()
    with (ckpt / ".env").open("a") as env:
        env.write(f"\nSLURM_LOG_DIR={logs}\n")
    node_dir = tmp_path / "ws" / "experiments" / ckpt.name / "node_1"
    node_dir.mkdir(parents=True)
    submitted = bed.run(["sbatch", "--parsable", "-N", "2", "-t", "2", "-J", "bfts_node_1",
                         "-D", str(node_dir), "-o", f"{logs}/slurm_job_%j.out",
                         "--wrap", "echo evaluating; sleep 2; exit 3"], check=True)
    job_id = submitted.stdout.strip().split(";")[0]
    assert job_id.isdigit()

    def left_squeue():
        seen = bed.run(["squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T"])
        return seen.returncode != 0 or not seen.stdout.strip()

    wait_for(left_squeue, 120, f"job {job_id} to leave squeue (MinJobAge=2)")

    def shown_ended():
        answer = json.loads(status(bed, ckpt, "--json").stdout)
        jobs = {j["job_id"]: j for j in answer["jobs"]["jobs"]}
        job = jobs.get(job_id)
        return answer if job and job["state"] == "FAILED" else None

    answer = wait_for(shown_ended, 60, f"status to show job {job_id} FAILED from sacct")
    assert answer["jobs"]["accounting"] == "yes"
    [job] = answer["jobs"]["jobs"]
    assert (job["source"], job["kind"], job["exit_code"], job["nodes"], job["where"]) == \
        ("sacct", "bfts", "3:0", "2", "n[1-2]")
    assert job["elapsed_s"] >= 2 and job["elapsed"].count(":") == 2
    assert answer["alive"] is False  # no job shown running after it ended
    # the run's cost so far: that job's elapsed seconds x its 2 nodes, from accounting
    cost = answer["cost"]
    assert cost["from_accounting"] is True
    assert cost["node_hours"] == {"bfts": round(job["elapsed_s"] * 2 / 3600, 4), "reproduce": 0.0,
                                  "total": round(job["elapsed_s"] * 2 / 3600, 4)}
    assert cost["text"][0].startswith("node-hours used: ") and cost["text"][0].endswith("SLURM accounting)")
    text = status(bed, ckpt).stdout
    assert f"  {job_id}  bfts_node_1  FAILED" in text and "exit code 3:0" in text
    assert "no SLURM accounting here" not in text
    # the Runs panel's list and `runs` count the ended job too
    listed = json.loads(bed.run([sys.executable, "-m", "ari_jupyter", "runs", "--json", "--workspace",
                                 str(tmp_path / "ws")], timeout=60).stdout)
    assert [(r["run_id"], r["jobs"], r["node_hours"]) for r in listed["runs"]] == \
        [(ckpt.name, 1, cost["node_hours"]["total"])]


def test_a_pending_job_shows_its_reason_and_expected_start(testbed_acct, tmp_path):
    bed = testbed_acct
    ckpt = copy_case("exploring", tmp_path / "ws")
    (ckpt / ".ari_pid").unlink()
    node_dir = tmp_path / "ws" / "experiments" / ckpt.name / "node_2"
    node_dir.mkdir(parents=True)
    # another job holds both nodes for 5 minutes: the run's job waits for Resources
    holder = bed.run(["sbatch", "--parsable", "-N", "2", "--exclusive", "-t", "5", "-D", "/tmp",
                      "-o", "/dev/null", "--wrap", "sleep 300"], check=True).stdout.strip()
    try:
        waiting = bed.run(["sbatch", "--parsable", "-N", "1", "-t", "2", "-J", "bfts_node_2",
                           "-D", str(node_dir), "-o", "/dev/null", "--wrap", "true"],
                          check=True).stdout.strip()

        def shown_waiting():
            answer = json.loads(status(bed, ckpt, "--json").stdout)
            jobs = {j["job_id"]: j for j in answer["jobs"]["jobs"]}
            job = jobs.get(waiting)
            return job if job and job["reason"] == "Resources" and job["expected_start"] else None

        job = wait_for(shown_waiting, 60, f"job {waiting} pending on Resources with an expected start")
        assert job["state"] == "PENDING"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", job["expected_start"])
        assert job["pending_text"].startswith(f"pending (Resources), expected start {job['expected_start']}")
        text = status(bed, ckpt, "--lang", "ja").stdout
        assert f"待機中（Resources）、開始見込み {job['expected_start']}" in text
    finally:
        bed.run(["scancel", holder])
        bed.run(["scancel", "-u", "root"])


COST_CHECK = """
import asyncio, json
from ari_jupyter.checkpoint.handoff import _check_cost
from ari_jupyter.hosts.host import LocalHost
from unit.ari.test_render import golden_state
result = asyncio.run(_check_cost(LocalHost(), golden_state().choices(), 30.0))
print(json.dumps({"data": result.data, "en": result.text("en"), "ja": result.text("ja")}))
"""


def _cost_check(bed) -> dict:
    """check-handoff's cost check, run as the user would (its one sacctmgr and one sshare)."""
    done = bed.run([sys.executable, "-c", COST_CHECK], timeout=120,
                   extra_env={"PYTHONPATH": ":".join(sys.path)})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_cost_check_shows_the_fair_share_sshare_answers(testbed_acct):
    bed = testbed_acct
    answer = bed.run(share_argv("root"), check=True).stdout
    shares = fair_shares(answer)  # root's two associations: accounts root and ari
    assert [share.split(":")[0] for share in shares] == ["root", "ari"], answer
    assert all(re.fullmatch(r"(root|ari): FairShare=[01]\.[0-9]{6}", share) for share in shares), answer
    shown = _cost_check(bed)
    assert shown["data"]["fair_share"] == shares
    assert shown["en"].endswith("Your fair-share factor (sshare; 1 is the most priority, it falls as your share "
                                f"is used): {'; '.join(shares)}"), shown["en"]
    assert "フェアシェア係数" in shown["ja"]


def test_a_site_without_accounting_shows_no_fair_share(testbed_nogres):
    shown = _cost_check(testbed_nogres)
    assert shown["data"]["fair_share"] == [] and shown["data"]["limits"] == []
    assert "fair-share" not in shown["en"] and "sshare" not in shown["en"]
    assert shown["en"].startswith("cost before the run: worst case")
