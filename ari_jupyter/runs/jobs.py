"""The SLURM jobs of one ARI run: list them, tail their output, cancel them.

A job belongs to the run when it is the user's own job and either
- ARI's reproduce job: name ``ari-ors`` with ``--chdir <checkpoint>/repro_sandbox``
  (``ari-skill-paper-re`` ``_run_reproduce_slurm``), output ``repro_sandbox/reproduce.log``; or
- a BFTS job of ``ari-skill-hpc``: work dir (``-D``) inside the checkpoint or inside the run's
  node work dirs ``<workspace>/experiments/<run_id>/``, output
  ``$SLURM_LOG_DIR/slurm_job_<id>.out`` (SLURM_LOG_DIR from the checkpoint's ``.env``).
A job id found anywhere else (a file, a request) is never trusted: cancel re-reads the job
from ``squeue`` and refuses what is not this user's and this run's.

On a demo site, and for a recorded run wherever it is read, nothing asks SLURM: a recorded
run's jobs are the recording's, merged as a live site's are: accounting's recorded rows
(``source`` "sacct": how each job ended) under the queue as the run ended; a recording without
accounting gives each job as squeue last showed it (``source`` "recording"). A demo site has
no queue for any other run (``scheduler`` "recording").
"""
from __future__ import annotations

import asyncio
import getpass
import os
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..ari.followup import FOLLOWUP_JOB_NAME
from ..checkpoint.ownership import foreign_output
from ..hosts.host import Host, SiteError
from ..hosts.recorded_run import RecordedRun, recording_of
from ..i18n import DEFAULT_LANGUAGE, message, message_of, say, text
from ..probes.context import is_unconfigured
from ..base.files import atomic_write
from ..slurm.accounting import Accounted, parse_accounting
from ..slurm.pending import advice_id
from ..slurm.cancel_record import RECORD, render_cancels
from .accounting import accounted, chain_job_ids, log_dir_job_ids, runs_start, unnamed_since
from .pending import waiting
from .reading import linked_out, read_small_text, redaction_env, tail
from ..base.numbers import digits_key

REPRODUCE_JOB_NAME = "ari-ors"
SEP = "\x1f"
SQUEUE_FIELDS = ("%i", "%j", "%T", "%M", "%D", "%R", "%u", "%Z", "%P", "%c", "%b", "%l")
"""Id, name, state, elapsed, nodes, node list or reason, user, work dir; then what the job asks
for, compared with what the user approved (``envelope``): partition, CPUs per node, TRES per
node (its GPUs), time limit."""
SQUEUE_FORMAT = SEP.join(SQUEUE_FIELDS)
SQUEUE_STATES = "all"
"""``squeue -t all``: jobs that ended lately too (SLURM keeps them MinJobAge, 300 s by default),
so a job ended by its time limit is seen as TIMEOUT where no accounting (sacct) exists."""
ENDED_KEPT = frozenset({"TIMEOUT"})
"""Of the ended jobs squeue still lists, the ones kept: the time limit ended the run's job.
The others (a cancelled, a completed job) leave the list as they leave the queue."""
ACTIVE_STATES = frozenset({"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED",
                           "REQUEUED", "RESIZING", "SIGNALING", "STAGE_OUT"})
COMMAND_TIMEOUT = 10.0
_JOB_ID = re.compile(r"^[0-9]+(?:_[0-9]+)?$")


