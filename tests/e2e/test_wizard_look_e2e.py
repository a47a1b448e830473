"""Every wizard step in JupyterLab Light and Dark, in English, Japanese and Chinese.

For each theme and language each of the five steps is shown in a real JupyterLab and scanned
with axe-core (injected from tests/e2e/node_modules): no serious or critical violation. The
sbatch preview, the heart of step 3, must keep a text contrast of at least 4.5:1 in both
themes, and Japanese labels and badges must not be cut or wrapped one character per line.

With ``ARI_SCREENSHOTS_DIR`` set (``docs/make_screenshots.py`` and the README say how), the run
also saves the pictures of docs/screenshots: every step, Light and Dark, en and ja.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from .conftest import assert_no_console_errors
from .lab_helpers import THEMES, set_theme

pytestmark = pytest.mark.e2e

AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
LANGS = ("en", "ja", "zh")
STEPS = ("allocation", "checks", "profile", "experiment", "doctor")
SHOT_LANGS = ("en", "ja")

SETUP = """\
from ari_jupyter import Wizard
wizard = Wizard(site="rccs-cloud", lang="en")
wizard"""

FILL = """\
p3, p4 = wizard.profile_panel, wizard.experiment_panel
# the site's default: kind cpu_single (no GPU there), one rank on each of the 2 nodes
p3.max_cpus.value = 1
p3.walltime.value = "00:30:00"
p3.modules.value = ["openmpi/4.1"]
p4.title.value = "Sparse GEMM scaling"
p4.goal.value = "Measure how SpGEMM throughput scales from one to two nodes on the same partition."
p4.metrics.value = ["GFlops", "runtime_sec"]
p4.run_id.value = "20261129120000_sparse_gemm_scaling"
"""

# A typical first reproduce.sh: the program started once, on the first node only.
REPRODUCE = """\
import pathlib
script = pathlib.Path(wizard.state.checkpoint_dir, "repro_sandbox", "reproduce.sh")
script.parent.mkdir(parents=True, exist_ok=True)
script.write_text('#!/usr/bin/env bash\\nset -euo pipefail\\ncd "$(dirname "$0")"\\n'
                  'module load openmpi/4.1\\n./spgemm_bench --matrix data/matrix.mtx\\n')
