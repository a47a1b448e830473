"""All wizard styling lives in wizard.css, on JupyterLab's theme variables."""
from __future__ import annotations
from repo_paths import REPO

import re

import pytest

WIDGETS = REPO / "ari_jupyter" / "widgets"
HEX = re.compile(r"#[0-9a-fA-F]{3,8}\b")
INLINE_STYLE = re.compile(r"(?<![\w])style=[\"']")  # an HTML attribute, not button_style=


@pytest.mark.parametrize("path", sorted(WIDGETS.glob("*.py")), ids=lambda p: p.name)
def test_no_inline_style_or_colour_in_widget_code(path):
    text = path.read_text(encoding="utf-8")
    assert not INLINE_STYLE.findall(text), "inline style: move it to wizard.css"
    assert not HEX.findall(text), "hard-coded colour: use a class of wizard.css"


def test_stylesheet_is_scoped_and_themed():
    css = (WIDGETS / "wizard.css").read_text(encoding="utf-8")
    selectors = [s.strip() for block in re.findall(r"([^{}]+)\{", re.sub(r"/\*.*?\*/", "", css, flags=re.S))
                 for s in block.split(",")]
    assert selectors and all(".ari-wizard" in s for s in selectors), \
        [s for s in selectors if ".ari-wizard" not in s]
    assert "var(--jp-layout-color2" in css and "data-jp-theme-light='false'" in css
    assert "</style" not in css.lower()  # the sheet is sent inside a style element


def test_wizard_carries_its_stylesheet_once():
    from ari_jupyter import Wizard

    wizard = Wizard(site="rccs-cloud", lang="en", run_probes=False)
    sheets = []
    for index in range(5):
        wizard.go(index)
        sheets += [w for w in _walk(wizard) if "<style>" in str(getattr(w, "value", ""))]
    sheets = list({id(w): w for w in sheets}.values())
    assert sheets == [wizard.header] and wizard.header.value.count("<style>") == 1
    assert "pre.ari-pre" in wizard.header.value
    wizard.language.value = "ja"  # the header is rendered again: still one sheet
    assert wizard.header.value.count("<style>") == 1


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from _walk(child)


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_every_tag_input_says_what_to_type(lang):
    import ipywidgets as widgets

    from ari_jupyter import Wizard

    wizard = Wizard(site="rccs-cloud", lang=lang, run_probes=False)
    tags = []
    for index in range(5):
        wizard.go(index)  # only the step shown is in the wizard's tree
        tags += [w for w in _walk(wizard) if isinstance(w, widgets.TagsInput)]
    assert len(tags) >= 5  # metrics, modules and the profile's list keys
    assert all(w.placeholder.strip("\u200b ") for w in tags), [w.placeholder for w in tags]