@dataclass(frozen=True, slots=True)
class Job:
    job_id: str
    name: str
    state: str
    elapsed: str = ""
    nodes: str = ""
    where: str = ""
    """The node list when running, the reason in parentheses when pending."""
    user: str = ""
    work_dir: str = ""
    kind: str = ""
    """'reproduce' or 'bfts' once attributed to a run."""
    output: str = ""
    tail: tuple[str, ...] = ()
    source: str = "squeue"
    partition: str = ""
    cpus_per_node: str = ""
    tres_per_node: str = ""
    """``%b``: ``gres/gpu:2``, ``N/A``."""
    time_limit: str = ""
    outside: tuple[Any, ...] = ()
    """What the job asks beyond what the user approved (``envelope.Over``), once compared."""
    exit_code: str = ""
    """``<code>:<signal>`` as accounting (sacct) recorded it; empty where it has not."""
    elapsed_s: int | None = None
    """Elapsed seconds as accounting recorded them; None where it has not."""
    reason: str = ""
    """Why a pending job waits (``squeue --start``'s ``%r`` code); empty otherwise."""
    expected_start: str = ""
    """When the scheduler expects a pending job to start (ISO); empty while it has no estimate."""
    cancelled_by: dict[str, Any] | None = None
    """Who cancelled it, as the checkpoint's cancel record says (``slurm.cancel_record``): ari-jupyter's
    Cancel, or the Runs panel's while a recorded run went; None where the record does not hold it."""

    def pending_said(self) -> dict[str, Any] | None:
        """Why it waits, when it may start and what the user can do, as a sentence (or None)."""
        if not self.reason:
            return None
        return message("runs.pending.line" if self.expected_start else "runs.pending.line_no_start",
                       reason=self.reason, start=self.expected_start,
                       advice=message(advice_id(self.reason), reason=self.reason, job=self.job_id))

    @property
    def active(self) -> bool:
        """In the queue now; a recorded job (``source`` "recording") never is."""
        if self.source == "recording" or not self.state:
            return False
        return self.state.split()[0] in ACTIVE_STATES

    def to_json(self) -> dict[str, Any]:
        return {"job_id": self.job_id, "name": self.name, "state": self.state,
                "elapsed": self.elapsed, "nodes": self.nodes, "where": self.where,
                "kind": self.kind, "work_dir": self.work_dir, "output": self.output,
                "tail": list(self.tail), "source": self.source, "partition": self.partition,
                "cpus_per_node": self.cpus_per_node, "tres_per_node": self.tres_per_node,
                "time_limit": self.time_limit, "exit_code": self.exit_code,
                "elapsed_s": self.elapsed_s, "reason": self.reason,
                "expected_start": self.expected_start, "pending": self.pending_said(),
                "pending_text": say(self.pending_said(), DEFAULT_LANGUAGE) if self.reason else "",
                "cancelled_by": self.cancelled_by,
                "cancelled_text": say(self.cancelled_by, DEFAULT_LANGUAGE) if self.cancelled_by else "",
                "outside": [o.to_json() for o in self.outside],
                "outside_text": say([o.said() for o in self.outside], DEFAULT_LANGUAGE)
                if self.outside else ""}


@dataclass(frozen=True)
class JobsView:
    """What the scheduler says about a run's jobs, and how sure that is."""

    jobs: tuple[Job, ...] = ()
    scheduler: str = "ok"
    """'ok', 'absent' (no squeue here), 'error' (squeue failed: ``problem`` says why),
    'partial' (squeue answered, but not all of it could be read: its output was cut at the
    output cap, or rows could not be read; the jobs listed are the ones read, others of the run
    may be missing, ``problem`` says why) or 'recording' (a demo site or a recorded run: the
    jobs are the recording's, SLURM not asked)."""
    problem: str = ""
    accounting: str = "unknown"
    """'yes' (sacct answered), 'no' (no accounting storage: finished jobs are not listed)."""

    def to_json(self) -> dict[str, Any]:
        out = {"jobs": [j.to_json() for j in self.jobs], "scheduler": self.scheduler,
               "problem": str(self.problem), "accounting": self.accounting}
        if said := message_of(self.problem):
            out["problem_message"] = said
        return out


def current_user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry and no LOGNAME: fall back to the uid
        return str(os.getuid())


def parse_squeue(text: str) -> list[Job]:
    """Rows of ``squeue -h -o SQUEUE_FORMAT`` (or its first 8 fields, as recorded before the
    envelope's were added); rows that cannot be read are skipped (``read_squeue`` counts them)."""
    return read_squeue(text)[0]


_ROW_HEAD = re.compile(r"^[0-9]+(?:_[0-9]+|_\[[^\x1f\n]*\])?\x1f")
"""How a row starts: a job id (an array's task, or its pending tasks collapsed) and the separator
(anchored: a search of a long line of digits tries one start, not every one)."""
_STATE = re.compile(r"[A-Z][A-Z_]*(?: .*)?")