"""

CONTRAST = """(selector) => {
  const el = document.querySelector(selector);
  if (!el) { return null; }
  const parse = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) { return null; }
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  // the opaque colour behind el: its own background over its ancestors'
  const layers = [];
  for (let node = el; node; node = node.parentElement) {
    const bg = parse(getComputedStyle(node).backgroundColor);
    if (bg && bg[3] > 0) { layers.push(bg); if (bg[3] >= 1) { break; } }
  }
  let back = [255, 255, 255];
  for (const [r, g, b, a] of layers.reverse()) {
    back = [r * a + back[0] * (1 - a), g * a + back[1] * (1 - a), b * a + back[2] * (1 - a)];
  }
  const fg = parse(getComputedStyle(el).color);
  const front = [0, 1, 2].map(i => fg[i] * fg[3] + back[i] * (1 - fg[3]));
  const lum = (c) => { const [r, g, b] = c.map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const [l1, l2] = [lum(front), lum(back)].sort((a, b) => b - a);
  return (l1 + 0.05) / (l2 + 0.05);
}"""

AXE_SCAN = """async () => {
  const result = await axe.run(document.querySelector('.ari-wizard'),
    { resultTypes: ['violations'] });
  return result.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => ({ id: v.id, impact: v.impact, help: v.help,
                 nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ' :: ' + n.failureSummary) }));
}"""

# Elements whose text must stay whole: a label cut with an ellipsis or a badge that wraps
# (one CJK character per line) has a scroll size larger than its box, or more than one line.
CUT_TEXT = """() => {
  const out = [];
  for (const el of document.querySelectorAll(
      '.ari-wizard .widget-label, .ari-wizard .ari-badge, .ari-wizard button, ' +
      '.ari-wizard .lm-TabBar-tabLabel, .ari-wizard th')) {
    if (el.offsetParent === null || !el.textContent.trim()) { continue; }
    const style = getComputedStyle(el);
    const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.5;
    const row = el.closest('.widget-inline-hbox');
    const [r, e] = [row && row.getBoundingClientRect(), el.getBoundingClientRect()];
    const cut = el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1 ||
      (r !== null && (e.top < r.top - 1 || e.bottom > r.bottom + 1));
    const oneLine = el.classList.contains('ari-badge') || el.tagName === 'TH';
    // a field label on two lines ("チェックポイントのファ" over "イル"): its text has two line tops
    const range = document.createRange();
    range.selectNodeContents(el);
    const tops = new Set(Array.from(range.getClientRects(), r => Math.round(r.top)));
    const wrapped = (oneLine && el.getBoundingClientRect().height > line * 1.6) ||
      (el.classList.contains('widget-label') && tops.size > 1);
    if (cut || wrapped) { out.push(el.textContent.trim()); }
  }
  return out;
}"""

# A caption that wraps must wrap between words: a line that starts inside a word (the
# "型指/定時は" of a Japanese caption) is reported with a "/" where the line broke. Words are
# the browser's own (Intl.Segmenter, dictionary-based for Japanese and Chinese).
MID_WORD = """(lang) => {
  const out = [];
  const words = new Intl.Segmenter(lang, { granularity: 'word' });
  for (const el of document.querySelectorAll('.ari-wizard .ari-field-caption')) {
    if (el.offsetParent === null) { continue; }
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.data;
      const bounds = new Set([0, text.length]);
      for (const s of words.segment(text)) { bounds.add(s.index); bounds.add(s.index + s.segment.length); }
      const range = document.createRange();
      let top = null;
      for (let i = 0; i < text.length; i++) {
        if (/\\s/.test(text[i])) { continue; }
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect) { continue; }
        if (top !== null && rect.top > top + 2 && !bounds.has(i)) {
          out.push(text.slice(0, i) + '/' + text.slice(i));
        }
        top = rect.top;
      }
    }
  }
  return out;
}"""


# Step 4's inputs start at one x (the Metrics tags sat further left); step 1's "Demo sites"
# label sits on the line of its buttons, just before the first one.
ALIGNED = """(step) => {
  const w = document.querySelector('.ari-wizard');
  const visible = (el) => el && el.offsetParent !== null;
  if (step === 'experiment') {
    const lefts = {};
    for (const row of w.querySelectorAll('.widget-text, .widget-textarea, .ari-field-row')) {
      const input = row.querySelector('input, textarea, .jupyter-widget-tagsinput, .widget-tagsinput');
      const label = row.querySelector('.widget-label, .ari-field-label');
      if (!visible(input) || !visible(label) || !label.textContent.trim()) { continue; }
      lefts[label.textContent.trim()] = Math.round(input.getBoundingClientRect().left);
    }
    const xs = Object.values(lefts);
    return xs.length >= 4 && Math.max(...xs) - Math.min(...xs) <= 2 ? null : lefts;
  }
  if (step === 'allocation') {
    const picker = w.querySelector('.ari-demo-picker');
    if (!visible(picker)) { return 'no demo picker'; }
    const label = picker.querySelector('.widget-label').getBoundingClientRect();
    const first = picker.querySelector('button').getBoundingClientRect();
    const gap = first.left - label.right;
    const sameLine = Math.abs((label.top + label.bottom) / 2 - (first.top + first.bottom) / 2) < 6;
    return sameLine && gap >= 0 && gap <= 16 ? null : { gap, label: [label.left, label.right], first: first.left };
  }
  return null;
}"""


# Nothing of the wizard reaches past its right edge (a Copy button cut to "Cop", a fix cut
# mid-sentence): in a narrow notebook, e.g. beside the Runs panel, long lines scroll inside.
PAST_EDGE = """() => {
  const w = document.querySelector('.ari-wizard');
  const edge = w.getBoundingClientRect().right;
  const out = [];
  for (const el of w.querySelectorAll('.ari-copy-code, td, th, .ari-codeblock, .widget-label')) {
    if (el.offsetParent === null) { continue; }
    const right = el.getBoundingClientRect().right;
    if (right > edge + 1) { out.push(`${el.tagName}.${el.className}: ${Math.round(right - edge)} px`); }
  }
  return out;
}"""


# Step 3's Advanced fields, a list (a label, then tags) among them: every input starts at one
# x and every label's text ends at one x (the lists' labels were left-aligned, their tags 4 px off).
ADVANCED_ALIGNED = """() => {
  const visible = (el) => el && el.offsetParent !== null;
  const inputs = {}, labels = {};
  for (const row of document.querySelectorAll('.ari-wizard .ari-advanced .widget-hbox[class*="ari-field-"]')) {
    const input = row.querySelector('input:not([type=checkbox]), select, .jupyter-widget-tagsinput, .widget-tagsinput');
    const label = Array.from(row.querySelectorAll('.widget-label, .ari-field-label'))
      .find(l => visible(l) && l.textContent.trim());
    if (!visible(input) || !label) { continue; }
    const range = document.createRange();
    range.selectNodeContents(label);
    const name = label.textContent.trim();
    inputs[name] = Math.round(input.getBoundingClientRect().left);
    labels[name] = Math.round(Array.from(range.getClientRects()).reduce((m, r) => Math.max(m, r.right), 0));
  }
  const spread = (o) => Math.max(...Object.values(o)) - Math.min(...Object.values(o));
  return Object.keys(inputs).length >= 15 && spread(inputs) <= 2 && spread(labels) <= 2
    ? null : { inputs, labels };
}"""


def _notebook(path: Path, cells: list[str]) -> None:
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
                   "outputs": [], "source": src} for i, src in enumerate(cells)],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                    "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")


def _run_cell(page, index: int) -> None:
    page.evaluate("""async (index) => {
        const app = window.jupyterapp; const panel = app.shell.currentWidget;
        panel.content.activeCellIndex = index;
        await app.commands.execute('notebook:run-cell');
    }""", index)


def _wizard(page):
    return page.locator(".ari-wizard").first


def _step(page, index: int) -> None:
    _wizard(page).locator(".ari-steps button").nth(index).click()
    page.wait_for_timeout(500)



def _set_lang(page, lang: str) -> None:
    _wizard(page).locator("select").first.select_option(label={
        "en": "English", "ja": "日本語", "zh": "中文"}[lang])
    page.wait_for_timeout(700)


def _shot(page, directory: Path, name: str) -> None:
    height = _wizard(page).bounding_box()["height"]
    page.set_viewport_size({"width": 1400, "height": max(900, int(height) + 300)})
    page.wait_for_timeout(300)
    _wizard(page).screenshot(path=str(directory / f"{name}.png"))


@pytest.fixture
def shots(tmp_path) -> Path:
    directory = Path(os.environ.get("ARI_SCREENSHOTS_DIR") or tmp_path / "screenshots")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def _open_and_run(page, lab, name: str) -> None:
    """Open notebook ``name`` with its code hidden, run its wizard cell and its second cell."""
    page.goto(lab.url(f"/lab/tree/{name}?reset"))
    page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget "
                           "&& window.jupyterapp.shell.currentWidget.sessionContext?.session?.kernel",
                           timeout=60_000)
    page.evaluate("window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
    _run_cell(page, 0)
    page.wait_for_selector(".ari-wizard .ari-alloc-facts", timeout=60_000)
    _run_cell(page, 1)
    page.wait_for_timeout(1000)


def test_every_step_in_light_and_dark_en_ja_zh(lab, page, shots):
    if not AXE.is_file():
        reason = f"{AXE} is missing: cd tests/e2e && npm ci"
        if os.environ.get("ARI_E2E_REQUIRED") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    _notebook(lab.root_dir / "look.ipynb", [SETUP, FILL, REPRODUCE])
    _open_and_run(page, lab, "look.ipynb")
    _step(page, 1)
    page.wait_for_function("document.querySelectorAll('.ari-probe-row').length > 0 && "
                           "document.querySelectorAll('.ari-probe-row .fa-spin').length === 0",
                           timeout=90_000)
    # Write, check the hand-off, diagnose the first reproduce.sh: every step shows its content.
    _step(page, 3)
    _wizard(page).locator("button:has-text('Write checkpoint')").click()
    page.wait_for_selector(".ari-write-ok", timeout=30_000)
    _wizard(page).locator("button:has-text('Check hand-off')").click()
    page.wait_for_selector(".ari-handoff-checks li", timeout=60_000)
    _run_cell(page, 2)
    page.wait_for_timeout(500)
    _step(page, 4)
    _wizard(page).locator(".ari-doctor-source select").select_option(label="repro_sandbox/reproduce.sh")
    page.wait_for_function(
        "document.querySelector('.ari-doctor-text textarea').value.includes('spgemm')", timeout=30_000)
    _wizard(page).locator("button:has-text('Diagnose')").click()
    page.wait_for_selector(".ari-doctor-rule-L6", timeout=30_000)
    page.add_script_tag(path=str(AXE))

    violations, contrasts, cut, misaligned = {}, {}, {}, {}
    for theme in THEMES:
        set_theme(page, theme)
        for lang in LANGS:
            _set_lang(page, lang)
            for index, step in enumerate(STEPS):
                _step(page, index)
                key = f"{theme}/{lang}/{step}"
                found = page.evaluate(AXE_SCAN)
                if found:
                    violations[key] = found
                lost = page.evaluate(CUT_TEXT) + page.evaluate(MID_WORD, lang)
                if lost:
                    cut[key] = lost
                off = page.evaluate(ALIGNED, step)
                if off:
                    misaligned[key] = off
                if step == "profile":
                    page.wait_for_selector(".ari-sbatch-line pre", timeout=30_000)
                    contrasts[f"{theme}/{lang}"] = page.evaluate(CONTRAST, ".ari-sbatch-line pre")
                if lang in SHOT_LANGS:
                    _shot(page, shots, f"{index + 1:02d}-{step}-{lang}-{theme}")
    set_theme(page, "light")

    # Every step is reachable from the keyboard: Tab moves along the step buttons, Enter opens one.
    buttons = _wizard(page).locator(".ari-steps button")
    buttons.nth(0).focus()
    for index in range(1, len(STEPS)):
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.textContent.trim()") == \
            buttons.nth(index).inner_text().strip()
        page.keyboard.press("Enter")
        page.wait_for_function(
            "(i) => document.querySelectorAll('.ari-wizard .ari-steps button')[i]"
            ".classList.contains('mod-active')", arg=index, timeout=10_000)

    _step(page, 2)
    _wizard(page).locator(".ari-advanced .jupyter-widget-Collapse-header").first.click()
    page.wait_for_timeout(500)
    advanced_off = page.evaluate(ADVANCED_ALIGNED)
    _wizard(page).locator(".ari-advanced .jupyter-widget-Collapse-header").first.click()

    # A narrow notebook (JupyterLab's window with a side panel open): step 3's ARI keys and
    # captions still break only between words, the doctor's fixes and Copy buttons stay inside.
    page.set_viewport_size({"width": 1000, "height": 900})
    page.wait_for_timeout(300)
    narrow = {}
    for lang in ("en", "ja"):
        _set_lang(page, lang)
        for index in (2, 4):
            _step(page, index)
            lost = page.evaluate(MID_WORD, lang) + page.evaluate(PAST_EDGE)
            if lost:
                narrow[f"{lang}/{STEPS[index]}"] = lost

    assert not violations, json.dumps(violations, indent=1, ensure_ascii=False)
    assert not cut, json.dumps(cut, indent=1, ensure_ascii=False)
    assert not narrow, json.dumps(narrow, indent=1, ensure_ascii=False)
    assert advanced_off is None, json.dumps(advanced_off, indent=1, ensure_ascii=False)
    assert not misaligned, json.dumps(misaligned, indent=1, ensure_ascii=False)
    assert set(contrasts) == {f"{t}/{lang}" for t in THEMES for lang in LANGS}
    low = {key: ratio for key, ratio in contrasts.items() if ratio is None or ratio < 4.5}
    assert not low, f"sbatch preview contrast below 4.5:1: {low}"
    assert_no_console_errors(page)


# Step 3 with a wrong value in several boxes (what a new user types): each box's error.
ERRORS = """\
await wizard.wait()  # the site's checks answered: its default profile is in, typed over below
p3 = wizard.profile_panel
p3.nodes.value = -2
p3.max_cpus.value = 999
p3.walltime.value = "90 min"
p3.fields["min_ranks"].widget.value = "abc"
p3.fields["ntasks_per_node"].widget.value = "-3"
"""
ERROR_BOXES = {"en": {"Nodes", "Max CPUs per task", "Walltime", "Ranks", "Ranks per node"},
               "ja": {"ノード数", "タスクあたりの最大 CPU", "制限時間", "ランク数", "ノードあたりのランク数"}}

# Every error or warning said about one box: where it sits and how it reads. It starts at the
# input's left edge right under the input (not 300 px to the right, not beside the caption),
# its lines are text lines (not a widget row's 28 px each), it ends inside the wizard, a
# --flag, a `code` span or a quoted 「box name」 stays on one line, and a line never starts
# inside a word ("ありませ/ん").
FIELD_ERRORS = """(lang) => {
  const w = document.querySelector('.ari-wizard');
  const edge = w.getBoundingClientRect().right;
  const visible = (el) => el && el.offsetParent !== null;
  const INPUT = 'input:not([type=checkbox]), select, .jupyter-widget-tagsinput, .widget-tagsinput';
  const words = new Intl.Segmenter(lang, { granularity: 'word' });
  const tops = (range) => {
    const out = [];
    for (const r of range.getClientRects()) {
      if (r.width > 0 && !out.some(t => Math.abs(t - r.top) < 3)) { out.push(r.top); }
    }
    return out.sort((a, b) => a - b);
  };
  const found = {};
  for (const msg of w.querySelectorAll('.ari-msg-error, .ari-msg-warning')) {
    if (!visible(msg)) { continue; }
    let row = msg.parentElement;  // the box it is about: the nearest one holding an input
    while (row && row !== w && !row.querySelector(INPUT)) { row = row.parentElement; }
    if (!row || row === w || row.querySelectorAll(INPUT).length !== 1) { continue; }
    const input = row.querySelector(INPUT);
    if (!visible(input)) { continue; }
    const label = Array.from(row.querySelectorAll('.widget-label, .ari-field-label'))
      .find(l => visible(l) && l.textContent.trim());
    const name = label ? label.textContent.trim() : '?';
    const box = input.getBoundingClientRect();
    const whole = document.createRange();
    whole.selectNodeContents(msg);
    const rects = Array.from(whole.getClientRects()).filter(r => r.width > 0);
    const left = Math.min(...rects.map(r => r.left));
    const right = Math.max(...rects.map(r => r.right), msg.getBoundingClientRect().right);
    const top = Math.min(...rects.map(r => r.top));
    const size = parseFloat(getComputedStyle(msg).fontSize);
    const lines = tops(whole);
    const wrong = [];
    if (Math.abs(left - box.left) > 2) { wrong.push(`starts ${Math.round(left - box.left)} px from its input's left edge`); }
    if (top < box.bottom - 1 || top > box.bottom + 10) { wrong.push(`starts ${Math.round(top - box.bottom)} px below its input`); }
    if (right > edge + 1) { wrong.push(`ends ${Math.round(right - edge)} px past the wizard's edge`); }
    const height = msg.getBoundingClientRect().height;
    if (height > lines.length * size * 1.7 + 2) { wrong.push(`${lines.length} line(s) in ${Math.round(height)} px`); }
    for (let i = 1; i < lines.length; i++) {
      if (lines[i] - lines[i - 1] > size * 1.7) { wrong.push(`line spacing ${Math.round(lines[i] - lines[i - 1])} px`); break; }
    }
    const walker = document.createTreeWalker(msg, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.data;
      const pieces = node.parentElement.closest('code') ? [[0, text.length]]
        : Array.from(text.matchAll(/--[A-Za-z][\\w-]*|「[^「」]{1,24}」|“[^“”]{1,24}”/g),
                     m => [m.index, m.index + m[0].length]);
      for (const [start, end] of pieces) {
        const range = document.createRange();
        range.setStart(node, start);
        range.setEnd(node, end);
        if (tops(range).length > 1) { wrong.push(`"${text.slice(start, end)}" split across lines`); }
      }
      const bounds = new Set([0, text.length]);
      for (const s of words.segment(text)) { bounds.add(s.index); bounds.add(s.index + s.segment.length); }
      let last = null;
      for (let i = 0; i < text.length; i++) {
        if (/\\s/.test(text[i])) { continue; }
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect) { continue; }
        if (last !== null && rect.top > last + 2 && !bounds.has(i)) {
          wrong.push('breaks mid-word: ' + text.slice(Math.max(0, i - 8), i) + '/' + text.slice(i, i + 8));
        }
        last = rect.top;
      }
    }
    found[name] = (found[name] || []).concat(wrong);
  }
  return found;
}"""


def test_step_3_field_errors_sit_under_their_box(lab, page, shots):
    """A new user's wrong values in step 3, Light and Dark, en and ja, at a wide and a narrow
    notebook: each box's error is under that box, in text lines, inside the wizard."""
    _notebook(lab.root_dir / "errors.ipynb", [SETUP, ERRORS])
    page.set_viewport_size({"width": 1400, "height": 900})
    _open_and_run(page, lab, "errors.ipynb")
    _step(page, 2)
    wrong, missing = {}, {}
    for theme in THEMES:
        set_theme(page, theme)
        for lang in SHOT_LANGS:
            _set_lang(page, lang)
            for width in (1400, 1000):
                page.set_viewport_size({"width": width, "height": 900})
                page.wait_for_timeout(400)
                found = page.evaluate(FIELD_ERRORS, lang)
                key = f"{theme}/{lang}/{width}"
                if ERROR_BOXES[lang] - set(found):
                    missing[key] = sorted(ERROR_BOXES[lang] - set(found))
                bad = {name: problems for name, problems in found.items() if problems}
                if bad:
                    wrong[key] = bad
            _shot(page, shots, f"03-profile-errors-{lang}-{theme}")
    set_theme(page, "light")
    assert not missing, json.dumps(missing, indent=1, ensure_ascii=False)
    assert not wrong, json.dumps(wrong, indent=1, ensure_ascii=False)
    assert_no_console_errors(page)


