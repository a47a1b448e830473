"""What the status bar's allocation item and the extension's settings show a person: no
Markdown marks in a tooltip, readable choices in the Settings Editor."""
from __future__ import annotations

import os

import pytest

from .conftest import LAB_ARGS, LAB_SETTINGS, assert_no_console_errors, lab_env, require_browser
from .jupyter_process import start_jupyter
from .lab_helpers import STATUS_ITEM, execute_command

pytestmark = pytest.mark.e2e

# squeue's answer for the time left (%L) of a job that ends within the hour: the probe warns
# that an `ari run` started here stops with it. Anything else squeue is asked: an empty queue.
SHORT_SQUEUE = '#!/bin/sh\ncase "$*" in *%L*) echo "12:00" ;; esac\nexit 0\n'
ALLOCATION = {"SLURM_JOB_ID": "1", "SLURM_JOBID": "1", "SLURM_JOB_NAME": "interactive",
              "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_NODELIST": "n[1-2]", "SLURM_JOB_NUM_NODES": "2",
              "SLURM_NNODES": "2", "SLURM_JOB_PARTITION": "small", "SLURM_NTASKS": "4",
              "SLURM_TASKS_PER_NODE": "3,1", "SLURM_JOB_CPUS_PER_NODE": "3,1"}


def _lab_in_a_short_allocation(tmp, locale: str):
    from .test_lab_conventions_e2e import _has_language_pack

    if locale != "en" and not _has_language_pack(locale):
        pytest.skip(f"the JupyterLab language pack {locale} is not installed")
    bin_dir = tmp / "fakebin"
    bin_dir.mkdir()
    (bin_dir / "squeue").write_text(SHORT_SQUEUE)
    (bin_dir / "squeue").chmod(0o755)
    settings = dict(LAB_SETTINGS)
    if locale != "en":
        settings["@jupyterlab/translation-extension/plugin"] = {"locale": locale}
    env = lab_env(tmp, {**ALLOCATION, "LANG": "C.UTF-8"})
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return start_jupyter(tmp, app="lab", env=env, settings=settings, args=LAB_ARGS)


@pytest.mark.parametrize("locale, expected", [
    ("en", "time left: job 1 ends in 12:00 (12 min): an “ari run” started here stops with it"),
    ("ja_JP", "残り時間: ジョブ 1 は残り 12:00（12 分）で終了します。ここで始めた「ari run」も一緒に止まります"),
    ("zh_CN", "剩余时间：作业 1 将在 12:00（12 分钟）后结束：在这里启动的 “ari run” 会随之停止"),
])
def test_the_time_left_tooltip_quotes_code_instead_of_showing_backticks(tmp_path, page, locale,
                                                                        expected):
    require_browser()
    server = _lab_in_a_short_allocation(tmp_path, locale)
    try:
        page.goto(server.url("/lab?reset"))
        item = page.locator(f"{STATUS_ITEM}:visible")
        item.wait_for(timeout=60_000)
        page.wait_for_function("sel => (document.querySelector(sel)?.title || '').includes('12:00')",
                               arg=STATUS_ITEM, timeout=30_000)
        title = item.get_attribute("title")
        assert "`" not in title, title
        assert title.splitlines()[-1] == expected
        assert_no_console_errors(page)
    finally:
        server.stop()


SETTINGS_PLUGIN = "ari-jupyter-labextension:plugin"


SETTINGS_WORDS = {
    # locale: (the plugin's name, the language setting's title, its choices)
    "en": ("ARI multi-node setup", "Wizard language",
           ["Follow JupyterLab (Settings > Language)", "English", "日本語", "中文"]),
    "ja_JP": ("ARI マルチノード設定", "ウィザードの言語",
              ["JupyterLab に合わせる（設定 > 言語）", "English", "日本語", "中文"]),
    "zh_CN": ("ARI 多节点设置", "向导语言",
              ["跟随 JupyterLab（设置 > 语言）", "English", "日本語", "中文"]),
}


@pytest.mark.parametrize("locale", list(SETTINGS_WORDS))
def test_the_wizard_language_setting_offers_readable_choices(tmp_path, page, locale):
    """Settings Editor → ARI multi-node setup, in the lab's language: the plugin's name, each
    setting's title and the "Wizard language" choices are named, none blank or a bare code,
    and choosing one stores its code."""
    from .test_lab_conventions_e2e import _has_language_pack

    require_browser()
    if locale != "en" and not _has_language_pack(locale):
        pytest.skip(f"the JupyterLab language pack {locale} is not installed")
    name, title, choices = SETTINGS_WORDS[locale]
    settings = dict(LAB_SETTINGS)
    if locale != "en":
        settings["@jupyterlab/translation-extension/plugin"] = {"locale": locale}
    server = start_jupyter(tmp_path, app="lab", env=lab_env(tmp_path), settings=settings,
                           args=LAB_ARGS)
    try:
        page.goto(server.url("/lab?reset"))
        page.wait_for_selector(f".jp-LauncherCard:has-text('{name}')", timeout=60_000)
        execute_command(page, "settingeditor:open", {"query": name})
        page.locator(".jp-PluginList-entry", has_text=name).first.click()
        select = page.locator(".jp-SettingsPanel select[id$='wizardLanguage']")
        select.wait_for(timeout=30_000)
        panel = page.locator(".jp-SettingsPanel").first
        assert title in panel.inner_text()
        options = select.locator("option").all_inner_texts()
        assert options == choices
        select.select_option(label="日本語")
        page.wait_for_function(
            """async id => (await window.jupyterapp.serviceManager.settings.fetch(id))
                 .raw.includes('"wizardLanguage": "ja"')""", arg=SETTINGS_PLUGIN, timeout=15_000)
        page.screenshot(path=f"/tmp/runs-shots/settings-wizard-language-{locale}.png")
        assert_no_console_errors(page)
    finally:
        server.stop()
