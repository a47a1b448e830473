"""The extension follows JupyterLab's conventions: its launcher card sits in its own HPC
section, its settings come from its schema, and the wizard speaks the language they name."""
from __future__ import annotations

import os

import pytest

from .conftest import LAB_ARGS, LAB_SETTINGS, assert_no_console_errors, lab_env, require_browser
from .jupyter_process import start_jupyter
from .lab_helpers import LAUNCHER_CARD

pytestmark = pytest.mark.e2e

PLUGIN = "ari-jupyter-labextension:plugin"


@pytest.fixture(scope="module")
def lab_ja(tmp_path_factory):
    """JupyterLab whose user settings ask the wizard for Japanese and hide the status item."""
    require_browser()
    tmp = tmp_path_factory.mktemp("lab-ja")
    settings = {**LAB_SETTINGS, "ari-jupyter-labextension/plugin": {
        "wizardLanguage": "ja", "statusBar": False, "refreshInterval": 60}}
    server = start_jupyter(tmp, app="lab", env=lab_env(tmp, {"LANG": "C.UTF-8"}),
                           settings=settings, args=LAB_ARGS)
    yield server
    server.stop()


def test_launcher_section_settings_schema_and_wizard_language(lab_ja, page):
    page.goto(lab_ja.url("/lab?reset"))
    page.wait_for_selector(LAUNCHER_CARD, timeout=60_000)
    section = page.locator(".jp-Launcher-section", has=page.locator(
        ".jp-Launcher-sectionTitle", has_text="HPC"))
    assert section.locator(LAUNCHER_CARD).count() == 1
    composite = page.evaluate("""async (id) => {
        const s = await window.jupyterapp.serviceManager.settings.fetch(id);
        return {schema: Object.keys(s.schema.properties).sort(), user: s.settings};
    }""", PLUGIN)
    assert composite["schema"] == ["refreshInterval", "statusBar", "wizardLanguage"]

    page.click(LAUNCHER_CARD)
    page.wait_for_selector(".ari-wizard", timeout=60_000)
    # the notebook names no language: the wizard takes the one the settings give
    page.wait_for_selector('.ari-wizard .ari-title:has-text("ARI マルチノード設定")', timeout=30_000)
    assert page.locator(".ari-wizard .ari-steps button").first.inner_text().startswith("1. アロケーション")
    # and the notebook the card placed explains itself in that language
    prose = page.locator(".jp-MarkdownCell .jp-RenderedMarkdown").first
    assert "このノートブックは" in prose.inner_text()
    assert_no_console_errors(page)


def _has_language_pack(locale: str) -> bool:
    from importlib.metadata import entry_points

    return any(ep.name == locale for ep in entry_points(group="jupyterlab.languagepack"))


@pytest.fixture(scope="module")
def lab_in_japanese(tmp_path_factory):
    """JupyterLab switched to 日本語 in Settings → Language; the wizard's own setting is empty."""
    require_browser()
    if not _has_language_pack("ja_JP"):
        reason = "the JupyterLab language pack ja_JP is not installed"
        if os.environ.get("ARI_E2E_REQUIRED") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    tmp = tmp_path_factory.mktemp("lab-lang-ja")
    settings = {**LAB_SETTINGS, "@jupyterlab/translation-extension/plugin": {"locale": "ja_JP"}}
    server = start_jupyter(tmp, app="lab", env=lab_env(tmp, {"LANG": "C.UTF-8"}),
                           settings=settings, args=LAB_ARGS)
    yield server
    server.stop()


def test_the_wizard_follows_settings_language(lab_in_japanese, page):
    card = '.jp-LauncherCard:has-text("ARI マルチノード設定")'  # ITranslator, domain ari_jupyter
    page.goto(lab_in_japanese.url("/lab?reset"))
    page.wait_for_selector(card, timeout=60_000)
    page.click(card)
    page.wait_for_selector('.ari-wizard .ari-title:has-text("ARI マルチノード設定")', timeout=90_000)
    assert page.locator(".ari-wizard .ari-steps button").first.inner_text().startswith("1. アロケーション")
    assert_no_console_errors(page)
