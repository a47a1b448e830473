"""The wizard tells the Jupyter server that started its kernel which site it looks at
(``JPY_PARENT_PID``), so the status bar and the Runs panel follow the wizard, not the server's
own demo site; outside a server it tells nothing."""
from __future__ import annotations

import asyncio
import os

import pytest

from ari_jupyter.runs.service import server_views
from ari_jupyter.server.status import AllocationStatus
from ari_jupyter.wizard.config import AriWizard
from ari_jupyter.wizard.site_choice import site_choice_file, tell_server, wizard_site

from test_widgets_support import fake_bridge


def kernel_env(tmp_path, pid=None):
    """A kernel's environment under a server of ``pid`` (default: this test, the 'server')."""
    return {"HOME": str(tmp_path), "USER": "student", "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
            "JPY_PARENT_PID": str(os.getpid() if pid is None else pid)}


@pytest.mark.parametrize("site, told, read", [
    ("sx40", True, "sx40"),
    ("", True, ""),                         # this machine
    ("../etc/passwd", False, None),          # a path is not a site's name
    ("/tmp/site.json", False, None),
])
def test_tell_and_read(tmp_path, site, told, read):
    env = kernel_env(tmp_path)
    assert tell_server(site, env) is told
    assert wizard_site(env=env) == read


def test_no_server_no_word(tmp_path):
    env = kernel_env(tmp_path)
    del env["JPY_PARENT_PID"]
    assert tell_server("sx40", env) is False and not (tmp_path / "rt").exists()
    assert wizard_site(env=env) is None


def test_another_servers_word_is_not_this_ones(tmp_path):
    tell_server("sx40", kernel_env(tmp_path, pid=os.getpid() + 1))
    assert wizard_site(env=kernel_env(tmp_path)) is None
    assert site_choice_file(os.getpid() + 1, kernel_env(tmp_path)).exists()


def test_the_wizard_tells_its_site_and_each_switch(tmp_path):
    from ari_jupyter.widgets.wizard import Wizard

    env = kernel_env(tmp_path)
    bridge, sent = fake_bridge()
    wizard = Wizard(site="sx40", config=AriWizard(), run_probes=False, bridge=bridge, env=env)
    wizard.ctx.runner.start = lambda only=None: None
    assert wizard_site(env=env) == "sx40"
    bridge.available = True  # the page answered the hello
    wizard.ctx.switch_site("rccs-cloud")
    assert wizard_site(env=env) == "rccs-cloud"
    assert sent[-1].sent[-1] == {"type": "ari-jupyter:site-changed"}  # the bar asks again
    wizard.ctx.switch_site(None)  # this machine
    assert wizard_site(env=env) == ""


@pytest.mark.parametrize("told, bar, panel_host", [
    (None, "rccs-cloud", "rccs-cloud"),   # no wizard: the server's configured demo site
    ("sx40", "sx40", "sx40"),             # the wizard on sx40: sx40's one-node allocation
    ("laptop", None, "laptop"),
    ("rccs-cloud", "rccs-cloud", "rccs-cloud"),
    ("", None, None),                     # this machine, outside an allocation: nothing
])
def test_the_bar_and_the_panel_follow_the_wizard(tmp_path, told, bar, panel_host):
    server_env = {**kernel_env(tmp_path), "ARI_JUPYTER_DEMO_SITE": "rccs-cloud"}
    server_env.pop("JPY_PARENT_PID")
    if told is not None:
        assert tell_server(told, kernel_env(tmp_path))
    snapshot = asyncio.run(AllocationStatus(env=server_env).snapshot())
    assert snapshot.get("demo", {}).get("site") == bar
    workspace, host = server_views(server_env)
    assert (host.name if host.is_demo else None) == panel_host
    if panel_host:
        assert workspace == str(tmp_path / "ari-demo" / panel_host)
