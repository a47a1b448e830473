"""B1-B5: what a person waits for in the browser, in Debian's Chromium on a real JupyterLab.

    python -m benchmarks.browser [--repeats 10] [--no-readme]

Each figure is the median of ``--repeats`` (at least 10) samples, timed inside the page
(``performance.now()`` from the action to the first animation frame that shows its result):

- B1 cell to wizard: a fresh kernel (restarted before each sample) runs
  ``Wizard(site="rccs-cloud")`` until the wizard's allocation step is on screen;
- B2 step change: a step button clicked until that step's own content is on screen;
- B3 site switch: a demo-site button clicked until the wizard names the new site (its checks
  pending), and B3d until every check of the new site has answered;
- B4 Write: Write clicked until "written" is on screen (a new run id each time);
- B5 live validation: a walltime typed into step 3 until its error (or the error's end) shows.

B2u and B5u time what a user sees: a real input (Playwright's mouse click, or its fill and the
Enter key), from the input event's own time stamp in the page to the first animation frame that
shows the result. The same actions timed in Python around Playwright's click (or fill and press)
and its ``wait_for`` are B2p and B5p: they add Playwright's own checks (visible, stable, enabled:
animation frames before it clicks) and its round trips to the browser, whose size is B0p, the
same click and wait on the step button already shown (nothing changes). B2, B2u, B5 and B5u start
each action ``PAUSE_MS`` after the previous result showed.

The table goes into README.md between its browser-benchmark markers (``--no-readme``: only
printed) and into ``benchmarks/results/browser.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

from benchmarks.common import Figure, median, not_measured  # noqa: E402
from benchmarks.run import table  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "browser.json"
README = REPO / "README.md"
START = "<!-- browser-benchmarks:start (written by python -m benchmarks.browser; do not edit) -->"
END = "<!-- browser-benchmarks:end -->"
CHROMIUM = os.environ.get("ARI_E2E_CHROMIUM", "/usr/bin/chromium")

SETUP = 'from ari_jupyter import Wizard\nwizard = Wizard(site="rccs-cloud", lang="en")\nwizard'
FILL = """\
p3, p4 = wizard.profile_panel, wizard.experiment_panel
p3.walltime.value = "00:30:00"
p4.title.value = "Browser timing"
p4.goal.value = "Time what a person waits for."
p4.metrics.value = ["GFlops"]
"""

# Run `action` (JS, on the page) and resolve with the milliseconds until `done` (a JS
# expression) holds, checked on every animation frame.
TIMED = """async ([action, done, limit]) => {
  const act = new Function(action), ready = new Function('return (' + done + ');');
  const t0 = performance.now();
  await act();
  return await new Promise((resolve, reject) => {
    const tick = () => {
      let ok = false;
      try { ok = ready(); } catch (e) { ok = false; }
      if (ok) { resolve(performance.now() - t0); return; }
      if (performance.now() - t0 > limit) { reject(new Error('not within ' + limit + ' ms: ' + done)); return; }
      requestAnimationFrame(tick);
    };
    tick();
  });
}"""

QUIET_MS = 250
"""B3d: the kernel sent nothing for this long (not counted in the figure)."""
LAST_MESSAGE = """(() => { const W = window.WebSocket; window.WebSocket = function (...args) {
  const ws = new W(...args);
  ws.addEventListener('message', () => { window.__ariLastMessage = performance.now(); });
  return ws; }; window.WebSocket.prototype = W.prototype;
  Object.assign(window.WebSocket, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 }); })()"""
"""When the page last heard from the server (B3d's quiet kernel)."""
PAUSE_MS = 300
"""How long after one result showed the next timed action starts (B2, B5): a person reads before
clicking again. Back to back, an action waits for the kernel to finish sending the previous one's
last messages (the buttons' state, the guide link), which no person sees."""

STEP_CONTENT = (".ari-alloc-facts", ".ari-probe-row", ".ari-sbatch-line", ".ari-run-settings",
                ".ari-doctor-context")


def _visible(selector: str) -> str:
    return f"(() => {{ const e = document.querySelector('.ari-wizard {selector}'); return !!e && e.offsetParent !== null; }})()"


def _timed(page, action: str, done: str, limit_ms: int = 60_000) -> float:
    return page.evaluate(TIMED, [action, done, limit_ms]) / 1000.0


# Arm before a user's action: resolve with the milliseconds from the action's trusted input
# event (its own time stamp: when the browser got the click or the key) to the first animation
# frame in which `done` (a JS expression) holds.
SEEN = """([done, limit]) => { const ready = new Function('return (' + done + ');');
  let input = null;
  const heard = (e) => { if (e.isTrusted && input === null) input = e.timeStamp; };
  for (const kind of ['pointerdown', 'keydown']) document.addEventListener(kind, heard, true);
  window.__ariSeen = new Promise((resolve, reject) => {
    const start = performance.now();
    const tick = () => {
      let ok = false;
      try { ok = input !== null && ready(); } catch (e) { ok = false; }
      if (ok) { resolve(performance.now() - input); return; }
      if (performance.now() - start > limit) { reject(new Error('not within ' + limit + ' ms: ' + done)); return; }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }).finally(() => { for (const kind of ['pointerdown', 'keydown']) document.removeEventListener(kind, heard, true); });
}"""


def _as_user(page, action, shows, seen: str, *, fill: str | None = None,
             state: str = "visible") -> tuple[float, float]:
    """A user's action on ``action`` (Playwright's click, or fill and Enter) until ``shows`` is
    in ``state``: (seconds in the page from the input event to the first frame where the JS
    expression ``seen`` holds, seconds in Python around Playwright's action and its wait)."""
    page.evaluate(SEEN, [seen, 60_000])
    begin = time.perf_counter()
    if fill is None:
        action.click()
    else:
        action.fill(fill)
        action.press("Enter")
    shows.wait_for(state=state)
    wall = time.perf_counter() - begin
    return page.evaluate("window.__ariSeen") / 1000.0, wall


def _notebook(path: Path, cells: list[str]) -> None:
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
                   "outputs": [], "source": src} for i, src in enumerate(cells)],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")


