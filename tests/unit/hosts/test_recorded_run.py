"""The recorded multi-node run on every demo site, and a demo site never calls SLURM.

Every bundled demo site shows the run recorded on the 2-node test bed (``hosts/runs/``, from
``tests/testbed/record_run.py``): ``runs --site``, ``status --site`` and the Runs panel's routes
list it with its phase, nodes, best metric, jobs (where each ran, each as SLURM accounting
recorded its end), its cost and log tail. A fake
``squeue``/``sacct``/``scancel``/``sinfo``/``sbatch``/``srun`` first on PATH notes every call:
on a demo site, chosen by ``--site`` or by ``ARI_JUPYTER_DEMO_SITE`` as ``ari-jupyter lab``
chooses it, none is made, by the CLI or by a real ``jupyter server``.
"""
from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from e2e.jupyter_process import http_get, start_jupyter

from ari_jupyter.cli import main
from ari_jupyter.hosts.host import SiteError, list_sites
from ari_jupyter.hosts.recorded_run import MARKER, RUNS_DIR, RecordedRun
from ari_jupyter.hosts.recorded_site import RecordedSite
from ari_jupyter.ari.cost import hours_text
from ari_jupyter.runs.jobs import ACTIVE_STATES
from ari_jupyter.slurm.accounting import ACCOUNT_FIELDS

SITES = list_sites()
SLURM_COMMANDS = ("squeue", "sacct", "scancel", "sinfo", "sbatch", "srun", "salloc", "scontrol")
RANK = re.compile(r"^srun rank (\d+) of (\d+) on (\S+)$")


def _fake_slurm(tmp: Path) -> tuple[Path, Path]:
    """A bin folder whose SLURM commands note their argv in ``calls.log`` and fail as a
    machine with SLURM's client and no controller does."""
    bin_dir, calls = tmp / "fake-slurm-bin", tmp / "calls.log"
    bin_dir.mkdir()
    for name in SLURM_COMMANDS:
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\necho "{name} $*" >> "{calls}"\n'
                          f'echo "{name}: error: Unable to contact slurm controller (connect failure)" >&2\nexit 1\n')
        script.chmod(0o755)
    return bin_dir, calls


def _run_of(site: str) -> RecordedRun:
    (run_id,) = RecordedSite.load(site).runs
    return RecordedRun.load(run_id)


@pytest.fixture
def demo_env(tmp_path, monkeypatch):
    """A HOME of its own, fake SLURM first on PATH, outside any allocation."""
    for name in [n for n in os.environ if n.startswith(("SLURM_", "SALLOC_"))]:
        monkeypatch.delenv(name)
    monkeypatch.delenv("ARI_JUPYTER_DEMO_SITE", raising=False)
    bin_dir, calls = _fake_slurm(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "home").mkdir()
    return tmp_path / "home", calls


def _cli_json(capsys, *argv) -> dict:
    main([*argv, "--json"])
    return json.loads(capsys.readouterr().out)


def _own_run(home: Path, site: str) -> Path:
    """A run the user wrote on the demo site (never ran): no recording answers for it."""
    own = home / "ari-demo" / site / "checkpoints" / "20261130090000_mine"
    own.mkdir(parents=True)
    (own / "experiment.md").write_text("# Mine\n")
    return own


def _check_shown(status: dict, run: RecordedRun) -> None:
    """What following the recorded run shows: phase, nodes, best metric, jobs and where they ran."""
    assert status["run_id"] == run.run_id and status["phase"] == "finished", status["phase"]
    assert status["nodes"]["done"] >= 2 and status["best_metric"] is not None
    assert status["log_tail"], "no log tail"
    assert any("recorded run" in note for note in status["notes"])
    jobs = status["jobs"]
    assert jobs["scheduler"] == "recording"
    kinds = [job["kind"] for job in jobs["jobs"]]
    assert kinds.count("bfts") >= 2 and kinds.count("reproduce") == 1, kinds
    # each job as accounting recorded its end (sacct), none left running
    assert jobs["accounting"] == "yes" and all(job["source"] == "sacct" and job["where"] for job in jobs["jobs"])
    assert not [job for job in jobs["jobs"] if job["state"] in ACTIVE_STATES], jobs["jobs"]
    assert {job["where"] for job in jobs["jobs"] if job["kind"] == "bfts"} <= {"n1", "n2", "n[1-2]"}
    (reproduce,) = [job for job in jobs["jobs"] if job["kind"] == "reproduce"]
    assert reproduce["where"] == "n[1-2]" and reproduce["nodes"] == "2"
    ranks = [RANK.match(line).groups() for line in reproduce["tail"] if RANK.match(line)]
    assert {host for _, _, host in ranks} == {"n1", "n2"}, reproduce["tail"]
    # the best metric is the one the BFTS job that ran in the best node's work dir printed
    best = status["best_metric"]
    assert any(job["work_dir"].endswith("/" + best["node_id"]) for job in jobs["jobs"]), best


