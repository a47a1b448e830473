"""check-handoff on the real two-node test bed, run inside a real allocation (salloc).

Inside ``salloc -N1 -p small`` the checks talk to real slurmctld (``sbatch --test-only``),
real Lmod (``module load`` in a non-interactive bash) and the real mount table: the workspace
is on the test bed's network filesystem (fuse.sshfs, the ``shared_mount`` fixture). Everything
passes for a good checkpoint; each check fails with its own message when its cause is
introduced: the checkpoint on node-local storage, ``ari`` missing from a login shell, a module
that does not exist, a partition this node may not submit to.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import uuid

import pytest

from ari_jupyter.checkpoint.emit import emit_checkpoint
from ari_jupyter.checkpoint.handoff import CHECK_IDS
from ari_jupyter.hosts.host import LocalHost
from unit.ari.test_render import golden_state

pytestmark = pytest.mark.slurm
FAKE_KEY = "sk-test-Hq7Wv6Ut5Sr4Qp3"

INSIDE = textwrap.dedent("""\
    import json, os, sys
    from ari_jupyter.checkpoint.handoff import check_handoff
    from ari_jupyter.hosts.host import LocalHost
    print(json.dumps([r.to_json() for r in check_handoff(sys.argv[1], host=LocalHost(), timeout=30)]))
""")


@pytest.fixture()
def lab(testbed_nogres, shared_mount, tmp_path):
    """A user whose $HOME is on the cluster's network filesystem, as on most clusters."""
    base = shared_mount / f"lab-{uuid.uuid4().hex[:8]}"
    home = base / "home"
    home.mkdir(parents=True)
    bin_dir = base / "bin"
    bin_dir.mkdir()
    (bin_dir / "ari").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "ari").chmod(0o755)
    (home / ".bash_profile").write_text(f'export PATH="{bin_dir}:$PATH"\n')
    # The key of ARI's packaged LLM where ARI reads it (~/.env, owner-only), never in the checkpoint.
    (home / ".env").write_text(f"OPENAI_API_KEY={FAKE_KEY}\n")
    (home / ".env").chmod(0o600)
    workspace = home / "ws"

    class Lab:
        env = {**testbed_nogres.env, "HOME": str(home)}

    Lab.home, Lab.workspace = home, workspace
    yield Lab
    shutil.rmtree(base, ignore_errors=True)


def _emit(lab, workspace=None, **overrides):
    """Write the checkpoint as the wizard does: emit runs the real shared-filesystem probe; a
    workspace given here (node-local on purpose) is written anyway, as after the user's OK."""
    state = golden_state(workspace=str(workspace or lab.workspace), provided_files=[], **overrides)
    return emit_checkpoint(state, host=LocalHost(), force=workspace is not None)


def _check_inside_allocation(lab, checkpoint_dir: str) -> dict:
    out = subprocess.run(["salloc", "-N1", "-p", "small", "-t", "5", sys.executable, "-c", INSIDE,
                          checkpoint_dir],
                         env=lab.env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout.strip().splitlines()[-1])
    assert [r["id"] for r in results] == list(CHECK_IDS)
    return {r["id"]: r for r in results}


def test_good_checkpoint_passes_every_check(lab):
    result = _emit(lab, module_loads=["openmpi/4.1"])
    checks = _check_inside_allocation(lab, result.checkpoint_dir)
    # the one warning is true: the 5-minute allocation ends long before the Standard scope can
    assert {k: v["status"] for k, v in checks.items()} == {
        **{i: "ok" for i in CHECK_IDS}, "time_fit": "warn"}, \
        {k: (v["status"], v["summary"]) for k, v in checks.items()}
    fit = checks["time_fit"]
    assert fit["summary"].startswith("The search may need up to 16 hours") and \
        "sbatch" in fit["fix"], fit
    assert "small" in checks["sbatch"]["summary"]
    assert "fuse.sshfs" in checks["shared_fs"]["summary"], checks["shared_fs"]  # the real mount
    assert checks["api_key"]["data"]["source"] == str(lab.home / ".env")
    assert FAKE_KEY not in json.dumps(checks)


@pytest.mark.parametrize("cause, check, words", [
    ("tmpfs", "shared_fs", "node-local"),
    ("no_ari", "ari", "not on PATH in a login shell"),
    ("no_module", "modules", "nosuch/1.0"),
    ("partition", "sbatch", "nosuch"),
])
def test_each_cause_fails_its_own_check(lab, tmp_path, cause, check, words):
    overrides = {"module_loads": ["openmpi/4.1"]}
    workspace = None
    if cause == "tmpfs":
        workspace = tmp_path / "ws"
    elif cause == "no_ari":
        (lab.home / ".bash_profile").unlink()
    elif cause == "no_module":
        overrides["module_loads"] = ["openmpi/4.1", "nosuch/1.0"]
    elif cause == "partition":
        overrides["partition"] = "nosuch"
    result = _emit(lab, workspace=workspace, **overrides)
    checks = _check_inside_allocation(lab, result.checkpoint_dir)
    failed = {k for k, v in checks.items() if v["status"] == "fail"}
    assert failed == {check}, {k: (v["status"], v["summary"]) for k, v in checks.items()}
    assert words in checks[check]["summary"] and checks[check]["fix"]