# Every label, title and caption of step 3 (Advanced open), for one that runs past its box or
# past the wizard's right edge.
CUT_TEXT = """() => {
  const wizard = document.querySelector('.ari-wizard').getBoundingClientRect();
  const out = [];
  for (const el of document.querySelectorAll('.ari-wizard label, .ari-wizard .widget-label,'
      + ' .ari-wizard .widget-label-basic, .ari-wizard .jupyter-widget-Collapse-header,'
      + ' .ari-wizard .ari-field-caption')) {
    if (el.offsetParent === null) { continue; }
    const right = el.getBoundingClientRect().right;
    if (el.scrollWidth > el.clientWidth + 1 || right > wizard.right + 1) {
      out.push(el.textContent.trim().slice(0, 50) + ` (${el.scrollWidth}/${el.clientWidth} px,`
               + ` right ${Math.round(right)} > ${Math.round(wizard.right)})`);
    }
  }
  return out;
}"""

OPEN_ADVANCED = "wizard.go(2); wizard.profile_panel.advanced.selected_index = 0"


def test_a_narrow_notebook_cuts_no_label_of_step_3(lab, page):
    """A notebook beside the file browser in a small window (the wizard about 470 px wide):
    the Advanced title and the checkbox labels wrap, no text runs past the wizard's edge, and
    a caption that no longer fits beside its box goes under it."""
    _notebook(lab.root_dir / "narrow.ipynb", [SETUP, OPEN_ADVANCED])
    page.set_viewport_size({"width": 1400, "height": 900})
    _open_and_run(page, lab, "narrow.ipynb")
    cut = {}
    for lang in SHOT_LANGS:
        _set_lang(page, lang)
        page.set_viewport_size({"width": 900, "height": 1400})
        page.wait_for_timeout(600)
        assert _wizard(page).bounding_box()["width"] < 520
        found = page.evaluate(CUT_TEXT)
        if found:
            cut[lang] = found
        page.set_viewport_size({"width": 1400, "height": 900})
    assert not cut, json.dumps(cut, indent=1, ensure_ascii=False)
    assert_no_console_errors(page)


