"""emit_checkpoint: what ARI reads back, the hand-off script run for real, atomicity under
kill -9, the lock, permissions, overwrite policy, injection, workflow.yaml, and the CLI."""
from __future__ import annotations
from repo_paths import REPO

import fcntl
import importlib
import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime
from pathlib import Path

import pytest

from ari_jupyter.ari import arguments, render
from ari_jupyter.checkpoint.emit import CheckpointExists, CheckpointInUse, CheckpointLocked, EmitBlocked, EmitError, NodeLocalWorkspace, ari_jupyter_command, emit_checkpoint
from ari_jupyter.base.files import TMP_MARKER
from ari_jupyter.checkpoint.load import load_checkpoint
from ari_jupyter.ari.install import find_ari_workflow
from ari_jupyter.wizard.state import WizardState
from ari_jupyter.wizard.run_settings_view import handoff_key_variable
from ari_jupyter.base.verdict import ProbeResult
from env_support import env_without
from runs_support import live_ari, live_handoff
from unit.ari.test_render import WORKFLOW, golden_state

REPO = REPO


def make_state(tmp_path: Path, **overrides) -> WizardState:
    """A valid state writing under ``tmp_path/ws``, its workspace judged shared."""
    inputs = tmp_path / "inputs"
    inputs.mkdir(exist_ok=True)
    files = []
    for name in ("matrix.mtx", "baseline.c"):
        (inputs / name).write_text(name)
        files.append(str(inputs / name))
    workspace = str(overrides.pop("workspace", tmp_path / "ws"))
    state = golden_state(provided_files=files, workspace=workspace)
    state.set_probe_result(ProbeResult("shared_fs", "ok", "shared", data={"path": workspace}))
    for name, value in overrides.items():
        setattr(state, name, value)
    return state


def _names(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir()}


# -- what ARI reads back (R1-R8 written again here from the spec, independently of the code) --

def ari_reads(text: str) -> dict:
    """ARI's deterministic parsers, per spec §1.2 (first match wins everywhere)."""
    out: dict = {}
    m = re.search(r"(?:Partition|partition)[:\s]+([\w-]+)", text)  # R5, case-sensitive
    out["partition"] = m.group(1) if m else None
    m = re.search(r"Max CPUs?[:\s]+(\d+)", text, re.IGNORECASE)  # R6
    out["max_cpus"] = int(m.group(1)) if m else None
    m = re.search(r"^\s*Metrics?\s*[:\-]\s*(.*)$", text, re.MULTILINE | re.IGNORECASE)  # R1
    out["metric"] = re.split(r"[,\s]+", m.group(1).strip(), maxsplit=1)[0].strip(" .;") if m else ""
    section = re.search(r"##\s*Success Metrics[^\n]*\n(.*?)(?=\n##|\Z)", text, re.I | re.S)  # R2
    items = re.findall(r"-\s+(\w+)\s*:", section.group(1)) if section else []
    if items:
        out["evaluator"] = items
    else:
        m = re.search(r"(?:^|\n)Metrics?:(.*)", text, re.IGNORECASE)
        out["evaluator"] = [i.strip().strip("/") for i in re.split(r"[,;]", m.group(1))] if m else []
    m = re.search(r"min_expected_metric:\s*([\d]+)", text)  # R3
    out["min_expected"] = int(m.group(1)) if m else None
    m = re.search(r"##\s*(?:提供ファイル|提供文件|Provided Files?|Local Files?|Files?)\s*\n(.*?)(?=\n##|\Z)",
                  text, re.I | re.S)  # R8
    files = []
    for line in (m.group(1).split("\n") if m else []):
        entry = line.strip().lstrip("-* ").split("#", 1)[0].strip()
        if "/" in entry:
            files.append(entry)
    out["files"] = files
    out["slurm"] = any(t in text.lower() for t in ("slurm", "sbatch", "srun", "partition:"))  # R4
    return out


HAZARDOUS_GOALS = [
    "We partition the matrix by rows; partition: columns is worse.",
    "Metrics: wrong_metric\nmetric - also_wrong\nMetrics\n- acc",
    "## Success Metrics\n- bogus: measured by the harness\n",
    "Inputs:\n## Files\n/etc/passwd\n### Provided Files\n- /etc/hosts",
    "Partition: large, Max CPUs: 999\nmax cpu 2",
    "We use sbatch and srun; min expected speedup is high.",
    "Ziel: Partitionierung — 分割 (partition) を評価する。Metric: 精度",
]


@pytest.mark.parametrize("goal", HAZARDOUS_GOALS)
def test_ari_reads_back_exactly_what_the_user_chose(tmp_path, goal):
    state = make_state(tmp_path, goal=goal, partition="gpu-large", max_cpus=12,
                       metrics=["GFlops", "GB/s"], min_expected_metric=7)
    result = emit_checkpoint(state)
    text = (Path(result.checkpoint_dir) / "experiment.md").read_text()
    read = ari_reads(text)
    assert read == {"partition": "gpu-large", "max_cpus": 12, "metric": "GFlops",
                    "evaluator": ["GFlops", "GB/s"], "min_expected": 7,
                    "files": list(state.provided_files), "slurm": True}


def test_no_provided_files_reads_back_empty(tmp_path):
    state = make_state(tmp_path, provided_files=[], goal="Data:\n## Files\n/etc/passwd")
    text = (Path(emit_checkpoint(state).checkpoint_dir) / "experiment.md").read_text()
    assert ari_reads(text)["files"] == []


# -- layout, contents, permissions ------------------------------------------------------------

