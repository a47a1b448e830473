"""The envelope the user approved (launch_config.json) against what each job of the run asks
(squeue's %P %D %c %b %l), per job kind; the finding that offers cancel; a job ended by its
time limit (table-driven; the real-SLURM side is in test_runs_envelope_testbed.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ari_jupyter.ari.resume_rule import resume_command
from ari_jupyter.cli._runs_text import status_text
from ari_jupyter.i18n import t
from ari_jupyter.runs.envelope import Approved, Over, envelope_of, outside
from ari_jupyter.runs.findings import ended_by_time_limit
from ari_jupyter.runs.jobs import SEP, SQUEUE_FIELDS, Job, JobsView, parse_squeue
from ari_jupyter.runs.localize import status_in_language
from ari_jupyter.runs.status import read_status
from ari_jupyter.slurm.parsers import gpus_per_node, parse_count, parse_time_limit

from ari_jupyter.base.verdict import ProbeResult
from ari_jupyter.checkpoint.emit import emit_checkpoint

from runs_support import copy_case
from unit.ari.test_render import golden_state


@pytest.mark.parametrize("raw,seconds", [
    ("1:00:00", 3600), ("5:00", 300), ("00:10:00", 600), ("1-00:00:00", 86400), ("30", 1800),
    ("UNLIMITED", None), ("INFINITE", None), ("N/A", None), ("NOT_SET", None), ("", None),
    ("Partition_Limit", None),
])
def test_time_limit(raw, seconds):
    assert parse_time_limit(raw) == seconds


@pytest.mark.parametrize("raw", ["1h", "soon", "１:００"])
def test_time_limit_refuses(raw):
    with pytest.raises(ValueError):
        parse_time_limit(raw)


@pytest.mark.parametrize("raw,gpus", [
    ("N/A", 0), ("", 0), ("gres/gpu:2", 2), ("gres:gpu:1", 1), ("gpu:a100:4", 4),
    ("gres/gpu:a100:2", 2), ("gres/gpu", 1), ("gres/gpu=3", 3), ("gres/mps:100", 0),
    ("gres/gpu:1,gres/mps:50", 1),
])
def test_gpus_per_node(raw, gpus):
    assert gpus_per_node(raw) == gpus


@pytest.mark.parametrize("raw,count", [("2", 2), ("N/A", None), ("", None)])
def test_count(raw, count):
    assert parse_count(raw) == count


def test_count_refuses_garbage():
    with pytest.raises(ValueError):
        parse_count("2-4")


def test_squeue_rows_old_and_new():
    old = SEP.join(["11", "ari-ors", "RUNNING", "0:05", "1", "n1", "me", "/w"])
    new = SEP.join(["12", "b", "PENDING", "0:00", "2", "(Priority)", "me", "/w", "small", "4",
                    "gres/gpu:1", "1:00:00"])
    a, b = parse_squeue(old + "\n" + new)
    assert (a.partition, a.time_limit) == ("", "")
    assert (b.partition, b.nodes, b.cpus_per_node, b.tres_per_node, b.time_limit) == \
        ("small", "2", "4", "gres/gpu:1", "1:00:00")
    assert len(SQUEUE_FIELDS) == 12


STATE = {"partition": "small", "max_cpus": 4, "walltime": "01:00:00", "nodes": 1,
         "allow_no_gres": False,
         "profile": {"requested_nodes": 2, "ntasks_per_node": 2}}


def config(**state_changes):
    state = {**STATE, **state_changes}
    return {"partition": state["partition"], "hpc_cpus": state["max_cpus"],
            "hpc_walltime": state["walltime"], "ari_jupyter": {"state": state}}


@pytest.mark.parametrize("cfg,bfts,reproduce", [
    (config(), Approved("bfts", "small", 1, 4, 0, "01:00:00"),
     Approved("reproduce", "small", 1, 8, 0, "01:00:00")),
    # Nodes left to the profile (0): the reproduce job takes the profile's, and so may a BFTS job
    (config(nodes=0), Approved("bfts", "small", 2, 4, 0, "01:00:00"),
     Approved("reproduce", "small", 2, 8, 0, "01:00:00")),
    # GPUs: ARI_SLURM_GPUS for BFTS jobs, the profile's for the reproduce job
    ({**config(profile={"gpu_type": "a100", "requested_gpus_per_task": 2}), "hpc_gpus": 1},
     Approved("bfts", "small", 1, 4, 1, "01:00:00"), Approved("reproduce", "small", 1, 4, 2, "01:00:00")),
    ({**config(allow_no_gres=True, profile={"requested_gpus_per_node": 2})},
     Approved("bfts", "small", 1, 4, 0, "01:00:00"), Approved("reproduce", "small", 1, 4, 0, "01:00:00")),
    (config(walltime="", nodes=None, profile={}), Approved("bfts", "small", 1, 4, 0, ""),
     Approved("reproduce", "small", None, 4, 0, "")),
])
def test_envelope_per_kind(cfg, bfts, reproduce):
    envelope = envelope_of(cfg)
    assert (envelope.bfts, envelope.reproduce) == (bfts, reproduce)


def test_no_envelope_without_the_wizard_state():
    assert envelope_of({"partition": "small", "hpc_cpus": 4}) is None  # ARI's GUI wrote it


APPROVED = Approved("bfts", "small", 1, 4, 1, "01:00:00")


def job(partition="small", nodes="1", cpus="4", tres="gres/gpu:1", limit="1:00:00", **kw):
    return Job("12", "bfts", "RUNNING", nodes=nodes, partition=partition, cpus_per_node=cpus,
               tres_per_node=tres, time_limit=limit, kind="bfts", **kw)


@pytest.mark.parametrize("asked,overs", [
    (job(), ()),
    (job(nodes="2"), (Over("nodes", "2", "1"),)),
    (job(partition="big"), (Over("partition", "big", "small"),)),
    (job(partition="small,big"), (Over("partition", "small,big", "small"),)),
    (job(cpus="8"), (Over("cpus", "8", "4"),)),
    (job(tres="gres/gpu:2"), (Over("gpus", "2", "1"),)),
    (job(tres="N/A"), ()),
    (job(limit="1:00:01"), (Over("walltime", "1:00:01", "01:00:00"),)),
    (job(limit="59:00"), ()),
    (job(limit="UNLIMITED"), (Over("walltime", "UNLIMITED", "01:00:00"),)),
    (job(limit="N/A"), ()),
    (job(nodes="3", cpus="16", limit="2:00:00"),
     (Over("nodes", "3", "1"), Over("cpus", "16", "4"), Over("walltime", "2:00:00", "01:00:00"))),
    # sacct's rows carry no partition/CPUs/TRES/limit: only what is known is compared
    (Job("12", "b", "COMPLETED", nodes="1", kind="bfts", source="sacct"), ()),
])
def test_outside(asked, overs):
    assert outside(asked, APPROVED) == overs


def test_nothing_approved_nothing_compared():
    assert outside(job(nodes="9", cpus="99", limit="UNLIMITED"), Approved("bfts")) == ()


@pytest.mark.parametrize("state,tail,ended", [
    ("TIMEOUT", (), True),
    ("COMPLETED", ("slurmstepd: error: *** JOB 12 ON node1 CANCELLED AT 2026-12-05T22:01:02 "
                   "DUE TO TIME LIMIT ***",), True),
    ("RUNNING", ("*** JOB 12 ON node1 CANCELLED AT 2026-12-05T22:01:02 DUE TO TIME LIMIT ***",), False),
    ("CANCELLED by 0", ("*** JOB 12 ON node1 CANCELLED AT 2026-12-05T22:01:02 ***",), False),
    ("COMPLETED", ("done",), False),
])
def test_ended_by_time_limit(state, tail, ended):
    assert ended_by_time_limit(Job("12", "b", state, tail=tail)) is ended


def _bfts_job(ckpt, job_id, state, nodes, limit="5:00"):
    work = ckpt.parent.parent / "experiments" / ckpt.name / "node_1"
    return Job(job_id, "bfts_n1", state, nodes=nodes, user="alice", work_dir=str(work),
               kind="bfts", partition="small", cpus_per_node="2", tres_per_node="N/A",
               time_limit=limit)


def test_status_flags_the_job_outside_and_offers_its_cancel(tmp_path):
    ckpt = copy_case("exploring", tmp_path / "ws")  # approved: small, 2 nodes, 2 CPUs, 00:10:00
    jobs = JobsView((_bfts_job(ckpt, "41", "RUNNING", "2"), _bfts_job(ckpt, "42", "RUNNING", "3"),
                     _bfts_job(ckpt, "43", "COMPLETED", "3")), accounting="no")
    status = read_status(ckpt, jobs).to_json()
    assert [j["outside"] for j in status["jobs"]["jobs"]][0] == []
    [flag] = [f for f in status["findings"] if f["rule"] == "run-job-outside-envelope"]
    assert flag["params"]["job"] == "42"  # the ended job 43 is shown outside, nothing to cancel
    assert flag["message"] == ("Job 42 (a BFTS job) asks more than you approved in the wizard: "
                               "3 nodes, you approved 2")
    assert f"ari-jupyter cancel --job 42 {ckpt}" in flag["fix"]
    assert status["envelope"]["bfts"] == {"kind": "bfts", "partition": "small", "nodes": 2,
                                          "cpus_per_node": 2, "gpus_per_node": 0,
                                          "walltime": "00:10:00"}
    text = status_text(status)
    assert "    OUTSIDE what you approved: 3 nodes, you approved 2" in text
    assert ("    approved for a BFTS job: partition small, 2 nodes, 2 CPUs per node, 0 GPUs per "
            "node, time limit 00:10:00") in text
    for lang in ("ja", "zh"):
        said = status_in_language(status, lang)
        [flag] = [f for f in said["findings"] if f["rule"] == "run-job-outside-envelope"]
        assert "42" in flag["message"] and t("runs.envelope.kind.bfts", lang) in flag["message"]
        assert t("runs.envelope.over.nodes", lang, asked=3, approved=2) in flag["message"]
        assert t("runs.envelope.over.nodes", lang, asked=3, approved=2) in status_text(said, lang=lang)
        # the Runs panel shows it beside the job, in its language
        assert said["jobs"]["jobs"][1]["outside_text"] == t("runs.envelope.over.nodes", lang,
                                                             asked=3, approved=2)
    assert status["jobs"]["jobs"][1]["outside_text"] == "3 nodes, you approved 2"


def test_status_says_interrupted_by_the_time_limit_with_resume(tmp_path):
    ckpt = copy_case("exploring", tmp_path / "ws")
    (ckpt / ".ari_pid").unlink(missing_ok=True)
    jobs = JobsView((_bfts_job(ckpt, "51", "TIMEOUT", "1", limit="1:00"),), accounting="no")
    status = read_status(ckpt, jobs).to_json()
    assert status["phase"] == "interrupted"
    [limit] = [f for f in status["findings"] if f["rule"] == "run-time-limit"]
    assert "Job 51 of this run reached its SLURM time limit (1:00)" in limit["message"]
    assert f"`{resume_command(str(ckpt))}`" in limit["fix"]  # with ARI_CHECKPOINT_DIR: ARI reads the .env
    json.dumps(status)


def _emitted(tmp_path):
    """A checkpoint ``emit`` wrote (Nodes 2, Max CPUs 4, 01:00:00; mpi: 2 x 4 ranks)."""
    workspace = str(tmp_path / "ws")
    state = golden_state(workspace=workspace, provided_files=[])
    state.set_probe_result(ProbeResult("shared_fs", "ok", "shared", data={"path": workspace}))
    return Path(emit_checkpoint(state).checkpoint_dir)


def _set_record(ckpt, **nodes_of_kind):
    """Rewrite the decided record's nodes per kind (``...``: remove the record, or ``schema``),
    leaving the saved wizard state as emit wrote it."""
    path = ckpt / "launch_config.json"
    config = json.loads(path.read_text())
    section = config["ari_jupyter"]
    for kind, nodes in nodes_of_kind.items():
        if kind == "record":
            del section["decided"]
        elif kind == "schema":
            section["decided"]["schema"] = nodes
        else:
            section["decided"][kind]["nodes"] = nodes
    path.write_text(json.dumps(config))


def _reproduce_job(ckpt, job_id, nodes, cpus="16"):
    return Job(job_id, "ari-ors", "RUNNING", nodes=nodes, user="alice",
               work_dir=str(ckpt / "repro_sandbox"), kind="reproduce", partition="small",
               cpus_per_node=cpus, tres_per_node="N/A", time_limit="1:00:00")


# the record as rewritten, then the jobs flagged as {job id: nodes approved} (job 61: a BFTS
# job on 3 nodes, 62: the reproduce job on 3 nodes); the saved state says Nodes 2 throughout
@pytest.mark.parametrize("record,flagged", [
    ({}, {"61": "2", "62": "2"}),                        # as emit wrote it
    ({"bfts": 3}, {"62": "2"}),
    ({"bfts": 1, "reproduce": 3}, {"61": "1"}),
    ({"reproduce": None}, {"61": "2"}),                  # no --nodes decided: not compared
    ({"record": ...}, {"61": "2", "62": "2"}),           # written before the record: the state
    ({"schema": 99}, {}),                                # a newer record: nothing guessed
], ids=["as-emitted", "bfts-3", "bfts-1-reproduce-3", "reproduce-not-set", "no-record", "schema-99"])
def test_the_envelope_is_the_decided_record(tmp_path, record, flagged):
    ckpt = _emitted(tmp_path)
    _set_record(ckpt, **record)
    jobs = JobsView((_bfts_job(ckpt, "61", "RUNNING", "3"), _reproduce_job(ckpt, "62", "3")),
                    accounting="no")
    status = read_status(ckpt, jobs).to_json()
    said = {j["job_id"]: [o["approved"] for o in j["outside"] if o["what"] == "nodes"]
            for j in status["jobs"]["jobs"]}
    assert {job: approved[0] for job, approved in said.items() if approved} == flagged
    rules = [f["params"]["job"] for f in status["findings"] if f["rule"] == "run-job-outside-envelope"]
    assert sorted(rules) == sorted(flagged)
    if "record" not in record and "schema" not in record:
        assert status["envelope"]["bfts"]["nodes"] == record.get("bfts", 2)
