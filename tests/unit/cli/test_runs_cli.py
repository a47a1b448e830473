"""``ari-jupyter runs|status|cancel`` as a user runs them: text, exit codes, --follow to the end."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from ari_jupyter.hosts.recorded_site import RecordedSite

from runs_support import append, copy_case, handoff_log, live_ari, live_handoff

NO_SLURM = {"PATH": "/nonexistent"}  # squeue not found: a machine without SLURM


def cli(*args, env=None, **kwargs) -> subprocess.CompletedProcess:
    full = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "ari_jupyter", *args], capture_output=True, text=True,
                          env=full, timeout=60, stdin=subprocess.DEVNULL, **kwargs)


@pytest.mark.parametrize("case,code,phase,said", [
    ("not-started", 0, "not-started", "not started"),  # the panel's words, not the JSON's
    ("failed", 1, "failed", "failed"),
    ("interrupted-paper", 1, "interrupted", "interrupted")])
def test_status_exit_codes_and_text(tmp_path, case, code, phase, said):
    ckpt = copy_case(case, tmp_path)
    done = cli("status", str(ckpt), env=NO_SLURM)
    assert done.returncode == code, done.stderr
    assert f"phase: {said}" in done.stdout
    assert phase == said or phase not in done.stdout
    assert "jobs: unknown (squeue is not on PATH: this machine is not a SLURM submit host)" \
        in done.stdout
    assert json.loads(cli("status", "--json", str(ckpt), env=NO_SLURM).stdout)["phase"] == phase


def test_status_says_why_no_job_is_known_when_squeue_has_no_cluster(tmp_path):
    """slurm-client installed without a cluster (a class room): squeue is there, so the reason
    is its missing configuration, as `cancel` says, never "no squeue on this machine"."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    squeue = bin_dir / "squeue"
    squeue.write_text("#!/bin/sh\necho 'squeue: error: resolve_ctls_from_dns_srv: res_nsearch "
                      "error: Unknown host' >&2\necho 'squeue: error: fetch_config: DNS SRV lookup "
                      "failed' >&2\necho 'squeue: fatal: Could not establish a configuration "
                      "source' >&2\nexit 1\n")
    squeue.chmod(0o755)
    ckpt = copy_case("failed", tmp_path)
    done = cli("status", str(ckpt), env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert "jobs: unknown (squeue finds no SLURM configuration here" in done.stdout, done.stdout
    assert "no squeue" not in done.stdout


@pytest.mark.parametrize("lang, phase, process", [
    ("en", "phase: starting", "ARI is starting"),
    ("ja", "起動中", "ARI は起動中です"),
    ("zh", "启动中", "ARI 正在启动"),
])
def test_status_of_a_run_whose_handoff_is_loading_ari_says_starting(tmp_path, lang, phase, process):
    """Not "interrupted" and not ".ari_pid is missing: ARI is not running" in the ~45 s ARI loads."""
    ckpt = copy_case("not-started", tmp_path)
    with live_handoff(ckpt):
        done = cli("status", "--lang", lang, str(ckpt), env=NO_SLURM)
    assert done.returncode == 0, done.stderr
    assert phase in done.stdout and process in done.stdout, done.stdout


@pytest.mark.parametrize("target", ["missing", "empty", "file"])
def test_status_of_something_else_is_a_verdict_not_a_traceback(tmp_path, target):
    path = tmp_path / "x"
    if target == "empty":
        path.mkdir()
    elif target == "file":
        path.write_text("{}")
    done = cli("status", str(path), env=NO_SLURM)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and done.stderr.startswith("ari-jupyter status: ")


def test_cancel_without_slurm_cancels_nothing(tmp_path):
    ckpt = copy_case("failed", tmp_path)
    done = cli("cancel", "--yes", "--all", str(ckpt), env=NO_SLURM)
    assert done.returncode == 1 and "SLURM did not answer" in done.stderr


def test_runs_lists_newest_first(tmp_path):
    for case in ("failed", "interrupted-paper"):
        for run in (copy_case(case, tmp_path / case),):
            (tmp_path / "checkpoints").mkdir(exist_ok=True)
            run.rename(tmp_path / "checkpoints" / run.name)
    (tmp_path / "checkpoints" / "20261201120000_not_a_run").mkdir()  # nothing of ARI's: left out
    (tmp_path / "checkpoints" / "notes").mkdir()  # not a run id: left out
    lines = cli("runs", "--workspace", str(tmp_path), env=NO_SLURM).stdout.splitlines()
    assert lines[0].split()[:2] == ["RUN", "PHASE"]
    assert [line.split()[:3] for line in lines[1:3]] == [
        ["20261201094500_stream_triad", "failed", "0/1/0/1"],
        ["20261201093000_stream_triad", "interrupted", "0/1/0/1"]]
    assert lines[3] == "(jobs ?: no SLURM here, so no job can be counted)"
    assert [line.split()[4] for line in lines[1:3]] == ["?", "?"]  # unknown, as status says


def test_runs_says_job_counts_are_unknown_when_squeue_fails(tmp_path):
    (tmp_path / "checkpoints").mkdir()
    copy_case("failed", tmp_path / "case").rename(tmp_path / "checkpoints" / "20261201094500_stream_triad")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    squeue = bindir / "squeue"
    squeue.write_text("#!/bin/sh\necho 'slurm_load_jobs error: Unable to contact slurm controller' >&2\n"
                      "exit 1\n")
    squeue.chmod(0o755)
    env = {"PATH": f"{bindir}:/usr/bin:/bin"}
    lines = cli("runs", "--workspace", str(tmp_path), env=env).stdout.splitlines()
    assert lines[1].split()[4] == "?"
    assert lines[2].startswith("(squeue did not answer, so the job counts are unknown: ")
    assert "Unable to contact slurm controller" in lines[2]
    ja = cli("--lang", "ja", "runs", "--workspace", str(tmp_path), env=env).stdout.splitlines()
    assert ja[2].startswith("（squeue が応答しないため、ジョブ数は不明です: ")
    answer = json.loads(cli("runs", "--json", "--workspace", str(tmp_path), env=env).stdout)
    assert answer["scheduler"] == "error" and "slurm controller" in answer["problem"]


def test_follow_prints_new_lines_and_stops_when_the_run_ends(tmp_path):
    ckpt = copy_case("exploring", tmp_path)
    with live_ari(ckpt):
        follower = subprocess.Popen([sys.executable, "-m", "ari_jupyter", "status", "--follow",
                                     "--interval", "0.2", str(ckpt)], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True,
                                    env={**os.environ, **NO_SLURM})
        time.sleep(2.0)
        append(handoff_log(ckpt), "a fresh line from ari\n")
        time.sleep(2.0)
    out, err = follower.communicate(timeout=60)
    assert follower.returncode == 1, err  # interrupted: the stand-in was killed, not ARI's end
    assert "phase: exploring" in out
    assert "  a fresh line from ari" in out
    assert out.rstrip().endswith("run ended: interrupted")


def test_follow_waits_for_a_written_run_to_start(tmp_path):
    """Right after the hand-off is written, --follow waits for `ari run` instead of ending."""
    source = copy_case("exploring", tmp_path / "source")
    ckpt = tmp_path / "ws" / "checkpoints" / source.name
    ckpt.mkdir(parents=True)
    for name in ("experiment.md", "launch_config.json"):  # what the wizard writes
        shutil.copy(source / name, ckpt / name)
    follower = subprocess.Popen([sys.executable, "-m", "ari_jupyter", "status", "--follow",
                                 "--interval", "0.2", str(ckpt)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, **NO_SLURM})
    try:
        time.sleep(2.0)
        assert follower.poll() is None, follower.communicate()  # still watching
        for path in source.iterdir():  # `ari run` starts: its files appear
            if not (ckpt / path.name).exists():
                shutil.copy(path, ckpt / path.name)
        with live_ari(ckpt):
            time.sleep(2.0)
        out, err = follower.communicate(timeout=60)
    finally:
        if follower.poll() is None:
            follower.kill()
    assert "waiting for the run to start" in out, (out, err)
    assert "exploring" in out and out.rstrip().endswith("run ended: interrupted"), out


@pytest.mark.parametrize("env,expected", [
    ({"ARI_JUPYTER_DEMO_SITE": "rccs-cloud"}, "{home}/ari-demo/rccs-cloud"),
    ({"ARI_JUPYTER_DEMO_SITE": "rccs-cloud", "SLURM_JOB_ID": "7"}, "/work/{user}/ari"),
])
def test_default_workspace_is_where_the_wizard_writes(tmp_path, monkeypatch, env, expected):
    """`ari-jupyter lab` on a laptop: the wizard writes to the demo workspace, so the Runs panel
    and `runs` list that one; inside an allocation the site's template, as the wizard uses."""
    from ari_jupyter.runs.service import default_workspace

    for name in [k for k in os.environ if k.startswith("SLURM_")] + ["ARI_JUPYTER_DEMO_SITE"]:
        monkeypatch.delenv(name, raising=False)
    full = {**os.environ, "HOME": str(tmp_path), "USER": "u1", **env}
    assert default_workspace(full) == expected.format(home=tmp_path, user="u1")


@pytest.mark.parametrize("written, listed, same", [
    ("/work/u/ari", "/work/u/ari", True),
    ("/work/u/ari/", "/work/u/ari", True),
    ("/work/u/ari/x/..", "/work/u/ari", True),
    ("~/ari", os.path.expanduser("~/ari"), True),
    ("/work/u/ari2", "/work/u/ari", False),
    ("/tmp/ws", "/work/u/ari", False),
])
def test_same_workspace_reads_spellings_of_one_folder_as_one(written, listed, same):
    """Step 4's "the Runs panel lists another workspace" note rests on this."""
    from ari_jupyter.runs.service import same_workspace

    assert same_workspace(written, listed) is same


def test_runs_on_a_demo_site_lists_what_emit_wrote_there(tmp_path):
    """`emit --site NAME` writes to the demo site's local workspace: `runs --site NAME` lists
    it; plain `runs` lists it too (emit recorded the workspace) and says where it is; an
    unknown site is a usage error."""
    env = {**NO_SLURM, "HOME": str(tmp_path), "USER": "u1"}
    env = {k: v for k, v in {**os.environ, **env}.items()
           if not k.startswith("SLURM_") and k != "ARI_JUPYTER_DEMO_SITE"}
    written = subprocess.run(
        [sys.executable, "-m", "ari_jupyter", "emit", "--site", "rccs-cloud", "--title", "Stencil",
         "--goal", "g", "--metric", "GFlops", "--json"],
        capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert written.returncode == 0, written.stderr
    run_id = os.path.basename(json.loads(written.stdout)["checkpoint_dir"])

    listed = subprocess.run([sys.executable, "-m", "ari_jupyter", "runs", "--site", "rccs-cloud"],
                            capture_output=True, text=True, env=env, timeout=60)
    assert listed.returncode == 0 and run_id in listed.stdout, listed.stdout + listed.stderr

    plain = subprocess.run([sys.executable, "-m", "ari_jupyter", "runs"],
                           capture_output=True, text=True, env=env, timeout=60)
    workspace = os.path.dirname(os.path.dirname(json.loads(written.stdout)["checkpoint_dir"]))
    row = next(line for line in plain.stdout.splitlines() if line.startswith(run_id))
    assert workspace in row and "runs --site NAME" not in plain.stderr, plain.stdout + plain.stderr

    unknown = subprocess.run([sys.executable, "-m", "ari_jupyter", "runs", "--site", "nosuch"],
                             capture_output=True, text=True, env=env, timeout=60)
    assert unknown.returncode == 2 and "unknown demo site 'nosuch'" in unknown.stderr


@pytest.fixture(scope="module")
def two_demo_sites_runs(tmp_path_factory):
    """One run written with `emit --site` on each of two demo sites, by one user (one HOME)."""
    home = tmp_path_factory.mktemp("home")
    env = {k: v for k, v in {**os.environ, **NO_SLURM, "HOME": str(home), "USER": "u1"}.items()
           if not k.startswith("SLURM_") and k not in ("ARI_JUPYTER_DEMO_SITE", "JUPYTER_DATA_DIR")}
    written = {}
    for site in ("rccs-cloud", "gres-cluster"):
        done = subprocess.run(
            [sys.executable, "-m", "ari_jupyter", "emit", "--site", site, "--title", f"On {site}",
             "--goal", "g", "--metric", "GFlops", "--json"],
            capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
        written[site] = os.path.basename(json.loads(done.stdout)["checkpoint_dir"])
    return env, written


@pytest.mark.parametrize("site, other", [("rccs-cloud", "gres-cluster"), ("gres-cluster", "rccs-cloud")])
def test_runs_on_a_demo_site_lists_only_the_runs_written_on_it(two_demo_sites_runs, site, other):
    """`runs --site NAME` is "the runs written on this demo site": not those of another demo
    site, although that one's workspace is recorded too (plain `runs` lists both)."""
    env, written = two_demo_sites_runs
    listed = subprocess.run([sys.executable, "-m", "ari_jupyter", "runs", "--site", site, "--json"],
                            capture_output=True, text=True, env=env, timeout=60)
    assert listed.returncode == 0, listed.stderr
    answer = json.loads(listed.stdout)
    recorded = list(RecordedSite.load(site).runs)  # the run the demo site shows (test_demo_runs.py)
    assert sorted(r["run_id"] for r in answer["runs"]) == sorted([written[site], *recorded])
    assert len(answer["workspaces"]) == 1 and written[other] not in listed.stdout
    plain = subprocess.run([sys.executable, "-m", "ari_jupyter", "runs", "--json"],
                           capture_output=True, text=True, env=env, timeout=60)
    assert {r["run_id"] for r in json.loads(plain.stdout)["runs"]} >= set(written.values())


@pytest.mark.parametrize("target", ["missing", "file"])
def test_runs_of_a_workspace_that_is_not_a_directory_is_a_verdict(tmp_path, target):
    path = tmp_path / "ws"
    if target == "file":
        path.write_text("x")
    done = cli("runs", "--workspace", str(path), env=NO_SLURM)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("ari-jupyter runs: ") and str(path) in done.stderr


@pytest.mark.parametrize("lang, word, counts", [
    ("en", "search nodes", "1 search node: 0 done, 1 failed"),
    ("ja", "探索ノード", "探索ノード 1 個: 完了 0、失敗 1"),
    ("zh", "搜索节点", "1 个搜索节点：完成 0，失败 1")])
def test_the_search_trees_nodes_are_called_search_nodes(tmp_path, lang, word, counts):
    """`status` and the `runs` header name ARI's search-tree nodes so, never bare "nodes",
    which the same screens use for compute nodes."""
    (tmp_path / "checkpoints").mkdir()
    run = copy_case("failed", tmp_path / "case")
    run.rename(tmp_path / "checkpoints" / run.name)
    said = cli("status", "--lang", lang, str(tmp_path / "checkpoints" / run.name), env=NO_SLURM).stdout
    assert counts in said.splitlines()[3], said
    header = cli("runs", "--lang", lang, "--workspace", str(tmp_path), env=NO_SLURM).stdout.splitlines()[0]
    assert word in header.lower(), header


@pytest.mark.parametrize("lang, summary, left", [
    ("en", "Follow-up allocations: 2 of 3 submitted (partition small, 2 node(s), 00:30:00 each).", "left the queue"),
    ("ja", "フォローアップ割り当て: 3 個中 2 個を投入済み（各パーティション small、2 ノード、00:30:00）。", "キューから出ました"),
    ("zh", "后续分配：已提交 2 个，共批准 3 个（每个分区 small、2 个节点、00:30:00）。", "已离开队列"),
])
def test_status_shows_the_chain_link_by_link(lang, summary, left):
    from ari_jupyter.cli._runs_text import chain_lines
    chain = {"approved": 3, "used": 2, "envelope": {"partition": "small", "nodes": 2, "time": "00:30:00"},
             "links": [{"job_id": "8", "after": "7", "state": "", "where": ""},
                       {"job_id": "9", "after": "8", "state": "PENDING", "where": "(Dependency)"}]}
    sep = "：" if lang == "zh" else ": "
    assert chain_lines(chain, lang) == [summary, f"  7 → 8{sep}{left}", f"  8 → 9{sep}PENDING (Dependency)"]
    assert chain_lines(None, lang) == []


def test_runs_lists_each_runs_chain_under_the_table():
    from ari_jupyter.cli._runs_text import runs_table
    chain = {"approved": 2, "used": 1, "envelope": {"partition": "small", "nodes": 1, "time": "5"},
             "links": [{"job_id": "8", "after": "7", "state": "PENDING", "where": "(Dependency)"}]}
    row = {"run_id": "20260101000000_a", "phase": "exploring", "title": "A", "updated_at": "2026-01-01T00:00:00",
           "nodes": {"done": 1, "failed": 0, "running": 1, "total": 2}, "best_metric": None, "jobs": 2,
           "chain": chain}
    lines = runs_table({"runs": [row, {**row, "run_id": "20260101000000_b"} | {"chain": None}],
                        "workspace": "/w", "scheduler": "ok"}).splitlines()
    assert lines[-2:] == ["20260101000000_a: Follow-up allocations: 1 of 2 submitted (partition small, 1 node(s), 5 each).",
                          "20260101000000_a: 7 → 8: PENDING (Dependency)"]