RUN_CELL = """const app = window.jupyterapp; const panel = app.shell.currentWidget;
panel.content.activeCellIndex = %d; return app.commands.execute('notebook:run-cell');"""


def measure(repeats: int) -> list[Figure]:
    repeats = max(repeats, 10)
    if not Path(CHROMIUM).exists():
        return [not_measured("B", "browser timings", f"{CHROMIUM} is not installed")]
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return [not_measured("B", "browser timings", "playwright is not installed")]
    sys.path.insert(0, str(REPO / "tests"))
    from e2e.conftest import CHROMIUM_ARGS, LAB_ARGS, LAB_SETTINGS
    from e2e.jupyter_process import start_jupyter

    samples: dict[str, list[float]] = {k: [] for k in ("B0p", "B1", "B2", "B2u", "B2p", "B3", "B3d", "B4", "B5", "B5u", "B5p")}
    lost: list[str] = []  # site switches whose click changed nothing (clicked again, not timed)
    with tempfile.TemporaryDirectory(prefix="ari-browser-bench-") as tmp_name:
        tmp = Path(tmp_name)
        server = start_jupyter(tmp, app="lab", env={"LANG": "C.UTF-8"}, settings=LAB_SETTINGS,
                               args=LAB_ARGS)
        try:
            _notebook(server.root_dir / "bench.ipynb", [SETUP, FILL])
            with sync_playwright() as playwright:
                context = playwright.chromium.launch_persistent_context(
                    str(tmp / "chromium-profile"), executable_path=CHROMIUM, headless=True,
                    args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000})
                context.set_default_timeout(60_000)
                page = context.new_page()
                page.add_init_script(LAST_MESSAGE)
                page.goto(server.url("/lab/tree/bench.ipynb?reset"))
                page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget"
                                       " && window.jupyterapp.shell.currentWidget.sessionContext?.session?.kernel",
                                       timeout=90_000)
                for _ in range(repeats + 1):  # the first is a warm-up (page, caches)
                    page.evaluate("""async () => { const app = window.jupyterapp;
                        const p = app.shell.currentWidget;
                        await p.sessionContext.session.kernel.restart();
                        await app.commands.execute('notebook:clear-all-cell-outputs');
                    }""")
                    page.wait_for_function("!document.querySelector('.ari-wizard')", timeout=30_000)
                    samples["B1"].append(_timed(page, RUN_CELL % 0, _visible(".ari-alloc-facts")))
                samples["B1"] = samples["B1"][1:]
                page.evaluate(f"() => {{ {RUN_CELL % 1} }}")
                page.wait_for_timeout(1500)
                buttons = ".ari-wizard .ari-steps button"
                for i in range(repeats + 1):
                    target = (i % 4) + 1  # steps 2..5, then back to 1 for the next turn
                    for index in (target, 0):
                        page.wait_for_timeout(PAUSE_MS)
                        took = _timed(page, f"document.querySelectorAll('{buttons}')[{index}].click()",
                                      _visible(STEP_CONTENT[index]))
                        if i:
                            samples["B2"].append(took)
                # the same, as a user measures it: Playwright's click, then its wait until visible
                for i in range(repeats + 1):
                    target = (i % 4) + 1
                    for index in (target, 0):
                        page.wait_for_timeout(PAUSE_MS)
                        content = page.locator(f".ari-wizard {STEP_CONTENT[index]}").first
                        seen, wall = _as_user(page, page.locator(buttons).nth(index), content,
                                              _visible(STEP_CONTENT[index]))
                        if i:
                            samples["B2u"].append(seen)
                            samples["B2p"].append(wall)
                        if index == 0 and i:  # Playwright's floor: the step shown, clicked again
                            page.wait_for_timeout(PAUSE_MS)
                            samples["B0p"].append(_as_user(page, page.locator(buttons).nth(0), content,
                                                           _visible(STEP_CONTENT[0]))[1])
                # site switch: step 1's demo-site buttons, back and forth
                for i in range(repeats + 1):
                    site = "sx40" if i % 2 == 0 else "rccs-cloud"
                    click = ("Array.from(document.querySelectorAll('.ari-wizard .ari-demo-picker button'))"
                             f".find(b => b.textContent.includes('{site}')).click()")
                    named = (f"(document.querySelector('.ari-wizard .ari-site')?.textContent || '').includes('{site} ')"
                             f" || (document.querySelector('.ari-wizard .ari-site')?.textContent || '').includes('{site} —')")
                    try:
                        pending = _timed(page, click, named, limit_ms=15_000)
                    except Exception:  # noqa: BLE001 - a click the page lost: said, not timed
                        lost.append(site)
                        print(f"B3: the click on {site} changed nothing within 15 s; clicked again",
                              file=sys.stderr)
                        _timed(page, click, named)
                        continue
                    page.evaluate(f"document.querySelectorAll('{buttons}')[1].click()")
                    # every check answered: the rows on screen without a spinner, and the kernel
                    # quiet for QUIET_MS (the rows exist before the new site's probes start)
                    done = _timed(page, "",
                                  "Array.from(document.querySelectorAll('.ari-wizard .ari-probe-row'))"
                                  ".some(r => r.offsetParent !== null) &&"
                                  " document.querySelectorAll('.ari-wizard .ari-probe-row .fa-spin').length === 0 &&"
                                  f" performance.now() - (window.__ariLastMessage || 0) > {QUIET_MS}") - QUIET_MS / 1000
                    page.evaluate(f"document.querySelectorAll('{buttons}')[0].click()")
                    # step 1 on screen with the site just picked marked (the next click is on it)
                    page.wait_for_function(
                        "(site) => Array.from(document.querySelectorAll('.ari-wizard .ari-demo-picker button'))"
                        ".some(b => b.offsetParent !== null && b.classList.contains('mod-active')"
                        " && b.textContent.includes(site))", arg=site, timeout=30_000)
                    page.wait_for_timeout(300)
                    if i:
                        samples["B3"].append(pending)
                        samples["B3d"].append(pending + done)
                # back on rccs-cloud with the experiment filled in: Write, a new run id each time
                page.evaluate(f"() => {{ {RUN_CELL % 1} }}")
                page.wait_for_timeout(1500)
                page.evaluate(f"document.querySelectorAll('{buttons}')[3].click()")
                run_id = page.get_by_label("Run id", exact=True)
                write = page.get_by_role("button", name="Write checkpoint")
                for i in range(repeats + 1):
                    name = f"20261205{100000 + i:06d}_bench"
                    run_id.fill(name)
                    run_id.press("Enter")
                    page.wait_for_function("(b) => !b.disabled", arg=write.element_handle(), timeout=30_000)
                    took = _timed(page, "Array.from(document.querySelectorAll('.ari-wizard button'))"
                                        ".find(b => b.textContent.includes('Write checkpoint')).click()",
                                  f"(document.querySelector('.ari-wizard .ari-write-ok')?.textContent || '').includes('{name}')")
                    if i:
                        samples["B4"].append(took)
                # live validation: step 3's walltime, wrong then right
                page.evaluate(f"document.querySelectorAll('{buttons}')[2].click()")
                page.wait_for_timeout(500)
                set_walltime = ("const i = Array.from(document.querySelectorAll('.ari-wizard .widget-text'))"
                                ".find(w => w.textContent.includes('Walltime')).querySelector('input');"
                                " i.value = '%s'; i.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));"
                                " i.dispatchEvent(new Event('change', {bubbles: true}));")
                error = ("Array.from(document.querySelectorAll('.ari-wizard .ari-msg-error'))"
                         ".some(e => e.offsetParent !== null && e.textContent.includes('90 min'))")
                for i in range(repeats + 1):
                    page.wait_for_timeout(PAUSE_MS)
                    wrong = _timed(page, set_walltime % "90 min", error)
                    page.wait_for_timeout(PAUSE_MS)
                    right = _timed(page, set_walltime % "00:30:00", f"!({error})")
                    if i:
                        samples["B5"] += [wrong, right]
                # the same, as a user measures it: Playwright types and presses Enter, then waits
                walltime = page.locator(".ari-wizard .widget-text", has_text="Walltime").locator("input")
                error_line = page.locator(".ari-wizard .ari-field-message .ari-msg-error", has_text="90 min")
                for i in range(repeats + 1):
                    took = []
                    for value, state, seen in (("90 min", "visible", error), ("00:30:00", "hidden", f"!({error})")):
                        page.wait_for_timeout(PAUSE_MS)
                        took.append(_as_user(page, walltime, error_line, seen, fill=value, state=state))
                    if i:
                        samples["B5u"] += [in_page for in_page, _ in took]
                        samples["B5p"] += [wall for _, wall in took]
                context.close()
        finally:
            server.stop()
    figures = _figures(samples)
    if lost:
        for figure in figures:
            if figure.id == "B3":
                figure.note = f"{len(lost)} click(s) changed nothing within 15 s and were made again (not timed)"
    return figures