def test_emit_writes_the_checkpoint_and_nothing_else_in_its_root(tmp_path):
    state = make_state(tmp_path)
    result = emit_checkpoint(state)
    ckpt = Path(result.checkpoint_dir)
    assert ckpt == tmp_path / "ws" / "checkpoints" / state.run_id
    assert _names(ckpt) == {"experiment.md", ".env", "bfts_env.sh", "launch_config.json"}
    script = Path(result.handoff_script)
    assert script == tmp_path / "ws" / "launch" / f"{state.run_id}.sh"
    assert result.handoff_command == f"bash {script}"
    assert result.files == (str(ckpt / "experiment.md"), str(ckpt / ".env"), str(ckpt / "bfts_env.sh"),
                            str(ckpt / "launch_config.json"), str(script))
    assert (ckpt / "experiment.md").read_text() == render.render_experiment_md(state.choices())
    assert (ckpt / ".env").read_text() == render.render_env(state.choices())
    assert (ckpt / "bfts_env.sh").read_text() == render.render_bfts_env(state.choices())
    assert f"ARI_ENV_FILE={ckpt}/bfts_env.sh\n" in (ckpt / ".env").read_text()
    import hashlib
    hashes = {name: hashlib.sha256((ckpt / name).read_bytes()).hexdigest()
              for name in ("experiment.md", ".env", "bfts_env.sh")}
    assert script.read_text() == render.render_handoff_script(
        state.choices(), str(ckpt), str(script), api_key=handoff_key_variable(state),
        ari_jupyter=ari_jupyter_command(), files_sha256=hashes)
    config = json.loads((ckpt / "launch_config.json").read_text())
    assert config["ari_jupyter"]["files_sha256"] == hashes
    # the hand-off script's own hash, so that a swapped script can be told (check-handoff)
    assert config["ari_jupyter"]["handoff_sha256"] == hashlib.sha256(script.read_bytes()).hexdigest()
    assert sum(getattr(n, "message_id", "") in ("emit.note.no_ari", "emit.note.no_ari_demo")
               for n in result.notes) == 1
    assert not any("workflow.yaml not written" in note for note in result.notes)


def test_approved_followups_write_the_followup_script_hashed_with_the_others(tmp_path):
    import hashlib
    from ari_jupyter.runs.chain import read_chain
    state = make_state(tmp_path, followups=2)
    result = emit_checkpoint(state)
    ckpt = Path(result.checkpoint_dir)
    script = ckpt / "followup.sh"
    assert script.read_text() == render.render_followup_script(
        state.choices(), str(ckpt), ari_jupyter=ari_jupyter_command(), api_key=handoff_key_variable(state))
    assert script.stat().st_mode & 0o777 == 0o750
    digest = hashlib.sha256(script.read_bytes()).hexdigest()
    config = json.loads((ckpt / "launch_config.json").read_text())
    assert config["ari_jupyter"]["files_sha256"]["followup.sh"] == digest
    assert f"{digest} followup.sh" in Path(result.handoff_script).read_text()  # the hand-off checks it
    assert "follow-up \"$ARI_CHECKPOINT_DIR\" --after" in Path(result.handoff_script).read_text()
    chain = read_chain(ckpt)
    assert (chain.approved, chain.used, chain.script_sha256) == (2, 0, digest)
    # written again without follow-ups: no script is left behind, nothing approved
    emit_checkpoint(make_state(tmp_path, run_id=state.run_id, title=state.title), force=True)
    assert not script.exists() and read_chain(ckpt).approved == 0


def test_without_ari_the_notes_say_so_once_and_the_checklist_does_not_repeat_it(tmp_path, monkeypatch):
    """A teacher on a laptop has no ARI: one plain sentence, not an error repeated twice."""
    from ari_jupyter.checkpoint import emit as emit_module
    from ari_jupyter.checkpoint.handoff import handoff_checklist
    from ari_jupyter.i18n import render as in_lang

    monkeypatch.setattr(emit_module, "find_ari_workflow", lambda *_: (None, emit_module.NO_ARI))
    state = make_state(tmp_path)
    result = emit_checkpoint(state)
    said = [n for n in result.notes if "ARI_ROOT" in n]
    assert len(said) == 1 and said[0].startswith("ARI is not installed"), result.notes
    for lang in ("ja", "zh"):
        assert "ARI_ROOT" in in_lang(said[0], lang) and "not installed" not in in_lang(said[0], lang)
    reproduce = handoff_checklist(state.choices(), result.checkpoint_dir, notes=result.notes,
                                  files=result.files)[1]
    assert "ARI_ROOT" not in reproduce.detail and "importable" not in reproduce.detail
    assert "workflow.yaml not written" in reproduce.detail


@pytest.mark.parametrize("site_name, site_ari, ari_note, port_note", [
    ("", None, "emit.note.no_ari", "handoff.dashboard.detail"),
    ("rccs-cloud", "ok", "emit.note.no_ari_demo", "handoff.dashboard.detail_demo"),
    ("rccs-cloud", None, "emit.note.no_ari_demo", "handoff.dashboard.detail_demo"),  # not asked
    # sx40's recording has no `ari` either: the note must not say the site has one
    ("sx40", "fail", "emit.note.no_ari_demo_site_lacks", "handoff.dashboard.detail_demo"),
])
def test_on_a_demo_site_what_was_looked_at_on_this_machine_says_so(tmp_path, monkeypatch, site_name,
                                                                  site_ari, ari_note, port_note):
    """The missing ARI and the free port are this machine's; whether the demo site has ARI is
    what its recording's ari probe said."""
    from ari_jupyter.checkpoint import emit as emit_module
    from ari_jupyter.checkpoint.handoff import handoff_checklist
    from ari_jupyter.i18n import render as in_lang
    from ari_jupyter.base.verdict import ProbeResult

    monkeypatch.setattr(emit_module, "find_ari_workflow", lambda *_: (None, emit_module.NO_ARI))
    state = make_state(tmp_path)
    state.site_name = site_name
    if site_ari is not None:
        state.set_probe_result(ProbeResult("ari", site_ari, "ari"))
    result = emit_checkpoint(state)
    assert [getattr(n, "message_id", "") for n in result.notes if "ARI_ROOT" in n] == [ari_note]
    dashboard = handoff_checklist(state.choices(), result.checkpoint_dir, notes=result.notes, files=result.files)[2]
    assert dashboard.detail.message_id == port_note
    if site_name:
        for note in (dashboard.detail, *result.notes):
            assert "this machine" in note or "free" not in note
        assert "このマシン" in in_lang(dashboard.detail, "ja")


@pytest.mark.parametrize("modules, note", [
    (["openmpi/4.1"], "emit.note.demo_handoff"),             # stops at the first module here
    ([], "emit.note.demo_handoff_no_modules"),             # nothing to load: stops at `ari`
])
def test_a_demo_sites_note_says_where_the_hand_off_stops_here(tmp_path, modules, note):
    state = make_state(tmp_path, module_loads=modules)
    state.site_name = "rccs-cloud"
    said = [getattr(n, "message_id", "") for n in emit_checkpoint(state).notes]
    assert note in said and len({"emit.note.demo_handoff", "emit.note.demo_handoff_no_modules"} & set(said)) == 1


