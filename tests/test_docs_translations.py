"""The translated pages (docs/<page>.<lang>.md: the teacher's guide in Japanese and Chinese, the
wizard's and the Runs panel's guides in Japanese and Chinese) keep the English page's shape: the same
sections, table rows, markers and commands, and no English prose left. The commands differ
only in naming the translated lessons (notebooks/teaching/<lang>/), the pictures only in
showing the wizard in that language (screenshots/<step>-<lang>-<theme>.png)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
TRANSLATED = [("teaching", "ja"), ("teaching", "zh"), ("wizard", "ja"), ("wizard", "zh"), ("runs", "ja"),
              ("runs", "zh")]
IMAGE = re.compile(r"\]\((screenshots/[^)]+)\)")
FENCE = re.compile(r"^```[^\n]*\n.*?^```$", re.S | re.M)


def _shape(text: str) -> dict:
    without_code = FENCE.sub("", text)
    lines = without_code.splitlines()
    return {
        "heading levels": [len(line) - len(line.lstrip("#")) for line in lines if line.startswith("#")],
        "table rows": [line.count("|") for line in lines if line.startswith("|")],
        "markers": re.findall(r"<!--.*?-->", text),
        "code": FENCE.findall(text),
        "images": IMAGE.findall(text),
    }


@pytest.mark.parametrize("page, lang", TRANSLATED, ids=lambda v: v)
def test_the_translated_page_keeps_the_english_shape(page, lang):
    english = _shape((DOCS / f"{page}.md").read_text(encoding="utf-8"))
    translated_text = (DOCS / f"{page}.{lang}.md").read_text(encoding="utf-8")
    translated = _shape(translated_text)
    for key in ("heading levels", "table rows", "markers"):
        assert translated[key] == english[key], key
    ours = [block.replace(f"notebooks/teaching/{lang}/", "notebooks/teaching/")
            .replace(f"--lessons --lang {lang}", "--lessons --lang en")
            for block in translated["code"]]
    assert ours == english["code"]
    if page == "teaching":
        assert any(f"notebooks/teaching/{lang}/" in block for block in translated["code"])
    for theirs, mine in zip(english["images"], translated["images"], strict=True):
        assert mine in (theirs, theirs.replace("-en-", f"-{lang}-")), mine
        assert (DOCS / mine).is_file(), mine
    prose = FENCE.sub("", translated_text)
    prose = re.sub(r"`[^`]*`|<!--.*?-->|\*\*", "", prose)
    english_words = re.findall(r"\b[a-z]{4,}\b(?: [a-z]{3,}\b){2,}", prose)
    assert english_words == [], english_words  # three English words in a row: untranslated
