"""Plain-text columns that line up in a terminal whatever the language.

A CJK character takes two terminal columns (east-asian width W or F), so ``str.ljust`` would
misalign ``スキップ`` against ``OK``; every table the commands print pads with these.
"""
from __future__ import annotations

import unicodedata


def columns(text: str) -> int:
    """Terminal columns of ``text``."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, width: int) -> str:
    """``text`` left-justified to ``width`` terminal columns, and at least one space after it."""
    return text + " " * max(1, width - columns(text))