def test_load_checkpoint_restores_the_full_state(tmp_path):
    state = make_state(tmp_path, mem_gb=8)
    result = emit_checkpoint(state)
    assert load_checkpoint(result.checkpoint_dir).to_json() == state.to_json()
    with pytest.raises(EmitError, match="not a checkpoint"):
        load_checkpoint(tmp_path)


def test_run_id_is_minted_from_the_title_and_clock(tmp_path):
    from datetime import datetime

    state = make_state(tmp_path, run_id="", title="Sparse GEMM, two nodes!")
    result = emit_checkpoint(state, now=datetime(2026, 7, 6, 12, 0, 0))
    assert state.run_id == "20260706120000_sparse_gemm_two_nodes"
    assert result.checkpoint_dir.endswith("/checkpoints/20260706120000_sparse_gemm_two_nodes")


def _refuse_node_local(state, tmp_path):
    state.set_probe_result(ProbeResult("shared_fs", "fail", "node-local", fix="move it",
                                       data={"path": state.workspace}))


def _refuse_existing(state, tmp_path):
    from datetime import datetime

    emit_checkpoint(make_state(tmp_path, run_id=state.run_id, title=state.title),
                    now=datetime(2026, 7, 6, 12, 0, 0))  # typed, or minted in the same second


def _fail_to_write(state, tmp_path):
    (tmp_path / "file").write_text("")
    state.workspace = str(tmp_path / "file" / "ws")  # below a file: the write fails
    state.set_probe_result(ProbeResult("shared_fs", "ok", "shared", data={"path": state.workspace}))


@pytest.mark.parametrize("refusal", [_refuse_node_local, _refuse_existing, _fail_to_write])
@pytest.mark.parametrize("typed", ["", "20260101000000_typed"])
def test_a_refused_emit_keeps_the_run_id_as_it_was(tmp_path, refusal, typed):
    """A minted id belongs to the checkpoint it names: after a refusal the next title mints
    again, and an id the user typed stays."""
    from datetime import datetime

    state = make_state(tmp_path, run_id=typed, title="疎行列の積")
    refusal(state, tmp_path)
    with pytest.raises(EmitError):
        emit_checkpoint(state, now=datetime(2026, 7, 6, 12, 0, 0))
    assert state.run_id == typed


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o000])
def test_permissions_whatever_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        result = emit_checkpoint(make_state(tmp_path))
    finally:
        os.umask(old)
    ckpt = Path(result.checkpoint_dir)
    mode = lambda p: p.stat().st_mode & 0o777  # noqa: E731
    assert mode(tmp_path / "ws") == mode(ckpt.parent) == mode(ckpt) == 0o750
    assert mode(tmp_path / "ws" / "launch") == 0o750
    assert mode(tmp_path / "ws" / "slurm_logs") == mode(tmp_path / "ws" / "experiments") == 0o750
    assert mode(ckpt / "experiment.md") == mode(ckpt / "launch_config.json") == 0o640
    assert mode(ckpt / ".env") == 0o600
    assert mode(Path(result.handoff_script)) == 0o750


@pytest.mark.parametrize("mode, written", [
    (0o775, True),   # ARI made it under umask 002: only the user's own private group writes too
    (0o777, False),  # anyone could have put something in it
])
def test_an_experiments_folder_ari_made_before_is_the_users_when_only_his_own_group_writes(
        tmp_path, mode, written):
    import grp
    import pwd
    me = pwd.getpwuid(os.geteuid())
    if not (me.pw_gid == os.getegid() and grp.getgrgid(me.pw_gid).gr_name == me.pw_name):
        pytest.skip("this user's primary group is not a private group")
    experiments = tmp_path / "ws" / "experiments"
    experiments.mkdir(parents=True)
    experiments.chmod(mode)
    state = make_state(tmp_path)
    if written:
        emit_checkpoint(state)
        assert experiments.stat().st_mode & 0o777 == 0o750
    else:
        with pytest.raises(EmitError, match="can be written by other users"):
            emit_checkpoint(state)


def test_existing_checkpoint_is_kept_unless_forced_then_backed_up_outside(tmp_path):
    state = make_state(tmp_path)
    first = emit_checkpoint(state)
    ckpt = Path(first.checkpoint_dir)
    before = {n: (ckpt / n).read_bytes() for n in _names(ckpt)}
    state.goal = "A different goal."
    with pytest.raises(CheckpointExists, match="already exists"):
        emit_checkpoint(state)
    assert {n: (ckpt / n).read_bytes() for n in _names(ckpt)} == before
    second = emit_checkpoint(state, force=True)
    assert "A different goal." in (ckpt / "experiment.md").read_text()
    backup = Path(second.backup_dir)
    assert not backup.is_relative_to(ckpt) and backup.is_relative_to(tmp_path / "ws" / "launch")
    for name, data in before.items():
        assert (backup / name).read_bytes() == data
    assert (backup / ".env").stat().st_mode & 0o777 == 0o600
    assert _names(ckpt) == {"experiment.md", ".env", "bfts_env.sh", "launch_config.json"}


@pytest.mark.parametrize("live", [live_ari, live_handoff], ids=["ari run", "hand-off"])
def test_a_checkpoint_ari_is_running_in_is_not_rewritten_even_forced(tmp_path, live):
    """Reopen, edit, Write: while `ari run` (or the hand-off about to start it) works in the
    checkpoint, nothing is replaced and the refusal names the process and the way out."""
    state = make_state(tmp_path)
    ckpt = Path(emit_checkpoint(state).checkpoint_dir)
    before = {n: (ckpt / n).read_bytes() for n in _names(ckpt)}
    with live(ckpt) as pid:
        state.goal = "A different goal."
        with pytest.raises(CheckpointInUse) as info:
            emit_checkpoint(state, force=True)
        assert f"process {pid}" in str(info.value) and "clone" in str(info.value)
        assert {n: (ckpt / n).read_bytes() for n in before} == before
    emit_checkpoint(state, force=True)  # ended: rewritten as before
    assert "A different goal." in (ckpt / "experiment.md").read_text()


def test_blocking_problems_write_nothing(tmp_path):
    state = make_state(tmp_path, metrics=[], title="")
    with pytest.raises(EmitBlocked) as info:
        emit_checkpoint(state)
    assert {p.field for p in info.value.problems} >= {"metrics", "title"}
    assert "metrics" in str(info.value)
    assert not (tmp_path / "ws").exists()


