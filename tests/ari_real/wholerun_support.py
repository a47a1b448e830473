"""What the whole-run tests share: ARI and ari-jupyter installed for an unprivileged user, that
user with a network home both nodes see, and running things as that user.

A test module imports the fixtures (``ari_for_users``, ``runner``) by name, so pytest finds them
(a conftest.py here would shadow tests/conftest.py, which tests import as ``conftest``).
"""
from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import ari_env as _ari  # noqa: E402
from ari_jupyter.runs.jobs import ACTIVE_STATES, SEP, SQUEUE_FORMAT  # noqa: E402
from ari_jupyter.slurm.accounting import parse_accounting, sacct_argv  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TESTBED = REPO / "tests" / "testbed"
USER = os.environ.get("ARI_WHOLERUN_USER", "ari-runner")
HOME = Path("/home") / USER
SHAREDFS_ENV = {"ARI_SHAREDFS_DIR": os.environ.get("ARI_WHOLERUN_SHAREDFS_DIR", "/tmp/ari-sharedfs-wholerun"),
                "ARI_SHAREDFS_PORT": os.environ.get("ARI_WHOLERUN_SHAREDFS_PORT", "16926"),
                "ARI_SHAREDFS_MOUNT": str(HOME)}
RUN_TIMEOUT = float(os.environ.get("ARI_WHOLERUN_TIMEOUT", "1800"))
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"

# the run settings: one model per phase (litellm's openai/ prefix: an OpenAI-compatible server)
MAIN = "scripted-main"
PHASE_MODELS = {"idea": "scripted-idea", "bfts": "scripted-bfts", "coding": "scripted-coding",
                # ARI passes its API base to the evaluator only when the eval model is the
                # agent's own (ari-core core.py); another eval model would dial api.openai.com
                "eval": "scripted-coding",
                "paper": "scripted-paper", "review": "scripted-review"}
# which model ARI really asks for each stage the scripted server recognises
EXPECTED_MODEL = {"bfts.react": "scripted-coding", "bfts.evaluate": "scripted-coding",
                  "bfts.expand": "scripted-bfts", "bfts.select": "scripted-bfts",
                  # ARI_MODEL_EVAL: the evaluator skill's semantic review
                  "review.semantic": "scripted-coding",
                  # the paper skills read ARI_LLM_MODEL only (ARI_MODEL_PAPER is read by nothing)
                  "paper.references": MAIN, "paper.figures": MAIN, "paper.write": MAIN,
                  "reproduce.rubric": MAIN}

# the reproduce job: MPI on CPUs (ARI's kind cpu_single), 2 nodes x 2 ranks
REPRODUCE_EMIT_ARGS = ("--preset", "cpu_single", "--nodes", "2", "--ranks", "4", "--tasks-per-node", "2")
REPRODUCE_LOG = Path("repro_sandbox") / "reproduce.log"
REPRODUCE_HOSTS = {"n1", "n2"}


def run(argv, *, env=None, timeout=900, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, **kw)


@pytest.fixture(scope="module")
def ari_for_users(ari_env, _testbed) -> Path:
    """ARI and ari-jupyter installed where the user can run them (not under /root). Only under
    the test bed's lock: another session's run may be using them, and its user's home
    (``runner``), until it ends."""
    _testbed.acquire_lock()
    source = _ari.locate()
    assert source.is_tarball, f"this test installs ARI from a snapshot tarball, not {source.path}"
    built = run(["bash", str(TESTBED / "ari-for-users.sh"), "build", str(source.path), _ari.python313()],
                 timeout=2400)
    assert built.returncode == 0, built.stderr[-3000:]
    jupyter = run(["bash", str(TESTBED / "ari-for-users.sh"), "jupyter", str(REPO)], timeout=900)
    assert jupyter.returncode == 0, jupyter.stderr[-3000:]
    return Path(built.stdout.strip().splitlines()[-1]).parent.parent  # $DEST