def read_squeue(text: str, keep: Callable[[Job], bool] | None = None) -> tuple[list[Job], int]:
    """``parse_squeue``'s jobs and how many rows could not be read. A job name is free text:
    one holding the separator keeps its row (the other fields are counted from both ends), one
    holding a line break keeps it too (a line that does not start a row continues the one
    before; only ``\\n`` ends a line, so a ``\\r`` never does). A row still unreadable is counted,
    never silently dropped: a caller must not take the answer for the whole queue.
    ``keep``: only the jobs it takes are kept (the rest are read and let go)."""
    may_keep = keep.may_keep if isinstance(keep, RunsFilter) else None
    jobs, _read, unreadable = scan_squeue(text, keep, may_keep)
    return jobs, unreadable


def scan_squeue(text: str, keep: Callable[[Job], bool] | None = None,
                may_keep: Callable[[str, str], bool] | None = None) -> tuple[list[Job], int, int]:
    """``read_squeue`` row by row: the jobs ``keep`` takes, how many jobs were read, how many
    rows could not be read. The answer is walked a line at a time and each row becomes its job
    at once (a 100,000-row queue is never held as rows, nor as jobs but the ones kept); a
    field many rows share (a state, a user, a partition) is held once. ``may_keep(user,
    work_dir)`` (``RunsFilter.may_keep``), when given, lets a row go before it becomes a job."""
    jobs: list[Job] = []
    read = unreadable = 0
    shared: dict[str, str] = {}
    for row in _rows(text):
        job = _job_of_row(row.split(SEP), shared, may_keep) if row is not None else None
        if job is None:
            unreadable += 1
        elif _JOB_ID.match(job.job_id):  # a collapsed array of pending tasks is left out, as before
            read += 1
            if job is not _LET_GO and (keep is None or keep(job)):
                jobs.append(job)
    return jobs, read, unreadable


def _rows(text: str) -> Iterator[str | None]:
    """squeue's rows, a line at a time (a line that does not start a row continues the one
    before); None for a line that is no row's."""
    row: str | None = None
    start = 0
    while True:
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        if _ROW_HEAD.match(line):
            if row is not None:
                yield row
            row = line
        elif row is not None and line:
            row += "\n" + line
        elif line.strip():
            yield None
        if end < 0:
            break
        start = end + 1
    if row is not None:
        yield row


_LET_GO = Job("0", "", "")
"""What ``_job_of_row`` gives for a readable row ``may_keep`` lets go (a job id that counts as read)."""
_COLLAPSED = Job("[collapsed]", "", "")
"""... and for one that is a collapsed array of pending tasks (not counted, as ever)."""


def _job_of_row(parts: list[str], shared: dict[str, str],
                may_keep: Callable[[str, str], bool] | None = None) -> Job | None:
    """A row's job; None when it cannot be read; ``_LET_GO`` when ``may_keep`` lets it go.
    ``shared`` holds one copy of each value the rows repeat (all fields but the id, the name
    and the work dir)."""
    if len(parts) < 8:
        return None
    width = len(SQUEUE_FIELDS) if len(parts) >= len(SQUEUE_FIELDS) else 8
    extra = len(parts) - width  # separators inside the job name
    state = parts[2 + extra].strip()
    if not _STATE.fullmatch(state):
        return None
    if may_keep is not None and not may_keep(parts[6 + extra].strip(), parts[7 + extra].strip()):
        return _LET_GO if _JOB_ID.match(parts[0].strip()) else _COLLAPSED
    one = shared.setdefault  # (spelled out field by field: this runs once per row of the answer)
    elapsed, nodes, where, user = (one(p, p) for p in (parts[3 + extra].strip(), parts[4 + extra].strip(),
                                                       parts[5 + extra].strip(), parts[6 + extra].strip()))
    if width > 8:
        partition, cpus, tres, limit = (one(p, p) for p in map(str.strip, parts[8 + extra:]))
    else:
        partition = cpus = tres = limit = ""
    return Job(parts[0].strip(), SEP.join(parts[1:2 + extra]).strip(), one(state, state), elapsed,
               nodes, where, user, parts[7 + extra].strip(), partition=partition,
               cpus_per_node=cpus, tres_per_node=tres, time_limit=limit)


def job_of(row: Accounted) -> Job:
    """An accounting row (``slurm.accounting``) as a job (``source`` "sacct")."""
    return Job(row.job_id, row.name, row.state, row.elapsed, str(row.nodes), row.node_list,
               row.user, row.work_dir, source="sacct", time_limit=row.time_limit,
               exit_code=row.exit_code, elapsed_s=row.elapsed_s)


