"""The run continues in a follow-up allocation, with no typing: a real ``ari run`` cut by its
allocation's time limit is resumed by the follow-up job the hand-off submitted.

As in test_ari_real_resume.py (which continues the run by hand, typing what ``status`` says),
an unprivileged user with a network home writes the checkpoint with ``ari-jupyter emit``, now
approving one follow-up (``--followups 1``: same partition, nodes and walltime as the run), and
the hand-off runs exactly as printed inside an allocation (``sbatch``). The hand-off submits
the follow-up at once: ``sbatch --dependency=afterany:<allocation> --kill-on-invalid-dep=yes``
in the run's envelope, recorded in the checkpoint's followups.json, with only named non-secret
variables (``--export=...``): the key the terminal exports is not in the environment slurmctld
stores for the follow-up, which finds it where ``ari`` reads it, the user's ``~/.env`` (0600). Then, as there, ARI
evaluates its root node, the ``small`` partition is set DOWN (ARI's next job waits) and the
allocation's time limit is cut to one minute: SLURM ends it (TIMEOUT). Once the partition is
up again, the follow-up starts (afterany), waits for the stray job of the cut node to leave the
queue, requeues the run, finds its one approved follow-up used (no more is submitted) and runs
the ``ari resume`` line status prints; the search ends with the evaluated nodes keeping their
ids and metrics (exactly ``--max-nodes`` evaluated), and the paper pipeline goes on, inside the
follow-up allocation, to ARI's reproduce stage as in test_ari_real_whole_run.py (the same emit
flags and checks, ``wholerun_support.reproduce_stage``): ARI's EAR writes reproduce.sh from the
best node's run command and ARI's run_reproduce submits it as a 2-node job where ``srun`` and
Open MPI's ``mpirun`` run ranks 0-3 on both nodes, the ``mpicc``-built allreduce summing them to
6. The run ends ``finished``, every job inside the envelope (the follow-up and the reproduce job:
partition, nodes, time limit, as accounting recorded them), nothing left in the queue. The
follow-up asks the envelope's nodes, the run's 2 (its one CPU a node leaves room for the
reproduce job's 2 one-CPU tasks a node: ``--max-cpus 1``).

The test bed keeps accounting (variant ``acct``: slurmdbd, MinJobAge=2), so an ended job has
left ``squeue`` within seconds, as on a site: how the allocation and the follow-up ended is read
from ``sacct``; the final ``status`` tells the follow-up's link ``COMPLETED`` (accounting's
word, not "left the queue"), and shows the run's node-hours from accounting for both job kinds
(each equal to sacct's own elapsed seconds × nodes of the run's BFTS jobs, and of its reproduce
job) and the LLM use ARI's cost tracker wrote (``cost_summary.json``: one record per answered
call, 2 tokens each from the scripted LLM).

It takes about 8.5 minutes on the test bed (504 s for the run, the reproduce job 31 s of it).
Figures go to $ARI_TEST_REPORT_DIR/followup/ when that is set.
"""
from __future__ import annotations

import contextlib
import json
import re
import secrets
import sys
import time
from pathlib import Path

import pytest

from ari_jupyter.slurm.accounting import ACCOUNT_FIELDS

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripted_llm.server import serve  # noqa: E402

pytestmark = [pytest.mark.ari, pytest.mark.slurm, pytest.mark.slow]

from wholerun_support import ari_for_users, runner  # noqa: E402,F401  (fixtures)
from wholerun_support import (HOME, REPRODUCE_EMIT_ARGS, RunFollower, as_user, keep_figures,  # noqa: E402
                              phase_models_args, queued_jobs, reproduce_stage, run, user_envs, wait_for)
from test_ari_real_resume import _evaluated, _job_field, _states, _tree  # noqa: E402

