"""The Runs panel following a live run, in the run's user's own JupyterLab, in Chromium.

Two JupyterLab servers run as the user (one in English and the light theme, one in 日本語 and
the dark theme: Settings → Language, Theme),
installed as a site installs them (tests/testbed/ari-for-users.sh). ``PanelFollower`` is the
``RunFollower`` that, on every phase ``ari-jupyter status`` reports, waits for both panels to
show that phase and takes their screenshots; it presses a job's Cancel in the panel when the
test's rule says so (a job that keeps its allocation after its work is done).
"""
from __future__ import annotations

import json
import re
import secrets
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from wholerun_support import SYSTEM_PATH, RunFollower, as_user, stop

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from e2e.conftest import CHROMIUM, CHROMIUM_ARGS, LAB_ARGS, LAB_SETTINGS  # noqa: E402
from e2e.jupyter_process import free_port  # noqa: E402
from e2e.lab_helpers import execute_command  # noqa: E402

PANEL = "#ari-jupyter-runs"
ACTIVE = {"not-started", "starting", "exploring", "paper", "reproduce"}
# what of the panel's facts, findings and jobs runs past its right edge (hidden from the user), if anything
PAST_EDGE = """panel => { const edge = panel.getBoundingClientRect().right;
  return [...panel.querySelectorAll('.ari-RunsPanel-facts *, .ari-RunsPanel-job > div, .ari-RunsPanel-findings li, .ari-RunsPanel-findings li *')]
    .filter(e => e.getBoundingClientRect().right > edge + 0.5)
    .map(e => e.tagName + ' ' + e.textContent.slice(0, 40)); }"""
AWAKE_ARGS = ["--disable-background-timer-throttling", "--disable-renderer-backgrounding",
              "--disable-backgrounding-occluded-windows"]
# the English lab in the light theme, the Japanese one in the dark: both looks, both languages
LOOKS = {"en": {}, "ja": {"@jupyterlab/translation-extension/plugin": {"locale": "ja_JP"},
                          "@jupyterlab/apputils-extension/themes": {"theme": "JupyterLab Dark"}}}


@dataclass
class UserLab:
    """``jupyter lab`` as the user, with its own config, data and settings folders."""

    proc: subprocess.Popen
    port: int
    token: str
    log: Path

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}{'&' if '?' in path else '?'}token={self.token}"

    def stop(self) -> None:
        stop(self.proc)


