"""Doctor checks over whole logs: the run that ignored the checkpoint, ranks on one node,
kind detection, and the seed's --host command (argparse's real error text)."""
from __future__ import annotations

import argparse
import contextlib
import io
import json

import pytest

from ari_jupyter.doctor import detect_kind, diagnose_file, diagnose_text
from ari_jupyter.doctor.log_checks import checkpoint_ignored, ranks_on_one_node

WIZARD_CKPT = "/work/alice/ari/checkpoints/20261129150000_spgemm"

STRAY_RUN_LOG = """\
$ ari run experiment.md --profile hpc
[ari] run_id=20261129161502_sparse-matrix-multiply
[ari] checkpoint: /home/alice/notebooks/workspace/checkpoints/20261129161502_sparse-matrix-multiply
[ari] writing tree.json
"""
GOOD_RUN_LOG = f"""\
$ ari run {WIZARD_CKPT}/experiment.md --profile hpc
[ari] run_id=20261129150000_spgemm
[ari] checkpoint: {WIZARD_CKPT}
"""


def _rules(findings):
    return {(f.rule, f.severity, f.line) for f in findings}


def test_stray_run_is_an_error_when_the_checkpoint_is_known():
    (finding,) = checkpoint_ignored(STRAY_RUN_LOG, WIZARD_CKPT)
    assert (finding.rule, finding.severity, finding.line) == ("checkpoint-dir-ignored", "error", 3)
    assert f"export ARI_CHECKPOINT_DIR={WIZARD_CKPT}" in finding.fix


def test_stray_run_is_a_warning_without_a_known_checkpoint():
    assert _rules(checkpoint_ignored(STRAY_RUN_LOG)) == {("checkpoint-dir-ignored", "warning", 3)}


@pytest.mark.parametrize("checkpoint", [WIZARD_CKPT, None])
def test_run_in_the_wizard_checkpoint_is_clean(checkpoint):
    assert checkpoint_ignored(GOOD_RUN_LOG, checkpoint) == []


def test_empty_checkpoint_variable_in_an_env_dump():
    text = "SLURM_JOB_ID=7\nARI_CHECKPOINT_DIR=\nARI_SLURM_PARTITION=small\n"
    assert _rules(checkpoint_ignored(text)) == {("checkpoint-dir-ignored", "error", 2)}
    assert checkpoint_ignored(f"ARI_CHECKPOINT_DIR={WIZARD_CKPT}\n") == []


def test_log_inside_a_checkpoint_is_checked_against_it(tmp_path):
    ckpt = tmp_path / "checkpoints" / "20261129150000_spgemm"
    ckpt.mkdir(parents=True)
    log = ckpt / "ari_run_20261129161502.log"
    log.write_text(STRAY_RUN_LOG)
    (finding,) = [f for f in diagnose_file(str(log)) if f.rule == "checkpoint-dir-ignored"]
    assert finding.severity == "error" and str(ckpt) in finding.fix


SRUN_L_ONE_NODE = "0: n1\n1: n1\n2: n1\n3: n1\n"
SRUN_L_TWO_NODES = "0: n1\n1: n1\n2: n1\n3: n2\n"  # real layout of srun -N2 -n4 -l hostname
MPI_HELLO_ONE_NODE = ("SLURM_JOB_NUM_NODES=2\nHello from rank 0 of 4 on n1\nHello from rank 1 of 4 on n1\n"
                      "Hello from rank 2 of 4 on n1\nHello from rank 3 of 4 on n1\n")


@pytest.mark.parametrize("text,nodes,expected", [
    (SRUN_L_ONE_NODE, 2, {("ranks-on-one-node", "error", 1)}),
    (SRUN_L_TWO_NODES, 2, set()),
    (SRUN_L_ONE_NODE, 1, set()),
    (SRUN_L_ONE_NODE, None, set()),  # node count unknown: no verdict
    (MPI_HELLO_ONE_NODE, None, {("ranks-on-one-node", "error", 2)}),  # count read from the log
    ("rank 0 on n1\n", 2, set()),  # one rank proves nothing
])
def test_ranks_on_one_node(text, nodes, expected):
    assert _rules(ranks_on_one_node(text, nodes)) == expected


def test_ranks_on_one_node_fix_is_the_fanout_line():
    (finding,) = [f for f in diagnose_text(SRUN_L_ONE_NODE, kind="log", nodes=2) if f.rule == "ranks-on-one-node"]
    assert "srun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS" in finding.fix


def _argparse_error_of_viz_server() -> str:
    """The real text Python's argparse prints for ARI's viz server options (--checkpoint, --port)."""
    parser = argparse.ArgumentParser(prog="python -m ari.viz.server")
    parser.add_argument("--checkpoint")
    parser.add_argument("--port", type=int, default=8765)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exc:
        parser.parse_args(["--host", "0.0.0.0"])
    assert exc.value.code == 2
    return err.getvalue()