ALLOCATION_PARTITION = "large"   # the JupyterLab's allocation
BFTS_PARTITION = "small"         # the run's partition: its BFTS jobs and its follow-up
STEP_TIMEOUT = 300.0
MAX_NODES = 3
WALLTIME = "00:30:00"
NODES = "2"  # emit's --nodes (REPRODUCE_EMIT_ARGS): the reproduce job's, and so the follow-up's
ENDED = ("COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "OUT_OF_MEMORY", "NODE_FAIL")


def _accounted(bed, job: str, field: str) -> str:
    """``field`` of ``job`` as accounting has it (the queue forgets an ended job in seconds)."""
    shown = bed.run(["sacct", "-n", "-P", "-X", "-j", job, "-o", field]).stdout.strip().splitlines()
    return shown[0].split()[0] if shown and shown[0].strip() else ""


def _job_state(bed, job: str) -> str:
    """The job's state: the queue's while it is there, else accounting's."""
    return _job_field(bed, job, "JobState") or _accounted(bed, job, "State")


def _accounted_fields(bed, job: str, fields: tuple[str, ...]) -> dict[str, str]:
    """Several fields of ``job`` as accounting has them (one sacct line)."""
    shown = bed.run(["sacct", "-n", "-P", "-X", "-j", job, "-o", ",".join(fields)], check=True).stdout
    row = next((line for line in shown.splitlines() if line.strip()), "")
    return dict(zip(fields, row.split("|")))


def _sacct_node_hours(bed, job_ids: list[str]) -> float:
    """sacct's own elapsed seconds × nodes of ``job_ids``, in node-hours."""
    shown = bed.run(["sacct", "-n", "-P", "-X", "-j", ",".join(job_ids), "-o", "JobID,ElapsedRaw,NNodes"],
                    check=True).stdout
    rows = [line.split("|") for line in shown.splitlines() if line.strip()]
    assert sorted(r[0] for r in rows) == sorted(job_ids), rows
    return sum(int(r[1]) * int(r[2]) for r in rows) / 3600


def test_a_run_cut_by_its_time_limit_continues_in_the_approved_followup(
        testbed_acct, ari_for_users, runner, tmp_path):
    bed, user, dest = testbed_acct, runner, ari_for_users
    started = time.monotonic()
    log = tmp_path / "requests.jsonl"
    server = serve(log)
    api_base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    base_env, jupyter_env, terminal = user_envs(bed, dest, "sk-canary-" + secrets.token_hex(12))
    status_argv = [str(dest / "jupyter" / "bin" / "ari-jupyter"), "status", "--json"]
    figures: dict = {}
    follower = None
    said = ""
    partition_down = contextlib.ExitStack()

    def status(ckpt: Path) -> dict:
        answer = run(as_user(user, [*status_argv, str(ckpt)], jupyter_env), timeout=60)
        assert answer.stdout.startswith("{"), answer.stderr[-2000:]
        return json.loads(answer.stdout)

    dotenv = HOME / ".env"  # where the user keeps the key for jobs that are not given the shell's
    try:
        wrote = run(as_user(user, ["sh", "-c", 'umask 077 && printf "OPENAI_API_KEY=%s\\n" "$OPENAI_API_KEY" '
                                   '> "$HOME/.env"'], terminal), cwd=HOME, timeout=60)
        assert wrote.returncode == 0 and dotenv.stat().st_mode & 0o077 == 0, wrote.stderr
        emit = run(as_user(user, [
            "ari-jupyter", "emit", "--json", "--title", "Triad bandwidth",
            "--goal", "Measure the bandwidth of a triad loop in a SLURM job and how it changes with the array length.",
            "--metric", "triad_mbps", "--partition", BFTS_PARTITION, "--max-cpus", "1", "--walltime", WALLTIME,
            "--followups", "1", *REPRODUCE_EMIT_ARGS,
            "--module", "openmpi/4.1", "--workspace", str(HOME / "ari"), *phase_models_args(api_base),
            "--max-nodes", str(MAX_NODES), "--max-depth", "2", "--parallel", "1", "--max-react", "12",
            "--node-timeout-min", "10", "--no-review"], jupyter_env),
            cwd=HOME, timeout=600)
        assert emit.returncode == 0, emit.stderr[-3000:]
        emitted = json.loads(emit.stdout)
        ckpt = Path(emitted["checkpoint_dir"])
        workspace = ckpt.parent.parent
        figures["run_id"] = ckpt.name
        assert (ckpt / "followup.sh").is_file()

        # the hand-off, exactly as printed, inside an allocation with a time limit
        follower = RunFollower(user, ckpt, jupyter_env, dest / "jupyter" / "bin", every=3.0).start()
        submitted = run(as_user(user, [
            "sbatch", "--parsable", "-p", ALLOCATION_PARTITION, "-N", "1", "-n", "1", "-J", "jupyterlab",
            "--chdir", str(HOME), "--output", str(HOME / "jupyterlab-%j.out"), "--time", "00:05:00",
            "--wrap", emitted["handoff_command"]], terminal), cwd=HOME, timeout=900)
        assert submitted.returncode == 0, submitted.stderr
        allocation = submitted.stdout.strip().split(";")[0]
        figures["allocation_job"] = allocation

        # the hand-off submitted the one follow-up: after the allocation, inside the envelope
        def chained():
            record = ckpt / "followups.json"
            return json.loads(record.read_text()) if record.is_file() else None
        record = wait_for("the hand-off's follow-up", chained, timeout=STEP_TIMEOUT)
        [link] = record["links"]
        followup = link["job_id"]
        figures["followup_job"] = followup
        assert link["after"] == allocation, record
        asked = {name: _job_field(bed, followup, name) for name in
                 ("Partition", "NumNodes", "TimeLimit", "Dependency", "JobName", "JobState")}
        figures["followup_asked"] = asked
        assert (asked["Partition"], asked["NumNodes"].split("-"), asked["TimeLimit"], asked["JobName"]) in [
            (BFTS_PARTITION, nodes, WALLTIME, "ari-followup") for nodes in ([NODES], [NODES, NODES])], asked
        assert asked["Dependency"].startswith(f"afterany:{allocation}"), asked
        # the environment slurmctld keeps with the follow-up: not the terminal's key
        stored = (bed.lab_dir / "state" / f"hash.{int(followup) % 10}" / f"job.{followup}" / "environment").read_bytes()
        assert terminal["OPENAI_API_KEY"].encode() not in stored and b"OPENAI_API_KEY" not in stored
        assert b"ARI_MEMORY_BACKEND=in_memory" in stored and f"HOME={HOME}".encode() in stored
        chain = status(ckpt)["chain"]
        assert (chain["approved"], chain["used"]) == (1, 1), chain
        assert chain["links"][0]["job_id"] == followup and chain["links"][0]["state"] == "PENDING", chain

        def alive_queue() -> dict[str, str]:
            queued = queued_jobs(user, base_env)
            if allocation not in queued:
                out = HOME / f"jupyterlab-{allocation}.out"
                pytest.fail(f"the allocation ended early ({_job_field(bed, allocation, 'JobState')}):\n"
                            f"{out.read_text(errors='replace')[-3000:] if out.is_file() else ''}")
            return queued

        def root_job_done():
            queued = alive_queue()
            ran = [p.stem.rsplit("_", 1)[1] for p in (workspace / "slurm_logs").glob("slurm_job_*.out")]
            return [j for j in ran if j not in queued]
        wait_for("the root node's BFTS job ran", root_job_done, timeout=STEP_TIMEOUT)
        partition_down.enter_context(bed.partition_settings(BFTS_PARTITION, State="DOWN"))

        def cut_point():
            tree, queued = _tree(ckpt), alive_queue()
            waiting = [j for j, state in queued.items() if j not in (allocation, followup) and state == "PENDING"]
            running = [n for n, s in _states(tree).items() if s == "running"]
            return (tree, waiting) if _evaluated(tree) and running and waiting else None
        wait_for("an evaluated node, and a node waiting for its job", cut_point, timeout=STEP_TIMEOUT)
        bed.run(["scontrol", "update", f"JobId={allocation}", "TimeLimit=1"], check=True)
        wait_for("the allocation's end", lambda: allocation not in queued_jobs(user, base_env), timeout=180)
        figures["allocation_state"] = wait_for("the allocation's end in accounting", lambda: (
            _accounted(bed, allocation, "State") or None), timeout=60)
        assert figures["allocation_state"] == "TIMEOUT", figures
        before = _tree(ckpt)
        figures["nodes_before"] = _states(before)
        figures["evaluated_before"] = _evaluated(before)
        assert figures["evaluated_before"], figures
        partition_down.close()

        # no typing from here: the follow-up runs, resumes the run, and the queue empties
        wait_for("the follow-up's start", lambda: _job_state(bed, followup) in ("RUNNING", *ENDED),
                 timeout=STEP_TIMEOUT)
        wait_for("the run's end", lambda: not queued_jobs(user, base_env), timeout=1500, every=5)
        figures["followup_state"] = wait_for("the follow-up's end in accounting", lambda: (
            _job_state(bed, followup) if _job_state(bed, followup) in ENDED else None), timeout=60)
        figures["followup_ran_on"] = _accounted(bed, followup, "NodeList")
        out = ckpt / f"followup_{followup}.out"
        said = out.read_text(errors="replace") if out.is_file() else ""
        figures["followup_output"] = {"head": said[:3000], "tail": said[-3000:]}
    finally:
        partition_down.close()
        bed.run(["scancel", "-u", user.pw_name])
        if follower:
            follower.stop()
        server.shutdown()
        dotenv.unlink(missing_ok=True)
    figures["wall_time_s"] = round(time.monotonic() - started, 1)
    after = _tree(ckpt)
    figures["nodes_after"] = _states(after)
    final = status(ckpt)
    figures["phase_after"] = final["phase"]
    figures["chain_after"] = final.get("chain")
    figures["cost_after"] = final["cost"]
    figures["jobs_after"] = [{k: j.get(k) for k in ("job_id", "name", "kind", "state", "source", "nodes",
                                                   "elapsed_s", "exit_code")} for j in final["jobs"]["jobs"]]
    summary = ckpt / "cost_summary.json"
    figures["cost_summary"] = json.loads(summary.read_text()) if summary.is_file() else None
    figures["llm_requests"] = sum(1 for _ in log.open()) if log.is_file() else 0
    bfts = [j["job_id"] for j in final["jobs"]["jobs"] if j["kind"] == "bfts"]
    figures["sacct_node_hours_bfts"] = _sacct_node_hours(bed, bfts) if bfts else None
    reproduce_jobs = [j["job_id"] for j in final["jobs"]["jobs"] if j["kind"] == "reproduce"]
    figures["sacct_node_hours_reproduce"] = _sacct_node_hours(bed, reproduce_jobs) if reproduce_jobs else None
    times = ("JobName", "Partition", "NNodes", "Timelimit", "State", "Start", "End", "NodeList")
    figures["followup_accounted"] = _accounted_fields(bed, figures["followup_job"], times)
    figures["nodes_status"] = final["nodes"]
    ran = [j["job_id"] for j in final["jobs"]["jobs"]]
    figures["sacct_rows"] = bed.run(["sacct", "-X", "-P", "-n", "-j", ",".join([allocation, *ran]), "-o",
                                     ",".join(ACCOUNT_FIELDS)]).stdout.splitlines()
    figures["phases_seen"] = [(t, p) for t, p, _ in follower.phases]
    keep_figures("followup", figures, [log], follower)
    print(json.dumps(figures, indent=2))

    shown = figures["followup_output"]
    assert figures["followup_state"] == "COMPLETED", shown
    # it waited for the cut node's stray job, requeued the run, submitted no second follow-up
    # (one approved) and resumed the run
    assert re.search(r"Marked \d+ node\(s\) the cut left running as failed", said), shown
    assert "Every approved follow-up was submitted (1 of 1)" in said, shown
    assert f"Resuming {ckpt.name}" in said, shown
    # ARI's reproduce stage ran in the follow-up: the 2-node MPI job, its allreduce over all ranks
    figures["reproduce"] = reproduce_stage(ckpt, said)
    reproduce_job = figures["reproduce"]["job_id"]
    figures["reproduce_accounted"] = _accounted_fields(bed, reproduce_job, times)
    keep_figures("followup", figures, [log], follower)
    assert len(json.loads((ckpt / "followups.json").read_text())["links"]) == 1
    evaluated = _evaluated(after)
    assert {n: evaluated.get(n) for n in figures["evaluated_before"]} == figures["evaluated_before"]
    # the search went on after the cut to exactly the approved size: every node evaluated
    assert len(evaluated) == MAX_NODES == len(figures["nodes_after"]), (figures["nodes_after"], evaluated)
    # ...and status reports that number: every node of the search done
    assert (final["nodes"]["total"], final["nodes"]["done"]) == (MAX_NODES, MAX_NODES), final["nodes"]
    assert figures["phase_after"] == "finished", figures["phase_after"]
    assert not [f for f in final["findings"] if f["rule"] == "run-job-outside-envelope"], final["findings"]
    # the reproduce job: inside the envelope, as accounting recorded it, and run inside the follow-up
    repro, follow = figures["reproduce_accounted"], figures["followup_accounted"]
    assert (repro["JobName"], repro["Partition"], repro["NNodes"], repro["State"]) == (
        "ari-ors", BFTS_PARTITION, NODES, "COMPLETED"), repro
    assert repro["Timelimit"] == WALLTIME == follow["Timelimit"] and follow["NNodes"] == NODES, (repro, follow)
    assert follow["Start"] <= repro["Start"] and repro["End"] <= follow["End"], (repro, follow)
    # the follow-up's own link: how it ended, from accounting (not "left the queue")
    [link_shown] = final["chain"]["links"]
    assert final["chain"]["used"] == 1 and link_shown["state"] == "COMPLETED", final["chain"]
    assert f"{followup}: COMPLETED" in final["chain"]["said"][1], final["chain"]["said"]
    # the cost: node-hours from accounting, equal to sacct's own figures for the run's BFTS jobs
    cost = final["cost"]
    assert cost["from_accounting"] is True and final["jobs"]["accounting"] == "yes", cost
    assert len(bfts) >= MAX_NODES, figures["jobs_after"]
    assert all(j["state"] in ENDED for j in final["jobs"]["jobs"]), figures["jobs_after"]
    assert reproduce_jobs == [reproduce_job], figures["jobs_after"]
    for kind in ("bfts", "reproduce"):
        assert cost["node_hours"][kind] > 0, (kind, cost, figures["jobs_after"])
        assert abs(cost["node_hours"][kind] - figures[f"sacct_node_hours_{kind}"]) < 1e-4, (kind, cost, figures)
    assert cost["node_hours"]["total"] == cost["node_hours"]["bfts"] + cost["node_hours"]["reproduce"], cost
    assert cost["text"][0].startswith("node-hours used: ") and cost["text"][0].endswith("SLURM accounting)"), cost
    # the LLM use, as ARI's cost tracker wrote it across ``ari run`` and ``ari resume``
    written = figures["cost_summary"]
    assert written and cost["llm"] is not None, (written, cost)
    assert (cost["llm"]["calls"], cost["llm"]["total_tokens"]) == (written["call_count"], written["total_tokens"])
    assert 0 < written["call_count"] <= figures["llm_requests"] and written["total_tokens"] == 2 * written["call_count"]
    assert sum(u["tokens"] for u in cost["llm"]["by_phase"]) == written["total_tokens"], cost["llm"]
    llm_line = f"LLM use: {written['total_tokens']:,} tokens"
    assert any(line.startswith(llm_line) for line in cost["text"]), cost["text"]
    text = run(as_user(user, [*status_argv[:-1], str(ckpt)], jupyter_env), timeout=60).stdout
    assert cost["text"][0] in text and llm_line in text, text
