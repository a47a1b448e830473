"""The run's SLURM jobs from squeue/sacct text, and cancel's refusals (table-driven, fake host).

The squeue rows are what ``squeue -h -o SQUEUE_FORMAT`` prints on the test bed (the live test in
test_runs_testbed.py submits the same job for real).
"""
from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ari_jupyter.hosts.host import Host
from ari_jupyter.base.commands import CommandResult
from ari_jupyter.doctor.log_checks import read_cancels
from ari_jupyter.runs.jobs import SEP, RunScope, attribute, cancel_jobs, parse_squeue, run_jobs

ME = "alice"


def row(job_id, name, state, work_dir, user=ME, elapsed="0:05", nodes="1", where="node1"):
    return SEP.join([job_id, name, state, elapsed, nodes, where, user, str(work_dir)])


@pytest.fixture
def ckpt(tmp_path):
    path = tmp_path / "ws" / "checkpoints" / "20261201094500_stream_triad"
    (path / "repro_sandbox").mkdir(parents=True)
    (tmp_path / "ws" / "slurm_logs").mkdir()
    (path / ".env").write_text(f"ARI_SLURM_PARTITION=small\nSLURM_LOG_DIR={tmp_path}/ws/slurm_logs\n")
    (path / "repro_sandbox" / "reproduce.log").write_text("step 1\nstep 2\n")
    (tmp_path / "ws" / "slurm_logs" / "slurm_job_12.out").write_text("bfts says hi\n")
    return path


def _rows(ckpt: Path) -> dict[str, str]:
    ws = ckpt.parent.parent
    other_run = ws / "checkpoints" / "20261130000000_other"
    return {
        "reproduce": row("11", "ari-ors", "RUNNING", ckpt / "repro_sandbox"),
        "bfts-node": row("12", "stream_n1", "PENDING", ws / "experiments" / ckpt.name / "node_1",
                         where="(Priority)"),
        "ors-elsewhere": row("13", "ari-ors", "RUNNING", other_run / "repro_sandbox"),
        "other-user-same-dir": row("14", "ari-ors", "RUNNING", ckpt / "repro_sandbox", user="mallory"),
        "unrelated": row("15", "interactive", "RUNNING", "/home/alice"),
        "ors-not-in-sandbox": row("16", "ari-ors", "RUNNING", ckpt),
    }


@pytest.mark.parametrize("key,kind", [("reproduce", "reproduce"), ("bfts-node", "bfts"),
                                      ("ors-elsewhere", ""), ("other-user-same-dir", ""),
                                      ("unrelated", ""), ("ors-not-in-sandbox", "")])
def test_attribution(ckpt, key, kind):
    [job] = parse_squeue(_rows(ckpt)[key])
    scope = RunScope.of(ckpt, ME)
    assert scope.kind_of(job) == kind


def test_attributed_jobs_carry_their_output_tail(ckpt):
    jobs = attribute(parse_squeue("\n".join(_rows(ckpt).values())), RunScope.of(ckpt, ME))
    assert [(j.job_id, j.kind) for j in jobs] == [("11", "reproduce"), ("12", "bfts")]
    assert jobs[0].output == f"{ckpt}/repro_sandbox/reproduce.log"
    assert jobs[0].tail == ("step 1", "step 2")
    assert jobs[1].tail == ("bfts says hi",)


@pytest.mark.parametrize("text,count", [("", 0), ("garbage\n", 0), (SEP.join(["x"] * 8), 0),
                                        (SEP.join(["1"] * 7), 0), (row("7_3", "a", "PENDING", "/"), 1)])
def test_parse_squeue_skips_malformed_rows(text, count):
    assert len(parse_squeue(text)) == count


@dataclass
class FakeHost(Host):
    """Answers squeue/sacct/scancel from a script; records every command it was asked."""

    name: str = "fake"
    queue: list[str] = field(default_factory=list)
    vanish_on_scancel: set[str] = field(default_factory=set)
    sacct: str | None = None
    calls: list[tuple[str, ...]] = field(default_factory=list)
    env: dict = field(default_factory=dict)

    async def run(self, argv, timeout, env=None):
        argv = tuple(argv)
        self.calls.append(argv)
        if argv[0] == "squeue":
            rows = [parse_squeue(r)[0] for r in self.queue]
            if "-u" in argv:
                rows = [r for r in rows if r.user == argv[argv.index("-u") + 1]]
            if "-j" in argv:
                ids = argv[argv.index("-j") + 1].split(",")
                rows = [r for r in rows if r.job_id in ids]
                if not rows:
                    return CommandResult(argv, 1, "", "slurm_load_jobs error: Invalid job id specified")
            text = "\n".join(r for r in self.queue if parse_squeue(r)[0] in rows)
            return CommandResult(argv, 0, text + "\n", "")
        if argv[0] == "sacct":
            if self.sacct is None:
                return CommandResult(argv, 1, "", "Slurm accounting storage is disabled")
            return CommandResult(argv, 0, self.sacct, "")
        if argv[0] == "scancel":
            job_id = argv[-1]
            if job_id in self.vanish_on_scancel:
                return CommandResult(argv, 1, "", f"scancel: error: Kill job error on job id {job_id}: "
                                                   "Invalid job id specified")
            self.queue = [r for r in self.queue if not r.startswith(job_id + SEP)]
            return CommandResult(argv, 0, "", "")
        raise AssertionError(argv)