def merged(queued: Sequence[Job], finished: Sequence[Job], queue_whole: bool) -> list[Job]:
    """A run's jobs: the queue's where it lists a job (it is fresher, with accounting's exit
    code and seconds added), else accounting's. A job accounting still calls active that a whole
    queue no longer lists has ended (accounting lags the queue a moment): never shown running."""
    jobs = {j.job_id: replace(j, state="UNKNOWN") if j.active and queue_whole else j
            for j in finished}
    for job in queued:
        known = jobs.get(job.job_id)
        jobs[job.job_id] = job if known is None else replace(
            job, exit_code=known.exit_code, elapsed_s=known.elapsed_s)
    return sorted(jobs.values(), key=lambda j: _id_key(j.job_id))


def _real(path: str | Path) -> str:
    return os.path.realpath(os.path.expanduser(str(path)))


def _resolver() -> Callable[[str], str]:
    """``_real`` for the many work dirs of one answer: each folder above a work dir resolved
    and listed once (a 100,000-row queue's rows share a few), a work dir resolved on its own
    only when its folder holds a link of its name or cannot be listed."""
    folders: dict[str, tuple[str, frozenset[str] | None]] = {}

    def real(path: str) -> str:
        if path.startswith("~"):
            path = os.path.expanduser(path)
        # str.rpartition, not os.path.split: this runs once per row of the answer
        folder, _sep, name = path.rpartition("/")
        if not _sep or name in ("", ".", ".."):
            return _real(path)
        known = folders.get(folder)
        if known is None:
            known = folders[folder] = (_real(folder or "/").rstrip("/") + "/", _links_in(folder or "/"))
        whole = known[0] + name
        return _real(whole) if known[1] is None or name in known[1] else whole
    return real


def _links_in(folder: str) -> frozenset[str] | None:
    """The names of the links in ``folder`` (none when it does not exist); None when it
    cannot be listed."""
    try:
        with os.scandir(folder) as entries:
            return frozenset(entry.name for entry in entries if entry.is_symlink())
    except (FileNotFoundError, NotADirectoryError):
        return frozenset()
    except OSError:
        return None


class RunsFilter:
    """Whether a job is one of these runs' (``RunScope.kind_of``), the work dirs of one answer
    resolved through one ``_resolver``; ``may_keep`` answers from a row's user and work dir
    alone, before the row is made a job (most rows of a long queue are other work)."""

    def __init__(self, scopes: Sequence["RunScope"]):
        self.scopes = tuple(scopes)
        self.real = _resolver()
        self.users = frozenset(scope.user for scope in self.scopes)
        # every kind of a run's job works inside its checkpoint or its experiments folder
        self.roots = tuple(root for scope in self.scopes for root in (scope.checkpoint, scope.experiments))

    def __call__(self, job: Job) -> bool:
        return any(scope.kind_of(job, self.real) for scope in self.scopes)

    def may_keep(self, user: str, work_dir: str) -> bool:
        if user not in self.users or not work_dir:
            return False
        work = self.real(work_dir)
        return any(_inside(work, root) for root in self.roots)


def of_runs(scopes: Sequence["RunScope"]) -> RunsFilter:
    """``RunsFilter(scopes)``: whether a job is one of these runs'."""
    return RunsFilter(scopes)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def workspace_root(checkpoint: Path) -> Path:
    """ARI's root for ``experiments/``: the parent of the ``checkpoints`` directory."""
    parent = checkpoint.parent
    return parent.parent if parent.name == "checkpoints" else parent


def slurm_log_dir(checkpoint: Path) -> str:
    """SLURM_LOG_DIR from the checkpoint's .env (what the hpc skill writes job output to)."""
    for line in read_small_text(checkpoint / ".env").splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip() == "SLURM_LOG_DIR" and value.strip().startswith("/"):
            return value.strip()
    return ""


