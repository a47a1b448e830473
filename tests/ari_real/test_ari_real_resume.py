"""The run outlives its allocation: a real ``ari run`` cut by its allocation's time limit, then
continued as ``ari-jupyter status`` words it, in a new allocation.

As in the whole-run test (test_ari_real_whole_run.py), an unprivileged user with a network home
writes the checkpoint with ``ari-jupyter emit`` (the scripted LLM's API base; paper-side stages
off the way the wizard turns them off), and the hand-off script runs exactly as printed, but
inside a SLURM allocation (``sbatch``, the way a hosted JupyterLab lives in its allocation).
ARI's root node runs its job and is evaluated; then the ``small`` partition is set DOWN (a busy
cluster: the next node's job waits in the queue) and the allocation's time limit is shortened
to one minute, so SLURM itself ends the allocation (state TIMEOUT) while ARI's second node
waits for its job. Then:

(a) ``ari-jupyter status --json``, as the user outside the dead allocation, says
    ``interrupted``, and its ``run-interrupted`` finding's fix is ``ari-jupyter requeue
    <checkpoint>``: ARI 0.9.1's resume re-queues only ``pending`` and ``failed`` nodes
    (ari-core/ari/cli/run.py:510-517), and the node cut while it waited for its job is left
    ``running`` (marked so at ari-core/ari/orchestrator/node.py:124; when SLURM's SIGTERM ends
    ``ari run``, ari-core/ari/pidfile.py:83-94 only removes .ari_pid), so a bare ``ari resume``
    prints "No pending nodes." and exits 0. ``requeue``, as the user, marks that node
    ``failed`` (the rest of tree.json as it was, the old tree kept beside it), writes the run's
    scope for the resume (ARI's resume drops ``ARI_MAX_NODES`` and the rest) and prints the
    resume command the finding names, with ``ARI_CHECKPOINT_DIR`` set;
(b) that command, in a new allocation, continues the run: the evaluated nodes keep their ids
    and metrics, the cut node runs again, more nodes are evaluated (within emit's
    ``--max-nodes``), nothing is left running or queued, and status ends ``finished``.

The stray job of the cut node outlives the allocation (ARI submitted it; nobody cancels it):
while it is queued, status counts it as the run's live work; its phase then is recorded.

Figures (time, node ids before/after, job ids, ARI's words) go to
$ARI_TEST_REPORT_DIR/resume/ when that is set.
"""
from __future__ import annotations

import contextlib
import json
import re
import secrets
import shlex
import subprocess
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

ALLOCATION_PARTITION = "large"   # the JupyterLab's allocation
BFTS_PARTITION = "small"         # where ARI's BFTS jobs go (the wizard's partition)
STEP_TIMEOUT = 300.0


def _tree(ckpt: Path) -> dict:
    try:
        return json.loads((ckpt / "tree.json").read_text())
    except (OSError, ValueError):
        return {}


def _states(tree: dict) -> dict[str, str]:
    return {node["id"]: node["status"] for node in tree.get("nodes", [])}


def _evaluated(tree: dict) -> dict[str, float]:
    return {node["id"]: node["metrics"]["triad_mbps"] for node in tree.get("nodes", [])
            if node.get("status") == "success" and isinstance((node.get("metrics") or {}).get("triad_mbps"), (int, float))}


def _job_field(bed, job: str, name: str) -> str:
    shown = bed.run(["scontrol", "show", "job", "-o", job]).stdout
    return dict(word.split("=", 1) for word in shown.split() if "=" in word).get(name, "")


