"""check-handoff asks the second terminal's own ARI where its packaged config is.

An editable install (as ARI's setup.sh does) finds ari-core/config/; a plain wheel install of
ari-core does not (its wheel packages only ari/), and ARI then ignores the hand-off's
``--profile hpc`` with a warning. Both installs are real: ARI's venv, and a second venv with
ari-core installed non-editable from the same source (its dependencies from ARI's venv).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ari_jupyter.checkpoint.handoff import check_handoff
from ari_jupyter.hosts.host import LocalHost

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import ari_env as ari_install  # noqa: E402

pytestmark = pytest.mark.ari

APPLY_PROFILE = """
import logging, sys
logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="%(message)s")
from ari.cli.run import _apply_profile
from ari.config import ARIConfig
_apply_profile(ARIConfig(), "hpc")
"""


@pytest.fixture(scope="module")
def wheel_install(ari_env, tmp_path_factory) -> Path:
    """A venv with ari-core installed from a wheel (non-editable); returns its bin dir."""
    venv = tmp_path_factory.mktemp("ari-wheel") / "venv"
    subprocess.run([ari_install.python313(), "-m", "venv", str(venv)], check=True, timeout=300)
    site = next(venv.glob("lib/python3*/site-packages"))
    deps = next(ari_env.python.parent.parent.glob("lib/python3*/site-packages"))
    (site / "ari-deps.pth").write_text(f"{deps}\n")  # ARI's dependencies, not its editable finders
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps",
                           str(ari_env.root / "ari-core")], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return venv / "bin"


@pytest.fixture
def checkpoint(tmp_path) -> Path:
    proc = subprocess.run(
        [sys.executable, "-m", "ari_jupyter", "emit", "--json", "--title", "Config check",
         "--goal", "Check the hand-off.", "--metric", "GFlops", "--partition", "small",
         "--max-cpus", "2", "--workspace", str(tmp_path / "ws"), "--no-probes", "--force"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    return Path(json.loads(proc.stdout)["checkpoint_dir"])


def _terminal(tmp_path: Path, bin_dir: Path) -> LocalHost:
    """The second terminal: a login shell whose ~/.bash_profile activates that ARI."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / ".bash_profile").write_text(f'export PATH="{bin_dir}:$PATH"\n')
    return LocalHost(env={"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"})


def _ari_check(host: LocalHost, checkpoint: Path):
    return next(r for r in check_handoff(checkpoint, host=host, timeout=60) if r.id == "ari")


def test_editable_ari_finds_its_packaged_config(ari_env, checkpoint, tmp_path):
    result = _ari_check(_terminal(tmp_path, ari_env.python.parent), checkpoint)
    assert result.status == "ok", result
    assert result.data["config_root"] == str(ari_env.root / "ari-core" / "config")


def test_non_editable_ari_is_detected_with_the_fix(ari_env, wheel_install, checkpoint, tmp_path):
    result = _ari_check(_terminal(tmp_path, wheel_install), checkpoint)
    assert result.status == "fail", result
    assert "--profile hpc` is ignored" in result.summary and "non-editable" in result.summary
    assert "pip install -e ari-skill-memory -e ari-core" in result.fix
    # what the check says is what ARI does: its own _apply_profile warns and ignores the profile
    ari = subprocess.run([str(wheel_install / "python"), "-c", APPLY_PROFILE], env=ari_env.env,
                         capture_output=True, text=True, timeout=300)
    assert ari.returncode == 0, ari.stderr[-2000:]
    assert f"profile 'hpc' not found at {result.data['root']}/profiles/hpc.yaml" in ari.stdout


def test_the_wizard_finds_aris_workflow_through_the_ari_command(ari_env, wheel_install):
    """The kernel cannot import ARI (its own venv): the ``ari`` on PATH leads to its package,
    so Write carries the run's nodes and partition into workflow.yaml. An install whose
    package has no config/ (the wheel) gives none, as ARI itself finds none."""
    from ari_jupyter.ari.install import find_ari_workflow

    path, how = find_ari_workflow({"PATH": f"{ari_env.python.parent}:/usr/bin:/bin"})
    assert path == ari_env.root / "ari-core" / "config" / "workflow.yaml"
    assert str(ari_env.python.parent / "ari") in how
    path, why = find_ari_workflow({"PATH": f"{wheel_install}:/usr/bin:/bin"})
    assert path is None and "site-packages/config/workflow.yaml" in why
