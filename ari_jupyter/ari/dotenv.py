"""The one reader of a checkpoint's ``.env``: what ARI's ``load_dotenv`` will see.

Lint, doctor, preview, check-handoff and the run-settings rules all read a ``.env`` here, so they
agree on comments, ``export`` prefixes and one pair of surrounding quotes.
"""
from __future__ import annotations

from pathlib import Path

from ..base.bounded_read import read_text_bounded

DOTENV_CAP = 1024 * 1024
"""A .env is a few KB; a larger one (or /dev/zero behind the name) is not read."""


def read_dotenv(path: Path) -> dict[str, str]:
    """``KEY=value`` lines of a .env (comments, blanks and malformed lines skipped)."""
    values: dict[str, str] = {}
    try:
        text = read_text_bounded(path, DOTENV_CAP)
    except OSError:  # missing, a FIFO or a device, larger than a .env can be
        return values
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        key = key.strip().removeprefix("export ").strip()
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key] = value
    return values