def test_run_jobs_without_accounting(ckpt):
    host = FakeHost(queue=list(_rows(ckpt).values()))
    view = asyncio.run(run_jobs(ckpt, host, user=ME))
    assert [j.job_id for j in view.jobs] == ["11", "12"]
    assert (view.scheduler, view.accounting) == ("ok", "no")


def test_run_jobs_with_accounting_adds_finished_jobs(ckpt):
    sacct = f"9|ari-ors|FAILED|1:0|00:00:03|3|1|node1|{ME}|{ckpt}/repro_sandbox|00:05:00\n"
    host = FakeHost(queue=[_rows(ckpt)["reproduce"]], sacct=sacct)
    view = asyncio.run(run_jobs(ckpt, host, user=ME))
    assert [(j.job_id, j.state, j.exit_code) for j in view.jobs] == [("9", "FAILED", "1:0"),
                                                                     ("11", "RUNNING", "")]
    assert view.accounting == "yes"
    # one sacct line, for the jobs known: the queue's (11) and the log dir's output file (12)
    [asked] = [c for c in host.calls if c[0] == "sacct"]
    assert asked[asked.index("-j") + 1] == "11,12"


UNCONFIGURED = ("squeue: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n"
                "squeue: error: fetch_config: DNS SRV lookup failed\n"
                "squeue: fatal: Could not establish a configuration source\n")
# name, squeue's answer (returncode None: not found), scheduler, words in the problem
SQUEUE_ANSWERS = [
    ("not-installed", CommandResult(("squeue",), None, "", "", not_found=True), "absent",
     "not on PATH"),
    # installed (slurm-client) but no slurm.conf and no DNS record: a laptop or a class room,
    # not a cluster whose controller is down
    ("installed-unconfigured", CommandResult(("squeue",), 1, "", UNCONFIGURED), "absent",
     "no SLURM configuration"),
    ("controller-down", CommandResult(("squeue",), 1, "", "squeue: error: Unable to contact "
                                      "slurm controller (connect failure)"), "error",
     "Unable to contact slurm controller"),
    ("hung", CommandResult(("squeue",), None, "", "", timed_out=True), "error", "did not answer"),
]


@pytest.mark.parametrize("name,answer,scheduler,said", SQUEUE_ANSWERS,
                         ids=[c[0] for c in SQUEUE_ANSWERS])
def test_what_squeue_failing_means(ckpt, name, answer, scheduler, said):
    class Answering(FakeHost):
        async def run(self, argv, timeout, env=None):
            return answer if argv[0] == "squeue" else await super().run(argv, timeout, env)

    view = asyncio.run(run_jobs(ckpt, Answering(), user=ME))
    assert (view.scheduler, view.jobs) == (scheduler, ())
    assert said in view.problem


# name, job ids asked (None = all of the run's), vanish on scancel, expected {id: result}
CANCEL_CASES = [
    ("all-of-the-run", None, set(), {"11": "cancelled", "12": "cancelled"}),
    ("one", ["11"], set(), {"11": "cancelled"}),
    ("another-users-job-id", ["14"], set(), {"14": "refused"}),
    ("another-runs-job", ["13"], set(), {"13": "refused"}),
    ("unrelated-own-job", ["15"], set(), {"15": "refused"}),
    ("already-gone", ["99"], set(), {"99": "gone"}),
    ("vanished-between-squeue-and-scancel", ["11"], {"11"}, {"11": "gone"}),
    ("not-a-job-id", ["11; rm -rf /"], set(), {"11; rm -rf /": "invalid"}),
]


