"""Screenshots of every wizard step, rendered by a real JupyterLab in headless Chromium.

    python docs/make_screenshots.py [--out docs/screenshots] [--chromium /usr/bin/chromium]

Starts JupyterLab (hermetic config/runtime dirs and HOME, loopback, a random token) in a
temporary root directory, opens a notebook that shows the wizard on a recorded demo site
(rccs-cloud: a 2-node allocation), clicks through the steps in the browser and saves one PNG
per step. The workspace is the wizard's default on a demo site (``~/ari-demo/rccs-cloud`` under
the temporary HOME, judged by the site as its shared /work), so Write really writes, the
hand-off checklist is real and the Doctor step picks a file from the written checkpoint.
Needs Debian's chromium and the Python playwright package; no network, no cluster.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 900}

SETUP_CELL = """\
from ari_jupyter import Wizard
wizard = Wizard(site={site!r}, lang="en")
wizard"""

FILL_CELL = """\
p3, p4 = wizard.profile_panel, wizard.experiment_panel
p3.preset.value = "mpi"
p3.max_cpus.value = 1
p3.walltime.value = "00:30:00"
p3.modules.value = ["openmpi/4.1"]
p4.title.value = "Sparse GEMM scaling"
p4.goal.value = "Measure how SpGEMM throughput scales from one to two nodes on the same partition."
p4.metrics.value = ["GFlops", "runtime_sec"]
p4.run_id.value = "20261129120000_sparse_gemm_scaling"
"""

# A typical first reproduce.sh: the program started once, on the first node only.
REPRODUCE_CELL = """\
import pathlib
script = pathlib.Path(wizard.state.checkpoint_dir, "repro_sandbox", "reproduce.sh")
script.parent.mkdir(parents=True, exist_ok=True)
script.write_text('#!/usr/bin/env bash\\nset -euo pipefail\\ncd "$(dirname "$0")"\\n'
                  'module load openmpi/4.1\\n./spgemm_bench --matrix data/matrix.mtx\\n')
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def notebook(path: Path, cells: list[str]) -> None:
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
                   "outputs": [], "source": src} for i, src in enumerate(cells)],
        "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                                    "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")


def start_lab(root: Path, tmp: Path, port: int, token: str) -> subprocess.Popen:
    home = tmp / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home),
           "JUPYTER_CONFIG_DIR": str(tmp / "config"), "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "workspaces"),
           "ARI_JUPYTER_DEMO_SITE": "rccs-cloud"}
    settings = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    argv = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
            "--ip=127.0.0.1", f"--ServerApp.token={token}", f"--ServerApp.root_dir={root}",
            "--ServerApp.port_retries=0", "--LabApp.expose_app_in_browser=True",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    log = open(tmp / "lab.log", "w")
    proc = subprocess.Popen(argv, env=env, cwd=root, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2)
            return proc
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.5)
    stop_lab(proc)
    raise RuntimeError(f"JupyterLab did not start; see {tmp / 'lab.log'}")


