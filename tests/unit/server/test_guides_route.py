"""GET /ari-jupyter/guides/<file>.md: the guides shipped in the package, served by a real
``jupyter server`` (the wizard's step links and the lab's Help menu open them)."""
from __future__ import annotations

import re

import pytest

from e2e.jupyter_process import http_get, start_jupyter

from ari_jupyter.base.guides import GUIDES, GUIDES_DIR, ROUTE, guide_file


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_jupyter(tmp_path_factory.mktemp("guides"))
    yield server
    server.stop()


def page(server, name: str, token: bool = True) -> tuple[int, str]:
    status, body = http_get(server.url(f"/{ROUTE}/{name}", token=token))
    return status, body.decode("utf-8", "replace")


@pytest.mark.parametrize("name, lang, steps, words", [
    ("wizard.md", "en", 5, "Partition &amp; profile"),
    ("wizard.ja.md", "ja", 5, "パーティションとプロファイル"),
    ("wizard.zh.md", "zh", 5, "分区与执行配置"),
    ("runs.zh.md", "zh", 0, "阶段"),
    ("admin.md", "en", 0, "Shared workspaces"),
])
def test_each_guide_is_a_page_with_a_section_per_step(server, name, lang, steps, words):
    status, text = page(server, name)
    assert status == 200, text[:300]
    assert f'<html lang="{lang}">' in text
    assert words in text
    ids = re.findall(r'<h2 id="(step-\d)"', text)
    assert ids == [f"step-{i}" for i in range(1, steps + 1)]


@pytest.mark.parametrize("name", [
    "architecture.md",        # a docs/ page that is not shipped
    "..%2Fbase%2Fguides.py",  # out of the folder
    "wizard.fr.md",           # no such language
    "wizard.md.bak",
])
def test_only_the_shipped_guides_are_served(server, name):
    status, text = page(server, name)
    assert status == 404
    assert "import" not in text


def test_needs_the_token(server):
    status, text = page(server, "wizard.md", token=False)
    assert status in (401, 403) or "Partition" not in text


def test_raw_html_in_a_guide_is_shown_as_text():
    from ari_jupyter.server.guides_handlers import render_guide

    out = render_guide("# T\n\n<script>alert(1)</script>\n\n![a screenshot](x.png)\n", "en")
    assert "<script>alert" not in out
    assert '[a screenshot]' in out and "<img" not in out


@pytest.mark.parametrize("name, lang, expected", [
    ("wizard", "ja", "wizard.ja.md"),
    ("wizard", "zh", "wizard.zh.md"),
    ("runs", "zh", "runs.zh.md"),
    ("admin", "ja", "admin.md"),       # no translation: English
    ("wizard", "en", "wizard.md"),
])
def test_a_guide_in_a_language_falls_back_to_english(name, lang, expected):
    assert guide_file(name, lang) == expected


@pytest.mark.parametrize("name", GUIDES)
def test_every_guide_is_installed_with_the_package(name):
    assert (GUIDES_DIR / f"{name}.md").is_file()


@pytest.mark.parametrize("asked, file", [
    ("wizard?lang=ja", "wizard.ja.md"),
    ("runs?lang=zh", "runs.zh.md"),
    ("admin?lang=ja", "admin.md"),
    ("teaching?lang=zh_CN", "teaching.zh.md"),
    ("wizard", "wizard.md"),
])
def test_a_guide_by_name_redirects_to_its_file_in_the_language(server, asked, file):
    import urllib.request

    class Stop(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(Stop)
    with pytest.raises(urllib.error.HTTPError) as answer:
        opener.open(server.url(f"/{ROUTE}/{asked}"), timeout=10)
    assert answer.value.code == 302
    assert answer.value.headers["Location"].split("?")[0].endswith(f"/{ROUTE}/{file}")