@dataclass(frozen=True)
class RunScope:
    """Which work dirs make a job this run's."""

    checkpoint: str
    repro_sandbox: str
    experiments: str
    log_dir: str
    user: str = field(default_factory=current_user)

    @classmethod
    def of(cls, checkpoint: Path, user: str | None = None) -> "RunScope":
        ckpt = _real(checkpoint)
        root = _real(workspace_root(Path(ckpt)))
        log_dir = slurm_log_dir(Path(ckpt))
        return cls(ckpt, f"{ckpt}/repro_sandbox", f"{root}/experiments/{Path(ckpt).name}",
                   _real(log_dir) if log_dir else "", user or current_user())

    def kind_of(self, job: Job, real: Callable[[str], str] = _real) -> str:
        """'reproduce', 'bfts', 'followup' (a follow-up allocation of the run's chain) or ''
        (not this run's); ``real`` resolves the work dir."""
        if job.user != self.user or not job.work_dir:
            return ""
        work = real(job.work_dir)
        if job.name == REPRODUCE_JOB_NAME and work == self.repro_sandbox:
            return "reproduce"
        if job.name == FOLLOWUP_JOB_NAME and work == self.checkpoint:
            return "followup"
        if _inside(work, self.experiments) or (_inside(work, self.checkpoint)
                                              and job.name != REPRODUCE_JOB_NAME):
            return "bfts"
        return ""

    def output_of(self, job: Job) -> str:
        if job.kind == "reproduce":
            return f"{self.repro_sandbox}/reproduce.log"
        if job.kind == "followup":
            return f"{self.checkpoint}/followup_{job.job_id}.out"
        if self.log_dir:
            return f"{self.log_dir}/slurm_job_{job.job_id}.out"
        return ""


def attribute(jobs: Sequence[Job], scope: RunScope, tail_lines: int = 20) -> list[Job]:
    """The jobs that are this run's, with their kind, output file and its tail (none when the
    file is not the user's own: ``ownership.foreign_output``)."""
    mine = []
    secrets = redaction_env(Path(scope.checkpoint))  # the checkpoint's own .env keys too
    for job in jobs:
        kind = scope.kind_of(job)
        if not kind:
            continue
        job = replace(job, kind=kind)
        output = scope.output_of(job)
        # another user's text (a planted file, a folder he can write) is never shown as the job's
        shown = output and tail_lines and foreign_output(output) is None
        lines = tail(Path(output), tail_lines, env=secrets).lines if shown else ()
        mine.append(replace(job, output=output, tail=lines))
    return mine


def _listed(job: Job) -> bool:
    """A job the run's views list: in the queue, or ended by its time limit (``ENDED_KEPT``)."""
    return job.active or (job.state.split() or [""])[0] in ENDED_KEPT


def user_queue_argv(user: str) -> list[str]:
    """The line that lists all of ``user``'s jobs: what every Runs view asks first (and what
    the hub's queue service answers in its stead: ``queue_service``)."""
    return ["squeue", "-h", "-u", user, "-t", SQUEUE_STATES, "-o", SQUEUE_FORMAT]


async def _squeue(host: Host, user: str, job_ids: Sequence[str] = (),
                  scopes: Sequence["RunScope"] = ()) -> tuple[list[Job], str, str]:
    """The user's jobs squeue lists (``_listed``); with ``scopes``, only those of these runs
    are kept as the answer is read (the other rows of a long queue are let go at once)."""
    argv = user_queue_argv(user)
    if job_ids:
        argv += ["-j", ",".join(job_ids)]
    result = await host.run(argv, timeout=COMMAND_TIMEOUT)
    if result.not_found:
        return [], "absent", text("runs.squeue.absent")
    if result.timed_out:
        return [], "error", text("runs.squeue.timeout", seconds=f"{COMMAND_TIMEOUT:.0f}")
    if is_unconfigured(result):  # slurm-client without a cluster: a laptop, a class room
        return [], "absent", text("runs.squeue.unconfigured")
    if result.returncode != 0:
        said = result.output.strip()
        if job_ids and "Invalid job id" in said:
            return [], "ok", ""  # the job has left the queue
        last = said.splitlines()[-1] if said else f"exit {result.returncode}"
        return [], "error", text("runs.squeue.failed", output=last[-300:])
    mine = of_runs(scopes)
    keep = _listed if not scopes else (lambda job: _listed(job) and mine(job))
    kept, read, unreadable = scan_squeue(result.stdout, keep, mine.may_keep if scopes else None)
    if result.truncated:
        return kept, "partial", text("runs.squeue.cut", rows=read)
    if unreadable:
        return kept, "partial", text("runs.squeue.unreadable_rows", count=unreadable)
    return kept, "ok", ""