@pytest.fixture(scope="module")
def runner(ari_for_users):
    """An unprivileged user whose home is a fresh fuse.sshfs mount (files it owns)."""
    created = False
    try:
        pwd.getpwnam(USER)
    except KeyError:
        made = run(["useradd", "-M", "-d", str(HOME), "-s", "/bin/bash", "-U", USER])
        assert made.returncode == 0, made.stderr
        created = True
    user = pwd.getpwnam(USER)
    env = {**os.environ, **SHAREDFS_ENV, "ARI_SHAREDFS_OPTS": f"uid={user.pw_uid},gid={user.pw_gid},cache=no"}
    script = str(TESTBED / "shared-fs.sh")
    run(["bash", script, "stop"], env=env, timeout=120)
    shutil.rmtree(Path(SHAREDFS_ENV["ARI_SHAREDFS_DIR"]) / "export", ignore_errors=True)
    started = run(["bash", script, "start"], env=env, timeout=900)
    assert started.returncode == 0, f"shared filesystem did not start:\n{started.stderr}"
    fstype = run(["findmnt", "-n", "-o", "FSTYPE", "--target", str(HOME)]).stdout.strip()
    assert fstype == "fuse.sshfs", fstype
    try:
        yield user
    finally:
        run(["bash", script, "stop"], env=env, timeout=120)
        if created:
            run(["userdel", USER])


def as_user(user, argv: list[str], env: dict) -> list[str]:
    """argv run as the user with exactly ``env`` (setpriv execs: no extra process)."""
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups", "--",
            "/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv]