def _figures(samples: dict[str, list[float]]) -> list[Figure]:
    rows = [
        ("B1", "cell to wizard: Wizard(site='rccs-cloud') in a restarted kernel until step 1 shows", "report", None),
        ("B2", "step change: a step button clicked until that step's content shows", "≤ 100 ms", 0.100),
        ("B2u", "step change as a user sees it: a real click, from its input event to the first frame showing the step", "≤ 100 ms", 0.100),
        ("B2p", "the same, timed in Python around Playwright's click and its wait until visible", "report", None),
        ("B0p", "Playwright's own part of B2p: its click and wait on the step already shown (nothing changes)", "report", None),
        ("B3", "site switch: a demo-site button clicked until the wizard names the new site (checks pending)", "≤ 100 ms", 0.100),
        ("B3d", "site switch until every check of the new site has answered", "report", None),
        ("B4", "Write clicked until 'written' shows (a new run id each time)", "report", None),
        ("B5", "live validation: a walltime typed in step 3 until its error shows or goes", "≤ 100 ms", 0.100),
        ("B5u", "live validation as a user sees it: a walltime typed and Enter pressed, from the key's input event to the first frame showing the result", "≤ 100 ms", 0.100),
        ("B5p", "the same, timed in Python around Playwright's fill, Enter and its wait", "report", None),
    ]
    figures = []
    for id, title, target, limit in rows:
        values = samples[id]
        if not values:
            figures.append(not_measured(id, title, "no sample", target))
            continue
        value = median(values)
        figures.append(Figure(id, title, value, "s", target=target,
                              met=None if limit is None else value <= limit,
                              repeats=len(values), samples=[round(v, 4) for v in values]))
    return figures


