"""The extension on the oldest supported JupyterLab line (4.0), installed as users install it.

The current 4.x is covered by the main browser run (``test_lab_e2e.py`` and friends drive the
JupyterLab of the test environment); this module covers the other end of ``jupyterlab>=4.0,<5``.
Once per session it creates a fresh venv (no system site-packages), installs the newest
``jupyterlab==4.0.*`` with ipywidgets, then the project with a plain ``pip install`` of a copy
of the working tree (data_files place both extensions; the copy keeps build output out of the
repository). Then that venv's own ``jupyter`` must list both extensions enabled and OK, and its
``jupyter lab`` (127.0.0.1, token, hermetic config/data/runtime dirs) must activate the lab
extension in Chromium and open a live wizard from the launcher card, without console errors.
The build's table of shared modules must also ask for no newer @jupyterlab/@lumino packages
than 4.0 ships: JupyterLab loads it regardless, but warns once per unmet module.

Nothing is cached across runs; expect a minute or two of pip. When pip cannot get a 4.0 wheel
the tests skip with pip's reason, except under ``CI=true`` or ``ARI_E2E_REQUIRED=1``, where they
fail, so CI cannot pass by skipping.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from ari_jupyter.probes import PROBE_IDS

from .conftest import LAB_ARGS, LAB_SETTINGS, assert_no_console_errors
from .jupyter_process import (LABEXTENSION_NAME, REPO, START_TIMEOUT, JupyterProcess, clean_env,
                              free_port, http_get)
from .lab_helpers import (LAUNCHER_CARD, NOTEBOOK_NAME, WIDGET_OUTPUT, current_notebook_path,
                          open_lab)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

OLDEST_LAB = "jupyterlab==4.0.*"
OLDEST_LINE = "4.0."
PIP_TIMEOUT = 900
LABEXTENSION_VERSION = json.loads(
    (REPO / "ari_jupyter" / "labextension" / "package.json").read_text())["version"]
# Not part of a source install: VCS data, node packages, build and test output.
NOT_SOURCE = shutil.ignore_patterns(".git", "node_modules", "build", "dist", "*.egg-info",
                                    "__pycache__", ".pytest_cache", ".hypothesis",
                                    "test-artifacts", ".ipynb_checkpoints")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
TRACEBACK = f"{WIDGET_OUTPUT}[data-mime-type='application/vnd.jupyter.stderr']"
STEP_BUTTONS = ".ari-wizard .ari-steps button"
BROKEN_TEXT = ("Loading widget", "Error displaying widget", "Model not found",
               "Failed to load model class")


def _required() -> bool:
    return (os.environ.get("ARI_E2E_REQUIRED") == "1"
            or os.environ.get("CI", "").lower() in ("1", "true", "yes"))


@dataclass(frozen=True)
class OldestLab:
    """A venv with JupyterLab 4.0.x and the project, plus the hermetic dirs its jupyter uses."""

    venv: Path
    home: Path
    lab_version: str

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """This environment minus SLURM_* and Python path overrides, the venv first on PATH,
        user-level Jupyter dirs under ``home`` (so neither ~/.jupyter nor ~/.local leaks in)."""
        env = {k: v for k, v in clean_env().items()
               if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
        env.update({
            "PATH": f"{self.bin}{os.pathsep}{env.get('PATH', '')}",
            "VIRTUAL_ENV": str(self.venv),
            "HOME": str(self.home),
            "JUPYTER_CONFIG_DIR": str(self.home / "config"),
            "JUPYTER_DATA_DIR": str(self.home / "data"),
            "JUPYTER_RUNTIME_DIR": str(self.home / "runtime"),
            "NO_COLOR": "1",
            "PYTHONUNBUFFERED": "1",
        })
        env.update(extra or {})
        return env

    def run(self, *argv: str, timeout: float = 120) -> str:
        """Run one of the venv's commands; stdout and stderr together, colour codes removed."""
        done = subprocess.run([str(self.bin / argv[0]), *argv[1:]], env=self.env(),
                              capture_output=True, text=True, timeout=timeout)
        output = ANSI.sub("", done.stdout + done.stderr)
        assert done.returncode == 0, f"{' '.join(argv)} exited {done.returncode}:\n{output}"
        return output


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check",
                           "--no-input", *args], capture_output=True, text=True,
                          timeout=PIP_TIMEOUT, env={k: v for k, v in os.environ.items()
                                                    if k not in ("PYTHONPATH", "PYTHONHOME")})


def _tail(done: subprocess.CompletedProcess, lines: int = 40) -> str:
    return "\n".join((done.stdout + done.stderr).splitlines()[-lines:])


