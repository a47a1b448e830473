"""Message catalogs (en, ja, zh) for every string the wizard shows.

ARI itself ships its dashboard in en/ja/zh, so the wizard does too. Catalogs are flat JSON
objects ``key -> text`` with ``str.format`` placeholders; English is the reference and the
fallback for a key missing in another language (a test keeps the catalogs complete, so the
fallback only protects users from a crash). An unknown key raises ``KeyError``: that is a bug.
"""
from __future__ import annotations

import json
import os
import string
from functools import lru_cache
from pathlib import Path
from typing import Mapping

LANGUAGES = ("en", "ja", "zh")
LANGUAGE_NAMES = {"en": "English", "ja": "日本語", "zh": "中文"}
DEFAULT_LANGUAGE = "en"
_CATALOG_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def catalog(lang: str) -> Mapping[str, str]:
    """The catalog of ``lang`` (read once)."""
    if lang not in LANGUAGES:
        raise ValueError(f"unsupported language {lang!r}; choose one of {LANGUAGES}")
    with open(_CATALOG_DIR / f"{lang}.json", encoding="utf-8") as handle:
        return json.load(handle)


def normalize_lang(value: str | None) -> str | None:
    """'ja_JP.UTF-8' -> 'ja', 'zh-Hans' -> 'zh'; None for C/POSIX/unknown locales."""
    if not value:
        return None
    code = value.split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
    return code if code in LANGUAGES else None


def default_lang(env: Mapping[str, str] | None = None) -> str:
    """The language from the locale, in POSIX precedence: LC_ALL, LC_MESSAGES, LANG."""
    env = os.environ if env is None else env
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name)
        if value:
            # The first variable that is set decides, as in setlocale(); C/POSIX means English.
            return normalize_lang(value) or DEFAULT_LANGUAGE
    return DEFAULT_LANGUAGE


def t(key: str, lang: str | None = None, **params) -> str:
    """Translate ``key`` into ``lang`` (default from the locale) and fill its placeholders."""
    lang = normalize_lang(lang) or default_lang()
    text = catalog(lang).get(key)
    if text is None:
        text = catalog(DEFAULT_LANGUAGE)[key]
    return text.format(**params) if params else text


def placeholders(text: str) -> set[str]:
    """The ``{name}`` fields a catalog entry expects."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}
