"""Real refusals of ``sbatch --test-only`` for an unprivileged user, and what the sbatch probe
(the wizard's row, ``ari-jupyter probe``, ``check-handoff``) says about each.

Each row closes a test-bed partition to ordinary users in one way (``scontrol update``, put
back afterwards even on failure), submits as ``nobody`` through the real sbatch, and checks
that the scheduler's text is the recorded fixture the unit table reads
(tests/fixtures/outputs/sbatch/test_only_*.txt; ARI_UPDATE_GOLDEN=1 re-records) and that the
probe's verdict names the right fix. Root is not used for the submission: slurmctld lets
root past AllowGroups.
"""
from __future__ import annotations
from repo_paths import TESTS

import os
import stat
from pathlib import Path

import pytest

from ari_jupyter.slurm.allocation import Allocation
from ari_jupyter.hosts.host import LocalHost
from ari_jupyter.probes import ProbeContext, run_probes_sync

pytestmark = pytest.mark.slurm

SBATCH_FIXTURES = TESTS / "fixtures" / "outputs" / "sbatch"
UPDATE = os.environ.get("ARI_UPDATE_GOLDEN") == "1"
USER = "nobody"
PARTITION = "small"

# (fixture name, partition settings for the block, refusal kind, fix id)
REFUSALS = [
    ("test_only_group_denied", {"AllowGroups": "staff"}, "not_permitted",
     "probe.sbatch.refused.fix.not_permitted"),
    ("test_only_alloc_node_denied", {"AllocNodes": "login-only"}, "node_may_not_submit",
     "probe.sbatch.refused.fix.node_may_not_submit"),
    ("test_only_partition_inactive", {"State": "INACTIVE"}, "not_accepting",
     "probe.sbatch.refused.fix.not_accepting"),
]


@pytest.fixture
def sbatch_as_user(tmp_path) -> Path:
    """A PATH directory whose ``sbatch`` is the real one, run as the unprivileged user."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    wrapper = bindir / "sbatch"
    wrapper.write_text(f'#!/bin/sh\ncd /tmp && exec /usr/sbin/runuser -u {USER} -- /usr/bin/sbatch "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return bindir


@pytest.mark.parametrize("name, settings, kind, fix_id", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusal_for_an_unprivileged_user_gets_its_own_fix(testbed_nogres, sbatch_as_user,
                                                           name, settings, kind, fix_id):
    env = {**testbed_nogres.env, "PATH": f"{sbatch_as_user}:{testbed_nogres.env['PATH']}"}
    host = LocalHost(env=env)
    with testbed_nogres.partition_settings(PARTITION, **settings):
        live = testbed_nogres.run([str(sbatch_as_user / "sbatch"), "--test-only", "-p", PARTITION,
                                   "--wrap", "true"])
        result, = run_probes_sync(host, ProbeContext(allocation=Allocation.from_env({}),
                                                     partition=PARTITION, only=["sbatch"], timeout=30))
    fixture = SBATCH_FIXTURES / f"{name}.txt"
    if UPDATE:
        fixture.write_text(live.stderr)
    assert live.returncode == 1 and live.stdout == ""
    assert live.stderr == fixture.read_text()
    assert result.status == "fail", result
    assert result.data["test_only"]["refusal"] == kind
    assert result.fix_id == fix_id
    assert result.summary == f"sbatch refuses a test job on partition {PARTITION}: {live.stderr.strip()}"
    # and the partition is open again: the same user may submit
    again = testbed_nogres.run([str(sbatch_as_user / "sbatch"), "--test-only", "-p", PARTITION,
                                "--wrap", "true"])
    assert again.returncode == 0, again.stderr


def test_root_is_not_refused_by_allow_groups(testbed_nogres):
    """Why the rows above submit as an ordinary user: root passes AllowGroups, so a check run
    as root would never see what a hub's users see."""
    with testbed_nogres.partition_settings(PARTITION, AllowGroups="staff"):
        as_root = testbed_nogres.run(["sbatch", "--test-only", "-p", PARTITION, "--wrap", "true"])
    assert as_root.returncode == 0, as_root.stderr