def start_user_lab(user, home: Path, workspace: Path, jupyter_bin: Path, env: dict, where: Path,
                   lang: str) -> UserLab:
    """JupyterLab as ``user`` (its HOME the network home), the Runs panel's workspace ``workspace``."""
    dirs = {name: where / name for name in ("config", "data", "runtime", "settings", "workspaces")}
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    (dirs["config"] / "ari_jupyter_config.json").write_text(
        json.dumps({"AriWizard": {"workspace_template": str(workspace)}}))
    for plugin, values in {**LAB_SETTINGS, **LOOKS[lang]}.items():
        path = dirs["settings"] / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    shutil.chown(where, user.pw_uid, user.pw_gid)
    for path in where.rglob("*"):
        shutil.chown(path, user.pw_uid, user.pw_gid)
    port, token = free_port(), "ari-wholerun-" + secrets.token_hex(8)
    lab_env = {**env, "PATH": f"{jupyter_bin}:{SYSTEM_PATH}", "SHELL": "/bin/bash",
               "JUPYTER_CONFIG_DIR": str(dirs["config"]), "JUPYTER_DATA_DIR": str(dirs["data"]),
               "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
               "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
               "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]), "PYTHONUNBUFFERED": "1"}
    argv = [str(jupyter_bin / "python"), "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={home}", *LAB_ARGS]
    log = where.parent / f"jupyter-lab-{lang}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(as_user(user, argv, lab_env), cwd=str(home), stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    lab = UserLab(proc, port, token, log)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab ({lang}) exited:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(lab.url("/api/status"), timeout=2) as answer:
                if answer.status == 200:
                    return lab
        except OSError:
            time.sleep(0.3)
    lab.stop()
    raise RuntimeError(f"jupyter lab ({lang}) did not answer:\n{log.read_text(errors='replace')[-3000:]}")


@dataclass
class Shown:
    """What one panel showed at one phase."""

    phase: str
    lang: str
    seconds: float
    badge: str
    nodes: str
    best: str
    facts: str
    jobs: list = field(default_factory=list)
    log_lines: int = 0
    screenshot: str = ""
    past_edge: list = field(default_factory=list)


class PanelFollower(RunFollower):
    """A ``RunFollower`` whose user also watches the Runs panel in both languages; ``cancel_when``
    (status JSON -> job id or None) picks a job to cancel from the panel, once."""

    def __init__(self, *args, labs: dict, run_id: str, shots: Path, cancel_when=None, **kw):
        super().__init__(*args, **kw)
        self.labs, self.run_id, self.shots, self.cancel_when = labs, run_id, shots, cancel_when
        shots.mkdir(parents=True, exist_ok=True)
        for stale in shots.glob("whole-run-*.png"):  # a previous run's: every figure is this run's
            stale.unlink()
        self.shown: list[Shown] = []
        self.cancelled: dict = {}
        self.problems: list[str] = []
        self.pages: dict = {}
        self.jobs_seen: dict = {}
        self._reads: dict = {}
        self.ready = threading.Event()
        self._playwright = self._browser = None

    def _loop(self) -> None:
        # Playwright's sync API stays on the thread that started it: the follower's own
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        try:
            # each lab in a window of its own, and no timer of a page in the back slowed down: the
            # user looks at both, and a throttled page would show a run minutes late
            self._browser = self._playwright.chromium.launch(
                executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *AWAKE_ARGS])
            for lang, lab in self.labs.items():
                page = self._browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
                page.goto(lab.url("/lab?reset"))
                page.wait_for_selector(".jp-LauncherCard", timeout=120_000)
                execute_command(page, "ari-jupyter:runs")
                row = page.locator(f"{PANEL} [data-run-id='{self.run_id}']")
                row.wait_for(timeout=60_000)
                row.click()
                page.wait_for_selector(f"{PANEL}[data-view='status']", timeout=60_000)
                self.pages[lang] = page
            self.ready.set()
            super()._loop()
        except Exception as error:  # said by the test, which asserts on self.problems
            self.problems.append(f"{type(error).__name__}: {error}")
        finally:
            self.ready.set()
            if self._browser:
                self._browser.close()
            self._playwright.stop()

    def on_phase(self, phase: str, status: dict) -> None:
        for lang, page in self.pages.items():
            try:
                page.wait_for_selector(f"{PANEL}[data-view='status'][data-phase='{phase}']", timeout=30_000)
            except Exception:  # the phase was over before the panel's next poll: said, not shot
                self.problems.append(f"{lang}: the panel never showed {phase}")
                continue
            self.shown.append(self._read(page, phase, lang))

    def _read(self, page, phase: str, lang: str) -> Shown:
        self.shots.mkdir(parents=True, exist_ok=True)
        shot = self.shots / f"whole-run-{phase}-{lang}.png"
        page.locator(PANEL).screenshot(path=str(shot))
        jobs = page.eval_on_selector_all(
            f"{PANEL} .ari-RunsPanel-job",
            "els => els.map(e => ({id: e.dataset.jobId, state: e.dataset.state, text: e.innerText}))")
        return Shown(phase=phase, lang=lang, seconds=round(time.monotonic() - self._started, 1),
                     badge=page.locator(f"{PANEL} [data-phase]").first.inner_text(),
                     nodes=page.locator(f"{PANEL} [data-field='nodes']").inner_text(),
                     best=page.locator(f"{PANEL} [data-field='best']").inner_text(),
                     facts=page.locator(PANEL).inner_text()[:4000], jobs=jobs,
                     log_lines=len(page.locator(f"{PANEL} .ari-RunsPanel-log").inner_text().splitlines())
                     if page.locator(f"{PANEL} .ari-RunsPanel-log").count() else 0,
                     screenshot=str(shot), past_edge=page.eval_on_selector(PANEL, PAST_EDGE))

    def after_status(self, status: dict) -> None:
        for job in status.get("jobs", {}).get("jobs", []):
            key = (job["job_id"], job["state"])
            # each job in each state, as the panels list it: read again while a panel has not
            # caught up (on a loaded machine one panel's poll can lag the other's by seconds)
            # (three reads at most: a panel ahead of status, as its cached queue answer may be,
            # would otherwise cost each poll the wait)
            seen = self.jobs_seen.get(key)
            behind = seen is None or any(self._behind(seen.get(lang), job) for lang in self.pages)
            if behind and self._reads.get(key, 0) < 3:
                self._reads[key] = self._reads.get(key, 0) + 1
                self.jobs_seen[key] = self._job_in_panels(job, seen)
        if self.cancel_when is None:
            return
        for job_id in self.cancel_when(status):
            if job_id not in self.cancelled:
                self.cancelled[job_id] = self._cancel_in_panel(job_id, status)

    def _cancel_in_panel(self, job_id: str, status: dict) -> dict:
        """Cancel as the user does: the "Cancel job N" the finding about that job offers (a job
        outside what the user approved), else the job's own Cancel; then "Cancel jobs"."""
        page = self.pages["en"]
        job = page.locator(f"{PANEL} .ari-RunsPanel-job[data-job-id='{job_id}']")
        job.wait_for(timeout=30_000)
        offered = page.locator(f"{PANEL} .ari-RunsPanel-findings button", has_text=f"Cancel job {job_id}")
        try:
            offered.wait_for(timeout=20_000)
            via = "finding"
        except Exception:  # no finding offers it: the test says so
            via = "job"
        self.shots.mkdir(parents=True, exist_ok=True)
        if not (self.shots / "whole-run-outside-envelope-en.png").exists():
            page.locator(PANEL).screenshot(path=str(self.shots / "whole-run-outside-envelope-en.png"))
        shown = job.locator("div").first.inner_text()
        item = job.inner_text()
        past_edge = page.eval_on_selector(PANEL, PAST_EDGE)  # the flag and its fix, wrapped
        said = [f for f in status.get("findings", []) if (f.get("params") or {}).get("job") == job_id]
        (offered if via == "finding" else job.locator("button", has_text=re.compile(r"^Cancel$"))).click()
        dialog = page.locator(".jp-Dialog")
        dialog.wait_for()
        asked = dialog.inner_text()
        dialog.locator("button", has_text="Cancel jobs").click()
        dialog.wait_for(state="detached")
        done = {"shown": shown, "item": item, "via": via, "findings": said, "dialog": asked,
                "past_edge": past_edge,
                "seconds": round(time.monotonic() - self._started, 1)}
        # the job leaves the panel's queue: gone where there is no accounting, else listed as
        # accounting recorded its end (CANCELLED)
        page.wait_for_function(
            """([panel, id]) => { const row = document.querySelector(`${panel} .ari-RunsPanel-job[data-job-id='${id}']`);
                                  return !row || (row.dataset.state || '').startsWith('CANCELLED'); }""",
            arg=[PANEL, job_id], timeout=60_000)
        row = page.locator(f"{PANEL} .ari-RunsPanel-job[data-job-id='{job_id}']")
        done["after_cancel"] = row.get_attribute("data-state") if row.count() else "gone"
        if done["after_cancel"] != "gone":
            done["after_cancel_item"] = row.inner_text()
        return done

    def wait_for_end(self, timeout: float) -> None:
        """Until ``status`` said the run ended (and the panels were shown it), or ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and (not self.phases or self.phases[-1][1] in ACTIVE):
            time.sleep(1)
        time.sleep(1)  # the panels' shots of that phase are taken in the follower's own turn


    @staticmethod
    def _behind(row: dict | None, job: dict) -> bool:
        return row is None or row.get("state") != job.get("state")

    def _job_in_panels(self, job: dict, seen: dict | None = None) -> dict:
        """The job's row in each panel (in the state ``status`` gives, if the panel shows it so
        in time; else whatever it shows by then); a panel already caught up is not read again.
        Both panels are watched together: a panel takes its queue from an answer up to
        ``server/queue_cache.CACHE_SECONDS`` old and polls at most every 30 s, so the running
        reproduce job (the test asserts each panel showed it) is waited for up to a minute."""
        seen = dict(seen or {})
        seen["status"] = {k: job.get(k) for k in ("name", "kind", "state", "nodes", "where")}
        selector = f"{PANEL} .ari-RunsPanel-job[data-job-id='{job['job_id']}']"
        in_state = f"{selector}[data-state='{job.get('state')}']"
        wait = 65.0 if (job.get("kind"), job.get("state")) == ("reproduce", "RUNNING") else 10.0
        behind = [lang for lang in self.pages if self._behind(seen.get(lang), job)]
        deadline = time.monotonic() + wait
        while behind:
            for lang in list(behind):
                page = self.pages[lang]
                try:
                    late = time.monotonic() > deadline
                    if not page.locator(in_state).count() and not late:
                        continue
                    row = page.locator(selector)
                    if not row.count():  # gone before the panel's next poll: a short job
                        seen.setdefault(lang, None)
                        behind.remove(lang)
                        continue
                    seen[lang] = {"state": row.get_attribute("data-state"),
                                  "text": row.locator("div").first.inner_text()}
                    if job.get("kind") == "reproduce" and seen[lang]["state"] == "RUNNING":
                        # the ended jobs accounting lists come first: the reproduce job is brought
                        # into the panel's view for its figure
                        row.scroll_into_view_if_needed()
                        page.locator(PANEL).screenshot(path=str(self.shots / f"whole-run-reproduce-job-{lang}.png"))
                except Exception:  # the page changed under the read: taken as not shown
                    seen.setdefault(lang, None)
                behind.remove(lang)
            if behind:
                time.sleep(0.5)
        return seen


def report(follower: PanelFollower, out: Path) -> None:
    """What the panels showed, next to what ``status`` said, as JSON for the closing figures."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "panel.json").write_text(json.dumps(
        {"shown": [vars(s) for s in follower.shown], "cancelled": follower.cancelled,
         "jobs_seen": {f"{job} {state}": seen for (job, state), seen in follower.jobs_seen.items()},
         "problems": follower.problems}, indent=1, ensure_ascii=False) + "\n")