def test_node_local_workspace_is_refused_with_the_probes_reason(tmp_path):
    state = make_state(tmp_path)
    state.probe_results = {}  # no verdict: emit runs the shared_fs probe on this machine (/tmp)
    with pytest.raises(NodeLocalWorkspace) as info:
        emit_checkpoint(state)
    assert "node-local" in str(info.value) and "force" in str(info.value)
    assert not (tmp_path / "ws" / "checkpoints" / state.run_id / "experiment.md").exists()
    result = emit_checkpoint(state, force=True)
    assert any("node-local" in note and "forced" in note for note in result.notes)


def test_stale_temp_files_of_a_killed_writer_are_removed(tmp_path):
    state = make_state(tmp_path)
    ckpt = Path(emit_checkpoint(state).checkpoint_dir)
    stale = ckpt / f".experiment.md{TMP_MARKER}99999-dead"
    stale.write_text("partial")
    emit_checkpoint(state, force=True)
    assert not stale.exists()


def test_only_this_runs_temp_files_are_swept_from_the_shared_launch_dir(tmp_path):
    """launch/ holds every run's hand-off script; the lock covers one run id, so a temp of
    another run may belong to a writer that is about to rename it."""
    state = make_state(tmp_path)
    result = emit_checkpoint(state)
    launch = Path(result.handoff_script).parent
    own_stale = launch / f".{Path(result.handoff_script).name}{TMP_MARKER}99999-dead"
    others_in_flight = launch / f".20250101120000_other.sh{TMP_MARKER}{os.getpid()}-live"
    own_stale.write_text("partial")
    others_in_flight.write_text("being written")
    emit_checkpoint(state, force=True)
    assert not own_stale.exists()
    assert others_in_flight.read_text() == "being written"


# -- the hand-off script, run for real --------------------------------------------------------

STAND_IN_ARI = """\
#!{python}
import json, os, sys
with open(os.environ["ARI_RECORD"], "w") as fh:
    json.dump({{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}}, fh)
print("stand-in ari ran")
"""
STAND_IN_MODULE = """\
#!/bin/sh
printf '%s\\n' "$@" >> "$MODULE_RECORD"
"""


def run_handoff(tmp_path: Path, script: str, extra_env: dict | None = None):
    """``bash <script>`` with stand-in ``ari`` and ``module`` first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "ari").write_text(STAND_IN_ARI.format(python=sys.executable))
    (bin_dir / "module").write_text(STAND_IN_MODULE)
    for tool in ("ari", "module"):
        (bin_dir / tool).chmod(0o755)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir(exist_ok=True)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path),
           "OPENAI_API_KEY": "sk-test-not-a-key",  # the hand-off stops without the backend's key
           "ARI_RECORD": str(tmp_path / "ari_record.json"),
           "MODULE_RECORD": str(tmp_path / "module_record.txt"),
           "SLURM_MEM_PER_NODE": "1000", **(extra_env or {})}
    proc = subprocess.run(["bash", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60)
    record_path = tmp_path / "ari_record.json"
    record = json.loads(record_path.read_text()) if record_path.exists() else None
    modules = (tmp_path / "module_record.txt").read_text().splitlines() \
        if (tmp_path / "module_record.txt").exists() else []
    return proc, record, modules


def test_handoff_script_exports_checkpoint_and_runs_ari_there(tmp_path):
    state = make_state(tmp_path, module_loads=["openmpi/4.1", "cuda/12.4"])
    result = emit_checkpoint(state)
    subprocess.run(["bash", "-n", result.handoff_script], check=True)
    proc, record, modules = run_handoff(tmp_path, result.handoff_script)
    assert proc.returncode == 0, proc.stderr
    assert record["env"]["ARI_CHECKPOINT_DIR"] == result.checkpoint_dir
    assert record["argv"] == ["run", f"{result.checkpoint_dir}/experiment.md", "--profile", "hpc"]
    assert record["cwd"] == state.workspace
    assert "SLURM_MEM_PER_NODE" not in record["env"]
    assert modules == ["load", "openmpi/4.1", "cuda/12.4"]
    logs = list(Path(result.checkpoint_dir).glob("ari_run_*.log"))
    assert len(logs) == 1 and "stand-in ari ran" in logs[0].read_text()
    assert re.fullmatch(r"ari_run_\d{14}\.log", logs[0].name)


def test_runs_show_starting_while_the_handoff_loads_ari_and_interrupted_once_it_is_gone(tmp_path):
    """Between the hand-off and ARI's .ari_pid (ARI importing, ~45 s on a cluster) the run is
    starting, not interrupted: the script recorded its own PID before running ari."""
    from ari_jupyter.runs import read_status

    result = emit_checkpoint(make_state(tmp_path, module_loads=[]))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ari").write_text("#!/bin/sh\nexec sleep 300\n")  # loading, no .ari_pid yet
    (bin_dir / "ari").chmod(0o755)
    proc = subprocess.Popen(["bash", result.handoff_script], env={"PATH": f"{bin_dir}:/usr/bin:/bin",
                                                                  "OPENAI_API_KEY": "sk-test-not-a-key"},
                            stdout=subprocess.DEVNULL, start_new_session=True)
    ckpt = Path(result.checkpoint_dir)
    try:
        deadline = time.monotonic() + 20
        while not (ckpt / render.HANDOFF_PID_FILE).is_file() or not list(ckpt.glob("ari_run_*.log")):
            assert time.monotonic() < deadline and proc.poll() is None, "the hand-off did not start"
            time.sleep(0.05)
        assert (ckpt / render.HANDOFF_PID_FILE).read_text().strip() == str(proc.pid)
        starting = read_status(ckpt)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert (starting.phase, starting.active, starting.alive) == ("starting", True, True)
    assert str(proc.pid) in starting.process and ".ari_pid" in starting.process
    assert read_status(ckpt).phase == "interrupted"


def test_handoff_fails_clearly_without_ari_on_path(tmp_path):
    result = emit_checkpoint(make_state(tmp_path, module_loads=[]))
    proc = subprocess.run(["bash", result.handoff_script], env={"PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 127 and "'ari' is not on PATH" in proc.stderr


# -- injection --------------------------------------------------------------------------------

CANARY = "CANARY"
PAYLOADS = [f"$(touch {CANARY})", f"`touch {CANARY}`", f"; touch {CANARY}", f"' ; touch {CANARY} '",
            f'" ; touch {CANARY} "', f"| touch {CANARY}", f"&& touch {CANARY}",
            # without a literal blank, so names that refuse whitespace still meet the shell
            f"$(touch${{IFS}}{CANARY})", f"`touch${{IFS}}{CANARY}`", f";touch${{IFS}}{CANARY}"]


def _canaries(root: Path) -> list[Path]:
    return [p for p in root.rglob(CANARY) if p.is_file()]


def _emit_and_run_everything(tmp_path: Path, state: WizardState) -> bool:
    """Emit; if written, run the hand-off and source .env the way ARI's job scripts do."""
    try:
        result = emit_checkpoint(state, force=True)
    except EmitError:
        return False
    subprocess.run(["bash", "-n", result.handoff_script], check=True)
    proc, record, _ = run_handoff(tmp_path, result.handoff_script)
    assert proc.returncode == 0, proc.stderr
    assert record["env"]["ARI_CHECKPOINT_DIR"] == result.checkpoint_dir
    env_file = Path(result.checkpoint_dir) / ".env"
    subprocess.run(["bash", "-c", 'set -a; . "$1"; set +a', "x", str(env_file)],
                   cwd=tmp_path / "elsewhere", check=True, env={"PATH": "/usr/bin:/bin"})
    return True


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("field", ["title", "goal", "partition", "walltime", "module", "workspace",
                                   "provided_file", "metric"])
