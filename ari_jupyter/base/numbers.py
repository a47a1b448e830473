"""Whole numbers read from text a user, a file or a command gave: ``count_of`` is the one test.

``str.isdigit`` is true for ``²`` (which ``int`` refuses) and Python refuses ``int`` of more
than 4,300 digits: a value from a .env, squeue or a pid file that looked like a number raised
ValueError deep in a reader. Here a number is ASCII digits, at most ``MAX_DIGITS`` of them.
"""
from __future__ import annotations

MAX_DIGITS = 18
"""Digits of the largest count, id or size taken (a signed 64-bit integer holds 18 whole)."""


def count_of(text: object, *, max_digits: int = MAX_DIGITS) -> int | None:
    """``text`` (surrounding blanks ignored) as a whole number >= 0, or None when it is not
    ASCII digits only or has more than ``max_digits`` of them."""
    raw = str(text).strip()
    if not raw or len(raw) > max_digits or not (raw.isascii() and raw.isdigit()):
        return None
    return int(raw)


def digits_key(digits: str) -> tuple[int, str]:
    """A sort key that orders strings of ASCII digits as numbers, however long (no ``int``)."""
    significant = digits.lstrip("0") or "0"
    return (len(significant), significant)
