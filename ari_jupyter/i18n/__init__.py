"""Message catalogs (en, ja, zh) for every string the wizard and the command line show.

ARI itself ships its dashboard in en/ja/zh, so the wizard does too. Two layouts, merged into
one catalog per language:

* ``en.json``/``ja.json``/``zh.json``: the wizard's labels, flat ``key -> text``;
* ``messages/*.json``: the sentences of findings and probe results, one file per area
  (validator, fields, probes, ...), each id holding its three languages together:
  ``{"id": {"en": "...", "ja": "...", "zh": "..."}}``. Adding a message is one entry in
  one file; a test keeps every id complete in en, ja and zh with the same placeholders.

Texts use ``str.format`` placeholders. English is the reference and the fallback for a key
missing in another language (the tests keep catalogs complete, so the fallback only protects
users from a crash). An unknown key raises ``KeyError``: that is a bug.
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
_CATALOG_DIR = Path(__file__).parent  # absolute already (import sets it); resolve() costs syscalls


@lru_cache(maxsize=None)
def labels(lang: str) -> Mapping[str, str]:
    """The wizard's labels in ``lang`` (``<lang>.json``, read once): all a first screen needs,
    so the sentences of ``messages/`` are read only when one is first asked for."""
    if lang not in LANGUAGES:
        raise ValueError(f"unsupported language {lang!r}; choose one of {LANGUAGES}")
    with open(_CATALOG_DIR / f"{lang}.json", encoding="utf-8") as handle:
        return json.load(handle)


@lru_cache(maxsize=None)
def catalog(lang: str) -> Mapping[str, str]:
    """The whole catalog of ``lang``: its labels and every message (ids unique across both)."""
    merged = dict(labels(lang))
    for key, texts in messages().items():
        if key in merged:
            raise ValueError(f"message id {key!r} is defined twice")
        text = texts.get(lang) or texts.get(DEFAULT_LANGUAGE)
        if text is not None:
            merged[key] = text
    return merged


@lru_cache(maxsize=None)
def messages() -> Mapping[str, Mapping[str, str]]:
    """Every id of ``messages/*.json`` with its texts per language (ids unique across files)."""
    out: dict[str, Mapping[str, str]] = {}
    for path in sorted((_CATALOG_DIR / "messages").glob("*.json")):
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        for key, texts in data.items():
            if key in out:
                raise ValueError(f"message id {key!r} is defined in two files ({path.name})")
            out[key] = texts
    return out


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


def t(key: str, lang: str | None = None, /, **params) -> str:
    """Translate ``key`` into ``lang`` (default from the locale) and fill its placeholders."""
    lang = normalize_lang(lang) or default_lang()
    text = labels(lang).get(key)
    if text is None:
        texts = messages().get(key)
        text = (texts.get(lang) or texts.get(DEFAULT_LANGUAGE)) if texts is not None \
            else labels(DEFAULT_LANGUAGE)[key]
        if text is None:
            raise KeyError(key)
    if not params:
        return text
    return text.format(**{name: _nested(value, lang) for name, value in params.items()})


def listed(items, lang: str | None) -> str:
    """``items`` joined as ``lang`` writes a list: ", " in English, "、" in Japanese and Chinese."""
    return t("list.separator", lang).join(str(item) for item in items)


_CJK_CLOSING = ("。", "！", "？", "：", "）", "」", "』")


def sentence_gap(before: str, sep: str = " ") -> str:
    """What goes between ``before`` (a sentence, a label) and what follows: ``sep`` after
    English, nothing after a Japanese or Chinese full stop, colon or closing bracket (those
    languages put no space there, and a dash there reads as a stray mark)."""
    return "" if before.rstrip().endswith(_CJK_CLOSING) else sep


def message(message_id: str, /, **params) -> dict:
    """A sentence as data, for a parameter that is itself a translated sentence:
    ``t("a", lang, detail=message("b", n=1))`` renders ``b`` in ``lang`` inside ``a``."""
    return {"message_id": message_id, "params": params}


class Text(str):
    """An English sentence that remembers its message id and parameters: code that keeps
    strings (notes, details) keeps working, and a display renders it in its own language."""

    message_id: str
    params: dict

    def __new__(cls, message_id: str, params: Mapping | None = None):
        params = dict(params or {})
        self = super().__new__(cls, t(message_id, DEFAULT_LANGUAGE, **params))
        self.message_id, self.params = message_id, params
        return self

    def __reduce__(self):  # copies and pickles keep the id (dataclasses.asdict deep-copies)
        return (Text, (self.message_id, self.params))


def text(message_id: str, /, **params) -> Text:
    """``Text`` for ``message_id`` with ``params``."""
    return Text(message_id, params)


def say(thing, lang: str | None) -> str:
    """Anything the package says, in ``lang``: the one way to put a sentence into words.

    A ``Text``; a sentence that crossed JSON (``{"message_id", "params"}``); a list of those
    (joined as ``lang`` lists); a verdict (``Finding``, ``ProbeResult``: anything with
    ``text(lang)``); an error raised with a ``Text``; any other value as it reads.
    """
    if isinstance(thing, Text):
        return t(thing.message_id, lang, **thing.params)
    if isinstance(thing, Mapping) and "message_id" in thing:
        return t(thing["message_id"], lang, **dict(thing.get("params") or {}))
    if isinstance(thing, list) and thing and all(isinstance(v, Mapping) for v in thing):
        return t("list.separator", lang).join(say(v, lang) for v in thing)
    if isinstance(thing, BaseException):
        first = thing.args[0] if len(thing.args) == 1 else None
        return say(first, lang) if isinstance(first, Text) else str(thing)
    if callable(getattr(thing, "text", None)) and hasattr(thing, "message_id"):
        return thing.text(lang)
    return thing


def render(value, lang: str | None) -> str:
    """A ``Text`` in ``lang``; any other string as it is (``say`` for a string)."""
    return say(value, lang) if isinstance(value, Text) else value


def message_of(value) -> dict | None:
    """``{"message_id", "params"}`` of a ``Text`` (nested sentences too), the shape a sentence
    keeps through JSON so that another view renders it in its own language; None otherwise."""
    if not isinstance(value, Text):
        return None
    return {"message_id": value.message_id,
            "params": {name: message_of(v) or v for name, v in value.params.items()}}


def render_message(english: str, said: Mapping | None, lang: str | None) -> str:
    """A sentence that crossed JSON: ``said`` (from ``message_of``) in ``lang``, else ``english``."""
    if not said or not said.get("message_id"):
        return english
    return say(said, lang)


def error_text(exc: BaseException, lang: str | None) -> str:
    """A refusal in ``lang`` when the core raised it with a ``Text``; any other error as it reads."""
    return say(exc, lang)


def _nested(value, lang: str):
    """A parameter in ``lang``: sentences are said, other values kept (numbers stay numbers)."""
    if isinstance(value, (Text, Mapping, list)):
        return say(value, lang)
    return value


def placeholders(text: str) -> set[str]:
    """The ``{name}`` fields a catalog entry expects."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}