def stop(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            continue
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def env_file(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text(errors="replace").splitlines() if "=" in line)


class RunFollower:
    """Follows a run while it goes, as a user watching it would: every ``every`` seconds it asks
    ``ari-jupyter status --json`` (as the user) and the queue (``squeue`` in the Runs panel's
    format), and keeps each phase seen and each distinct queue answer, with the time."""

    def __init__(self, user, checkpoint: Path, env: dict, jupyter_bin: Path, every: float = 2.0):
        self.user, self.checkpoint, self.env, self.every = user, checkpoint, env, every
        self.status_argv = [str(jupyter_bin / "ari-jupyter"), "status", "--json", str(checkpoint)]
        self.phases: list[tuple[float, str, dict]] = []
        self.queue: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._started = 0.0

    def start(self) -> "RunFollower":
        self._started = time.monotonic()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def on_phase(self, phase: str, status: dict) -> None:
        """Called once per new phase (a subclass takes screenshots here)."""

    def after_status(self, status: dict) -> None:
        """Called after each status answer (a subclass acts on the run here)."""

    def _loop(self) -> None:
        while not self._stop.is_set():
            now = round(time.monotonic() - self._started, 1)
            answer = run(as_user(self.user, self.status_argv, self.env), timeout=60)
            try:
                status = json.loads(answer.stdout)
            except ValueError:
                status = None
            if status and (not self.phases or self.phases[-1][1] != status.get("phase")):
                self.phases.append((now, status["phase"], status))
                self.on_phase(status["phase"], status)
            if status:
                self.after_status(status)
            queue = run(as_user(self.user, ["squeue", "-h", "-o", SQUEUE_FORMAT, "-u", self.user.pw_name], self.env), timeout=30)
            if queue.returncode == 0 and (not self.queue or self.queue[-1][1] != queue.stdout):
                self.queue.append((now, queue.stdout))
            self._stop.wait(self.every)

    def keep(self, out: Path) -> None:
        """The timeline as files: phases.json (phase, seconds, jobs) and squeue.jsonl."""
        out.mkdir(parents=True, exist_ok=True)
        (out / "phases.json").write_text(json.dumps(
            [{"t": t, "phase": p, "stage": s.get("stage"), "nodes": s.get("nodes"),
              "best_metric": s.get("best_metric"), "jobs": s.get("jobs", {}).get("jobs", [])}
             for t, p, s in self.phases], indent=1) + "\n")
        (out / "squeue.jsonl").write_text("".join(json.dumps({"t": t, "stdout": q}) + "\n"
                                                  for t, q in self.queue))


def run_job_ids(workspace: Path, queue: list[tuple[float, str]]) -> list[str]:
    """Every job id a run is known by: the squeue answers seen while it went, the job output
    files in its log dir and the environment dumps its jobs wrote from inside."""
    ids = {row.split(SEP, 1)[0].strip() for _, answer in queue for row in answer.splitlines()}
    ids |= {p.stem.rsplit("_", 1)[1] for p in (workspace / "slurm_logs").glob("slurm_job_*.out")}
    ids |= {p.stem.rsplit("_", 1)[1] for p in workspace.rglob("evidence/job_env_*.txt")}
    return sorted((i for i in ids if i.isdigit()), key=int)


def keep_accounting(bed, job_ids: list[str], out: Path, timeout: float = 60.0) -> str:
    """sacct's answer for the run's jobs (the Runs panel's own line, ``slurm.accounting.sacct_argv``),
    asked while the test bed is up, once accounting has every job ended (slurmdbd lags the
    queue a moment), written to ``out`` (sacct.json: the argv, the answer, the job owner's uid)."""
    argv = sacct_argv(job_ids)
    deadline = time.monotonic() + timeout
    while True:
        shown = bed.run(argv, timeout=60)
        rows, _ = parse_accounting(shown.stdout)
        ended = shown.returncode == 0 and {r.job_id for r in rows} >= set(job_ids) \
            and not any(r.state in ACTIVE_STATES for r in rows)
        if ended or time.monotonic() > deadline:
            break
        time.sleep(2)
    out.mkdir(parents=True, exist_ok=True)
    (out / "sacct.json").write_text(json.dumps({"argv": argv, "stdout": shown.stdout,
                                                "uid": pwd.getpwnam(USER).pw_uid}, indent=1) + "\n")
    return shown.stdout


def user_envs(bed, dest: Path, key: str) -> tuple[dict, dict, dict]:
    """The user's three shells: ``base`` (home, SLURM, no ARI), ``jupyter`` (ari-jupyter on
    PATH, the wizard's side) and ``terminal`` (the second terminal: ARI on PATH, the key)."""
    slurm_env = {k: bed.env[k] for k in ("SLURM_CONF", "MODULEPATH", "BASH_ENV") if k in bed.env}
    base = {"HOME": str(HOME), "USER": USER, "LOGNAME": USER, "LANG": "C.UTF-8", **slurm_env,
            "ARI_JUPYTER_WORKSPACES_FILE": str(HOME / ".ari-workspaces.json")}
    jupyter = {**base, "PATH": f"{dest}/jupyter/bin:{SYSTEM_PATH}", "ARI_ROOT": f"{dest}/src"}
    terminal = {**base, "PATH": f"{dest}/venv/bin:{SYSTEM_PATH}",
                "LD_LIBRARY_PATH": f"{dest}/python/lib",  # the relocated Python's libpython
                "LITELLM_LOCAL_MODEL_COST_MAP": "True", "ARI_MEMORY_BACKEND": "in_memory",
                "NO_PROXY": "127.0.0.1,localhost", "OPENAI_API_KEY": key}
    return base, jupyter, terminal


def phase_models_args(api_base: str) -> list[str]:
    """emit's run settings: the openai backend at the scripted LLM, one model per phase."""
    return ["--llm-backend", "openai", "--llm-model", f"openai/{MAIN}", "--llm-api-base", api_base,
            *[a for phase, model in PHASE_MODELS.items() for a in ("--phase-model", f"{phase}=openai/{model}")]]


def queued_jobs(user, env: dict) -> dict[str, str]:
    """The user's jobs in the queue now: job id → state (``squeue``)."""
    shown = run(as_user(user, ["squeue", "-h", "-o", "%i %T", "-u", user.pw_name], env), timeout=30)
    assert shown.returncode == 0, shown.stderr
    return dict(line.split() for line in shown.stdout.splitlines() if line.strip())


def wait_for(what: str, found, *, timeout: float, every: float = 1.0):
    """Poll ``found()`` until it returns something true, and return that; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = found()
        if answer:
            return answer
        time.sleep(every)
    pytest.fail(f"{what}: not within {timeout:.0f} s")


def keep_figures(name: str, figures: dict, files=(), follower: RunFollower | None = None) -> None:
    """A test's figures (and some files, the follower's timeline) in $ARI_TEST_REPORT_DIR/name/."""
    report_dir = os.environ.get("ARI_TEST_REPORT_DIR")
    if not report_dir:
        return
    out = Path(report_dir) / name
    out.mkdir(parents=True, exist_ok=True)
    (out / "figures.json").write_text(json.dumps(figures, indent=2) + "\n")
    for kept in files:
        shutil.copy(kept, out / Path(kept).name)
    if follower is not None:
        follower.keep(out)


def reproduce_log_seen(text: str, partition: str = "small") -> dict:
    """What the reproduce job's output (reproduce.log) proves: ``srun`` and Open MPI's ``mpirun``
    put ranks 0-3 on both nodes, and the MPI program (built with ``mpicc`` inside the job) summed
    the ranks of all four in its allreduce (0+1+2+3 = 6 only when every rank took part); the
    job's id and partition as the job printed them."""
    seen: dict = {}
    for launcher in ("srun", "mpirun"):
        ranks = sorted(re.findall(rf"(?m)^{launcher} rank (\d+) of (\d+) on (\S+)$", text))
        assert [(r, n) for r, n, _ in ranks] == [(str(i), "4") for i in range(4)], (launcher, text)
        assert {h for _, _, h in ranks} == REPRODUCE_HOSTS, (launcher, ranks)
        seen[f"{launcher}_ranks"] = {r: h for r, _, h in ranks}
    # the compiled MPI program: its allreduce summed the ranks of all four, on both nodes
    summed = re.findall(r"(?m)^mpi_ranks: (\d+)\nmpi_rank_sum: (\d+)$", text)
    assert summed == [("4", "6")], (summed, text[-2000:])
    seen["mpi_allreduce"] = {"ranks": 4, "rank_sum": 6}
    job = re.search(r"(?m)^job (\d+) on (\S+) partition=(\S+)$", text)
    assert job and job.group(3) == partition, text
    seen["job_id"] = job.group(1)
    return seen


