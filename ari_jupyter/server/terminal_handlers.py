"""``GET <base_url>/ari-jupyter/terminal-idle/<name>``: whether terminal ``name``'s shell waits
at its prompt (``{"idle": true}``), runs a command (``false``) or cannot be told (``null``).

"Open in terminal" types the hand-off command into the terminal it opened before rather than
into a new one each time, but only while that shell is idle: typed into a running ``ari run``
the words would become its input. The shell is idle when its own process group holds the
terminal's foreground (``/proc/<pid>/stat``: ``tpgid == pgrp``), as the shell itself decides
whom keystrokes go to. Off Linux the answer is ``null`` and the extension opens a new terminal.
"""
from __future__ import annotations

import json
from pathlib import Path

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

ROUTE = "/ari-jupyter/terminal-idle"


def shell_is_idle(pid: int, proc: Path = Path("/proc")) -> bool | None:
    """Whether the shell ``pid`` holds its terminal's foreground (None: it cannot be told)."""
    try:
        stat = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp session tty_nr tpgid ...": comm may hold spaces and ")"
    fields = stat[stat.rfind(")") + 2:].split()
    try:
        pgrp, tty, tpgid = int(fields[2]), int(fields[4]), int(fields[5])
    except (IndexError, ValueError):
        return None
    if tty == 0 or tpgid <= 0:
        return None
    return tpgid == pgrp


class TerminalIdleHandler(APIHandler):
    auth_resource = "terminals"
    auth_action = "read"

    @web.authenticated
    @authorized
    def get(self, name: str) -> None:
        manager = self.settings.get("terminal_manager")
        terminal = getattr(manager, "terminals", {}).get(name) if manager is not None else None
        if terminal is None:
            raise web.HTTPError(404, f"no terminal {name}")
        self.finish(json.dumps({"idle": shell_is_idle(terminal.ptyproc.pid)}))


def setup_terminal_handlers(web_app) -> None:
    route = url_path_join(web_app.settings.get("base_url", "/"), ROUTE, "([^/]+)")
    web_app.add_handlers(".*$", [(route, TerminalIdleHandler)])
