"""Start a real jupyter server / JupyterLab on 127.0.0.1 with hermetic config dirs.

Used by the server-extension tests and the browser tests. The server runs in its own process
group and is stopped with SIGTERM, then SIGKILL, so nothing is left running.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

REPO = Path(__file__).resolve().parents[2]
SERVER_CONFIG = REPO / "jupyter-config" / "server-config" / "ari_jupyter.json"
BUILT_LABEXTENSION = REPO / "ari_jupyter" / "labextension"
INSTALL_JSON = REPO / "labextension" / "install.json"
LABEXTENSION_NAME = json.loads((REPO / "labextension" / "package.json").read_text())["name"]
START_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def installed_labextension() -> Path | None:
    """The labextension directory a plain ``pip install`` put into this environment, if any."""
    candidate = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / LABEXTENSION_NAME
    return candidate if (candidate / "package.json").is_file() else None


def installed_server_config() -> Path | None:
    """The server-extension config a plain ``pip install`` put into this environment, if any."""
    candidate = Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.d" / SERVER_CONFIG.name
    return candidate if candidate.is_file() else None


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without any SLURM_* (the test decides), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SALLOC_"))}
    env.update(extra or {})
    return env


@dataclass
class JupyterProcess:
    """A running server; ``url(path)`` adds the token unless ``token=False``."""

    proc: subprocess.Popen
    port: int
    token: str
    root_dir: Path
    home: Path
    log_path: Path
    extra: dict = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str, token: bool = True) -> str:
        if not token:
            return self.base + path
        sep = "&" if "?" in path else "?"
        return f"{self.base}{path}{sep}token={self.token}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        """End the server and everything it started. A prefix such as ``salloc`` runs the
        server in a process group of its own, so every descendant's group is signalled too."""
        family = [self.proc.pid, *_descendants(self.proc.pid)]
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in family:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(os.getpgid(pid), sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                continue
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and any(_alive(pid) for pid in family[1:]):
                time.sleep(0.1)
            if not any(_alive(pid) for pid in family[1:]):
                return

    def leftovers(self) -> list[int]:
        """PIDs of processes still carrying this server's token on their command line."""
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    cmdline = (entry / "cmdline").read_bytes()
                except OSError:
                    continue
                if self.token.encode() in cmdline:
                    found.append(int(entry.name))
        return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (read from /proc, children before grandchildren)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int(Path(entry, "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, queue = [], list(children.get(pid, []))
    while queue:
        child = queue.pop(0)
        found.append(child)
        queue.extend(children.get(child, []))
    return found


def http_get(url: str, headers: Mapping[str, str] | None = None,
             timeout: float = 10.0) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=dict(headers or {}))
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _stage_labextension(data_dir: Path) -> None:
    """Make the committed build visible when the package is installed editable (no data_files)."""
    target = data_dir / "labextensions" / LABEXTENSION_NAME
    shutil.copytree(BUILT_LABEXTENSION, target)
    shutil.copy(INSTALL_JSON, target / "install.json")


def start_jupyter(tmp: Path, *, app: str = "server", env: Mapping[str, str] | None = None,
                  settings: Mapping[str, Mapping] | None = None,
                  args: Sequence[str] = (), cwd: Path | None = None,
                  prefix: Sequence[str] = ()) -> JupyterProcess:
    """Start ``jupyter <app>`` with config, data, runtime and settings dirs under ``tmp``.

    Both extensions come from the environment when a plain ``pip install`` put them there;
    editable installs skip data_files, so then the shipped server config and the committed
    lab extension build are staged into the hermetic config and data dirs instead. ``prefix``
    wraps the server command, e.g. ``["salloc", "-N2"]`` to start it inside an allocation.
    """
    tmp = Path(tmp)
    dirs = {name: tmp / name for name in ("config", "data", "runtime", "settings",
                                          "workspaces", "root", "home")}
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    if installed_server_config() is None:
        confd = dirs["config"] / "jupyter_server_config.d"
        confd.mkdir(exist_ok=True)
        shutil.copy(SERVER_CONFIG, confd / SERVER_CONFIG.name)
    installed = installed_labextension()
    # the checkout's build when none is installed, or another one is (an older install): the
    # user data dir comes first in JupyterLab's search for extensions
    if app == "lab" and (installed is None or (installed / "package.json").read_bytes()
                         != (BUILT_LABEXTENSION / "package.json").read_bytes()):
        _stage_labextension(dirs["data"])
    for plugin, values in (settings or {}).items():
        path = dirs["settings"] / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))

    port = free_port()
    token = "ari-test-" + os.urandom(8).hex()
    full_env = clean_env(env)
    full_env.update({
        "HOME": str(dirs["home"]),
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
        "PYTHONUNBUFFERED": "1",
    })
    # `python -m <module>`, not `jupyter <app>`: the dispatcher would run whichever
    # jupyter-<app> comes first on PATH, possibly another environment's.
    module = {"lab": "jupyterlab", "server": "jupyter_server"}[app]
    argv = [*prefix, sys.executable, "-m", module, "--no-browser", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={dirs['root']}"]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    argv.extend(args)
    log_path = tmp / f"jupyter-{app}.log"
    log = open(log_path, "wb")
    proc = subprocess.Popen(argv, env=full_env, cwd=str(cwd or dirs["root"]), stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    log.close()
    server = JupyterProcess(proc=proc, port=port, token=token, root_dir=dirs["root"],
                            home=dirs["home"], log_path=log_path)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter {app} exited with {proc.returncode}:\n{server.log()}")
        try:
            status, _ = http_get(server.url("/api/status"), timeout=2.0)
            if status == 200:
                return server
        except OSError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"jupyter {app} did not answer within {START_TIMEOUT:g} s:\n{server.log()}")
