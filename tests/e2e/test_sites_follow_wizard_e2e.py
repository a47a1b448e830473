"""The status bar follows the wizard's site, not the server's demo site: a lab configured with
rccs-cloud, a wizard on sx40, the bar says sx40; the wizard switches to rccs-cloud, the bar
follows, and the Runs panel, on rccs-cloud's recorded run, names its search nodes so. In English
Light and Japanese Dark, with a picture of each (``ARI_SCREENSHOTS_DIR``)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import LAB_ARGS, LAB_SETTINGS, assert_no_console_errors, lab_env, require_browser
from .jupyter_process import start_jupyter
from .lab_helpers import STATUS_ITEM, execute_command, set_theme
from .test_first_use_e2e import _open
from .test_wizard_look_e2e import _run_cell, _step, _wizard

pytestmark = pytest.mark.e2e

BAR_SAYS = """([selector, site]) => {
  const item = Array.from(document.querySelectorAll(selector)).find(el => el.offsetParent !== null);
  return !!item && item.textContent.includes(site);
}"""


def _bar(page):
    return page.locator(f"{STATUS_ITEM}:visible")


def _lab(tmp_path, settings=LAB_SETTINGS):
    """A lab outside any allocation whose configured demo site is rccs-cloud, and where its
    pictures go."""
    require_browser()
    env = lab_env(tmp_path, {"ARI_JUPYTER_DEMO_SITE": "rccs-cloud", "LANG": "C.UTF-8"})
    server = start_jupyter(tmp_path, app="lab", env=env, settings=settings, args=LAB_ARGS)
    shots = Path(os.environ.get("ARI_SCREENSHOTS_DIR") or tmp_path / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    return server, shots


def _wizard_on_sx40(lang: str) -> str:
    return f'from ari_jupyter import Wizard\nwizard = Wizard(site="sx40", lang="{lang}")\nwizard'


@pytest.mark.parametrize("lang, locale, theme", [("en", "en", "light"), ("ja", "ja_JP", "dark")])
def test_the_status_bar_follows_the_wizards_site(tmp_path, page, lang, locale, theme):
    from .test_lab_conventions_e2e import _has_language_pack

    settings = dict(LAB_SETTINGS)
    translated = locale != "en" and _has_language_pack(locale)
    if translated:
        settings["@jupyterlab/translation-extension/plugin"] = {"locale": locale}
    server, shots = _lab(tmp_path, settings)
    try:
        _open(page, server, "sites.ipynb", [_wizard_on_sx40(lang), "wizard.use_site('rccs-cloud')"])
        page.wait_for_function(BAR_SAYS, arg=[STATUS_ITEM, "sx40"], timeout=30_000)
        said = _bar(page).inner_text()
        assert "sx40" in said and "rccs-cloud" not in said, said  # not the server's rccs-cloud
        assert "ari-mod-demo" in _bar(page).get_attribute("class")
        set_theme(page, theme)
        page.wait_for_timeout(500)
        page.screenshot(path=str(shots / f"sites-bar-follows-wizard-sx40-{lang}-{theme}.png"))
        _run_cell(page, 1)  # the wizard switches to rccs-cloud: the bar follows
        page.wait_for_function(BAR_SAYS, arg=[STATUS_ITEM, "rccs-cloud"], timeout=30_000)
        assert "sx40" not in _bar(page).inner_text()
        page.screenshot(path=str(shots / f"sites-bar-follows-wizard-rccs-{lang}-{theme}.png"))
        execute_command(page, "ari-jupyter:runs")
        page.wait_for_selector("#ari-jupyter-runs[data-view='list'] .ari-RunsPanel-row", timeout=60_000)
        word = "探索ノード" if translated else "Search nodes"
        assert page.locator("#ari-jupyter-runs th").nth(1).inner_text() == word
        assert page.locator("#ari-jupyter-runs").inner_text().count(word) >= 2  # column and legend
        page.wait_for_timeout(300)
        page.screenshot(path=str(shots / f"runs-panel-search-nodes-{lang}-{theme}.png"))
        assert_no_console_errors(page)
    finally:
        server.stop()


@pytest.mark.parametrize("lang, theme", [("en", "light"), ("ja", "dark")])
def test_step_3_says_where_it_differs_from_the_setup_guide(tmp_path, page, lang, theme):
    """sx40, step 3: the Nodes and modules lines on the setup guide, each with its link, and the
    preview's note on the node count in the words the checklist uses."""
    server, shots = _lab(tmp_path)
    try:
        _open(page, server, "seed.ipynb", [_wizard_on_sx40(lang)])
        _step(page, 2)
        nodes = _wizard(page).locator(".ari-seed-note[data-spot='nodes']")
        nodes.wait_for(timeout=30_000)
        assert "nodes=<allocation>" in nodes.inner_text()
        link = nodes.locator("a")
        assert link.get_attribute("href").endswith(f"wizard{'.ja' if lang == 'ja' else ''}.md#seed-nodes")
        assert _wizard(page).locator(".ari-seed-note[data-spot='modules']").is_visible()
        assert "--nodes" in _wizard(page).locator(".ari-no-workflow").inner_text()
        set_theme(page, theme)
        nodes.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        page.set_viewport_size({"width": 1400, "height": 1400})
        _wizard(page).screenshot(path=str(shots / f"seed-notes-step3-{lang}-{theme}.png"))
        assert_no_console_errors(page)
    finally:
        server.stop()