WORK_DIRS_FORMAT = SEP.join(("%i", "%Z"))
"""The narrow question asked when the user's whole queue is longer than the output cap."""


async def _squeue_of_runs(host: Host, user: str,
                          scopes: Sequence["RunScope"]) -> tuple[list[Job], str, str]:
    """``_squeue``, and when the user's queue is too long to be read whole: only the jobs
    whose work dir is one of these runs' (their ids found from ids and work dirs alone, a
    fraction of each row), asked for by id. Still 'partial' when even that cannot be read."""
    queued, scheduler, problem = await _squeue(host, user, scopes=scopes)
    if scheduler != "partial" or not scopes:
        return queued, scheduler, problem
    argv = ["squeue", "-h", "-u", user, "-t", SQUEUE_STATES, "-o", WORK_DIRS_FORMAT]
    result = await host.run(argv, timeout=COMMAND_TIMEOUT)
    if not result.ok or result.truncated:
        return queued, scheduler, problem
    ids = []
    for line in result.stdout.split("\n"):
        job_id, sep, work_dir = line.partition(SEP)
        if not sep or not _ROW_HEAD.match(job_id + SEP):
            if line.strip():
                return queued, scheduler, problem  # a row it cannot read: no better answer
            continue
        work = _real(work_dir.strip()) if work_dir.strip() else ""
        if work and any(_inside(work, s.experiments) or _inside(work, s.checkpoint) for s in scopes):
            ids.append(job_id.strip())
    if not ids:
        return [], "ok", ""
    return await _squeue(host, user, ids, scopes)


async def run_jobs(checkpoint: Path, host: Host, *, since: str = "", with_accounting: bool = True,
                   user: str | None = None) -> JobsView:
    """The run's jobs in the queue (squeue) and, where accounting exists, finished ones (sacct)."""
    views = await jobs_of_runs([checkpoint], host, since=since, with_accounting=with_accounting,
                               user=user)
    return views[str(checkpoint)]


async def jobs_of_runs(checkpoints: Sequence[Path], host: Host, *, since: str = "",
                       with_accounting: bool = True, user: str | None = None) -> dict[str, JobsView]:
    """Each checkpoint's jobs from one squeue (and one sacct) call, keyed by ``str(checkpoint)``;
    on a demo site, and for recorded runs, from the recording without any call."""
    user = user or current_user()
    views = {str(c): _recorded_view(Path(c), user) for c in checkpoints}
    live = [c for c in checkpoints if views[str(c)] is None]
    if host.is_demo or not live:  # a demo site has no queue: never the machine's SLURM
        return {key: view or JobsView(scheduler="recording")
                for key, view in views.items()}
    views.update(await _queued_views(live, host, since=since, with_accounting=with_accounting,
                                     user=user))
    return views


def _recorded_view(checkpoint: Path, user: str) -> JobsView | None:
    """A recorded run's jobs; None for a real run. With the recording's accounting rows, the
    live merge (``merged``: the queue as the run ended over accounting's rows, each job's
    request as squeue showed it); without, each job as squeue last showed it while it ran."""
    recording = recording_of(checkpoint)
    if recording is None:
        return None
    try:
        run = RecordedRun.load(recording["run_id"])
    except SiteError:  # its recording is not in this version: no jobs known, none asked
        return JobsView(scheduler="recording")
    scope = RunScope.of(checkpoint, user)
    root = workspace_root(Path(scope.checkpoint))
    seen = [replace(job, source="recording") for job in parse_squeue(run.last_seen_queue(root, user))]
    finished = [job_of(row) for row in parse_accounting(run.accounted(root, user))[0]]
    if not finished:
        return JobsView(tuple(attribute(seen, scope)), "recording")
    at_end = [replace(job, source="recording") for job in parse_squeue(run.queue_at_end(root, user))]
    asked = {job.job_id: job for job in parse_squeue(run.last_seen_queue(root, user, inside=False))}
    jobs = [_with_request(job, asked.get(job.job_id)) for job in merged(at_end, finished, True)]
    ended = {job.job_id for job in jobs}
    jobs += [job for job in seen if job.job_id not in ended]  # none accounting lost, as a rule
    return JobsView(tuple(attribute(sorted(jobs, key=lambda j: _id_key(j.job_id)), scope)),
                    "recording", accounting="yes")


