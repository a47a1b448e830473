"""Helpers for the widget tests (imported by tests/test_widgets_*.py; holds no tests itself).

The wizard is driven exactly as in a kernel: probes run as asyncio tasks on a running loop, so
each test body is a coroutine run with ``asyncio.run``. Demo sites are copied with a recorded
symlink from the test's temporary directory into the site's shared /work, so Write goes to
``tmp_path`` while the shared-filesystem verdict stays the probe's own logic.
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

from ari_jupyter.hosts.host import SITES_DIR

BASE_SITE = "rccs-cloud"


def make_site(tmp_path: Path, base: str = BASE_SITE, *, delays: dict | None = None,
              shared: bool = True) -> Path:
    """A copy of a demo site on which ``tmp_path`` resolves (as a recorded symlink) into the
    site's shared /work; ``delays`` maps an argv prefix (tuple) to seconds that command takes."""
    data = json.loads((SITES_DIR / f"{base}.json").read_text(encoding="utf-8"))
    if shared:
        user = data["env"]["USER"]
        data.setdefault("symlinks", {})[str(tmp_path)] = f"/work/{user}/pytest"
    for command in data["commands"]:
        for prefix, seconds in (delays or {}).items():
            if tuple(command["argv"][:len(prefix)]) == tuple(prefix):
                command["delay"] = seconds
    data["name"] = f"{base}-test"
    path = tmp_path / f"{base}-test.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


class FakeComm:
    """Stands in for the kernel's Comm: records what the wizard sends, lets tests answer."""

    def __init__(self, **kwargs):
        self.open_data = kwargs.get("data")
        self.target_name = kwargs.get("target_name")
        self.sent: list[dict] = []
        self._on_msg = None
        self._on_close = None
        self.closed = False

    def on_msg(self, callback):
        self._on_msg = callback

    def on_close(self, callback):
        self._on_close = callback

    def send(self, data):
        self.sent.append(data)

    def close(self):
        self.closed = True

    def reply(self, data: dict):
        self._on_msg({"content": {"data": data}})

    def frontend_closes(self):
        self._on_close({})


def fake_bridge():
    from ari_jupyter.widgets.terminal_bridge import TerminalBridge

    comms: list[FakeComm] = []

    def factory(**kwargs):
        comm = FakeComm(**kwargs)
        comms.append(comm)
        return comm

    bridge = TerminalBridge(comm_factory=factory)
    bridge.connect()
    return bridge, comms


def run(coro):
    return asyncio.run(coro)


def fill_experiment(wizard, workspace: Path, *, title="Sparse GEMM scaling",
                    run_id="20261129120000_sparse_gemm_scaling"):
    """Type the experiment step's fields into the widgets (not into the state)."""
    panel = wizard.experiment_panel
    panel.title.value = title
    panel.goal.value = "Measure how SpGEMM throughput scales from one to two nodes."
    panel.metrics.value = ["GFlops"]
    panel.workspace.value = str(workspace)
    panel.run_id.value = run_id
    # rccs-cloud's partition small allows 1 hour and has 4 CPUs per node
    wizard.profile_panel.walltime.value = "00:30:00"
    wizard.profile_panel.max_cpus.value = 1


def site_and_workspace(tmp_path: Path) -> tuple[Path, Path]:
    """The usual pair: a shared copy of rccs-cloud and an empty workspace on it."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return make_site(tmp_path), workspace
