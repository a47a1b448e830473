"""``emit`` refuses a node-local workspace from the mount table alone, before any probe asks
a controller that may never answer."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ari_jupyter.cli import main

HUNG = "#!/bin/sh\nexec sleep 1000\n"


def _hung_site(tmp_path: Path) -> Path:
    """sinfo, squeue, sbatch and srun on PATH that never answer (a controller that is away)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("sinfo", "squeue", "sbatch", "srun", "scontrol"):
        path = bin_dir / name
        path.write_text(HUNG)
        path.chmod(0o755)
    return bin_dir


def _emit(workspace: Path, *flags: str) -> int:
    return main(["emit", "--title", "fast refusal", "--goal", "g", "--metric", "accuracy",
                 "--partition", "small", "--max-cpus", "4", "--walltime", "01:00:00",
                 "--workspace", str(workspace), "--probe-timeout", "5", *flags])


@pytest.fixture
def hung_path(tmp_path, monkeypatch):
    bin_dir = _hung_site(tmp_path)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.delenv("ARI_JUPYTER_DEMO_SITE", raising=False)
    return bin_dir


def test_node_local_workspace_is_refused_in_under_a_second_with_a_hung_sinfo(tmp_path, hung_path, capsys):
    workspace = tmp_path / "ws"  # under /tmp: node-local on every cluster
    started = time.monotonic()
    code = _emit(workspace)
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 1
    assert "refusing a node-local workspace" in err
    assert elapsed < 1.0, f"refused after {elapsed:.2f}s (probes waited for the hung sinfo)"
    assert not (workspace / "checkpoints").exists()


def test_control_a_forced_emit_still_waits_for_the_hung_probes(tmp_path, hung_path, capsys):
    """The probes really do hang here: only the early workspace check makes the refusal fast."""
    started = time.monotonic()
    code = _emit(tmp_path / "ws", "--force", "--probe-timeout", "1.5")
    elapsed = time.monotonic() - started
    capsys.readouterr()
    assert elapsed >= 1.5
    assert code in (0, 1)


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_the_refusal_is_said_wholly_in_the_users_language(tmp_path, hung_path, capsys, lang):
    """The verdict and its fix inside the refusal are the probe's own sentences in ``lang``,
    not its English summary and fix."""
    from widget_text import english_sentences

    assert main(["--lang", lang, "emit", "--title", "t", "--goal", "g", "--metric", "accuracy",
                 "--partition", "small", "--max-cpus", "4", "--walltime", "01:00:00",
                 "--workspace", str(tmp_path / "ws"), "--probe-timeout", "5"]) == 1
    err = capsys.readouterr().err
    assert {"ja": "ノードローカル", "zh": "节点本地"}[lang] in err, err
    lines = [line.split(": ", 1)[-1] for line in err.splitlines()]  # after "ari-jupyter emit: "
    assert english_sentences(lines) == [], err