def reproduce_stage(ckpt: Path, said: str = "") -> dict:
    """ARI's reproduce stage as the run left it, checked: ARI's EAR bundled the best node's
    scripts and wrote reproduce.sh from its run command, ors_seed_sandbox put them into
    repro_sandbox/ (so ors_build_reproduce, whose PaperBench replicator needs chz and nanoeval
    the test bed cannot fetch, is skipped by ARI's own rule), and run_reproduce submitted it as a
    2-node, 4-task SLURM job that ended 0, whose output ``reproduce_log_seen`` reads. ``said``
    (the run's log) is shown when the pipeline did not get there. The figures, with the job id."""
    stages = {name: json.loads((ckpt / name).read_text())
              for name in ("ors_seed.json", "ors_replicator.json", "ors_phase1.json")
              if (ckpt / name).is_file()}
    assert "ors_phase1.json" in stages, f"the pipeline did not reach ors_run_reproduce: {said[-3000:]}"
    phase1 = stages["ors_phase1.json"]
    reproduce_log = ckpt / REPRODUCE_LOG
    reproduce_text = reproduce_log.read_text(errors="replace") if reproduce_log.is_file() else ""
    figures = {"seed": stages.get("ors_seed.json"), "replicator": stages.get("ors_replicator.json"),
               "phase1": {k: phase1.get(k) for k in ("executed", "exit_code", "error", "sandbox_kind",
                                                      "partition", "nodes", "ntasks", "elapsed_sec")},
               "log": reproduce_text[-3000:]}
    assert phase1.get("executed") and phase1.get("exit_code") == 0, (phase1, reproduce_text[-2000:])
    assert phase1.get("sandbox_kind") == "slurm" and phase1.get("nodes") == 2 and phase1.get("ntasks") == 4, phase1
    figures.update(reproduce_log_seen(reproduce_text))
    # unlike the BFTS jobs (--export=NONE), ARI submits the reproduce job with the environment
    # of `ari run`: recorded (the job's env dump shows the name, its value redacted), not asserted
    repro_env = ckpt / "repro_sandbox" / "code" / "evidence" / f"job_env_{figures['job_id']}.txt"
    figures["job_env_has_OPENAI_API_KEY"] = (
        "OPENAI_API_KEY" in env_file(repro_env) if repro_env.is_file() else None)
    return figures