def test_every_bundled_site_points_at_one_bundled_recording():
    recordings = sorted(p.stem for p in RUNS_DIR.glob("*.json"))
    assert len(recordings) == 1, recordings
    for site in SITES:
        assert RecordedSite.load(site).runs == tuple(recordings), site
    size = (RUNS_DIR / f"{recordings[0]}.json").stat().st_size
    assert size < 400 * 1024, f"the recorded run is {size / 1024:.0f} KB"
    # a wheel from an index has it (setup.cfg's package_data)
    import configparser
    import glob

    config = configparser.ConfigParser()
    config.read(RUNS_DIR.parents[2] / "setup.cfg")
    patterns = [p.strip() for p in config["options.package_data"]["ari_jupyter"].split(",")]
    shipped = {Path(f) for p in patterns for f in glob.glob(str(RUNS_DIR.parents[1] / p))}
    assert RUNS_DIR / f"{recordings[0]}.json" in shipped


@pytest.mark.parametrize("site", SITES)
def test_every_demo_site_shows_the_recorded_run_and_calls_no_slurm(site, demo_env, capsys):
    home, calls = demo_env
    run = _run_of(site)
    _own_run(home, site)
    listed = _cli_json(capsys, "runs", "--site", site)
    row = next(r for r in listed["runs"] if r["run_id"] == run.run_id)
    assert row["phase"] == "finished" and row["jobs"] >= 3 and row["best_metric"]
    assert "20261130090000_mine" in [r["run_id"] for r in listed["runs"]]
    status = _cli_json(capsys, "status", "--site", site, run.run_id)
    _check_shown(status, run)
    mine = _cli_json(capsys, "status", "--site", site, "20261130090000_mine")
    assert mine["jobs"] == {"jobs": [], "scheduler": "recording", "problem": "", "accounting": "unknown"}
    assert main(["cancel", "--site", site, "--all", "--yes", run.run_id]) == 0
    assert "recording" in capsys.readouterr().out
    assert not calls.exists(), f"SLURM was called on demo site {site}: {calls.read_text()}"


@pytest.mark.parametrize("site", SITES)
def test_the_wizards_demo_site_calls_no_slurm_without_site_flag(site, demo_env, capsys, monkeypatch):
    """As ``ari-jupyter lab`` runs with no allocation: the demo site comes from the environment."""
    home, calls = demo_env
    monkeypatch.setenv("ARI_JUPYTER_DEMO_SITE", site)
    run = _run_of(site)
    _own_run(home, site)
    listed = _cli_json(capsys, "runs")
    assert run.run_id in [r["run_id"] for r in listed["runs"]]
    checkpoint = home / "ari-demo" / site / "checkpoints" / run.run_id
    _check_shown(_cli_json(capsys, "status", str(checkpoint)), run)
    _cli_json(capsys, "status", str(home / "ari-demo" / site / "checkpoints" / "20261130090000_mine"))
    assert not calls.exists(), calls.read_text()


@pytest.mark.parametrize("lang, says", [
    ("en", "is a recording on a demo site"), ("ja", "デモサイトの記録です"), ("zh", "是演示站点上的录制")])
def test_cancel_on_a_demo_site_says_it_is_a_recording(lang, says, demo_env, capsys, monkeypatch):
    home, calls = demo_env
    run = _run_of("rccs-cloud")
    monkeypatch.setenv("LANG", {"en": "C.UTF-8", "ja": "ja_JP.UTF-8", "zh": "zh_CN.UTF-8"}[lang])
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    assert main(["cancel", "--site", "rccs-cloud", "--job", "6", "--yes", run.run_id]) == 0
    out = capsys.readouterr().out
    assert says in out and run.run_id in out
    assert not calls.exists()


def _sacct(run: RecordedRun) -> dict[str, dict[str, str]]:
    """The recording's sacct rows by job id, field by field, as sacct printed them (read here
    on their own: a name holds no "|" in this run)."""
    rows = [line.split("|") for line in run.sacct.splitlines() if line.strip()]
    assert rows and all(len(r) == len(ACCOUNT_FIELDS) for r in rows), run.sacct
    return {r[0]: dict(zip(ACCOUNT_FIELDS, r)) for r in rows}


