"""What a new user meets first, in a real JupyterLab on a demo site (rccs-cloud).

- the status bar: the demo site's recorded allocation, marked as a demo, in the lab's language;
- step 4 before anything is typed: required fields marked, no red error, Write disabled with
  one neutral line; a field's error once it is touched; the Run settings' scope in search nodes;
- step 3: the sbatch preview wraps only between arguments; sx40's default reads as GPUs
  without GRES;
- after Write: the hand-off checklist starts with the run, the optional dashboard last;
- every placeholder and label of every step whole in ja and zh at the look test's narrowest
  notebook.

With ``ARI_SCREENSHOTS_DIR`` set the pictures are kept there (else under the test's tmp dir).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import LAB_ARGS, LAB_SETTINGS, assert_no_console_errors, lab_env, require_browser
from .jupyter_process import start_jupyter
from .lab_helpers import STATUS_ITEM, THEMES, set_theme
from .test_wizard_look_e2e import _notebook, _run_cell, _set_lang, _shot, _step, _wizard

pytestmark = pytest.mark.e2e

SETUP = """\
from ari_jupyter import Wizard
wizard = Wizard(site="rccs-cloud", lang="en")
wizard"""

FILL = """\
p3, p4 = wizard.profile_panel, wizard.experiment_panel
p3.walltime.value = "00:30:00"
p4.title.value = "Sparse GEMM scaling"
p4.goal.value = "Measure how SpGEMM throughput scales from one to two nodes."
p4.metrics.value = ["GFlops"]
p4.run_id.value = "20261205120000_first_use"
"""

OPEN_ADVANCED = """\
wizard.profile_panel.advanced.selected_index = 0
"""

SX40 = "wizard.use_site('sx40')"


@pytest.fixture(scope="module")
def demo_lab(tmp_path_factory):
    """JupyterLab outside any allocation, with rccs-cloud as the configured demo site."""
    require_browser()
    tmp = tmp_path_factory.mktemp("first-use")
    env = lab_env(tmp, {"ARI_JUPYTER_DEMO_SITE": "rccs-cloud", "LANG": "C.UTF-8"})
    server = start_jupyter(tmp, app="lab", env=env, settings=LAB_SETTINGS, args=LAB_ARGS)
    yield server
    server.stop()


@pytest.fixture
def shots(tmp_path) -> Path:
    directory = Path(os.environ.get("ARI_SCREENSHOTS_DIR") or tmp_path / "screenshots")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def _open(page, lab, name: str, cells: list[str]) -> None:
    _notebook(lab.root_dir / name, cells)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(lab.url(f"/lab/tree/{name}?reset"))
    page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget "
                           "&& window.jupyterapp.shell.currentWidget.sessionContext?.session?.kernel",
                           timeout=60_000)
    page.evaluate("window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
    _run_cell(page, 0)
    page.wait_for_selector(".ari-wizard .ari-alloc-facts", timeout=60_000)


def _part_shot(page, locator, path: Path) -> None:
    locator.scroll_into_view_if_needed()
    page.wait_for_timeout(200)
    locator.screenshot(path=str(path))


# -- the status bar ---------------------------------------------------------------------------

@pytest.mark.parametrize("locale, demo", [("en", "Demo rccs-cloud"), ("ja_JP", "デモ rccs-cloud")])
def test_the_status_bar_shows_the_demo_allocation_marked_as_demo(tmp_path, page, shots, locale,
                                                                 demo):
    from .test_lab_conventions_e2e import _has_language_pack

    require_browser()
    if locale != "en" and not _has_language_pack(locale):
        pytest.skip(f"the JupyterLab language pack {locale} is not installed")
    settings = dict(LAB_SETTINGS)
    if locale != "en":
        settings["@jupyterlab/translation-extension/plugin"] = {"locale": locale}
    env = lab_env(tmp_path, {"ARI_JUPYTER_DEMO_SITE": "rccs-cloud", "LANG": "C.UTF-8"})
    server = start_jupyter(tmp_path, app="lab", env=env, settings=settings, args=LAB_ARGS)
    try:
        page.set_viewport_size({"width": 1400, "height": 900})
        page.goto(server.url("/lab?reset"))
        item = page.locator(f"{STATUS_ITEM}:visible")
        item.wait_for(timeout=60_000)
        text = item.inner_text()
        assert text.startswith(demo + " · SLURM 1027"), text
        assert "rc[01-02]" in text
        assert "ari-mod-demo" in item.get_attribute("class")
        title = item.get_attribute("title").splitlines()
        assert "rccs-cloud" in title[0] and ("demo" in title[0].lower() or "デモ" in title[0]), title
        for theme in THEMES:
            set_theme(page, theme)
            page.locator("#jp-main-statusbar").screenshot(
                path=str(shots / f"status-bar-demo-{locale.split('_')[0]}-{theme}.png"))
        assert_no_console_errors(page)
    finally:
        server.stop()


# -- step 4 untouched, then touched; the search scope in search nodes ----------------------------

UNTOUCHED = """() => {
  const panel = document.querySelector('.ari-wizard .ari-experiment') || document.querySelector('.ari-wizard');
  const red = Array.from(panel.querySelectorAll('.ari-sev-error, .ari-msg-error'))
    .filter(el => el.offsetParent !== null && el.textContent.trim()).map(el => el.textContent.trim());
  const marks = {};
  for (const label of panel.querySelectorAll('.ari-required > .widget-label, .ari-required-label')) {
    if (label.offsetParent === null) { continue; }
    marks[label.textContent.trim()] = getComputedStyle(label, '::after').content;
  }
  const waiting = Array.from(panel.querySelectorAll('.ari-write-awaiting'))
    .filter(el => el.offsetParent !== null).map(el => el.textContent.trim());
  return { red, marks, waiting };
}"""


def test_a_fresh_step_4_is_calm_until_a_field_is_touched(demo_lab, page, shots):
    _open(page, demo_lab, "calm.ipynb", [SETUP])
    _step(page, 3)
    page.wait_for_selector(".ari-wizard .ari-write-awaiting", timeout=30_000)
    for theme in THEMES:
        set_theme(page, theme)
        for lang in ("en", "ja"):
            _set_lang(page, lang)
            seen = page.evaluate(UNTOUCHED)
            assert seen["red"] == [], seen["red"]
            assert len(seen["waiting"]) == 1, seen["waiting"]
            words = {"en": ("Title", "Research goal", "Metrics"), "ja": ("タイトル", "研究目標", "評価指標")}[lang]
            for word in words:
                assert word in seen["waiting"][0] and word in seen["marks"], (word, seen)
            assert all(m.startswith('"*"') for m in seen["marks"].values()), seen["marks"]
            write = _wizard(page).locator("button:has-text('Write checkpoint'), button:has-text('チェックポイントを書き出す')")
            assert write.first.is_disabled()
            _shot(page, shots, f"first-use-step4-untouched-{lang}-{theme}")
            page.set_viewport_size({"width": 1400, "height": 900})
    set_theme(page, "light")
    _set_lang(page, "en")
    # the name a screen reader hears stays the word: the "*" is drawn, not read
    title = page.get_by_label("Title", exact=True)
    title.fill("x")
    title.press("Tab")
    title.fill("")
    title.press("Tab")
    page.wait_for_selector(".ari-wizard .ari-problem:has-text('The title is empty.')", timeout=15_000)
    assert page.locator(".ari-wizard .ari-problem:has-text('The research goal is empty.')").count() == 0
    assert "Research goal" in page.locator(".ari-wizard .ari-write-awaiting").first.inner_text()

    # the Run settings' search scope counts search nodes, in English as in Japanese
    scope = page.get_by_label("Search scope", exact=True)
    scope.scroll_into_view_if_needed()
    budget = _wizard(page).locator(".ari-run-settings").first.inner_text()
    assert "search nodes" in budget and "min per search node" in budget, budget
    assert " 30 nodes" not in budget
    _set_lang(page, "ja")
    budget = _wizard(page).locator(".ari-run-settings").first.inner_text()
    assert "探索ノード" in budget
    _set_lang(page, "en")
    assert_no_console_errors(page)


# -- step 3: the sbatch preview; sx40's default kind ---------------------------------------------

# Each piece of the command line (".ari-arg": a --flag with its value, a path) on one line,
# unless it is wider than the box by itself: then it breaks only after a "/" of its path.
SPLIT_ARGS = """() => {
  const out = [];
  const pre = document.querySelector('.ari-wizard .ari-sbatch-line pre');
  if (!pre || pre.offsetParent === null) { return ['no preview']; }
  const s = getComputedStyle(pre);
  const room = pre.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  const lines = new Set();
  for (const arg of pre.querySelectorAll('.ari-arg')) {
    const probe = document.createElement('span');
    probe.style.cssText = `position:absolute;visibility:hidden;white-space:pre;font:${s.font}`;
    probe.textContent = arg.textContent;
    document.body.appendChild(probe);
    const wide = probe.getBoundingClientRect().width > room + 1;
    probe.remove();
    const walker = document.createTreeWalker(arg, NodeFilter.SHOW_TEXT);
    let top = null, text = '';
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.data.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (rect) {
          lines.add(Math.round(rect.top));
          if (top !== null && rect.top > top + 2 && (!wide || !text.endsWith('/'))) {
            out.push(text + '|' + arg.textContent.slice(text.length));
          }
          top = rect.top;
        }
        text += node.data[i];
      }
    }
  }
  return { split: out, lines: lines.size, text: pre.textContent };
}"""


def test_the_sbatch_preview_wraps_between_arguments_and_sx40_reads_as_gpus_without_gres(
        demo_lab, page, shots):
    _open(page, demo_lab, "preview.ipynb", [SETUP, SX40])
    _step(page, 2)
    page.wait_for_selector(".ari-wizard .ari-sbatch-line pre .ari-arg", timeout=30_000)
    for width in (1400, 1000, 900):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(400)
        seen = page.evaluate(SPLIT_ARGS)
        assert seen["split"] == [], (width, seen)
        assert "--partition small" in seen["text"]
        if width == 900:
            assert seen["lines"] > 1, seen  # it does wrap, between pieces
    page.set_viewport_size({"width": 1400, "height": 900})
    for theme in THEMES:
        set_theme(page, theme)
        for lang in ("en", "ja"):
            _set_lang(page, lang)
            page.set_viewport_size({"width": 1000, "height": 900})
            _part_shot(page, _wizard(page).locator(".ari-sbatch-line").first,
                       shots / f"first-use-sbatch-{lang}-{theme}.png")
            page.set_viewport_size({"width": 1400, "height": 900})
    set_theme(page, "light")
    _set_lang(page, "en")

    # sx40: a GPU node without GRES; its default is gpu_single with no GPU request
    _run_cell(page, 1)
    page.wait_for_selector('.ari-wizard .ari-site:has-text("sx40")', timeout=30_000)
    _step(page, 2)
    selected = ("() => Array.from(document.querySelectorAll('.ari-wizard select'))"
                ".map(s => s.selectedIndex >= 0 ? s.options[s.selectedIndex].text.replace(/\\u00a0/g, ' ') : '')")
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(f"() => ({selected})().some(t => t.includes('GPUs without GRES'))",
                               timeout=60_000)
    except PlaywrightTimeout:
        pass
    chosen = page.evaluate(selected)
    assert "this site's default: gpu_single, GPUs without GRES" in chosen, chosen
    doc = _wizard(page).locator(".ari-preset-site-named").first
    assert "requests none" in doc.inner_text()
    for theme in THEMES:
        set_theme(page, theme)
        for lang in ("en", "ja"):
            _set_lang(page, lang)
            if lang == "ja":
                assert "GRES のない GPU" in doc.inner_text()
            _part_shot(page, doc.locator("xpath=ancestor::div[contains(@class,'widget-vbox')][1]"),
                       shots / f"first-use-sx40-preset-{lang}-{theme}.png")
    set_theme(page, "light")
    assert_no_console_errors(page)


# -- after Write: the run first, the optional dashboard last -------------------------------------

def test_the_handoff_checklist_lists_the_run_first_and_the_dashboard_last(demo_lab, page, shots):
    _open(page, demo_lab, "handoff.ipynb", [SETUP, FILL])
    _run_cell(page, 1)
    page.wait_for_timeout(800)
    _step(page, 3)
    write = _wizard(page).locator("button:has-text('Write checkpoint')")
    page.wait_for_function("(b) => !b.disabled", arg=write.element_handle(), timeout=30_000)
    write.click()
    page.wait_for_selector(".ari-wizard .ari-checklist li", timeout=30_000)
    order = page.evaluate("""() => Array.from(document.querySelectorAll('.ari-wizard .ari-checklist > li'))
        .map(li => li.className.replace('ari-checklist-', ''))""")
    assert order == ["handoff", "reproduce", "dashboard"], order
    first = page.locator(".ari-wizard .ari-checklist > li").first.inner_text()
    assert first.startswith("Run ARI from a second terminal"), first
    assert "(optional)" in page.locator(".ari-wizard .ari-checklist > li").last.inner_text()
    for theme in THEMES:
        set_theme(page, theme)
        for lang in ("en", "ja"):
            _set_lang(page, lang)
            _part_shot(page, _wizard(page).locator(".ari-checklist").first,
                       shots / f"first-use-checklist-{lang}-{theme}.png")
    set_theme(page, "light")
    assert_no_console_errors(page)


# -- ja and zh at the narrowest notebook: every placeholder and label whole -----------------------

# An input's placeholder wider than the room inside the box is cut ("06:00:0("); a label whose
# text runs past its box or past the wizard's right edge is cut too.
CUT = """() => {
  const wizard = document.querySelector('.ari-wizard').getBoundingClientRect();
  const out = [];
  const seen = [];
  for (const el of document.querySelectorAll('.ari-wizard input[placeholder]')) {
    if (el.offsetParent === null || !el.placeholder || el.value) { continue; }
    // the placeholder laid out in the box's font, against the room inside the box
    const s = getComputedStyle(el);
    const probe = document.createElement('span');
    probe.style.cssText = `position:absolute;visibility:hidden;white-space:pre;font:${s.font};` +
      `letter-spacing:${s.letterSpacing}`;
    probe.textContent = el.placeholder;
    document.body.appendChild(probe);
    const need = probe.getBoundingClientRect().width;
    probe.remove();
    const room = el.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
    seen.push(`${el.placeholder} ${Math.round(need)}/${Math.round(room)}`);
    if (need > room + 0.5) { out.push(`placeholder ${el.placeholder} (${Math.round(need)}/${Math.round(room)} px)`); }
  }
  for (const el of document.querySelectorAll('.ari-wizard label, .ari-wizard .widget-label,'
      + ' .ari-wizard .widget-label-basic, .ari-wizard .jupyter-widget-Collapse-header')) {
    if (el.offsetParent === null || !el.textContent.trim()) { continue; }
    const right = el.getBoundingClientRect().right;
    if (el.scrollWidth > el.clientWidth + 1 || right > wizard.right + 1) {
      out.push(`label ${el.textContent.trim().slice(0, 40)} (${el.scrollWidth}/${el.clientWidth} px)`);
    }
  }
  return { out, seen };
}"""

OPEN_EVERYTHING = """\
await wizard.wait()  # the site's checks answered: the defaults they bring are in
wizard.profile_panel.advanced.selected_index = 0
wizard.experiment_panel.run_settings.advanced.selected_index = 0
wizard.profile_panel.walltime.value = ""  # its placeholder shown: ARI's default
"""


def test_no_placeholder_or_label_is_cut_in_ja_and_zh_at_the_narrowest_notebook(demo_lab, page, shots):
    _open(page, demo_lab, "narrow-cjk.ipynb", [SETUP, OPEN_EVERYTHING])
    _run_cell(page, 1)
    page.wait_for_function("() => { const c = window.jupyterapp.shell.currentWidget.content.model.cells.get(1);"
                           " return c.sharedModel.execution_count !== null; }", timeout=60_000)
    page.wait_for_timeout(500)
    cut, placeholders = {}, []
    for lang in ("ja", "zh"):
        _set_lang(page, lang)
        page.set_viewport_size({"width": 900, "height": 1400})
        page.wait_for_timeout(600)
        assert _wizard(page).bounding_box()["width"] < 520
        for index in range(5):
            _step(page, index)
            found = page.evaluate(CUT)
            placeholders.extend(found["seen"])
            if found["out"]:
                cut[f"{lang}/{index + 1}"] = found["out"]
            if index == 2:
                height = _wizard(page).bounding_box()["height"]
                page.set_viewport_size({"width": 900, "height": max(1400, int(height) + 300)})
                page.wait_for_timeout(300)
                _wizard(page).screenshot(path=str(shots / f"first-use-narrow-step3-{lang}-light.png"))
                page.set_viewport_size({"width": 900, "height": 1400})
        page.set_viewport_size({"width": 1400, "height": 900})
    # the walltime box's placeholder (ARI's default time) was among those looked at
    assert any("06:00:00" in p for p in placeholders), placeholders
    assert not cut, json.dumps(cut, indent=1, ensure_ascii=False)
    assert_no_console_errors(page)


# -- the launcher card with a wizard in progress ---------------------------------------------------

FIRST_CODE_CELL = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.content.model.cells;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type === 'code') {
      return { index: i, count: cell.sharedModel.execution_count, path: panel.context.path };
    }
  }
  return null;
}"""


