"""The whole run, for real: the wizard's checkpoint, then ``ari run`` on the 2-node test bed
with SLURM accounting (slurmdbd: the Runs panel lists a job that ended as sacct recorded it).

An unprivileged user, whose home (and so the workspace) is a network filesystem both nodes
see, writes the checkpoint with ``ari-jupyter emit`` (run settings: the openai backend at the
scripted LLM's API base, a model per phase) and runs the hand-off script exactly as printed,
in a terminal holding an API key (a canary value) and ARI on PATH. The scripted LLM
(tests/scripted_llm) answers ARI's prompts; everything else is real: ARI's own ``ari run``,
its skills, its hpc skill submitting the BFTS jobs to the real slurmctld, the jobs' own
measurements.

Checked in what the run left: ARI evaluated exactly as many BFTS nodes as emit's --max-nodes
allows (3), each with a metric the job printed (the node's value equals the number in that job's own output file), every BFTS job ran
as the user with ``--export=NONE`` and sourced ARI_ENV_FILE (its environment and ``module list``,
written from inside the job); the paper pipeline went on to ARI's reproduce stage, whose
reproduce.sh (written by ARI's EAR from the best node's run command) ARI's run_reproduce
submitted as a 2-node job where ``srun`` puts ranks 0-3 on both nodes and Open MPI's ``mpirun``
runs a real MPI program there (a C allreduce built with ``mpicc`` inside the job from Debian's
libopenmpi-dev: the sum of the ranks is 0+1+2+3 = 6 only when all four took part);
the scripted server's log shows the model per phase and the API base the run settings chose,
and the key's value appears nowhere (server log, checkpoint, workspace, job outputs).

Not on the test bed, so not in this run: ARI's PaperBench replicator (ors_build_reproduce needs
chz and nanoeval, fetched from git; ARI skips it when reproduce.sh is already in the sandbox),
and the review stages (--no-review).

Figures (nodes, metrics, job ids, hosts, wall time) and the request log go to
$ARI_TEST_REPORT_DIR/whole-run/ when that is set.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripted_llm.script import Options  # noqa: E402
from scripted_llm.server import serve  # noqa: E402

pytestmark = [pytest.mark.ari, pytest.mark.slurm, pytest.mark.slow]

from wholerun_support import ari_for_users, runner  # noqa: E402,F401  (fixtures)
from wholerun_support import (EXPECTED_MODEL, HOME, MAIN, PHASE_MODELS, REPO, REPRODUCE_EMIT_ARGS,  # noqa: E402
                               REPRODUCE_LOG, RUN_TIMEOUT, SYSTEM_PATH, USER, as_user as _as_user,
                               env_file as _env_file, keep_accounting, reproduce_stage, run as _run,
                               run_job_ids, stop as _stop)
from runs_panel_follow import PanelFollower, report as panel_report, start_user_lab  # noqa: E402

SHOTS = Path(os.environ.get("ARI_TEST_REPORT_DIR") or REPO / "test-artifacts") / "whole-run"
DOCS_SHOTS = ("whole-run-outside-envelope-en.png", "whole-run-reproduce-job-ja.png")
OVER_TIME = r"time limit 0?1:00:00, you approved 00:30:00"
"""The job's time limit against the wizard's walltime: squeue's %l while the queue lists the job
(1:00:00), sacct's Timelimit once it left (01:00:00)."""
MAX_NODES = 3  # emit's --max-nodes: the search evaluates exactly this many nodes



def _phase_words() -> dict[str, dict[str, str]]:
    """The phase badge as the panel writes it in each language: its English words and the lab
    extension's Japanese catalog."""
    english = {phase: phase.replace("-", " ") for phase in
               ("not-started", "starting", "exploring", "paper", "reproduce", "finished", "failed", "interrupted")}
    catalog = json.loads((REPO / "ari_jupyter" / "locale" / "ja_JP" / "LC_MESSAGES" / "ari_jupyter.json").read_text())
    catalog = catalog.get("locale_data", catalog).get("ari_jupyter", catalog)
    return {"en": english, "ja": {phase: catalog[word][0] for phase, word in english.items()}}