def _with_request(job: Job, seen: Job | None) -> Job:
    """An accounting row with what squeue showed the job ask (sacct's line has no partition,
    CPUs or TRES per node): the envelope compares all of it."""
    if seen is None:
        return job
    return replace(job, partition=job.partition or seen.partition,
                   cpus_per_node=job.cpus_per_node or seen.cpus_per_node,
                   tres_per_node=job.tres_per_node or seen.tres_per_node,
                   time_limit=job.time_limit or seen.time_limit)


async def _queued_views(checkpoints: Sequence[Path], host: Host, *, since: str,
                        with_accounting: bool, user: str) -> dict[str, JobsView]:
    scopes = {str(c): RunScope.of(Path(c), user) for c in checkpoints}
    queued, scheduler, problem = await _squeue_of_runs(host, user, list(scopes.values()))
    ours = {key: attribute(queued, scope) for key, scope in scopes.items()}
    finished: list[Job] = []
    accounting = "unknown"
    if with_accounting and scheduler != "absent":  # one sacct line for every run's known jobs
        ids = [j.job_id for jobs in ours.values() for j in jobs]
        ids += [i for scope in scopes.values() for i in (*log_dir_job_ids(scope.log_dir),
                                                          *chain_job_ids(scope.checkpoint))]
        # a reproduce job the queue no longer lists is named by no file: for one run (status, its
        # detail; not the list of every run) the user's jobs since its start, in the same one line
        starts = [start for key, scope in scopes.items() if len(scopes) == 1
                  and not any(j.kind == "reproduce" for j in ours[key]) and (start := unnamed_since(scope.checkpoint))]
        # the window opens at the runs' start: an id SLURM gave before them is another job
        window = [w for w in (since, runs_start(scopes), *starts) if w]
        rows, accounting = await accounted(host, ids, user, min(window, default=""), by_user=bool(starts))
        finished = [job_of(row) for row in rows]
    runs_jobs = {key: merged(ours[key], attribute(finished, scope), scheduler == "ok")
                 for key, scope in scopes.items()}
    # why the pending ones wait and when they may start: one squeue --start line for all
    said = await waiting(host, [j.job_id for jobs in runs_jobs.values() for j in jobs
                                if j.state == "PENDING" and j.source == "squeue"])
    return {key: JobsView(tuple(replace(j, reason=said[j.job_id].reason,
                                        expected_start=said[j.job_id].expected_start)
                                if j.job_id in said else j for j in jobs),
                          scheduler, problem, accounting)
            for key, jobs in runs_jobs.items()}


def _id_key(job_id: str) -> tuple[tuple[int, str], tuple[int, str]]:
    """Numeric order of ``123`` / ``123_4`` ids, however many digits (no ``int``)."""
    head, _, rest = job_id.partition("_")
    return (digits_key(head), digits_key(rest or "0"))


@dataclass(frozen=True)
class CancelOutcome:
    job_id: str
    result: str
    """'cancelled', 'gone' (left the queue before scancel), 'refused' (not this user's or this
    run's), 'invalid' (not a job id), 'recording' (a demo site or a recorded run: nothing to
    cancel) or 'error'."""
    message: str
    """English, a ``Text`` that keeps its message id: a view renders it in its own language."""

    def to_json(self) -> dict[str, Any]:
        return {"job_id": self.job_id, "result": self.result, "message": str(self.message),
                **(message_of(self.message) or {})}


