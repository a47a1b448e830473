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
the ``ari resume`` line status prints; the run ends ``finished`` with the evaluated nodes
keeping their ids and metrics, inside the envelope, nothing left in the queue.

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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripted_llm.server import serve  # noqa: E402

pytestmark = [pytest.mark.ari, pytest.mark.slurm, pytest.mark.slow]

from wholerun_support import ari_for_users, runner  # noqa: E402,F401  (fixtures)
from wholerun_support import (HOME, RunFollower, as_user, keep_figures, phase_models_args,  # noqa: E402
                              queued_jobs, run, user_envs, wait_for)
from test_ari_real_resume import _evaluated, _job_field, _states, _tree  # noqa: E402

ALLOCATION_PARTITION = "large"   # the JupyterLab's allocation
BFTS_PARTITION = "small"         # the run's partition: its BFTS jobs and its follow-up
STEP_TIMEOUT = 300.0


def test_a_run_cut_by_its_time_limit_continues_in_the_approved_followup(
        testbed_nogres, ari_for_users, runner, tmp_path):
    bed, user, dest = testbed_nogres, runner, ari_for_users
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
            "--metric", "triad_mbps", "--partition", BFTS_PARTITION, "--max-cpus", "2", "--walltime", "00:30:00",
            "--followups", "1",
            "--module", "openmpi/4.1", "--workspace", str(HOME / "ari"), *phase_models_args(api_base),
            "--max-nodes", "3", "--max-depth", "2", "--parallel", "1", "--max-react", "12",
            "--node-timeout-min", "10", "--no-ear", "--no-review", "--no-reproduce"], jupyter_env),
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
            (BFTS_PARTITION, nodes, "00:30:00", "ari-followup") for nodes in (["1"], ["1", "1"])], asked
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
        figures["allocation_state"] = _job_field(bed, allocation, "JobState")
        assert figures["allocation_state"] == "TIMEOUT", figures
        before = _tree(ckpt)
        figures["nodes_before"] = _states(before)
        figures["evaluated_before"] = _evaluated(before)
        assert figures["evaluated_before"], figures
        partition_down.close()

        # no typing from here: the follow-up runs, resumes the run, and the queue empties
        wait_for("the follow-up's start", lambda: _job_field(bed, followup, "JobState") in
                 ("RUNNING", "COMPLETED", "FAILED", "TIMEOUT"), timeout=STEP_TIMEOUT)
        figures["followup_ran_on"] = _job_field(bed, followup, "NodeList")
        wait_for("the run's end", lambda: not queued_jobs(user, base_env), timeout=900, every=5)
        figures["followup_state"] = _job_field(bed, followup, "JobState")
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
    assert len(json.loads((ckpt / "followups.json").read_text())["links"]) == 1
    evaluated = _evaluated(after)
    assert {n: evaluated.get(n) for n in figures["evaluated_before"]} == figures["evaluated_before"]
    assert len(evaluated) > len(figures["evaluated_before"]), (figures["nodes_after"], evaluated)
    assert "running" not in figures["nodes_after"].values(), figures["nodes_after"]
    assert len(figures["nodes_after"]) <= 3, figures["nodes_after"]
    assert figures["phase_after"] == "finished", figures["phase_after"]
    assert not [f for f in final["findings"] if f["rule"] == "run-job-outside-envelope"], final["findings"]
    assert final["chain"]["used"] == 1 and final["chain"]["links"][0]["state"] == "", final["chain"]