FREEZE = """\
import os, subprocess
subprocess.Popen(["sh", "-c", f"sleep 1; kill -STOP {os.getpid()}; sleep 6; kill -CONT {os.getpid()}"])
"""
"""Stops the kernel's process for 6 s, a second after the cell ran: a kernel that cannot answer."""


def test_a_step_button_shows_its_step_while_the_kernel_cannot_answer(lab, page):
    """A step already shown once comes back at the click, before the kernel hears of it (the
    page's own mark of the active step decides, wizard.css): with the kernel's process stopped,
    step 3 shows and step 1 hides at once, and the kernel, running again, agrees."""
    _notebook(lab.root_dir / "busy.ipynb", [SETUP, FREEZE])
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(lab.url("/lab/tree/busy.ipynb?reset"))
    page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget "
                           "&& window.jupyterapp.shell.currentWidget.sessionContext?.session?.kernel",
                           timeout=60_000)
    _run_cell(page, 0)
    page.wait_for_selector(".ari-wizard .ari-alloc-facts", timeout=60_000)
    for index in (2, 0):  # step 3 built, then back on step 1
        _step(page, index)
    sbatch = _wizard(page).locator(".ari-sbatch-line").first
    facts = _wizard(page).locator(".ari-alloc-facts").first
    assert facts.is_visible() and not sbatch.is_visible()
    _run_cell(page, 1)
    page.wait_for_timeout(2000)  # the kernel stopped a second ago, for 6 s
    frozen = time.monotonic()
    _wizard(page).locator(".ari-steps button").nth(2).click()
    sbatch.wait_for(state="visible", timeout=1500)
    facts.wait_for(state="hidden", timeout=1500)
    assert time.monotonic() - frozen < 3.5  # all this while the kernel was stopped
    page.wait_for_timeout(6000)  # the kernel runs again and hears of the click
    page.wait_for_timeout(1000)  # the kernel's own show and hide, after the click reached it
    assert sbatch.is_visible() and not facts.is_visible()
    assert _wizard(page).locator(".ari-steps button.mod-active").inner_text().startswith("3.")
    assert_no_console_errors(page)
