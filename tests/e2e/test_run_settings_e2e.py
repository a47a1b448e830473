"""Step 4's "Run settings" part in a real JupyterLab: shown, changed (simple and Advanced),
refused live with the fix naming the field, then written; pictured in Light and Dark, en and ja.

With ``ARI_SCREENSHOTS_DIR`` set the pictures are kept there (else under the test's tmp dir).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import assert_no_console_errors
from .lab_helpers import LAUNCHER_CARD, THEMES, open_lab, set_theme, wizard_button

pytestmark = pytest.mark.e2e


def _part(page):
    return page.locator(".ari-wizard .ari-run-settings").first


def _set_lang(page, lang: str) -> None:
    page.locator(".ari-wizard select").first.select_option(label={"en": "English", "ja": "日本語"}[lang])
    page.wait_for_timeout(700)


def test_run_settings_are_shown_changed_refused_and_written(lab, page, tmp_path):
    shots = Path(os.environ.get("ARI_SCREENSHOTS_DIR") or tmp_path / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    workspace = lab.root_dir / "ws-run-settings"
    open_lab(page, lab)
    page.click(LAUNCHER_CARD)
    page.wait_for_selector(".ari-wizard", timeout=60_000)
    wizard_button(page, "gres-cluster").click()
    page.wait_for_selector('.ari-wizard .ari-site:has-text("gres-cluster")')
    wizard_button(page, "Experiment & checkpoint").click()
    page.get_by_label("Title", exact=True).fill("Run settings in the browser")
    page.get_by_label("Research goal", exact=True).fill("Check that ARI's run settings are written.")
    tag_input = page.locator(".ari-wizard .jupyter-widget-tagsinput input").first
    tag_input.click()
    tag_input.type("GFlops")
    tag_input.press("Enter")
    page.get_by_label("Workspace", exact=True).fill(str(workspace))
    page.get_by_label("Workspace", exact=True).press("Enter")

    # simple first: backend, model, scope preset, stages; the key presence, never a value
    part = _part(page)
    part.scroll_into_view_if_needed()
    page.get_by_label("LLM backend", exact=True).select_option(label="anthropic")
    page.wait_for_selector('.ari-rs-key:has-text("ANTHROPIC_API_KEY")')
    page.get_by_label("Search scope", exact=True).select_option(label="Quick (up to 2.5 hours)")
    part.get_by_text("Review of the paper").wait_for()
    # Advanced: a negative budget is refused live, and the fix names the field
    part.get_by_text("Advanced", exact=True).click()
    max_nodes = page.get_by_label("Max search nodes", exact=True)
    max_nodes.fill("-1")
    max_nodes.press("Enter")
    page.wait_for_selector('.ari-run-settings .ari-finding[data-severity="error"]:has-text("Max search nodes")')
    write = page.get_by_role("button", name="Write checkpoint")
    # The finding and the button's state are separate widget updates: wait for the second too.
    page.wait_for_function("(b) => b.disabled", arg=write.element_handle(), timeout=30_000)
    for theme in THEMES:
        set_theme(page, theme)
        for lang in ("en", "ja"):
            _set_lang(page, lang)
            page.set_viewport_size({"width": 1400, "height": 1800})
            _part(page).screenshot(path=str(shots / f"run-settings-{lang}-{theme}.png"))
    set_theme(page, "light")
    _set_lang(page, "en")

    max_nodes.fill("40")
    max_nodes.press("Enter")
    page.wait_for_function("(b) => !b.disabled", arg=write.element_handle(), timeout=30_000)
    write.click()
    page.wait_for_selector(".ari-write-ok, .ari-confirm")
    if page.locator(".ari-confirm:visible").count():
        page.get_by_role("button", name="Write anyway").click()
    page.wait_for_selector(".ari-write-ok", timeout=30_000)
    (checkpoint,) = sorted((workspace / "checkpoints").iterdir())
    env = (checkpoint / ".env").read_text()
    for line in ("ARI_BACKEND=anthropic", "ARI_MODEL=claude-sonnet-4-5", "ARI_MAX_NODES=40",
                 "ARI_MAX_DEPTH=3", f"ARI_ENV_FILE={checkpoint}/bfts_env.sh"):
        assert line + "\n" in env, line
    assert (checkpoint / "bfts_env.sh").is_file()
    assert_no_console_errors(page)
