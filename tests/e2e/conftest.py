"""Browser fixtures: JupyterLab on 127.0.0.1 with a token, Debian's Chromium via Playwright.

On failure each test leaves a full-page screenshot, the console and the server log in
``$ARI_TEST_REPORT_DIR`` (default ``test-artifacts/``).
Every test ends with ``assert_no_console_errors(page)``.
Outside CI the tests skip when Chromium or Playwright is missing; with ``ARI_E2E_REQUIRED=1``
(set by CI) they fail instead, so the job cannot pass by skipping.
"""
from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from .jupyter_process import REPO, start_jupyter

CHROMIUM = os.environ.get("ARI_E2E_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("ARI_TEST_REPORT_DIR") or REPO / "test-artifacts")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

LAB_SETTINGS = {
    # xterm.js draws on a canvas; the accessibility tree puts the rows into the DOM.
    "@jupyterlab/terminal-extension/plugin": {"screenReaderMode": True},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                    "checkForUpdates": False},
}
LAB_ARGS = ["--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]

STAND_IN_ARI = """#!{python}
# Stand-in for ARI's CLI: records argv, cwd and the ARI_* environment, changes nothing else.
import json, os, sys
record = {{"argv": sys.argv[1:], "cwd": os.getcwd(),
          "env": {{k: v for k, v in os.environ.items() if k.startswith("ARI_")}}}}
with open(os.environ["ARI_E2E_RECORD"], "a") as handle:
    handle.write(json.dumps(record) + "\\n")
print("stand-in ari recorded", " ".join(sys.argv[1:]))
"""


def _missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is not installed (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright (Python) is not installed"
    return None


def require_browser() -> None:
    """Skip (or, with ARI_E2E_REQUIRED=1, fail) when Chromium or Playwright is missing."""
    reason = _missing()
    if reason is None:
        return
    if os.environ.get("ARI_E2E_REQUIRED") == "1":
        pytest.fail(f"ARI_E2E_REQUIRED=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def _browser_available(request):
    if request.node.get_closest_marker("e2e") is not None:
        require_browser()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


def stand_in_ari(directory: Path) -> Path:
    bin_dir = directory / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "ari"
    script.write_text(STAND_IN_ARI.format(python=sys.executable))
    script.chmod(0o755)
    return bin_dir


def lab_env(tmp: Path, extra: dict | None = None) -> dict:
    """Server environment: the stand-in ``ari`` first on PATH, for the kernel and terminals.

    jupyter_server starts terminals as login shells, and /etc/profile resets PATH; the
    hermetic HOME's .bash_profile puts the stand-in back, as a user's profile activates ARI.
    """
    bin_dir = stand_in_ari(tmp / "stand-in")
    record = tmp / "ari-record.jsonl"
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / ".bash_profile").write_text(f'export PATH="{bin_dir}:$PATH"\n')
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "ARI_E2E_RECORD": str(record), "SHELL": shutil.which("bash") or "/bin/sh"}
    env.update(extra or {})
    return env


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab outside any allocation, with a stand-in ``ari`` on PATH."""
    require_browser()
    tmp = tmp_path_factory.mktemp("lab")
    server = start_jupyter(tmp, app="lab", env=lab_env(tmp), settings=LAB_SETTINGS,
                           args=LAB_ARGS)
    server.extra["record"] = tmp / "ari-record.jsonl"
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory):
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM,
            headless=True, args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 900})
        context.set_default_timeout(30_000)
        yield context
        context.close()


class ConsoleLog:
    """Browser console messages and uncaught page errors of one page."""

    def __init__(self, page):
        self.messages: list[tuple[str, str]] = []
        page.on("console", lambda msg: self.messages.append((msg.type, msg.text)))
        page.on("pageerror", lambda exc: self.messages.append(("pageerror", str(exc))))

    def errors(self) -> list[str]:
        return [text for kind, text in self.messages if kind in ("error", "pageerror")]

    def texts(self) -> list[str]:
        return [text for _, text in self.messages]


def _artifact_name(item) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid.split("::", 1)[-1])[:120]


@pytest.fixture
def page(request, browser_context):
    """A fresh tab; screenshot + server log into test-artifacts/ when the test fails."""
    tab = browser_context.new_page()
    console = ConsoleLog(tab)
    tab.console_log = console
    yield tab
    failed = any(getattr(request.node, f"rep_{when}", None) is not None
                 and getattr(request.node, f"rep_{when}").failed for when in ("setup", "call"))
    if failed:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        name = _artifact_name(request.node)
        try:
            tab.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        except Exception as exc:  # the page may be gone; the log is still useful
            (ARTIFACTS / f"{name}.screenshot-error.txt").write_text(str(exc))
        (ARTIFACTS / f"{name}.console.txt").write_text(
            "\n".join(f"{kind}: {text}" for kind, text in console.messages))
        for fixture in ("lab", "lab_in_allocation"):
            if fixture in request.fixturenames:
                server = request.getfixturevalue(fixture)
                (ARTIFACTS / f"{name}.{fixture}.log").write_text(server.log())
    tab.close()


def assert_no_console_errors(page) -> None:
    errors = page.console_log.errors()
    assert not errors, "browser console errors:\n" + "\n".join(errors)
