"""ARI's dashboard (``ari viz``): its default port, the command that starts it, the tunnel to it,
and where it cuts a research goal short."""
from __future__ import annotations

import re
import shlex
from typing import NamedTuple

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


class GoalCut(NamedTuple):
    """The goal line at which ARI's dashboard stops reading the goal."""

    line: int
    """1-based, in the goal's text."""
    text: str
    dropped: int
    """The lines after it, left out with it (blank ones not counted)."""
    heading: bool
    """A Markdown heading (``## Background``), which ARI reads as the end of the Research Goal
    section, not as a heading inside the goal; else a line that merely starts with '#'."""


_HEADING = re.compile(r"^#{1,6}(?:[ \t]|$)")


def goal_cut(goal: str) -> GoalCut | None:
    """Where ARI's dashboard ends the goal: the first line that starts with '#' (None: it shows
    the whole goal).

    ARI's dashboard reads the goal from experiment.md with ``_extract_goal_from_md``
    (``ari-core/ari/viz/ui_helpers.py``): from the heading naming the goal, it keeps each
    stripped non-empty line and stops (``break``) at the first one that starts with '#', a
    heading or not. So "#1 priority: speed" ends the goal, and a ``## Background`` inside it is
    the end of the Research Goal section for ARI, not a heading of the goal. (The wizard writes
    a goal's first line that starts with '#' in bold: ``render.neutralize_goal``.)
    """
    lines = goal.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if stripped.startswith("#"):
            dropped = sum(1 for rest in lines[number:] if rest.strip())
            return GoalCut(number, stripped, dropped, bool(_HEADING.match(stripped)))
    return None
