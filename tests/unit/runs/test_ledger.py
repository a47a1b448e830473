"""The newer ARI's submission ledger read by ``status``, ``runs`` and the Runs panel's answer.

The fixture ledger (tests/fixtures/ari_typed_hpc_v1) is checked against the JSON schemas ARI
publishes (copied there with their source and commit), then a run's status lists every job
the ledger holds with its exact request and handle, even the ones SLURM no longer lists, and
compares each with what the user approved by what its request asked.
"""
from __future__ import annotations
from repo_paths import TESTS

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ari_jupyter.runs import read_status
from ari_jupyter.runs.jobs import Job, JobsView
from ari_jupyter.runs.ledger import FORGOTTEN, LEDGER_CAP, parse_ledger, read_ledger

from runs_support import copy_case

FIXTURES = TESTS / "fixtures" / "ari_typed_hpc_v1"
LEDGER = FIXTURES / "hpc-jobs-v1.json"
NO_SLURM = {"PATH": "/nonexistent"}


def schema(name: str) -> dict:
    return json.loads((FIXTURES / "schemas" / f"{name}-v1.schema.json").read_text())


def records() -> dict:
    return json.loads(LEDGER.read_text())["records"]


# -- the fixture is what ARI would accept -----------------------------------------------------

def test_fixture_handles_and_requests_validate_against_aris_published_schemas():
    jsonschema = pytest.importorskip("jsonschema")  # present with jupyter; the suite's env has it
    request, handle = schema("job-request"), schema("job-handle")
    resources = {"$defs": request["$defs"], "$ref": "#/$defs/ResourceRequestV1"}
    kinds = set()
    for record in records().values():
        req = record["request"]
        kinds.add(req["schema_version"])
        if req["schema_version"] == "ari.hpc.job-request/v1":
            jsonschema.Draft202012Validator(request).validate(req)
        else:  # the script bridge: no schema of its own; its resources are a ResourceRequestV1
            jsonschema.Draft202012Validator(resources).validate(req["resources"])
        if record["state"] == "submitted":
            jsonschema.Draft202012Validator(handle).validate(record["handle"])
            assert record["handle"]["request_digest"] in records()
    assert kinds == {"ari.hpc.job-request/v1", "ari.hpc.script-bridge/v1"}


@pytest.mark.parametrize("broken", [
    lambda r: r["resources"].update(walltime="2h"),          # not SLURM's D-HH:MM:SS
    lambda r: r["resources"].update(launcher="mpirun"),      # auto|srun|none only
    lambda r: r["environment"].update(export_mode="ALL"),    # --export=NIL, always
    lambda r: r.update(extra_sbatch_args=["--bind-to=core"]),  # no such field
])
def test_the_schema_copy_refuses_what_ari_refuses(broken):
    jsonschema = pytest.importorskip("jsonschema")
    typed = next(r["request"] for r in records().values()
                 if r["request"]["schema_version"] == "ari.hpc.job-request/v1")
    typed = json.loads(json.dumps(typed))
    broken(typed)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema("job-request")).validate(typed)


# -- status reads it ---------------------------------------------------------------------------

def _run_with_ledger(tmp_path: Path, where: str = "env") -> Path:
    """A real failed run whose .env points ARI_HPC_LEDGER_PATH into the workspace (as the
    wizard writes it for the newer ARI), or with the ledger at ARI's default place."""
    ckpt = copy_case("failed", tmp_path / "ws")
    if where == "env":
        ledger = tmp_path / "ws" / "ari-ledger" / ckpt.name / "hpc-jobs-v1.json"
        ledger.parent.mkdir(parents=True)
        with open(ckpt / ".env", "a", encoding="utf-8") as env:
            env.write(f"ARI_HPC_LEDGER_PATH={ledger}\n")
    else:
        ledger = ckpt / "hpc-jobs-v1.json"
    shutil.copy(LEDGER, ledger)
    return ckpt


@pytest.mark.parametrize("where", ["env", "default"])
def test_status_lists_every_ledger_job_with_its_request_after_slurm_forgot_it(tmp_path, where):
    ckpt = _run_with_ledger(tmp_path, where)
    status = read_status(ckpt, JobsView(scheduler="ok", accounting="no"))  # SLURM lists none
    jobs = {job.job_id: job for job in status.jobs.jobs}
    assert sorted(jobs) == ["4101", "4102", "4107"]  # the claim without a job id is no job
    assert {j.source for j in jobs.values()} == {"ledger"}
    assert {j.state for j in jobs.values()} == {FORGOTTEN} and not any(j.active for j in jobs.values())
    assert (jobs["4101"].kind, jobs["4107"].kind) == ("bfts", "reproduce")
    assert (jobs["4107"].partition, jobs["4107"].nodes, jobs["4107"].time_limit) == ("small", "2", "01:00:00")

    data = status.to_json()
    entries = {e["job_id"]: e for e in data["ledger"]["entries"] if e["job_id"]}
    for job_id, record in ((r["handle"]["job_id"], r) for r in records().values() if "handle" in r):
        assert entries[job_id]["request"] == record["request"]  # exactly as ARI recorded it
        assert entries[job_id]["handle"] == record["handle"]
    assert len(data["ledger"]["entries"]) == 4 and data["jobs"]["jobs"][0]["source"] == "ledger"


