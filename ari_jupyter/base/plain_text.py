"""Program output as text to show: without the terminal's colour and cursor codes.

Tools colour their output when they think a terminal reads it (ARI's CLI prints its usage and
errors through rich), and ``ari.log`` lines may carry the codes too. Shown in the wizard, the
Runs panel or a probe's evidence they would read as ``[1;33mUsage:[0m``; matched against
("no such option") they would split the words.
"""
from __future__ import annotations

import re

TERMINAL_CODES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
"""CSI sequences (colours, cursor moves) and OSC sequences (titles, hyperlinks)."""


def plain(text: str) -> str:
    """``text`` without terminal control sequences."""
    return TERMINAL_CODES.sub("", text) if "\x1b" in text else text
