"""The site the wizard looks at, told to the Jupyter server that started its kernel, so that the
status bar and the Runs panel follow the wizard (the wizard on sx40, the bar on sx40), not the
server's own demo site (``ARI_JUPYTER_DEMO_SITE`` / ``c.AriWizard.demo_site``).

A kernel knows its server: jupyter_client's launcher puts the server's PID in the kernel's
environment as ``JPY_PARENT_PID`` (``jupyter_client/launcher.py``). The wizard writes
``{"site": name}`` (``""``: this machine) to ``<jupyter runtime dir>/ari_jupyter-site-<pid>.json``
whenever it starts on or switches to a site; the server reads the file of its own PID. A wizard
outside a server (a test, a plain Python) writes nothing, and a server without a file follows
its configured demo site, as before. The latest wizard's choice wins; a file that cannot be
written or read is no choice, never an error.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Mapping

from ..base.files import atomic_write

SERVER_PID = "JPY_PARENT_PID"
_SITE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
"""A demo site's name (``hosts/sites/<name>.json``); a site file's path is not told."""
MAX_FILE_BYTES = 4096


def site_choice_file(server_pid: int | str, env: Mapping[str, str] | None = None) -> Path:
    """Where the wizard tells the server ``server_pid`` its site (Jupyter's per-user runtime
    directory, which a kernel shares with the server that started it)."""
    env = os.environ if env is None else env
    runtime = env.get("JUPYTER_RUNTIME_DIR")
    if not runtime:
        # cold start: jupyter_core's paths load only when a wizard runs under a server
        from jupyter_core.paths import jupyter_runtime_dir

        runtime = jupyter_runtime_dir()
    return Path(runtime).expanduser() / f"ari_jupyter-site-{int(server_pid)}.json"


def tell_server(site: str, env: Mapping[str, str] | None = None) -> bool:
    """Record ``site`` (a demo site's name, ``""`` for this machine) for the server that started
    this kernel; False when there is none or the site is not a demo site's name."""
    env = os.environ if env is None else env
    pid = env.get(SERVER_PID, "")
    if not pid.isdigit() or (site and not _SITE_NAME.match(site)):
        return False
    try:
        path = site_choice_file(pid, env)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write(path, json.dumps({"site": site}).encode(), 0o600)
    except (OSError, ValueError):
        return False
    return True


def wizard_site(server_pid: int | None = None, env: Mapping[str, str] | None = None) -> str | None:
    """The site the wizard told this server (``server_pid``, default this process): a demo
    site's name, ``""`` for this machine, None when no wizard told one."""
    try:
        path = site_choice_file(os.getpid() if server_pid is None else server_pid, env)
        with open(path, "rb") as handle:
            data = json.loads(handle.read(MAX_FILE_BYTES))
    except (OSError, ValueError):
        return None
    site = data.get("site") if isinstance(data, dict) else None
    if not isinstance(site, str) or (site and not _SITE_NAME.match(site)):
        return None
    return site