def test_injection_is_rejected_or_quoted(tmp_path, field, payload):
    state = make_state(tmp_path)
    if field == "module":
        state.module_loads = ["openmpi/4.1" + payload]
    elif field == "workspace":
        workspace = tmp_path / f"ws {payload} ü"
        state.workspace = str(workspace)
        state.set_probe_result(ProbeResult("shared_fs", "ok", "shared", data={"path": str(workspace)}))
    elif field == "provided_file":
        path = tmp_path / "inputs" / f"in{payload.replace('/', '_')}.c"
        path.write_text("x")
        state.provided_files = [str(path)]
    elif field == "metric":
        state.metrics = [payload]
    else:
        setattr(state, field, ("x" if field == "title" else "") + payload if field != "goal"
                else "Goal text " + payload)
    written = _emit_and_run_everything(tmp_path, state)
    assert _canaries(tmp_path) == [], f"{field}={payload!r} executed (written={written})"
    if field in ("partition", "walltime") or (field == "metric" and re.search(r"[\s;]", payload)):
        assert not written, f"{field}={payload!r} should be refused"
    legal = field in ("goal", "workspace", "provided_file") or (field == "module" and " " not in payload)
    if legal:
        assert written, f"{field}={payload!r} is a legal value and must be quoted, not refused"


@pytest.mark.parametrize("field, value", [("title", "two\nlines"), ("partition", "a\nb"),
                                          ("module_loads", ["a\nb"]), ("workspace", "/tmp/a\nb")])
def test_newlines_are_rejected(tmp_path, field, value):
    state = make_state(tmp_path)
    setattr(state, field, value)
    with pytest.raises(EmitError):
        emit_checkpoint(state, force=True)


def test_non_ascii_title_gets_a_deterministic_run_id_and_valid_files(tmp_path):
    state = make_state(tmp_path, run_id="", title="疎行列積のスケーリング")
    told = [f for f in state.field_problems() if f.field == "run_id"]
    assert [(f.rule, f.severity) for f in told] == [("run_id_hashed", "info")]  # said, not refused
    result = emit_checkpoint(state)
    assert re.fullmatch(r"\d{14}_experiment_[0-9a-f]{8}", state.run_id)
    assert state.run_id.endswith(told[0].params["slug"])
    said = [n for n in result.notes if getattr(n, "message_id", "") == "emit.note.run_id_from_title"]
    assert len(said) == 1 and told[0].message in said[0]  # step 4's words, once written
    assert not [f for f in state.field_problems() if f.field == "run_id"]
    assert "# 疎行列積のスケーリング" in (Path(result.checkpoint_dir) / "experiment.md").read_text()


def test_a_title_that_keeps_one_ascii_word_says_what_the_run_will_be_called(tmp_path):
    """"ステンシル計算の2ノードスケーリング" would become …_2 without a word: step 4 says so
    before Write (info, not refused) and the note after it names the id."""
    state = make_state(tmp_path, run_id="", title="ステンシル計算の2ノードスケーリング")
    told = [f for f in state.field_problems() if f.field == "run_id"]
    assert [(f.rule, f.severity, f.params["slug"]) for f in told] == [("run_id_partial", "info", "2")]
    result = emit_checkpoint(state)
    assert re.fullmatch(r"\d{14}_2", state.run_id)
    said = [n for n in result.notes if getattr(n, "message_id", "") == "emit.note.run_id_from_title"]
    assert len(said) == 1 and "…_2" in said[0] and "type a short name in Run id" in said[0]
    from ari_jupyter.i18n import render as in_lang

    shown = in_lang(said[0], "ja")  # two sentences, not the advice nested in parentheses
    assert "呼ばれます。内容がわかる" in shown and "。（" not in shown, shown


@pytest.mark.parametrize("title", ["二节点模板计算的扩展性", "Stencil scaling"])
def test_a_short_name_in_run_id_names_the_run_and_gets_the_time_stamp(tmp_path, title):
    """A title in Chinese leaves nothing for ARI's slug rule: a short name typed in Run id is
    the run's name, time-stamped at Write, and nothing says the title gave none."""
    state = make_state(tmp_path, run_id="stencil-2node", title=title)
    assert not [f for f in state.field_problems() if f.field == "run_id"]
    now = datetime(2026, 12, 5, 10, 20, 30).astimezone()
    result = emit_checkpoint(state, now=now)
    assert state.run_id == "20261205102030_stencil-2node"
    assert Path(result.checkpoint_dir).name == state.run_id
    assert not [n for n in result.notes if getattr(n, "message_id", "") == "emit.note.run_id_from_title"]


def test_a_refused_write_gives_the_short_name_back(tmp_path):
    state = make_state(tmp_path, run_id="stencil-2node")
    emit_checkpoint(state, now=datetime(2026, 12, 5, 10, 20, 30).astimezone())
    again = make_state(tmp_path, run_id="stencil-2node")
    with pytest.raises(EmitError):  # the same second: that checkpoint exists
        emit_checkpoint(again, now=datetime(2026, 12, 5, 10, 20, 30).astimezone())
    assert again.run_id == "stencil-2node"