def test_the_envelope_compares_against_the_recorded_request(tmp_path):
    ckpt = _run_with_ledger(tmp_path)
    jobs = {j.job_id: j for j in read_status(ckpt, JobsView(scheduler="ok")).jobs.jobs}
    # approved: partition small, 2 nodes, Max CPUs 2, walltime 00:10:00 (the run's launch_config)
    over = {job_id: {o.what: (o.asked, o.approved) for o in job.outside} for job_id, job in jobs.items()}
    assert over["4101"] == {"cpus": ("4", "2"), "walltime": ("00:30:00", "00:10:00")}
    assert over["4102"] == {"cpus": ("8", "2"), "walltime": ("02:00:00", "00:10:00")}  # 2 nodes: approved
    # the reproduce job's CPUs: Max CPUs × the profile's 4 tasks per node = 8 approved
    assert over["4107"] == {"walltime": ("01:00:00", "00:10:00")}


def test_a_job_slurm_still_lists_keeps_slurms_columns_and_gains_the_request(tmp_path):
    ckpt = _run_with_ledger(tmp_path)
    # sacct's row has no partition, CPUs or time limit: the recorded request fills them
    queued = Job("4102", "triad_n2", "COMPLETED", nodes="2", kind="bfts", source="sacct")
    status = read_status(ckpt, JobsView((queued,), scheduler="ok", accounting="yes"))
    job = next(j for j in status.jobs.jobs if j.job_id == "4102")
    assert (job.state, job.source, job.nodes) == ("COMPLETED", "sacct", "2")
    assert (job.partition, job.cpus_per_node, job.time_limit) == ("small", "8", "02:00:00")
    assert [j.job_id for j in status.jobs.jobs].count("4102") == 1


def test_status_command_prints_the_ledger_jobs_and_their_requests(tmp_path):
    ckpt = _run_with_ledger(tmp_path)
    env = {**os.environ, **NO_SLURM}
    done = subprocess.run([sys.executable, "-m", "ari_jupyter", "status", str(ckpt)],
                          capture_output=True, text=True, env=env, timeout=60,
                          stdin=subprocess.DEVNULL)
    out = done.stdout
    assert "ARI's submission ledger" in out and "4 job(s) recorded" in out
    for record in records().values():
        line = json.dumps(record["request"], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        assert line in out
    answer = json.loads(subprocess.run(
        [sys.executable, "-m", "ari_jupyter", "runs", "--json", "--workspace", str(tmp_path / "ws")],
        capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL).stdout)
    row = next(r for r in answer["runs"] if r["run_id"] == ckpt.name)
    assert row["jobs"] == 3  # the Runs list counts the ledger's jobs too


def test_a_run_without_ledger_answers_as_before(tmp_path):
    ckpt = copy_case("failed", tmp_path / "ws")
    status = read_status(ckpt, JobsView(scheduler="ok"))
    assert status.ledger is None and "ledger" not in status.to_json()
    assert status.jobs.jobs == ()


# -- bounded, never fooled ---------------------------------------------------------------------

def test_a_fifo_or_a_huge_file_is_refused_without_reading_it(tmp_path):
    ckpt = copy_case("failed", tmp_path / "ws")
    os.mkfifo(ckpt / "hpc-jobs-v1.json")  # no writer: a plain open would block forever
    ledger = read_ledger(ckpt)
    assert ledger is not None and ledger.problem["message_id"] == "read.not_regular"
    os.unlink(ckpt / "hpc-jobs-v1.json")
    with open(ckpt / "hpc-jobs-v1.json", "wb") as big:
        big.truncate(LEDGER_CAP + 1)
    assert read_ledger(ckpt).problem["message_id"] == "read.too_large"


@pytest.mark.parametrize("text", [
    "", "{", "[]", '{"schema_version": "ari.hpc.submission-ledger/v2", "records": {}}',
    '{"schema_version": "ari.hpc.submission-ledger/v1", "records": []}',
])
def test_anything_but_a_v1_ledger_is_a_problem_not_jobs(text):
    ledger = parse_ledger(text, "/x/hpc-jobs-v1.json")
    assert ledger.entries == () and ledger.problem["message_id"] == "runs.ledger.invalid"