async def cancel_jobs(checkpoint: Path, host: Host, job_ids: Sequence[str] | None = None, *,
                      user: str | None = None, settle: float = 10.0) -> list[CancelOutcome]:
    """Cancel this run's active jobs (all of them, or those named), after re-reading each from
    the queue; ``scancel --user`` keeps even a race from touching another user's job."""
    if host.is_demo or recording_of(checkpoint) is not None:  # nothing of it is in a queue
        return [CancelOutcome("", "recording", text("runs.cancel.recording", run_id=Path(checkpoint).name))]
    target = linked_out(checkpoint)
    if target:  # its jobs would be whatever runs where the link points
        return [CancelOutcome("", "refused", text("runs.linked_out", path=str(checkpoint), target=target))]
    scope = RunScope.of(checkpoint, user)
    outcomes: list[CancelOutcome] = []
    wanted: list[str] = []
    for job_id in job_ids or ():
        job_id = str(job_id).strip()
        if _JOB_ID.match(job_id):
            wanted.append(job_id)
        else:
            outcomes.append(CancelOutcome(job_id, "invalid", text("runs.cancel.invalid", job=job_id)))
    if job_ids is None:
        queued, scheduler, problem = await _squeue_of_runs(host, scope.user, [scope])
        if scheduler != "ok":
            return [CancelOutcome("", "error", problem)]
        wanted = [j.job_id for j in attribute(queued, scope, 0) if j.active]
    if not wanted:
        return outcomes
    # Re-read exactly these jobs among ALL users' jobs, so another user's id is recognised.
    result = await host.run(["squeue", "-h", "-o", SQUEUE_FORMAT, "-j", ",".join(wanted)],
                            timeout=COMMAND_TIMEOUT)
    if result.not_found or result.timed_out or (result.returncode != 0
                                                and "Invalid job id" not in result.output):
        return outcomes + [CancelOutcome(j, "error", text("runs.cancel.squeue_silent"))
                           for j in wanted]
    rows, unreadable = read_squeue(result.stdout if result.returncode == 0 else "")
    if result.truncated or unreadable:
        return outcomes + [CancelOutcome(j, "error", text("runs.cancel.squeue_partial"))
                           for j in wanted]
    current = {j.job_id: j for j in rows}
    to_cancel = []
    for job_id in wanted:
        job = current.get(job_id)
        if job is None or not job.active:
            outcomes.append(CancelOutcome(job_id, "gone", text("runs.cancel.gone", job=job_id)))
        elif job.user != scope.user:
            outcomes.append(CancelOutcome(job_id, "refused", text(
                "runs.cancel.other_user", job=job_id, owner=job.user, user=scope.user)))
        elif not scope.kind_of(job):
            outcomes.append(CancelOutcome(job_id, "refused", text(
                "runs.cancel.other_run", job=job_id, name=job.name, work_dir=job.work_dir)))
        else:
            to_cancel.append(job_id)
    for job_id in to_cancel:
        done = await host.run(["scancel", "--user", scope.user, job_id], timeout=COMMAND_TIMEOUT)
        said = done.output.strip()
        if done.ok:
            outcomes.append(CancelOutcome(job_id, "cancelled", text("runs.cancel.cancelled", job=job_id)))
        elif "Invalid job id" in said or "already completing or completed" in said:
            outcomes.append(CancelOutcome(job_id, "gone", text("runs.cancel.ended_first", job=job_id)))
        else:
            outcomes.append(CancelOutcome(job_id, "error", text(
                "runs.cancel.scancel_failed", job=shlex.quote(job_id), output=said[-300:])))
    cancelled = [o.job_id for o in outcomes if o.result == "cancelled"]
    if cancelled:  # the doctor names this cause on the job's "CANCELLED AT" line
        try:
            _record_cancels(Path(checkpoint), cancelled, scope.user)
        except OSError:  # a checkpoint it cannot write to: the jobs are cancelled all the same
            pass
    if cancelled and settle > 0:
        await _wait_gone(host, scope.user, cancelled, settle)
    return outcomes


def _record_cancels(checkpoint: Path, job_ids: Sequence[str], user: str) -> None:
    """Add the cancelled jobs to the checkpoint's cancel record (``slurm.cancel_record``)."""
    from ..doctor.log_checks import read_cancels  # cold start: the doctor's catalog, only once a job is cancelled
    text = render_cancels(read_cancels(str(checkpoint)), job_ids, by="ari-jupyter", user=user)
    atomic_write(checkpoint / RECORD, text.encode("utf-8"), 0o644)


async def _wait_gone(host: Host, user: str, job_ids: Sequence[str], timeout: float) -> None:
    """Wait (bounded) until the cancelled jobs have left the queue, so the next status is true."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    delay = 0.2
    while loop.time() < deadline:
        queued, scheduler, _ = await _squeue(host, user, job_ids)
        if scheduler != "ok" or not any(j.active for j in queued):
            return
        await asyncio.sleep(delay)
        delay = min(delay * 2, 1.0)