@pytest.mark.parametrize("run_id, short", [
    ("heat-scaling", True), ("2node", True), ("a", True), ("x" * 80, True),
    ("20261205102030_heat", False),  # a whole run id
    ("x" * 81, False), ("-x", False), ("_x", False), ("my run", False), ("熱伝導", False),
    ("heat\n", False), ("", False),
])
def test_what_a_short_name_is(run_id, short):
    from ari_jupyter.ari.naming import is_short_name

    assert is_short_name(run_id) is short


# -- kill -9, concurrency -----------------------------------------------------------------------

CHILD = textwrap.dedent("""\
    import json, sys
    from ari_jupyter.wizard.state import WizardState
    from ari_jupyter.checkpoint.emit import emit_checkpoint
    states = [WizardState.from_json(json.load(open(p))) for p in sys.argv[1:3]]
    mode = sys.argv[3]
    if mode == "loop":
        i = 0
        while True:
            emit_checkpoint(states[i % 2], force=True)
            if i == 0:
                print("written", flush=True)  # the kill may come from here on
            i += 1
    try:
        emit_checkpoint(states[0])
    except Exception as exc:
        print(type(exc).__name__ + ": " + str(exc), file=sys.stderr)
        sys.exit(1)
""")


def _child(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", CHILD, *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _hashes(state) -> dict[str, str]:
    """The sha256 of the checkpoint files emit writes for ``state`` (its script names them)."""
    import hashlib

    return {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in (
        ("experiment.md", render.render_experiment_md(state.choices())), (".env", render.render_env(state.choices())),
        (arguments.BFTS_ENV_FILE, render.render_bfts_env(state.choices())))}


@pytest.mark.slow
def test_kill_9_during_emit_leaves_complete_old_or_new_files(tmp_path):
    big = "\n".join(f"Line {i}: tiles of the matrix are assigned round-robin." for i in range(20000))
    variants = [make_state(tmp_path, goal="Variant A.\n" + big, max_cpus=4, module_loads=["a/1"]),
                make_state(tmp_path, goal="Variant B.\n" + big, max_cpus=6, module_loads=["b/2"])]
    paths = []
    for i, state in enumerate(variants):
        path = tmp_path / f"state{i}.json"
        path.write_text(json.dumps(state.to_json()))
        paths.append(str(path))
    ckpt = Path(variants[0].checkpoint_dir)
    script = tmp_path / "ws" / "launch" / f"{variants[0].run_id}.sh"
    expected = {
        "experiment.md": {render.render_experiment_md(s.choices()) for s in variants},
        ".env": {render.render_env(s.choices()) for s in variants},
        script.name: {render.render_handoff_script(s.choices(), str(ckpt), str(script),
                                                   api_key=handoff_key_variable(s),
                                                   ari_jupyter=ari_jupyter_command(),
                                                   files_sha256=_hashes(s))
                      for s in variants},
    }
    states = [s.to_json() for s in variants]
    rng = random.Random(4)
    for _ in range(10):
        child = _child([*paths, "loop"])
        # Kill at a random moment after the first complete write (however slow the start is).
        ready, _, _ = select.select([child.stdout], [], [], 120)
        assert ready and child.stdout.readline().strip() == "written", child.stderr.read()
        time.sleep(rng.uniform(0.0, 0.8))
        child.send_signal(signal.SIGKILL)
        child.communicate()
        for name, allowed in expected.items():
            target = script if name == script.name else ckpt / name
            assert target.read_text() in allowed, f"{name} is partial after kill -9"
        config = json.loads((ckpt / "launch_config.json").read_text())
        assert config["ari_jupyter"]["state"] in states
    emit_checkpoint(variants[0], force=True)  # a normal run afterwards cleans up
    assert not [p for p in ckpt.iterdir() if TMP_MARKER in p.name]


def test_two_concurrent_emits_one_wins_the_other_gets_a_clear_error(tmp_path):
    state = make_state(tmp_path)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state.to_json()))
    children = [_child([str(path), str(path), "once"]) for _ in range(2)]
    outcomes = [(c.wait(timeout=60), c.communicate()[1]) for c in children]
    codes = sorted(code for code, _ in outcomes)
    assert codes == [0, 1], outcomes
    loser = next(err for code, err in outcomes if code == 1)
    assert "CheckpointLocked: checkpoint" in loser or "CheckpointExists: checkpoint" in loser


def test_a_held_lock_stops_a_second_writer(tmp_path):
    state = make_state(tmp_path)
    launch = tmp_path / "ws" / "launch"
    launch.mkdir(parents=True)
    lock = launch / f".{state.run_id}.lock"
    with open(lock, "w") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        holder.write("4321")
        holder.flush()
        with pytest.raises(CheckpointLocked) as info:
            emit_checkpoint(state)
    assert "another process (pid 4321)" in str(info.value) and str(lock) in str(info.value)
    assert not (tmp_path / "ws" / "checkpoints" / state.run_id / "experiment.md").exists()
    emit_checkpoint(state)  # lock released: works


# -- workflow.yaml --------------------------------------------------------------------------

@pytest.fixture()
def fake_ari(tmp_path, monkeypatch):
    """An importable ``ari`` package laid out like ARI's checkout (ari-core/ari, ari-core/config)."""
    core = tmp_path / "ari-core"
    (core / "ari").mkdir(parents=True)
    (core / "ari" / "__init__.py").write_text("")
    (core / "config").mkdir()
    (core / "config" / "workflow.yaml").write_text(WORKFLOW)
    monkeypatch.syspath_prepend(str(core))
    monkeypatch.delitem(sys.modules, "ari", raising=False)
    importlib.invalidate_caches()
    return core


def test_workflow_yaml_written_when_ari_is_importable(tmp_path, fake_ari):
    yaml = pytest.importorskip("yaml")
    path, how = find_ari_workflow({})
    assert path == fake_ari / "config" / "workflow.yaml" and "ARI package" in how
    state = make_state(tmp_path)
    result = emit_checkpoint(state)
    written = Path(result.checkpoint_dir) / "workflow.yaml"
    assert str(written) in result.files
    inputs = yaml.safe_load(written.read_text())["pipeline"][1]["inputs"]
    assert inputs["sandbox_kind"] == "slurm" and inputs["nodes"] == 2 and inputs["partition"] == "small"
    assert any(n.startswith("workflow.yaml written from") for n in result.notes)
    config = json.loads((Path(result.checkpoint_dir) / "launch_config.json").read_text())
    assert "workflow.yaml" in config["ari_jupyter"]["files_sha256"]


