"""Defaults that fit the site on a real cluster: inside ``salloc -N2 -n4`` on the test bed, an
untouched ``Wizard()`` (this machine, its probes run for real) has no error finding except the
user text still to type (title, goal, metrics), with and without GRES.

The site's workspace is configured as an admin of a real cluster does
(``c.AriWizard.workspace_template``) on the test bed's shared filesystem: the default
``/work/{user}/ari`` is on this machine's local disk, and the wizard rightly calls that an error
for a two-node job."""
from __future__ import annotations
from repo_paths import TESTS

import json
import sys
import textwrap
from pathlib import Path

import pytest

from ari_jupyter.hosts.host import list_sites

TESTS = TESTS
USER_ERRORS = {"title", "goal", "metrics"}

# Runs inside the allocation: the wizard as a notebook would open it, with its real probes.
SCRIPT = textwrap.dedent("""\
    import asyncio, json, os, sys
    sys.path.insert(0, sys.argv[1])
    from ari_jupyter.widgets.wizard import Wizard
    from test_widgets_support import fake_bridge

    async def untouched():
        wizard = Wizard(bridge=fake_bridge()[0], env={**os.environ, "HOME": os.getcwd()})
        await wizard.wait()
        return wizard

    wizard = asyncio.run(untouched())
    print(json.dumps({
        "inside": wizard.state.allocation.inside_allocation,
        "site": wizard.ctx.site_name,
        "errors": [{"field": f.field, "rule": f.rule, "message": f.message}
                   for f in wizard.ctx.problems() if f.severity == "error"]}))
""")


@pytest.mark.slurm
def test_an_untouched_wizard_in_a_live_allocation_has_no_error_but_the_user_text(
        testbed_any, shared_mount, tmp_path):
    (tmp_path / "untouched.py").write_text(SCRIPT)
    site_config = tmp_path / "jupyter-config"
    site_config.mkdir()
    (site_config / "ari_jupyter_config.json").write_text(json.dumps(
        {"AriWizard": {"workspace_template": str(shared_mount / "{user}" / "ari")}}))
    proc = testbed_any.run(["salloc", "-N2", "-n4", sys.executable, "untouched.py", str(TESTS)],
                           cwd=tmp_path, timeout=180,
                           extra_env={"JUPYTER_CONFIG_DIR": str(site_config)})
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["inside"] is True and got["site"] not in list_sites()  # this machine, no demo
    fields = {e["field"] for e in got["errors"]}
    assert USER_ERRORS <= fields, got
    rest = [e for e in got["errors"] if e["field"] not in USER_ERRORS]
    assert rest == [], json.dumps(rest, indent=1)