@pytest.fixture(scope="session")
def oldest_lab(tmp_path_factory) -> OldestLab:
    """One venv per session: the newest JupyterLab 4.0.x, ipywidgets, and the project."""
    root = tmp_path_factory.mktemp("lab-4.0")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"

    lab = _pip(python, OLDEST_LAB, "ipywidgets")
    if lab.returncode != 0:
        reason = f"pip could not install {OLDEST_LAB}:\n{_tail(lab)}"
        if _required():
            pytest.fail(f"CI requires the JupyterLab 4.0 check, but {reason}")
        pytest.skip(reason)

    # A plain install (not editable) of the working tree, as a user's `pip install .`.
    source = root / "source"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    project = _pip(python, str(source))
    assert project.returncode == 0, f"pip install of the project failed:\n{_tail(project)}"

    version = subprocess.run([str(python), "-c", "import jupyterlab; print(jupyterlab.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    home = root / "home"
    for name in ("config", "data", "runtime"):
        (home / name).mkdir(parents=True, exist_ok=True)
    return OldestLab(venv=venv, home=home, lab_version=version)


def _section(listing: str, heading: Path, item: str) -> str | None:
    """The line naming ``item`` in the block under ``heading`` (a path line of the listing)."""
    current = None
    for line in listing.splitlines():
        if line and not line[0].isspace():
            current = line.strip()
        elif item in line and current == str(heading):
            return line.strip()
    return None


def test_installing_the_project_keeps_jupyterlab_4_0(oldest_lab):
    """The project's requirements accept 4.0: pip must not have upgraded JupyterLab."""
    assert oldest_lab.lab_version.startswith(OLDEST_LINE), oldest_lab.lab_version


def test_labextension_list_shows_the_extension_enabled_and_ok(oldest_lab):
    listing = oldest_lab.run("jupyter", "labextension", "list")
    assert f"JupyterLab v{oldest_lab.lab_version}" in listing, listing
    line = _section(listing, oldest_lab.venv / "share" / "jupyter" / "labextensions",
                    LABEXTENSION_NAME)
    assert line is not None, f"{LABEXTENSION_NAME} not listed from the venv:\n{listing}"
    assert re.match(rf"{re.escape(LABEXTENSION_NAME)} v{re.escape(LABEXTENSION_VERSION)} "
                    r"enabled\s+OK \(python, ari-jupyter\)$", line), line


def test_server_extension_list_shows_ari_jupyter_enabled_and_ok(oldest_lab):
    listing = oldest_lab.run("jupyter", "server", "extension", "list")
    block = listing.split(f"Config dir: {oldest_lab.venv / 'etc' / 'jupyter'}", 1)
    assert len(block) == 2, f"nothing from the venv's config dir:\n{listing}"
    venv_block = block[1].split("Config dir:", 1)[0]
    assert re.search(r"^\s*ari_jupyter\.server enabled$", venv_block, re.M), listing
    assert re.search(r"^\s*ari_jupyter\.server\s+OK$", venv_block, re.M), listing


# One entry of the built remoteEntry's table of shared modules it consumes from the page.
CONSUMED = re.compile(r'"(?P<name>@[\w.-]+/[\w.-]+)",import:[^,]*,'
                      r'requiredVersion:"(?P<range>[^"]+)"')
SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(-[\w.]+)?$")


def _semver(text: str) -> tuple[int, int, int, int]:
    """Comparable key; a pre-release sorts before its release."""
    match = SEMVER.match(text)
    assert match, f"not a semantic version: {text!r}"
    major, minor, patch, pre = match.groups()
    return int(major), int(minor), int(patch), 0 if pre else 1


def _satisfies(version: str, wanted: str) -> bool:
    """npm semantics for the range forms the builder writes: ^x.y.z, ~x.y.z, x.y.z."""
    have, base = _semver(version), _semver(wanted.lstrip("^~"))
    if wanted.startswith("^"):
        same_line = have[0] == base[0] if base[0] else have[:2] == base[:2]
    elif wanted.startswith("~"):
        same_line = have[:2] == base[:2]
    else:
        return have == base
    return same_line and have >= base


def test_the_build_asks_for_no_newer_shared_packages_than_4_0_provides(oldest_lab):
    """Singletons that JupyterLab 4.0 cannot satisfy load anyway, with a console warning per
    module; the build must declare the ranges it supports (^4.0.0), not the builder's own."""
    installed = oldest_lab.venv / "share" / "jupyter" / "labextensions" / LABEXTENSION_NAME
    load = json.loads((installed / "package.json").read_text())["jupyterlab"]["_build"]["load"]
    consumed = {m["name"]: m["range"] for m in CONSUMED.finditer((installed / load).read_text())}
    assert consumed, f"no shared-module table found in {load}"
    site = Path(subprocess.run([str(oldest_lab.bin / "python"), "-c",
                                "import jupyterlab, os; print(os.path.dirname(jupyterlab.__file__))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    licenses = json.loads((site / "static" / "third-party-licenses.json").read_text())
    provided = {p["name"]: p["versionInfo"] for p in licenses["packages"]}
    unmet = {name: f"needs {wanted}, JupyterLab {oldest_lab.lab_version} has {provided.get(name)}"
             for name, wanted in consumed.items()
             if name in provided and not _satisfies(provided[name], wanted)}
    assert not unmet, "\n".join(f"{name}: {why}" for name, why in sorted(unmet.items()))


def _start_venv_lab(oldest_lab: OldestLab, tmp: Path) -> JupyterProcess:
    """The venv's ``jupyter-lab`` on 127.0.0.1 with a token; nothing staged, all from the venv.

    ``start_jupyter`` runs this interpreter's JupyterLab and stages the build when this
    environment lacks it, which would hide what the venv installed; hence this launcher.
    """
    dirs = {name: tmp / name for name in ("settings", "workspaces", "root")}
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    for plugin, values in LAB_SETTINGS.items():
        path = dirs["settings"] / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port = free_port()
    token = "ari-test-" + os.urandom(8).hex()
    argv = [str(oldest_lab.bin / "jupyter-lab"), "--no-browser", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={dirs['root']}",
            *LAB_ARGS]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    env = oldest_lab.env({"JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
                          "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
                          "SHELL": shutil.which("bash") or "/bin/sh"})
    log_path = tmp / "jupyter-lab.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, env=env, cwd=str(dirs["root"]), stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    server = JupyterProcess(proc=proc, port=port, token=token, root_dir=dirs["root"],
                            home=oldest_lab.home, log_path=log_path)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {proc.returncode}:\n{server.log()}")
        try:
            if http_get(server.url("/api/status"), timeout=2.0)[0] == 200:
                return server
        except OSError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"jupyter lab did not answer within {START_TIMEOUT:g} s:\n{server.log()}")


def _kernel_commands(server_pid: int) -> list[list[str]]:
    """argv of the ipykernel processes the server started (descendants of ``server_pid``)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    commands = []
    for pid in parents:
        ancestor = parents.get(pid)
        while ancestor not in (None, 0, 1, server_pid):
            ancestor = parents.get(ancestor)
        if ancestor != server_pid:
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        if "ipykernel_launcher" in argv:
            commands.append(argv)
    return commands


@pytest.fixture(scope="module")
def lab(oldest_lab, tmp_path_factory):
    """Named ``lab`` so that conftest's ``page`` fixture saves this server's log on failure."""
    server = _start_venv_lab(oldest_lab, tmp_path_factory.mktemp("lab-4.0-server"))
    yield server
    server.stop()


def test_launcher_card_opens_a_live_wizard_on_jupyterlab_4_0(oldest_lab, lab, page):
    open_lab(page, lab)
    assert page.evaluate("() => window.jupyterapp.version") == oldest_lab.lab_version
    assert "ari-jupyter extension activated" in page.console_log.texts()

    page.click(LAUNCHER_CARD)
    page.wait_for_selector(f"{WIDGET_OUTPUT} .ari-wizard, {TRACEBACK}", timeout=90_000)
    tracebacks = page.locator(TRACEBACK)
    assert tracebacks.count() == 0, tracebacks.first.inner_text()[-3000:]
    page.wait_for_selector(STEP_BUTTONS, timeout=30_000)
    # The explained notebook, placed by the server extension before it is opened.
    assert current_notebook_path(page) == NOTEBOOK_NAME
    assert page.locator(".jp-NotebookPanel:visible .jp-MarkdownCell").count() >= 2
    # ".~<name>" is jupyter_server's copy while it saves the notebook atomically (the card's
    # run saves it): there for a moment, not a file of ours
    assert sorted(p.name for p in lab.root_dir.iterdir()
                  if p.name != ".ipynb_checkpoints" and not p.name.startswith(".~")) == [NOTEBOOK_NAME]
    kernels = _kernel_commands(lab.proc.pid)
    assert kernels and all(argv[0].startswith(str(oldest_lab.bin)) for argv in kernels), kernels
    assert page.locator(STEP_BUTTONS).count() == 5
    # Live widgets: a step button round-trips through the kernel and shows the probe rows.
    page.locator(STEP_BUTTONS).nth(1).click()
    page.wait_for_function(
        "n => document.querySelectorAll('.ari-probe-row').length === n && "
        "document.querySelectorAll('.ari-probe-row .fa-spin').length === 0",
        arg=len(PROBE_IDS), timeout=60_000)
    body = page.locator("body").inner_text()
    for broken in BROKEN_TEXT:
        assert broken not in body, broken
    assert_no_console_errors(page)
