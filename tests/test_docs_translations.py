"""The teacher's guide in Japanese and Chinese (docs/teaching.{ja,zh}.md) keeps the English
guide's shape: the same sections, table rows and commands, the commands differing only in
naming the translated lessons (notebooks/teaching/<lang>/), and no English prose left."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ENGLISH = REPO / "docs" / "teaching.md"
FENCE = re.compile(r"^```[^\n]*\n.*?^```$", re.S | re.M)


def _shape(text: str) -> dict:
    without_code = FENCE.sub("", text)
    lines = without_code.splitlines()
    return {
        "heading levels": [len(line) - len(line.lstrip("#")) for line in lines if line.startswith("#")],
        "table rows": [line.count("|") for line in lines if line.startswith("|")],
        "markers": re.findall(r"<!--.*?-->", text),
        "code": FENCE.findall(text),
    }


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_the_translated_guide_keeps_the_english_shape(lang):
    english = _shape(ENGLISH.read_text(encoding="utf-8"))
    translated_text = (REPO / "docs" / f"teaching.{lang}.md").read_text(encoding="utf-8")
    translated = _shape(translated_text)
    for key in ("heading levels", "table rows", "markers"):
        assert translated[key] == english[key], key
    ours = [block.replace(f"notebooks/teaching/{lang}/", "notebooks/teaching/")
            for block in translated["code"]]
    assert ours == english["code"]
    assert any(f"notebooks/teaching/{lang}/" in block for block in translated["code"])
    prose = FENCE.sub("", translated_text)
    prose = re.sub(r"`[^`]*`|<!--.*?-->|\*\*", "", prose)
    english_words = re.findall(r"\b[a-z]{4,}\b(?: [a-z]{3,}\b){2,}", prose)
    assert english_words == [], english_words  # three English words in a row: untranslated