@pytest.mark.parametrize("found, english", [("given", "given"), ("package", "ARI package at"),
                                            ("not_found", "not found (looked at")])
@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_the_workflow_note_says_where_it_came_from_in_the_users_language(
        tmp_path, fake_ari, found, english, lang):
    """How workflow.yaml was found (or not) is part of the note's sentence, so it is in ``lang``
    too, not English inside a translated note."""
    pytest.importorskip("yaml")
    from widget_text import english_sentences
    from ari_jupyter.i18n import render as in_lang

    packaged = fake_ari / "config" / "workflow.yaml"
    given = packaged if found == "given" else None
    if found == "not_found":  # an importable ari without its config
        packaged.unlink()
    result = emit_checkpoint(make_state(tmp_path), ari_workflow=given)
    said = [n for n in result.notes if n.startswith("workflow.yaml")]
    assert len(said) == 1 and english in said[0], result.notes
    shown = in_lang(said[0], lang)
    assert english not in shown and english_sentences([shown]) == [], shown


def _ari_venv(tmp_path, *, shebang: str | None = None, editable: bool = True, config: bool = True):
    """A venv holding ARI as pip leaves it: bin/ari (a console script naming its Python) and
    ari_core's dist-info in site-packages; the package in a source tree (editable, with
    direct_url.json as PEP 610 writes it) or in site-packages."""
    venv = tmp_path / "ari-venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "ari").write_text(f"#!{shebang or venv / 'bin' / 'python3'}\nimport sys\n")
    (venv / "bin" / "ari").chmod(0o755)
    site = venv / "lib" / "python3.11" / "site-packages"
    info = site / "ari_core-0.9.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ari-core\nVersion: 0.9.1\n")
    root = tmp_path / "ari src" / "ari-core" if editable else site  # a space: the URL is quoted
    (root / "ari").mkdir(parents=True, exist_ok=True)
    if editable:
        (info / "direct_url.json").write_text(json.dumps(
            {"dir_info": {"editable": True}, "url": root.as_uri()}))
    if config:
        (root / "config").mkdir()
        (root / "config" / "workflow.yaml").write_text(WORKFLOW)
    return venv / "bin", root