def test_the_recorded_jobs_are_shown_as_accounting_recorded_their_end(demo_env, capsys):
    """Each job as sacct recorded it once the run had ended: its end state (the jobs the Runs
    panel's Cancel ended read CANCELLED, the others COMPLETED), exit code, elapsed seconds; the
    envelope flag beside the jobs that asked an hour where 30 minutes were approved; node-hours
    per job kind equal to sacct's elapsed seconds × nodes; the LLM use ARI's cost_summary.json
    recorded; the phase history."""
    run = _run_of("rccs-cloud")
    sacct = _sacct(run)
    status = _cli_json(capsys, "status", "--site", "rccs-cloud", run.run_id)
    jobs = {job["job_id"]: job for job in status["jobs"]["jobs"]}
    assert set(jobs) == set(sacct), (sorted(jobs), sorted(sacct))
    cancelled = run.cancelled_from_panel
    assert cancelled and all(sacct[j]["State"].startswith("CANCELLED") for j in cancelled)
    for job_id, job in jobs.items():
        row = sacct[job_id]
        assert (job["state"], job["exit_code"], job["elapsed_s"], job["nodes"], job["time_limit"]) == (
            row["State"].split()[0], row["ExitCode"], int(row["ElapsedRaw"]), row["NNodes"], row["Timelimit"])
        assert job["state"] == ("CANCELLED" if job_id in cancelled else "COMPLETED"), job
        # the request as squeue showed it (sacct's line has no partition)
        assert job["partition"] == "small", job
    for job_id, job in jobs.items():  # who cancelled: the checkpoint's cancel record, as the doctor says
        assert bool(job["cancelled_by"]) == (job_id in cancelled), job
    for job_id in cancelled:
        assert f"Cancel (the Runs panel or `ari-jupyter cancel`) cancelled job {job_id}" in jobs[job_id]["cancelled_text"]
    for job_id in cancelled:  # outside what the user approved: the flag that led to the cancel
        assert [o["what"] for o in jobs[job_id]["outside"]] == ["walltime"], jobs[job_id]
        assert "you approved 00:30:00" in jobs[job_id]["outside_text"]
    assert not [j for j in jobs if j not in cancelled and jobs[j]["outside"]]
    # no finding offers to cancel a job that has ended
    assert not [f for f in status["findings"] if f["rule"] == "run-job-outside-envelope"]
    cost = status["cost"]
    assert cost["from_accounting"] is True
    for kind in ("bfts", "reproduce"):
        used = sum(int(sacct[j]["ElapsedRaw"]) * int(sacct[j]["NNodes"]) for j in jobs
                   if jobs[j]["kind"] == kind) / 3600
        assert cost["node_hours"][kind] == pytest.approx(used, abs=1e-4), (kind, cost)
    assert cost["node_hours"]["reproduce"] > 0 and cost["node_hours"]["bfts"] > 0
    assert any("SLURM accounting" in line for line in cost["text"]), cost["text"]
    summary = json.loads(run.files[f"{run.checkpoint}/cost_summary.json"]["text"])
    assert (cost["llm"]["total_tokens"], cost["llm"]["calls"], cost["llm"]["total_cost_usd"]) == (
        summary["total_tokens"], summary["call_count"], summary["total_cost_usd"])
    assert {u["name"]: u["tokens"] for u in cost["llm"]["by_phase"]} == {
        name: use["tokens"] for name, use in summary["by_phase"].items()}
    assert [e["phase"] for e in status["phase_history"]][-1] == "finished"
    assert {"exploring", "reproduce"} <= {e["phase"] for e in status["phase_history"]}
    assert any("accounting" in note for note in status["notes"])
    # in words: the states, who ended what, the node-hours from accounting
    main(["status", "--site", "rccs-cloud", run.run_id])
    said = capsys.readouterr().out
    assert "from SLURM accounting" in said and f"node-hours used: {hours_text(cost['node_hours']['total'])}" in said
    assert re.search(rf"(?m)^  {cancelled[0]}  \S+  CANCELLED ", said), said
    assert f"cancelled job {cancelled[0]}, as the checkpoint's" in said
    assert "RUNNING" not in said
    listed = _cli_json(capsys, "runs", "--site", "rccs-cloud")
    (row,) = [r for r in listed["runs"] if r["run_id"] == run.run_id]
    assert row["node_hours"] == cost["node_hours"]["total"]


def test_a_recording_without_accounting_still_shows_each_job_as_squeue_last_saw_it(tmp_path, monkeypatch):
    """A run recorded before the test bed kept accounting (no "sacct"): read as then."""
    from ari_jupyter.hosts.recorded_run import _load
    from ari_jupyter.runs.jobs import _recorded_view

    run = _run_of("rccs-cloud")
    data = json.loads((RUNS_DIR / f"{run.run_id}.json").read_text(encoding="utf-8"))
    data.pop("sacct")
    monkeypatch.setattr("ari_jupyter.hosts.recorded_run.RUNS_DIR", tmp_path)
    (tmp_path / f"{run.run_id}.json").write_text(json.dumps(data))
    _load.cache_clear()  # the recording as read from tmp_path, not the bundled one
    try:
        checkpoint = RecordedRun.load(run.run_id).place(tmp_path / "ws", "me")
        view = _recorded_view(checkpoint, "me")
    finally:
        _load.cache_clear()
    assert view.scheduler == "recording" and view.accounting == "unknown"
    assert view.jobs and {job.source for job in view.jobs} == {"recording"}
    assert {job.state for job in view.jobs} == {"RUNNING"}  # as squeue last saw each, all it knew