def test_seed_host_flag_rejection_is_recognised():
    text = "$ python -m ari.viz.server --host 0.0.0.0\n" + _argparse_error_of_viz_server()
    findings = [f for f in diagnose_text(text, kind="log") if f.rule == "viz-host-flag"]
    assert [f.lines for f in findings] == [(1, 3)]
    assert "--port" in findings[0].fix and "--host" in findings[0].fix
    assert "SSH" in findings[0].fix or "ssh" in findings[0].fix


def test_host_flag_fix_is_the_hand_off_checklists_dashboard_command(tmp_path, capsys):
    """`ari-jupyter doctor` on the seed's log names what check-handoff prints: `ari viz
    <checkpoint> --port N` and a tunnel for both the HTTP and the WebSocket port."""
    from ari_jupyter.cli import main
    from ari_jupyter.ari.dashboard import DEFAULT_DASHBOARD_PORT, dashboard_command, ssh_tunnel_command

    log = tmp_path / "notebook.log"
    log.write_text("$ python -m ari.viz.server --host 0.0.0.0\n" + _argparse_error_of_viz_server())
    assert main(["doctor", "--json", str(log)]) == 1
    (finding,) = [f for f in json.loads(capsys.readouterr().out) if f["rule"] == "viz-host-flag"]
    port = DEFAULT_DASHBOARD_PORT
    assert dashboard_command("CKPT", port).replace("CKPT", "<checkpoint>") in finding["fix"]
    assert ssh_tunnel_command("<node>", port) in finding["fix"]
    assert f"-L {port + 1}:<node>:{port + 1}" in finding["fix"]  # the dashboard's WebSocket
    assert "--host 0.0.0.0" not in finding["fix"]


@pytest.mark.parametrize("text,filename,kind", [
    ("anything", "reproduce.sh", "reproduce"),
    ("anything", "experiment.md", "experiment"),
    ("#!/bin/bash\n", "ari_run.log", "log"),
    ("#!/usr/bin/env bash\nset -e\n./app\n", None, "reproduce"),
    ("#!/bin/sh\n./app\n", None, "reproduce"),
    ("# Title\n\nPartition: small, Max CPUs: 4\n\n## Research Goal\nx\n", None, "experiment"),
    ("sbatch: error: Invalid generic resource (gres) specification\n", None, "log"),
    ("# just a comment\nsome output\n", None, "log"),
    ("set -e\nmodule load openmpi/4.1\nsrun ./app\n", None, "reproduce"),
])
def test_detect_kind(text, filename, kind):
    assert detect_kind(text, filename) == kind


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind"):
        diagnose_text("x", kind="notebook")


def test_errors_sort_first():
    text = "Slurm accounting storage is disabled\nsbatch: error: Invalid generic resource (gres) specification\n"
    assert [f.severity for f in diagnose_text(text, kind="log")] == ["error", "info"]


def test_checkpoint_files_for_the_wizard(tmp_path):
    import os

    from ari_jupyter.doctor import checkpoint_files

    ckpt = tmp_path / "20261129150000_spgemm"
    (ckpt / "repro_sandbox").mkdir(parents=True)
    old = ckpt / "ari_run_20261129150001.log"
    new = ckpt / "ari_run_20261129160001.log"
    for path in (old, new, ckpt / "experiment.md", ckpt / "repro_sandbox" / "reproduce.sh"):
        path.write_text("x\n")
    os.utime(old, (1, 1))
    assert checkpoint_files(ckpt) == [new, old, ckpt / "experiment.md", ckpt / "repro_sandbox" / "reproduce.sh"]
    assert checkpoint_files(tmp_path / "missing") == []


HANDOFF_OK = """#!/usr/bin/env bash
set -euo pipefail
export ARI_CHECKPOINT_DIR=/work/alice/ari/checkpoints/20261129150000_spgemm
cd /work/alice/ari
ari run "$ARI_CHECKPOINT_DIR/experiment.md" --profile hpc 2>&1 | tee "$ARI_CHECKPOINT_DIR/ari_run.log"
"""
HANDOFF_BAD = """#!/usr/bin/env bash
set -euo pipefail
cd /work/alice/ari
ari run /work/alice/ari/checkpoints/20261129150000_spgemm/experiment.md --profile hpc
"""
HANDOFF_SEED = """#!/bin/bash
python -m ari.viz.server --host 0.0.0.0 &
ARI_CHECKPOINT_DIR=/work/alice/ari/checkpoints/20261129150000_spgemm ari run experiment.md
"""


@pytest.mark.parametrize("text,expected", [
    (HANDOFF_OK, set()),
    (HANDOFF_BAD, {("checkpoint-dir-ignored", "error", 4)}),
    (HANDOFF_SEED, {("viz-host-flag", "error", 2)}),
])
def test_handoff_script(text, expected):
    assert detect_kind(text, "launch.sh") == "handoff"
    assert _rules(diagnose_text(text)) == expected