def test_a_run_cut_by_its_time_limit_is_requeued_and_ari_resume_continues_it(
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
    partition_down = contextlib.ExitStack()

    def status(ckpt: Path) -> dict:
        answer = run(as_user(user, [*status_argv, str(ckpt)], jupyter_env), timeout=60)
        assert answer.stdout.startswith("{"), answer.stderr[-2000:]
        return json.loads(answer.stdout)

    def submit(command: str, name: str, *extra: str) -> subprocess.CompletedProcess:
        """``command`` as the one line of a batch job in a new allocation, from the terminal."""
        return run(as_user(user, ["sbatch", "--parsable", "-p", ALLOCATION_PARTITION, "-N", "1", "-n", "1",
                                  "-J", name, "--chdir", str(HOME), "--output", str(HOME / f"{name}-%j.out"),
                                  *extra, "--wrap", command], terminal), cwd=HOME, timeout=900)

    try:
        # 1. the wizard's checkpoint: a small scope, paper-side stages off
        emit = run(as_user(user, [
            "ari-jupyter", "emit", "--json", "--title", "Triad bandwidth",
            "--goal", "Measure the bandwidth of a triad loop in a SLURM job and how it changes with the array length.",
            "--metric", "triad_mbps", "--partition", BFTS_PARTITION, "--max-cpus", "2", "--walltime", "00:30:00",
            "--module", "openmpi/4.1", "--workspace", str(HOME / "ari"), *phase_models_args(api_base),
            "--max-nodes", "3", "--max-depth", "2", "--parallel", "1", "--max-react", "12",
            "--node-timeout-min", "10", "--no-ear", "--no-review", "--no-reproduce"], jupyter_env),
            cwd=HOME, timeout=600)
        assert emit.returncode == 0, emit.stderr[-3000:]
        emitted = json.loads(emit.stdout)
        ckpt = Path(emitted["checkpoint_dir"])
        workspace = ckpt.parent.parent
        figures["run_id"] = ckpt.name

        # 2. the hand-off, exactly as printed, inside an allocation with a time limit
        follower = RunFollower(user, ckpt, jupyter_env, dest / "jupyter" / "bin", every=3.0).start()
        submitted = submit(emitted["handoff_command"], "jupyterlab", "--time", "00:05:00")
        assert submitted.returncode == 0, submitted.stderr
        allocation = submitted.stdout.strip().split(";")[0]
        figures["allocation_job"] = allocation

        def alive_queue() -> dict[str, str]:
            queued = queued_jobs(user, base_env)
            if allocation not in queued:
                out = HOME / f"jupyterlab-{allocation}.out"
                pytest.fail(f"the allocation ended early ({_job_field(bed, allocation, 'JobState')}):\n"
                            f"{out.read_text(errors='replace')[-3000:] if out.is_file() else ''}")
            return queued

        # the root's BFTS job ran and left the queue: from now on the next job waits
        def root_job_done():
            queued = alive_queue()
            ran = [p.stem.rsplit("_", 1)[1] for p in (workspace / "slurm_logs").glob("slurm_job_*.out")]
            return [j for j in ran if j not in queued]
        figures["root_jobs"] = wait_for("the root node's BFTS job ran", root_job_done, timeout=STEP_TIMEOUT)
        partition_down.enter_context(bed.partition_settings(BFTS_PARTITION, State="DOWN"))

        # ARI evaluated the root and its second node waits for its job: SLURM ends the allocation
        def cut_point():
            tree, queued = _tree(ckpt), alive_queue()
            waiting = [j for j, state in queued.items() if j != allocation and state == "PENDING"]
            running = [n for n, s in _states(tree).items() if s == "running"]
            return (tree, waiting) if _evaluated(tree) and running and waiting else None
        _, waiting = wait_for("an evaluated node, and a node waiting for its job", cut_point, timeout=STEP_TIMEOUT)
        figures["stray_job"] = waiting[0]
        cut_at = time.monotonic()
        bed.run(["scontrol", "update", f"JobId={allocation}", "TimeLimit=1"], check=True)
        wait_for("the allocation's end", lambda: allocation not in queued_jobs(user, base_env), timeout=180)
        figures["allocation_state"] = _job_field(bed, allocation, "JobState")
        figures["allocation_run_time"] = _job_field(bed, allocation, "RunTime")
        figures["cut_s"] = round(time.monotonic() - cut_at, 1)
        assert figures["allocation_state"] == "TIMEOUT", figures
        before = _tree(ckpt)
        figures["nodes_before"] = _states(before)
        figures["evaluated_before"] = _evaluated(before)
        assert figures["evaluated_before"] and "running" in figures["nodes_before"].values(), figures

        # the node's job outlived the allocation: still queued, it is the run's only live work
        assert queued_jobs(user, base_env) == {waiting[0]: "PENDING"}
        figures["phase_while_stray_job_queued"] = status(ckpt)["phase"]
        partition_down.close()
        wait_for("the stray job's end", lambda: not queued_jobs(user, base_env), timeout=STEP_TIMEOUT)

        # (a) interrupted, and the fix: requeue the node the cut left running, then resume
        said = status(ckpt)
        figures["phase_after_cut"] = said["phase"]
        assert said["phase"] == "interrupted", said
        interrupted = [f for f in said["findings"] if f["rule"] == "run-interrupted"]
        assert len(interrupted) == 1, said["findings"]
        params = interrupted[0]["params"]
        quoted = shlex.quote(str(ckpt))
        assert params["requeue"] == f"ari-jupyter requeue {quoted}", params
        scope = ckpt / "resume.yaml"  # the run's --max-nodes and the rest, which ari resume drops
        assert params["resume"] == (f"ARI_CHECKPOINT_DIR={quoted} ari resume {quoted} "
                                    f"--config {shlex.quote(str(scope))}"), params
        assert f"`{params['requeue']}`" in interrupted[0]["fix"], interrupted[0]["fix"]
        figures["fix"] = interrupted[0]["fix"]
        cut_nodes = sorted(n for n, s in figures["nodes_before"].items() if s == "running")

        # requeue may first say why the run may still be running elsewhere (the pid ARI left,
        # files written in the last minutes) and change nothing; then the user confirms with
        # the command it names, as the refusal asks
        asked = run(as_user(user, shlex.split(params["requeue"]), jupyter_env), cwd=HOME, timeout=120)
        figures["requeue_refusal"] = asked.stdout + asked.stderr if asked.returncode else ""
        requeued = asked
        if asked.returncode:
            confirm = f"{params['requeue']} --force"
            assert asked.returncode == 1 and confirm in asked.stderr, figures["requeue_refusal"]
            assert _states(_tree(ckpt)) == figures["nodes_before"]  # nothing was changed
            requeued = run(as_user(user, shlex.split(confirm), jupyter_env), cwd=HOME, timeout=120)
        figures["requeue_output"] = requeued.stdout + requeued.stderr
        assert requeued.returncode == 0, figures["requeue_output"]
        command = requeued.stdout.strip().splitlines()[-1]
        assert command == params["resume"], requeued.stdout
        marked = _tree(ckpt)
        assert json.loads((ckpt / "tree.json.before-requeue").read_text()) == before
        assert {n: s for n, s in _states(marked).items() if n in cut_nodes} == dict.fromkeys(cut_nodes, "failed")
        assert {n: s for n, s in _states(marked).items() if n not in cut_nodes} == \
            {n: s for n, s in figures["nodes_before"].items() if n not in cut_nodes}
        again = [f for f in status(ckpt)["findings"] if f["rule"] == "run-interrupted"]
        assert [f["fix_id"] for f in again] == ["runs.finding.interrupted.fix"], again
        assert again[0]["params"]["resume"] == command

        # (b) the command it printed, in a new allocation: ARI runs the cut node again
        resumed = submit(command, "resume", "--time", "00:10:00", "--wait")
        resume_job = resumed.stdout.strip().split(";")[0]
        resume_out = (HOME / f"resume-{resume_job}.out").read_text(errors="replace")
        figures.update(resume_job=resume_job, resume_exit=resumed.returncode, resume_output=resume_out[-3000:])
    finally:
        partition_down.close()
        bed.run(["scancel", "-u", user.pw_name])  # a failed step leaves no job of this run behind
        if follower:
            follower.stop()
        server.shutdown()
    figures["wall_time_s"] = round(time.monotonic() - started, 1)

    after = _tree(ckpt)
    figures["nodes_after"] = _states(after)
    figures["phase_after_resume"] = status(ckpt)["phase"]
    figures["phases_seen"] = [(t, p) for t, p, _ in follower.phases]
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    figures["requests_by_stage"] = {s: sum(1 for r in requests if r["stage"] == s) for s in sorted({r["stage"] for r in requests})}
    keep_figures("resume", figures, [log], follower)
    print(json.dumps(figures, indent=2))

    # ARI resumed this run: it re-queued the cut node, kept the evaluated ones, ran on to its end
    assert resumed.returncode == 0, resume_out[-3000:]
    assert f"Resuming {ckpt.name}" in resume_out, resume_out[-3000:]
    assert "No pending nodes." not in resume_out, resume_out[-3000:]
    assert re.search(rf"\b{len(cut_nodes)} pending\b", resume_out), resume_out[-3000:]
    evaluated = _evaluated(after)
    assert {n: evaluated.get(n) for n in figures["evaluated_before"]} == figures["evaluated_before"]
    assert len(evaluated) > len(figures["evaluated_before"]), (figures["nodes_after"], evaluated)
    assert "running" not in figures["nodes_after"].values(), figures["nodes_after"]
    assert set(figures["nodes_before"]) <= set(figures["nodes_after"])
    assert len(figures["nodes_after"]) <= 3, figures["nodes_after"]  # emit's --max-nodes 3 held
    assert not queued_jobs(user, base_env)
    assert figures["phase_after_resume"] == "finished", figures["phase_after_resume"]