def test_placing_never_overwrites_what_is_there(tmp_path):
    run = _run_of("rccs-cloud")
    workspace = tmp_path / "ws"
    checkpoint = run.place(workspace, "someone")
    assert (checkpoint / MARKER).is_file() and (checkpoint / "tree.json").is_file()
    assert not (checkpoint / ".ari_pid").exists()  # a recorded pid could name a live process here
    assert str(workspace) in (checkpoint / ".env").read_text()  # paths are the demo workspace's
    assert "@WORKSPACE@" not in (checkpoint / ".env").read_text()
    (checkpoint / "experiment.md").write_text("# my notes\n")
    outside = sorted(p for p in (workspace / "slurm_logs").iterdir())
    outside[0].write_text("mine\n")
    assert run.place(workspace, "someone") == checkpoint
    assert (checkpoint / "experiment.md").read_text() == "# my notes\n"
    # a checkpoint removed is placed again; a file of the user's beside it stays
    import shutil

    shutil.rmtree(checkpoint)
    run.place(workspace, "someone")
    assert (checkpoint / "tree.json").is_file() and outside[0].read_text() == "mine\n"
    assert not [p for p in (workspace / "checkpoints").iterdir() if ".placing-" in p.name]


def test_a_recording_naming_a_file_outside_the_workspace_is_refused(tmp_path, monkeypatch):
    bad = {"format": 1, "run_id": "20260101000000_bad", "files": {"../../etc/x": {"text": "x"}}}
    monkeypatch.setattr("ari_jupyter.hosts.recorded_run.RUNS_DIR", tmp_path)
    (tmp_path / "20260101000000_bad.json").write_text(json.dumps(bad))
    with pytest.raises(SiteError, match="outside the workspace"):
        RecordedRun.load("20260101000000_bad")


def test_no_secret_and_no_test_bed_workspace_path_in_the_recording():
    """The workspace's paths are placeholders (filled in where the run is placed), and no key
    shape survives the redaction."""
    text = "\n".join(p.read_text() for p in RUNS_DIR.glob("*.json"))
    assert not re.findall(r"/home/[^/\s\"]+/ari/(?:checkpoints|experiments|slurm_logs|launch)", text)
    assert "@WORKSPACE@/checkpoints/" in text
    assert not re.findall(r"\bsk-[A-Za-z0-9_-]{12,}", text)
    assert "OPENAI_API_KEY=" not in text or "OPENAI_API_KEY=***" in text


# -- the Runs panel's routes on a real jupyter server --------------------------------------------


def _post(server, path: str, body: bytes):
    request = urllib.request.Request(server.url(path, token=False), data=body, method="POST",
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"token {server.token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.mark.parametrize("site", SITES)
def test_the_runs_routes_on_a_demo_site_show_the_recording_and_call_no_slurm(site, tmp_path):
    bin_dir, calls = _fake_slurm(tmp_path)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "ARI_JUPYTER_DEMO_SITE": site,
           "ARI_JUPYTER_WORKSPACES_FILE": str(tmp_path / "workspaces.json")}
    server = start_jupyter(tmp_path / "lab", env=env)
    try:
        run = _run_of(site)
        status, body = http_get(server.url("/ari-jupyter/runs/ids"))
        assert status == 200 and run.run_id in json.loads(body)["run_ids"], body[:300]
        status, body = http_get(server.url("/ari-jupyter/runs?lang=ja"))
        assert status == 200, body[:300]
        assert run.run_id in [r["run_id"] for r in json.loads(body)["runs"]]
        status, body = http_get(server.url(f"/ari-jupyter/runs/{run.run_id}"))
        assert status == 200, body[:300]
        _check_shown(json.loads(body), run)
        for lang, says in (("en", "is a recording"), ("ja", "デモサイトの記録"), ("zh", "演示站点上的录制")):
            status, body = _post(server, f"/ari-jupyter/runs/{run.run_id}/cancel?lang={lang}",
                                 b'{"all": true}')
            assert status == 200, body[:300]
            (outcome,) = json.loads(body)["outcomes"]
            assert outcome["result"] == "recording" and says in outcome["message"], outcome
    finally:
        server.stop()
    assert not calls.exists(), f"the server called SLURM on demo site {site}: {calls.read_text()}"
