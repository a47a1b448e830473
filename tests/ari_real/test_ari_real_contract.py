"""ARI e41c806's real install speaks the reference hand-off contract: the ``ari`` probe says
so from its installed files (its hpc skill's ``src/`` layout), with the words it always had."""
from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from ari_jupyter.ari.contracts import REFERENCE, installed_contract
from ari_jupyter.hosts.host import LocalHost
from ari_jupyter.probes.ari import probe_ari
from ari_jupyter.probes.context import ProbeContext

pytestmark = pytest.mark.ari


def test_the_real_e41c806_install_is_the_reference_contract(ari_env):
    bin_dir = Path(ari_env.python).parent
    env = {**os.environ, **ari_env.env, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    assert (bin_dir / "ari").is_file()
    assert installed_contract(env) == REFERENCE
    result = asyncio.run(probe_ari(LocalHost(env), ProbeContext(timeouts={"ari": 60.0})))
    # e41c806's CLI has no --version: the words it always had for that, and the contract
    assert (result.status, result.message_id, result.data["contract"]) == (
        "ok", "probe.ari.no_version_option", REFERENCE)