def test_the_launcher_card_brings_an_open_wizard_to_the_front_untouched(demo_lab, page, shots):
    from .lab_helpers import LAUNCHER_CARD, execute_command, open_lab, wizard_button

    page.set_viewport_size({"width": 1400, "height": 900})
    open_lab(page, demo_lab)
    page.click(LAUNCHER_CARD)
    page.wait_for_selector(".ari-wizard .ari-alloc-facts", timeout=60_000)
    wizard_button(page, "Experiment & checkpoint").click()
    title = page.get_by_label("Title", exact=True)
    title.fill("Typed before the card was clicked again")
    title.press("Tab")
    page.wait_for_timeout(500)
    before = page.evaluate(FIRST_CODE_CELL)
    assert before and before["count"] is not None, before

    execute_command(page, "launcher:create")
    page.wait_for_selector(f"{LAUNCHER_CARD}:visible", timeout=30_000)
    page.click(f"{LAUNCHER_CARD}:visible")
    page.wait_for_function("(path) => window.jupyterapp.shell.currentWidget?.context?.path === path",
                           arg=before["path"], timeout=30_000)
    page.wait_for_timeout(1500)  # a re-run would have started by now
    after = page.evaluate(FIRST_CODE_CELL)
    assert after["count"] == before["count"], (before, after)  # not run again
    assert page.get_by_label("Title", exact=True).input_value() == "Typed before the card was clicked again"

    # the cell run again by hand, in the same kernel: what was typed stays
    _run_cell(page, before["index"])
    page.wait_for_function("(n) => { const p = window.jupyterapp.shell.currentWidget;"
                           " return p.content.model.cells.get(p.content.activeCellIndex) !== null &&"
                           " Array.from(p.content.model.cells).some(c => c.sharedModel.execution_count > n); }",
                           arg=before["count"], timeout=60_000)
    page.wait_for_selector(".ari-wizard .ari-alloc-facts", timeout=60_000)
    wizard_button(page, "Experiment & checkpoint").click()
    page.wait_for_function("() => Array.from(document.querySelectorAll('.ari-wizard input'))"
                           ".some(i => i.value === 'Typed before the card was clicked again')", timeout=30_000)
    assert_no_console_errors(page)