def readme_region(figures: list[Figure], started: str, seconds: float) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return "\n".join([
        START,
        f"Measured {started} on {platform.platform()}, {os.cpu_count()} CPUs"
        + (f" (load average {load:g} at the start)" if load is not None else "")
        + f", Debian Chromium, median of {figures[0].repeats or '-'} samples or more each "
        f"({seconds:.0f} s in all; B1-B5 are timed inside the page, to the first frame showing the result; "
        f"B2u and B5u from a real input event's own time stamp in the page; B2p, B5p and B0p in Python around Playwright's action and wait; "
        f"each B2/B5 action {PAUSE_MS} ms after the previous result showed).",
        "",
        table(figures),
        END,
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.browser", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--no-readme", action="store_true")
    args = parser.parse_args(argv)
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    begin = time.perf_counter()
    figures = measure(args.repeats)
    seconds = time.perf_counter() - begin
    print(table(figures))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"started": started, "seconds": seconds,
                                   "figures": [f.to_json() for f in figures]}, indent=1) + "\n")
    if not args.no_readme:
        text = README.read_text(encoding="utf-8")
        start, end = text.find(START), text.find(END)
        if start >= 0 and end > start:
            README.write_text(text[:start] + readme_region(figures, started, seconds)
                              + text[end + len(END):], encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