PHASE_WORDS = _phase_words()


def best_node_id(tree: dict, best: dict) -> str:
    """The node of tree.json with the best value of the metric (higher is better here)."""
    scored = [(n["metrics"][best["name"]], n["id"]) for n in tree["nodes"]
              if isinstance((n.get("metrics") or {}).get(best["name"]), (int, float))]
    return max(scored)[1]


def _holding_its_allocation(status: dict) -> list[str]:
    """The jobs a user would cancel: BFTS jobs still running after they printed their result."""
    return [job["job_id"] for job in status["jobs"]["jobs"]
            if job["kind"] == "bfts" and job["state"] == "RUNNING"
            and any("holding the allocation" in line for line in job["tail"])]


def test_the_whole_run_from_the_wizards_checkpoint(testbed_acct, ari_for_users, runner, tmp_path):
    bed, user, dest = testbed_acct, runner, ari_for_users
    started = time.monotonic()
    log = tmp_path / "requests.jsonl"
    # the agent overreaches: its depth-1 nodes' jobs ask an hour (the user approved 30 minutes a
    # job) and keep their 2 nodes after they measured, until the user cancels them in the Runs
    # panel. (More nodes than approved cannot run here: the run approves 2, all the test bed has;
    # tests/testbed/test_runs_envelope_testbed.py submits that case as ARI's hpc skill does.)
    server = serve(log, options=Options(greedy_depth=1, linger_s=120, status_wait_s=10))
    labs: dict = {}
    follower = None
    api_base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    key = "sk-canary-" + secrets.token_hex(12)
    slurm_env = {k: bed.env[k] for k in ("SLURM_CONF", "MODULEPATH", "BASH_ENV") if k in bed.env}
    base_env = {"HOME": str(HOME), "USER": USER, "LOGNAME": USER, "LANG": "C.UTF-8", **slurm_env,
                "ARI_JUPYTER_WORKSPACES_FILE": str(HOME / ".ari-workspaces.json")}
    try:
        # 1. the wizard's side, as the user: checkpoint and hand-off script
        emit = _run(_as_user(user, [
            "ari-jupyter", "emit", "--json", "--title", "Triad bandwidth",
            "--goal", "Measure the bandwidth of a triad loop in a SLURM job and how it changes with the array length.",
            "--metric", "triad_mbps", "--partition", "small", "--max-cpus", "2", "--walltime", "00:30:00",
            "--module", "openmpi/4.1", "--workspace", str(HOME / "ari"),
            *REPRODUCE_EMIT_ARGS,
            "--llm-backend", "openai", "--llm-model", f"openai/{MAIN}", "--llm-api-base", api_base,
            *[a for phase, model in PHASE_MODELS.items() for a in ("--phase-model", f"{phase}=openai/{model}")],
            "--max-nodes", str(MAX_NODES), "--max-depth", "2", "--parallel", "1", "--max-react", "20",
            "--node-timeout-min", "10", "--no-review"],
            {**base_env, "PATH": f"{dest}/jupyter/bin:{SYSTEM_PATH}", "ARI_ROOT": f"{dest}/src"}),
            cwd=HOME, timeout=600)
        assert emit.returncode == 0, emit.stderr[-3000:]
        emitted = json.loads(emit.stdout)
        ckpt = Path(emitted["checkpoint_dir"])
        run_id, workspace = ckpt.name, ckpt.parent.parent
        dotenv = _env_file(ckpt / ".env")
        assert dotenv["ARI_LLM_API_BASE"] == api_base and dotenv["ARI_ENV_FILE"] == str(ckpt / "bfts_env.sh")
        assert "module load openmpi/4.1" in (ckpt / "bfts_env.sh").read_text()

        # 2. the second terminal: ARI on PATH, the key in the shell, the hand-off as printed
        terminal = {**base_env, "PATH": f"{dest}/venv/bin:{SYSTEM_PATH}",
                    "LD_LIBRARY_PATH": f"{dest}/python/lib",  # the relocated Python's libpython
                    "LITELLM_LOCAL_MODEL_COST_MAP": "True", "ARI_MEMORY_BACKEND": "in_memory",
                    "NO_PROXY": "127.0.0.1,localhost", "OPENAI_API_KEY": key,
                    # the reproduce job stays long enough for both panels to show it running:
                    # each takes its queue from an answer up to 30 s old, polled up to 30 s apart
                    "SCRIPTED_REPRODUCE_HOLD_S": "75"}
        assert emitted["handoff_command"] == f"bash {workspace}/launch/{run_id}.sh"
        # the user's own JupyterLab (English and 日本語), the Runs panel open on this run
        lab_dirs = Path(tempfile.mkdtemp(prefix="ari-wholerun-labs-"))
        os.chmod(lab_dirs, 0o755)
        for lang in ("en", "ja"):
            labs[lang] = start_user_lab(user, HOME, workspace, dest / "jupyter" / "bin", base_env,
                                        lab_dirs / lang, lang)
        follower = PanelFollower(user, ckpt, {**base_env, "PATH": f"{dest}/jupyter/bin:{SYSTEM_PATH}"},
                                 dest / "jupyter" / "bin", labs=labs, run_id=run_id, shots=SHOTS,
                                 cancel_when=_holding_its_allocation).start()
        assert follower.ready.wait(300) and not follower.problems, follower.problems
        with open(tmp_path / "terminal.log", "wb") as out:
            proc = subprocess.Popen(_as_user(user, emitted["handoff_command"].split(), terminal), cwd=HOME,
                                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
            try:
                proc.wait(timeout=RUN_TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
            finally:
                finished = proc.poll() is not None
                _stop(proc)
        wall = time.monotonic() - started
        follower.wait_for_end(120)
        terminal_log = (tmp_path / "terminal.log").read_text(errors="replace")
        assert finished, f"ari run did not end in {RUN_TIMEOUT:.0f} s:\n{terminal_log[-3000:]}"
        assert proc.returncode == 0, f"the hand-off failed ({proc.returncode}):\n{terminal_log[-3000:]}"
    finally:
        if follower:
            follower.stop()
        for lab in labs.values():
            lab.stop()
        server.shutdown()
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    figures = {"run_id": run_id, "wall_time_s": round(wall, 1), "requests": len(requests)}
    keep = Path(os.environ["ARI_WHOLERUN_KEEP"]) if os.environ.get("ARI_WHOLERUN_KEEP") else None
    if keep:  # the raw run, for recording it as a demo site's run, whatever the checks below say
        shutil.rmtree(keep, ignore_errors=True)
        shutil.copytree(workspace, keep / "workspace", symlinks=True)
        follower.keep(keep)
        keep_accounting(bed, run_job_ids(workspace, follower.queue), keep)  # the bed is up now, not later
        shutil.copy(log, keep / "requests.jsonl")
        (keep / "READY").write_text(f"{workspace}\n")

    # ARI adopted the checkpoint
    tree = json.loads((ckpt / "tree.json").read_text())
    assert tree["run_id"] == run_id
    assert not (HOME / "workspace").exists()

    # 3. BFTS: nodes evaluated with the metric their own job printed
    # (children inherit their parent's files, evidence/ too: a job belongs to the node whose
    # work dir it ran in, its --chdir)
    jobs = {}
    for env_file in sorted((workspace / "experiments" / run_id).glob("*/evidence/job_env_*.txt")):
        job, env = env_file.stem.rsplit("_", 1)[1], _env_file(env_file)
        if Path(env.get("PWD", "")).name != env_file.parent.parent.name:
            continue
        jobs[job] = {"node": env_file.parent.parent.name, "env": env,
                     "modules": (env_file.parent / f"module_list_{job}.txt").read_text(errors="replace"),
                     "output": (workspace / "slurm_logs" / f"slurm_job_{job}.out").read_text(errors="replace")}
    evaluated = {}
    for node in tree["nodes"]:
        value = (node.get("metrics") or {}).get("triad_mbps")
        if node.get("has_real_data") and isinstance(value, (int, float)):
            outputs = [j["output"] for j in jobs.values() if j["node"] == node["id"]]
            printed = [float(v) for o in outputs for v in re.findall(r"(?m)^triad_mbps: ([0-9.]+)$", o)]
            assert value in printed, (f"{node['id']}: metric {value} is not what its job printed ({printed}); "
                                      f"jobs: { {j: (s['node'], s['output'][-200:]) for j, s in jobs.items()} }")
            evaluated[node["id"]] = value
    assert len(evaluated) == MAX_NODES == len(tree["nodes"]), \
        f"ARI evaluated {len(evaluated)} node(s) with a metric: {tree['nodes']}"
    best = max(evaluated, key=evaluated.get)
    nodes_tree = json.loads((ckpt / "nodes_tree.json").read_text())
    figures.update(nodes=len(tree["nodes"]), evaluated=evaluated, best_node=best, best_triad_mbps=evaluated[best])

    # every BFTS job: the user's, --export=NONE, ARI_ENV_FILE sourced, the run's module loaded
    assert len(jobs) >= 2, jobs
    for job, seen in jobs.items():
        env = seen["env"]
        # ARI submitted it with --export=NONE (nothing of the terminal below came through), and the
        # wizard's bfts_env.sh set SLURM_EXPORT_ENV=ALL, so its own sruns start with its environment
        assert env.get("SLURM_EXPORT_ENV") == "ALL", (job, env.get("SLURM_EXPORT_ENV"))
        tasks = int(env.get("SLURM_NTASKS", "1"))
        for launcher in ("srun", "mpirun"):
            ranks = re.findall(rf"(?m)^{launcher} rank (\d+) of {tasks} on (\S+)$", seen["output"])
            assert sorted(r for r, _ in ranks) == [str(i) for i in range(tasks)], (job, launcher, seen["output"])
        # the MPI program's allreduce over its one rank
        assert re.search(rf"(?m)^mpi_ranks: {tasks}\nmpi_rank_sum: {tasks * (tasks - 1) // 2}$", seen["output"]), \
            (job, seen["output"][-1500:])
        assert "execve()" not in seen["output"], seen["output"]
        assert env.get("USER") == USER or env.get("SLURM_JOB_USER") == USER, job
        assert env.get("ARI_ENV_FILE") == str(ckpt / "bfts_env.sh") and env.get("ARI_CHECKPOINT_DIR") == str(ckpt)
        assert env.get("SLURM_JOB_PARTITION") == "small" == env.get("ARI_SLURM_PARTITION")
        assert env.get("SLURM_CPUS_PER_TASK") == "2", job
        assert "openmpi/4.1" in env.get("LOADEDMODULES", ""), job
        assert "openmpi/4.1" in seen["modules"] and "Currently Loaded Modules" in seen["modules"]
        # nothing of the terminal came through (--export=NONE): not its PATH, its variables, its key
        assert str(dest) not in env.get("PATH", "") and "LITELLM_LOCAL_MODEL_COST_MAP" not in env, job
        assert "OPENAI_API_KEY" not in env, job
        assert env.get("SLURMD_NODENAME") in bed.nodes
    figures["bfts_jobs"] = {job: {"node": s["node"], "host": s["env"]["SLURMD_NODENAME"]} for job, s in jobs.items()}

    # 4. the paper pipeline, on to ARI's reproduce stage: ARI's EAR bundled the best node's
    # scripts and wrote reproduce.sh from its run command, ors_seed_sandbox put them into
    # repro_sandbox/ (so ors_build_reproduce, whose PaperBench replicator needs chz and nanoeval
    # the test bed cannot fetch, is skipped by ARI's own rule), and run_reproduce submitted it
    figures["reproduce"] = reproduce_stage(ckpt, terminal_log)
    reproduce_log = ckpt / REPRODUCE_LOG

    # 5. the scripted server's log: API base and the model per phase reached ARI's processes
    assert requests and all(r["path"] == "/v1/chat/completions" for r in requests)
    assert all(r["authorization"] for r in requests)  # the key reached them...
    by_stage: dict[str, set] = {}
    for r in requests:
        by_stage.setdefault(r["stage"], set()).add(r["model"])
    for stage in ("bfts.react", "bfts.evaluate", "bfts.expand"):
        assert stage in by_stage, f"no {stage} request reached the scripted server: {by_stage}"
    for stage, models in by_stage.items():
        if stage in EXPECTED_MODEL:
            assert models == {EXPECTED_MODEL[stage]}, (stage, models)
    chosen = {MAIN, *PHASE_MODELS.values()}
    assert {r["model"] for r in requests} <= chosen, by_stage
    figures["models_by_stage"] = {k: sorted(v) for k, v in by_stage.items()}

    # ...and its value appears nowhere: the server's log, the checkpoint, the workspace, the jobs
    leaks = [str(p) for p in [log, *workspace.rglob("*")] if p.is_file()
             and key.encode() in p.read_bytes()]
    assert not leaks, f"the key's value was written to {leaks}"
    assert key not in terminal_log

    # 6. what the user saw: the Runs panel (English and 日本語) followed the run phase by phase,
    # with the phase, the nodes, the best metric and each job where it ran; Cancel ended the
    # job that kept its allocation, and nothing else
    panel_report(follower, SHOTS)
    follower.keep(SHOTS)
    figures["phases"] = [(t, phase) for t, phase, _ in follower.phases]
    assert not follower.problems, follower.problems
    said = [phase for _, phase, _ in follower.phases]
    assert said[-1] == "finished" and {"exploring", "reproduce"} <= set(said), said
    for phase in said:
        assert {s.lang for s in follower.shown if s.phase == phase} == {"en", "ja"}, (phase, follower.shown)
    for shown in follower.shown:
        assert shown.badge == PHASE_WORDS[shown.lang][shown.phase], (shown.lang, shown.badge)
        assert shown.past_edge == [], (shown.phase, shown.lang, shown.past_edge)  # nothing cut at its edge
        if shown.lang == "en":  # the panel's own reading a moment later: its form, and at the end its counts
            assert re.fullmatch(r"\d+ total: \d+ done, \d+ failed, \d+ running", shown.nodes), shown.nodes
    n = follower.phases[-1][2]["nodes"]
    assert [s.nodes for s in follower.shown if s.phase == "finished" and s.lang == "en"] == [
        f"{n['total']} total: {n['done']} done, {n['failed']} failed, {n['running']} running"]
    final = [s for s in follower.shown if s.phase == "finished"]
    best = follower.phases[-1][2]["best_metric"]
    assert best and best["node_id"] == best_node_id(tree, best), best
    assert {s.best for s in final} == {f"{best['name']} {best['value']} ({best['node_id']})"}, final

    cancelled = follower.cancelled
    assert cancelled, f"no job was cancelled from the panel: {follower.jobs_seen}"
    for greedy, done in cancelled.items():
        # it left the queue, and the panel lists it as accounting recorded its end
        assert done["after_cancel"] == "CANCELLED" and greedy in done["dialog"], done
        # outside the envelope the user approved (1 node for a BFTS job): flagged in status and
        # beside the job in the panel, and cancelled through the cancel the flag offers
        assert [f["rule"] for f in done["findings"]] == ["run-job-outside-envelope"], done["findings"]
        assert re.search(f"Outside what you approved: {OVER_TIME}", done["item"]), done["item"]
        assert done["via"] == "finding", done
        assert done["past_edge"] == [], done["past_edge"]  # the finding's fix wraps in the side panel
        # the panel showed it as a BFTS job on 2 nodes (its queue answer may be up to
        # server/queue_cache.CACHE_SECONDS older than status's: pending there, running here)
        assert re.search(r"(RUNNING|PENDING) · \S+ · 2 nodes \S+ · bfts", done["shown"]), done
        assert jobs[greedy]["env"].get("SLURM_JOB_NUM_NODES") == "2", jobs[greedy]["env"]
        assert re.search(rf"\*\*\* JOB {greedy} ON \S+ CANCELLED AT ", jobs[greedy]["output"]), \
            jobs[greedy]["output"][-500:]
        assert jobs[greedy]["node"] in evaluated  # it had measured: its node keeps its metric
    assert all(not re.search(r"CANCELLED AT", s["output"]) for j, s in jobs.items() if j not in cancelled)
    # with accounting, the finished run's jobs read as they ended: the cancelled ones CANCELLED,
    # the others COMPLETED (none left RUNNING once it is over)
    ended = {j["job_id"]: j["state"] for j in follower.phases[-1][2]["jobs"]["jobs"]}
    assert {j: ended.get(j) for j in cancelled} == {j: "CANCELLED" for j in cancelled}, ended
    assert {s for j, s in ended.items() if j not in cancelled} == {"COMPLETED"}, ended
    greedy = next(iter(cancelled))
    # the reproduce job as the panel listed it, queued and then running on both nodes
    rows = {lang: [seen[lang]["text"] for seen in follower.jobs_seen.values()
                   if seen["status"]["kind"] == "reproduce" and (seen.get(lang) or {}).get("state") == "RUNNING"]
            for lang in ("en", "ja")}
    assert rows["en"] and rows["ja"], follower.jobs_seen
    assert re.search(r"RUNNING · \S+ · 2 nodes n\[1-2\] · reproduce", rows["en"][0]), rows
    assert re.search(r"RUNNING · \S+ · 2 ノード n\[1-2\] · reproduce", rows["ja"][0]), rows
    figures["panel"] = {"cancelled": cancelled,
                        "jobs_seen": {f"{j} {st}": seen for (j, st), seen in follower.jobs_seen.items()}}
    for name in DOCS_SHOTS:  # the README's figures come from the run they show
        shutil.copy(SHOTS / name, REPO / "docs" / "screenshots" / name)

    # 7. the doctor on the run's real logs: what it says is true
    def doctor(*files: Path) -> list[dict]:
        done = _run(_as_user(user, [f"{dest}/jupyter/bin/ari-jupyter", "doctor", "--json", "--checkpoint",
                                    str(ckpt), *map(str, files)],
                             {**base_env, "PATH": f"{dest}/jupyter/bin:{SYSTEM_PATH}"}), timeout=120)
        assert done.returncode in (0, 1), done.stderr[-2000:]
        return json.loads(done.stdout)
    quiet = [j for j in jobs if j not in cancelled][0]
    said_of = {"reproduce.log": doctor(reproduce_log),
               "bfts job": doctor(workspace / "slurm_logs" / f"slurm_job_{quiet}.out"),
               "cancelled job": doctor(workspace / "slurm_logs" / f"slurm_job_{greedy}.out")}
    figures["doctor"] = {k: [(f["rule"], f["severity"]) for f in v] for k, v in said_of.items()}
    for name in ("reproduce.log", "bfts job"):
        assert [f for f in said_of[name] if f["severity"] in ("error", "warning")] == [], (name, said_of[name])
    # the job the panel's Cancel ended: the doctor names that cause (the checkpoint's cancel
    # record), no longer a guess, so nothing of it is a warning
    told = said_of["cancelled job"]
    assert [f for f in told if f["severity"] in ("error", "warning")] == [], said_of
    [cancel] = [f for f in told if f["rule"] == "job-cancelled"]
    assert (cancel["severity"], cancel["fix_id"]) == ("info", "doctor.job-cancelled.recorded.fix"), cancel

    if keep:
        (keep / "figures.json").write_text(json.dumps(figures, indent=2) + "\n")

    report_dir = os.environ.get("ARI_TEST_REPORT_DIR")
    if report_dir:
        out = Path(report_dir) / "whole-run"
        out.mkdir(parents=True, exist_ok=True)
        (out / "figures.json").write_text(json.dumps(figures, indent=2) + "\n")
        shutil.copy(log, out / "requests.jsonl")
        (out / "terminal-tail.log").write_text(terminal_log[-20000:])
    print(json.dumps(figures, indent=2))
    assert nodes_tree  # ARI wrote its tree for the Runs panel
