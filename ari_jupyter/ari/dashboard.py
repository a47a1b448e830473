"""ARI's dashboard (``ari viz``): its default port, the command that starts it, the tunnel to it."""
from __future__ import annotations

import shlex

DEFAULT_DASHBOARD_PORT = 8765
"""ARI's own default for ``ari viz --port``."""


def dashboard_command(checkpoint_dir: str, port: int) -> str:
    """ARI's dashboard for this checkpoint (``python -m ari.viz.server --host`` does not exist)."""
    return f"ari viz {shlex.quote(checkpoint_dir)} --port {int(port)}"


def ssh_tunnel_command(node: str, port: int, login_host: str = "", user: str = "") -> str:
    """Run on the laptop: forwards HTTP and WebSocket ports of ``node`` through the login host."""
    target = login_host or "<login-host>"
    if user:
        target = f"{user}@{target}"
    return (f"ssh -N -L {port}:{node}:{port} -L {port + 1}:{node}:{port + 1} "
            f"{shlex.quote(target) if login_host else target}")