@pytest.mark.parametrize("editable", [True, False])
def test_the_ari_command_on_path_locates_the_workflow(tmp_path, editable):
    """ARI in its own venv, not importable in the kernel: its `ari` on PATH leads to it."""
    bin_dir, root = _ari_venv(tmp_path, editable=editable)
    path, how = find_ari_workflow({"PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert path == root / "config" / "workflow.yaml"
    assert str(bin_dir / "ari") in how and str(root / "ari") in how


@pytest.mark.parametrize("case", ["env shebang", "no config", "not on PATH"])
def test_an_ari_command_that_does_not_say_where_its_package_is_finds_nothing(tmp_path, case):
    bin_dir, root = _ari_venv(tmp_path, shebang="/usr/bin/env python3" if case == "env shebang" else None,
                              config=case != "no config")
    search = "/usr/bin:/bin" if case == "not on PATH" else f"{bin_dir}:/usr/bin:/bin"
    path, why = find_ari_workflow({"PATH": search})
    if path is not None and "ARI package at" in why and str(bin_dir) not in why:
        pytest.skip("a real ARI is importable here")
    assert path is None
    assert (str(root / "config" / "workflow.yaml") in why) == (case == "no config")


def test_ari_root_locates_the_workflow(tmp_path):
    (tmp_path / "ari-core" / "config").mkdir(parents=True)
    (tmp_path / "ari-core" / "config" / "workflow.yaml").write_text(WORKFLOW)
    path, how = find_ari_workflow({"ARI_ROOT": str(tmp_path)})
    if path is not None and "ARI package" in how:
        pytest.skip("a real ARI is importable here")
    assert path == tmp_path / "ari-core" / "config" / "workflow.yaml" and "ARI_ROOT" in how


# -- CLI ----------------------------------------------------------------------------------------

def _cli(*args: str, cwd: Path):
    env = env_without("ARI_", "SLURM_")
    return subprocess.run([sys.executable, "-m", "ari_jupyter", "emit", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_cli_emit_json(tmp_path):
    (tmp_path / "m.mtx").write_text("x")
    out = _cli("--json", "--no-probes", "--force", "--title", "CLI run", "--goal", "Measure it.",
               "--metric", "GFlops,GB/s", "--partition", "small", "--max-cpus", "4",
               "--walltime", "00:30:00", "--module", "openmpi/4.1", "--preset", "mpi",
               "--provided-file", str(tmp_path / "m.mtx"), "--workspace", str(tmp_path / "ws"),
               "--run-id", "20260706120000_cli_run", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report) == {"checkpoint_dir", "files", "handoff_command"}
    ckpt = Path(report["checkpoint_dir"])
    assert ckpt == tmp_path / "ws" / "checkpoints" / "20260706120000_cli_run"
    state = load_checkpoint(ckpt)
    assert state.metrics == ["GFlops", "GB/s"] and state.profile.kind == "mpi"
    assert state.partition_source == "explicit" and state.module_loads == ["openmpi/4.1"]
    assert report["handoff_command"] == f"bash {tmp_path}/ws/launch/20260706120000_cli_run.sh"

    before = (ckpt / "experiment.md").read_text()
    again = _cli("--from-json", str(ckpt / "launch_config.json"), "--no-probes", "--json",
                 cwd=tmp_path)
    assert again.returncode == 1 and "node-local" in again.stderr  # the stored verdict
    again = _cli("--from-json", str(ckpt / "launch_config.json"), "--no-probes", "--force",
                 cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (ckpt / "experiment.md").read_text() == before
    assert "backed up to" in again.stdout


@pytest.mark.parametrize("args, words, code", [
    (["--walltime", "1 hour"], "walltime", 1),
    (["--title", ""], "title", 1),
    (["--partition", "gpu.a100"], "partition", 1),
    (["--preset", "warp"], "error: unknown preset", 2),
    (["--site", "nosuch"], "error: unknown demo site 'nosuch'", 2),
])
def test_cli_emit_bad_input_exits_with_a_clear_message(tmp_path, args, words, code):
    """A finding about the run: exit 1; input the command cannot use: exit 2 (a usage error,
    as the README's exit codes say), "error:" as argparse says it."""
    base = {"--title": "T", "--goal": "G", "--metric": "x", "--partition": "small",
            "--max-cpus": "2", "--workspace": str(tmp_path / "ws")}
    for flag, value in zip(args[::2], args[1::2]):
        base[flag] = value
    flat = [item for pair in base.items() for item in pair]
    out = _cli(*flat, "--no-probes", "--force", cwd=tmp_path)
    assert out.returncode == code and out.stderr.startswith("ari-jupyter emit:"), out.stderr
    assert words in out.stderr
    assert not (tmp_path / "ws" / "checkpoints").exists() or not any((tmp_path / "ws" / "checkpoints").iterdir())


def test_cli_emit_against_a_demo_site(tmp_path):
    base = ["--site", "rccs-cloud", "--title", "Demo run", "--goal", "Measure.", "--metric",
            "GFlops", "--workspace", str(tmp_path / "ws"), "--module", "openmpi/4.1"]
    too_long = _cli(*base, "--walltime", "06:00:00", "--force", cwd=tmp_path)
    assert too_long.returncode == 1 and "time limit" in too_long.stderr
    too_big = _cli(*base, "--mem-gb", "8", "--force", cwd=tmp_path)  # nodes of small: 4000 MB
    assert too_big.returncode == 1 and "- --mem-gb: Memory per BFTS job is 8 GB" in too_big.stderr
    assert "Memory GB to at most 3" in too_big.stderr
    fitted = _cli(*base, "--force", "--json", cwd=tmp_path)  # the default fits partition small
    assert fitted.returncode == 0, fitted.stderr
    assert "ARI_SLURM_WALLTIME=01:00:00" in (Path(json.loads(fitted.stdout)["checkpoint_dir"])
                                             / ".env").read_text()
    node_local = _cli(*base, "--walltime", "00:30:00", cwd=tmp_path)
    assert node_local.returncode == 1 and "node-local" in node_local.stderr
    out = _cli(*base, "--walltime", "00:30:00", "--force", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    state = load_checkpoint(json.loads(out.stdout)["checkpoint_dir"])
    assert state.site_name == "rccs-cloud" and state.allocation.inside_allocation
    assert state.partition == "small" and state.partition_source
    assert {"sbatch", "partitions", "modules", "shared_fs"} <= set(state.probe_results)


def test_cli_says_what_a_run_with_a_cjk_only_title_is_called_and_that_its_script_is_the_sites(tmp_path):
    out = _cli("--site", "rccs-cloud", "--title", "熱伝導の再現", "--goal", "G", "--metric", "x",
               "--walltime", "00:30:00", "--workspace", str(tmp_path / "ws"), "--force", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    run_id = Path(out.stdout.splitlines()[0].split()[-1]).name
    assert re.fullmatch(r"\d{14}_experiment_[0-9a-f]{8}", run_id)
    assert f"this run will be called …_{run_id[15:]}" in out.stdout
    assert "written for the demo site rccs-cloud: the hand-off script runs `ari run` in that " \
        "site's allocation, so here it stops where this machine has no `ari`" in out.stdout


def test_unwritable_workspace_is_a_clear_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    state = make_state(tmp_path, workspace=blocker / "ws")
    with pytest.raises(EmitError, match="cannot write the checkpoint"):
        emit_checkpoint(state)


@pytest.mark.parametrize("make, message_id", [
    (lambda d: None, "emit.error.not_a_checkpoint"),
    (lambda d: (d / "launch_config.json").write_text("{not json"), "emit.error.unreadable"),
    (lambda d: (d / "launch_config.json").write_text('{"other": 1}'), "emit.error.not_ours"),
])
def test_a_folder_that_is_not_a_checkpoint_is_said_in_the_users_language(tmp_path, make, message_id):
    from ari_jupyter.i18n import error_text

    make(tmp_path)
    with pytest.raises(EmitError) as caught:
        load_checkpoint(tmp_path)
    said = {lang: error_text(caught.value, lang) for lang in ("en", "ja", "zh")}
    assert caught.value.args[0].message_id == message_id
    assert str(tmp_path / "launch_config.json") in said["ja"] and said["ja"] != said["en"]
    assert said["zh"] != said["en"] and said["en"] == str(caught.value)


def test_stages_off_with_an_unreadable_workflow_yaml_say_why_it_could_not_be_written(tmp_path):
    """ARI's workflow.yaml is there but cannot be used: the refusal names the file and what is
    wrong with it (it said "([])" when the reason was not a note starting "workflow.yaml")."""
    from dataclasses import replace

    from ari_jupyter.checkpoint.emit import EmitError
    from ari_jupyter.i18n import render as in_lang

    broken = tmp_path / "workflow.yaml"
    broken.write_bytes(b"\xff\xfe not text")
    state = make_state(tmp_path)
    state.run_settings = replace(state.run_settings, include_review=False)
    with pytest.raises(EmitError) as refused:
        emit_checkpoint(state, ari_workflow=broken)
    said = str(refused.value)
    assert str(broken) in said and "[]" not in said and "stages are switched off" in said, said
    assert "[" not in in_lang(refused.value.args[0], "ja"), in_lang(refused.value.args[0], "ja")
    assert not any((tmp_path / "checkpoints").glob("*/experiment.md"))


@pytest.mark.parametrize("extra, refusal", [
    ((), "--partition:"),                                   # the first refusal the flags meet
    (("--partition", "p"), "refusing a node-local workspace"),
    (("--partition", "p", "--force"), "- sbatch: sbatch is not on PATH"),
])
def test_cli_on_the_demo_site_without_slurm_says_where_a_checkpoint_can_be_written(tmp_path, extra,
                                                                                  refusal):
    """Whatever is fixed, the laptop never writes: each refusal ends as the wizard's does,
    naming the demo sites that can (with --site)."""
    out = _cli("--site", "laptop", "--title", "T", "--goal", "G", "--metric", "x",
               "--workspace", str(tmp_path / "ws"), *extra, cwd=tmp_path)
    assert out.returncode == 1 and refusal in out.stderr, out.stderr
    assert out.stderr.rstrip().endswith(
        "To write a checkpoint, pick another demo site with --site (gres-cluster, rccs-cloud, sx40).")


def test_cli_on_a_demo_site_with_slurm_says_nothing_of_the_kind(tmp_path):
    out = _cli("--site", "sx40", "--title", "T", "--goal", "G", "--metric", "x",
               "--workspace", str(tmp_path / "ws"), cwd=tmp_path)
    assert "pick another demo site" not in out.stderr + out.stdout