@pytest.mark.parametrize("name,ids,vanish,expected", CANCEL_CASES, ids=[c[0] for c in CANCEL_CASES])
def test_cancel(ckpt, name, ids, vanish, expected):
    host = FakeHost(queue=list(_rows(ckpt).values()), vanish_on_scancel=vanish)
    outcomes = asyncio.run(cancel_jobs(ckpt, host, ids, user=ME, settle=0))
    assert {o.job_id: o.result for o in outcomes} == expected
    scancelled = [c[-1] for c in host.calls if c[0] == "scancel"]
    allowed = {"11", "12"}
    assert set(scancelled) <= allowed  # never another user's, another run's, or a stray job
    for call in host.calls:
        if call[0] == "scancel":
            assert call[1:3] == ("--user", ME)
    refused = [o for o in outcomes if o.result == "refused"]
    assert all(o.message for o in refused)
    # exactly the jobs scancel stopped are in the checkpoint's cancel record (the doctor reads it)
    recorded = read_cancels(str(ckpt))
    assert set(recorded) == {j for j, r in expected.items() if r == "cancelled"}
    assert all(e["by"] == "ari-jupyter" and e["user"] == ME and e["at"] for e in recorded.values())
    if name == "another-users-job-id":
        assert "mallory" in refused[0].message


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_every_cancel_outcome_reads_in_the_chosen_language(ckpt, lang):
    """What the Runs panel pops up and `cancel` prints: the catalog's sentence, English kept in --json."""
    from ari_jupyter.runs.localize import cancel_in_language
    from widget_text import english_sentences

    outcomes = []
    for _name, ids, vanish, _expected in CANCEL_CASES:
        host = FakeHost(queue=list(_rows(ckpt).values()), vanish_on_scancel=vanish)
        outcomes += [o.to_json() for o in asyncio.run(cancel_jobs(ckpt, host, ids, user=ME, settle=0))]
    assert {o["result"] for o in outcomes} == {"cancelled", "refused", "gone", "invalid"}
    assert all(o["message_id"].startswith("runs.cancel.") for o in outcomes)
    shown = cancel_in_language({"outcomes": outcomes, "status": {"findings": [], "notes": []}}, lang)
    messages = [o["message"] for o in shown["outcomes"]]
    assert all(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", m) for m in messages), messages
    assert english_sentences(messages) == []
    assert [o["message"] for o in outcomes] != messages  # the English answer itself is untouched


def test_a_job_id_found_in_a_file_is_not_trusted(ckpt):
    """Another user's job whose output file sits in the run's log dir is neither listed nor cancelled."""
    (ckpt.parent.parent / "slurm_logs" / "slurm_job_14.out").write_text("mallory's output\n")
    host = FakeHost(queue=list(_rows(ckpt).values()))
    view = asyncio.run(run_jobs(ckpt, host, user=ME))
    assert "14" not in [j.job_id for j in view.jobs]
    outcomes = asyncio.run(cancel_jobs(ckpt, host, None, user=ME, settle=0))
    assert "14" not in [o.job_id for o in outcomes]
    assert all(call[-1] != "14" for call in host.calls if call[0] == "scancel")


@pytest.mark.parametrize("change, shown", [
    (None, True),
    ("group-writable file", True),  # the umask of a user private group: still the user's alone
    ("world-writable file", False),
    ("world-writable folder", False),
    ("link", False),
    ("other owner", False),
])
def test_a_job_output_is_shown_only_when_it_is_the_users_own(ckpt, change, shown):
    import grp
    import pwd
    out = ckpt.parent.parent / "slurm_logs" / "slurm_job_12.out"
    me = pwd.getpwuid(os.geteuid())
    private = me.pw_gid == os.getegid() and grp.getgrgid(me.pw_gid).gr_name == me.pw_name
    if change == "group-writable file":
        if not private:
            pytest.skip("this user's primary group is not a private group")
        out.chmod(0o660)
    elif change == "world-writable file":
        out.chmod(0o666)
    elif change == "world-writable folder":
        out.parent.chmod(0o777)
    elif change == "link":
        (ckpt / "elsewhere.out").write_text("bfts says hi\n")
        out.unlink()
        out.symlink_to(ckpt / "elsewhere.out")
    elif change == "other owner":
        if os.geteuid() != 0:
            pytest.skip("giving a file to another user needs root")
        os.chown(out, 65534, 65534)
    [job] = [j for j in attribute(parse_squeue(_rows(ckpt)["bfts-node"]), RunScope.of(ckpt, ME))]
    assert job.tail == (("bfts says hi",) if shown else ()), change


@pytest.mark.parametrize("keep,kept", [
    (None, ["11", "12", "13", "14", "15", "16"]),                   # every job read
    (lambda job: job.user == "mallory", ["14"]),                     # only what is asked about
    (lambda job: False, []),
])
def test_read_squeue_keeps_only_the_jobs_asked_about_and_counts_every_row(ckpt, keep, kept):
    from ari_jupyter.runs.jobs import read_squeue, scan_squeue

    text = "not a row\n" + "\n".join(_rows(ckpt).values()) + "\n"  # a line before any row
    jobs, read, unreadable = scan_squeue(text, keep)
    assert ([j.job_id for j in jobs], read, unreadable) == (kept, 6, 1)
    assert [j.job_id for j in read_squeue(text, keep)[0]] == kept


@pytest.mark.parametrize("spelled", ["as it is", "through a link to the workspace"])
def test_a_run_keeps_its_jobs_however_squeue_spells_their_work_dirs(ckpt, spelled):
    """The rows a run's filter lets go before they become jobs (``RunsFilter.may_keep``) are
    only those no spelling of a path leads into the run: a work dir through a link is the run's."""
    from ari_jupyter.runs.jobs import of_runs, read_squeue

    if spelled != "as it is":
        (ckpt.parent.parent.parent / "ws-link").symlink_to(ckpt.parent.parent)
        ckpt_seen = ckpt.parent.parent.parent / "ws-link" / "checkpoints" / ckpt.name
        rows = {k: v.replace(str(ckpt.parent.parent), str(ckpt.parent.parent.parent / "ws-link"))
                for k, v in _rows(ckpt).items()}
        assert str(ckpt_seen) in rows["reproduce"]
    else:
        rows = _rows(ckpt)
    text = "\n".join(rows.values())
    jobs, unreadable = read_squeue(text, of_runs([RunScope.of(ckpt, ME)]))
    assert ([j.job_id for j in jobs], unreadable) == (["11", "12"], 0)


def test_a_long_queue_holds_each_repeated_field_once(ckpt):
    """100 rows of one state, user and partition: one string each, not one per row (a
    100,000-row queue took 106 MB parsed)."""
    text = "\n".join(SEP.join([str(100 + n), f"job{n}", "RUNNING", "1:00", "1", "n1", ME, f"/w/{n}",
                               "small", "4", "gres/gpu:1", "1:00:00"]) for n in range(100))
    jobs = parse_squeue(text)
    assert len(jobs) == 100 and len({j.work_dir for j in jobs}) == 100
    for name in ("state", "user", "partition", "tres_per_node", "time_limit"):
        assert len({id(getattr(j, name)) for j in jobs}) == 1, name


def test_the_queue_of_runs_keeps_only_their_jobs_and_says_how_many_rows_a_cut_answer_had(ckpt):
    from ari_jupyter.runs.jobs import _squeue

    host = FakeHost(queue=list(_rows(ckpt).values()))
    jobs, scheduler, _ = asyncio.run(_squeue(host, ME, scopes=[RunScope.of(ckpt, ME)]))
    assert ([j.job_id for j in jobs], scheduler) == (["11", "12"], "ok")
    everyone, _, _ = asyncio.run(_squeue(host, ME))
    assert [j.job_id for j in everyone] == ["11", "12", "13", "15", "16"]  # mallory's left by -u

    class Cut(FakeHost):
        async def run(self, argv, timeout, env=None):
            done = await super().run(argv, timeout, env)
            return CommandResult(done.argv, done.returncode, done.stdout, done.stderr, truncated=True)

    jobs, scheduler, problem = asyncio.run(_squeue(Cut(queue=list(_rows(ckpt).values())), ME,
                                                   scopes=[RunScope.of(ckpt, ME)]))
    assert ([j.job_id for j in jobs], scheduler) == (["11", "12"], "partial")
    assert (problem.message_id, problem.params["rows"]) == ("runs.squeue.cut", 5)  # rows read, not kept


def test_the_work_dirs_of_one_answer_resolve_as_each_would_alone(tmp_path, monkeypatch):
    """A folder above many work dirs is resolved once; a link anywhere still leads where it
    points (a link into the run is the run's, as ``realpath`` says)."""
    from ari_jupyter.runs.jobs import _real, _resolver

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "real" / "run" / "node_1").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "leaf").symlink_to(tmp_path / "real" / "run")
    paths = [tmp_path / "real" / "run" / "node_1", tmp_path / "linked" / "run" / "node_1",
             tmp_path / "real" / "leaf", tmp_path / "linked" / "leaf" / "node_1",
             tmp_path / "real" / "run" / "..", f"{tmp_path}/real/run/", tmp_path / "missing" / "x",
             "~/x", "relative/x", "/"]
    real = _resolver()
    assert [real(str(p)) for p in paths] == [_real(p) for p in paths]