def stop_lab(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


class Shooter:
    def __init__(self, page, out: Path):
        self.page = page
        self.out = out
        self.shots: list[Path] = []

    def wizard(self):
        return self.page.locator(".ari-wizard").first

    def step(self, index: int) -> None:
        self.wizard().locator(".widget-toggle-buttons button").nth(index).click()
        self.page.wait_for_timeout(600)

    def shot(self, name: str) -> None:
        path = self.out / f"{name}.png"
        # Parts of the page outside the viewport are not painted: make the window as tall as
        # the wizard before taking its picture.
        height = self.wizard().bounding_box()["height"]
        self.page.set_viewport_size({"width": VIEWPORT["width"],
                                     "height": max(VIEWPORT["height"], int(height) + 400)})
        self.page.wait_for_timeout(400)
        self.wizard().scroll_into_view_if_needed()
        self.wizard().screenshot(path=str(path))
        self.shots.append(path)
        print(f"wrote {path}")

    def run_cell(self, index: int) -> None:
        self.page.evaluate(
            """async (index) => {
                const app = window.jupyterapp;
                const panel = app.shell.currentWidget;
                panel.content.activeCellIndex = index;
                await app.commands.execute('notebook:run-cell');
            }""", index)


def take(out: Path, chromium: str) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    # A fixed directory (emptied first) keeps the paths shown in the pictures stable.
    tmp = Path(tempfile.gettempdir()) / "ari-jupyter-screenshots"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        root = tmp / "root"
        root.mkdir()
        notebook(root / "wizard.ipynb", [SETUP_CELL.format(site="rccs-cloud"),
                                         FILL_CELL,
                                         "wizard.language.value = 'ja'",
                                         "wizard.language.value = 'en'",
                                         REPRODUCE_CELL])
        port, token = free_port(), secrets.token_hex(16)
        lab = start_lab(root, tmp, port, token)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                             args=CHROMIUM_ARGS)
                page = browser.new_page(viewport=VIEWPORT, device_scale_factor=1)
                page.goto(f"http://127.0.0.1:{port}/lab/tree/wizard.ipynb?token={token}")
                page.wait_for_selector(".jp-NotebookPanel", timeout=60_000)
                page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget "
                                       "&& window.jupyterapp.shell.currentWidget.sessionContext "
                                       "&& window.jupyterapp.shell.currentWidget.sessionContext.session "
                                       "&& window.jupyterapp.shell.currentWidget.sessionContext.session.kernel",
                                       timeout=60_000)
                page.evaluate("window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
                shooter = Shooter(page, out)
                shooter.run_cell(0)
                page.wait_for_selector(".ari-wizard .ari-alloc-facts", timeout=60_000)
                # the time_left probe has answered once the facts show the time
                page.wait_for_function(
                    "document.querySelector('.ari-alloc-facts').textContent.includes('3:12:45')",
                    timeout=60_000)
                page.wait_for_timeout(500)
                shooter.shot("01-allocation")

                shooter.step(1)  # a Stack renders only its selected step
                page.wait_for_function(
                    "document.querySelectorAll('.ari-probe-row').length === 9 && "
                    "document.querySelectorAll('.ari-probe-row .fa-spin').length === 0",
                    timeout=60_000)
                page.locator(".ari-probe-gres button:has-text('Details')").click()
                page.wait_for_timeout(300)
                shooter.shot("02-site-checks")

                shooter.run_cell(1)  # fill the form (what a user types)
                shooter.step(2)
                page.wait_for_function(
                    "document.querySelector('.ari-sbatch-line') && "
                    "document.querySelector('.ari-sbatch-line').textContent.includes('--nodes 2')",
                    timeout=30_000)
                shooter.shot("03-partition-and-profile")

                shooter.step(0)
                shooter.shot("01b-placement-with-profile")

                shooter.step(3)
                page.wait_for_timeout(800)
                shooter.shot("04-experiment")

                shooter.wizard().locator("button:has-text('Write checkpoint')").click()
                page.wait_for_selector(".ari-write-ok", timeout=30_000)
                shooter.wizard().locator("button:has-text('Check hand-off')").click()
                page.wait_for_selector(".ari-handoff-checks", timeout=60_000)
                page.wait_for_timeout(500)
                shooter.shot("05-handoff-checklist")

                shooter.run_cell(4)  # the run's first reproduce.sh lands in the checkpoint
                page.wait_for_timeout(500)
                shooter.step(4)
                shooter.wizard().locator(".ari-doctor-source select").select_option(
                    label="repro_sandbox/reproduce.sh")
                page.wait_for_function(
                    "document.querySelector('.ari-doctor-text textarea').value.includes('spgemm')",
                    timeout=30_000)
                shooter.wizard().locator("button:has-text('Diagnose')").click()
                page.wait_for_selector(".ari-doctor-rule-L6", timeout=30_000)
                page.wait_for_timeout(500)
                shooter.shot("06-doctor")

                shooter.run_cell(2)  # switch the language
                page.wait_for_timeout(800)
                shooter.step(1)
                shooter.shot("07-site-checks-ja")

                shooter.run_cell(3)  # back to English, then a site without SLURM
                page.wait_for_timeout(500)
                shooter.step(0)
                shooter.wizard().locator(".widget-toggle-buttons button:has-text('laptop')").click()
                page.wait_for_function(
                    "document.querySelector('.ari-alloc-banner').textContent.includes('laptop')",
                    timeout=30_000)
                page.wait_for_timeout(1500)
                shooter.shot("08-demo-site-laptop")
                browser.close()
        finally:
            stop_lab(lab)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return shooter.shots


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "screenshots")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args(argv)
    if not Path(args.chromium).exists():
        print(f"no browser at {args.chromium}: apt-get install chromium", file=sys.stderr)
        return 2
    take(args.out, args.chromium)
    return 0


if __name__ == "__main__":
    sys.exit(main())
