"""``--help`` and argparse's own errors in the language the command prints in.

The parser's help texts stay English in the code (the docs are generated from them); their
Japanese and Chinese live in ``help_text.json``, keyed by command and option. argparse says
its own words ("usage:", "options", "invalid choice: ...") through ``gettext``, and Python
ships no catalog for them; changing gettext's process-wide domain would also change every other
parser in the process (a kernel's, pytest's). So each parser of the command line is translated
in place instead: help texts and section titles set once, the usage prefix through the
formatter, and an error's sentence matched against argparse's English templates.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from ..i18n import LANGUAGES, default_lang
from ._columns import wrap

CATALOG = Path(__file__).with_name("help_text.json")


@lru_cache(maxsize=None)
def catalog() -> dict:
    with open(CATALOG, encoding="utf-8") as handle:
        return json.load(handle)


def language_of(argv: Sequence[str]) -> str:
    """The ``--lang`` given anywhere before ``--`` (argparse has not run yet), else the locale."""
    for index, arg in enumerate(argv):
        if arg == "--":
            break
        value = argv[index + 1] if arg == "--lang" and index + 1 < len(argv) else \
            arg[len("--lang="):] if arg.startswith("--lang=") else None
        if value in LANGUAGES:
            return value
    return default_lang()


def help_key(command: str, action: argparse.Action) -> str:
    """``"emit --title"``; a positional by its dest (``"lint file"``); top level: ``"--lang"``."""
    longs = [o for o in action.option_strings if o.startswith("--")]
    name = longs[0] if longs else (action.option_strings or [action.dest])[0]
    return f"{command} {name}".strip()


def _said(key: str, english: str | None, lang: str, fallback: str | None = None) -> str | None:
    """The ``lang`` text of ``key`` when its English is still the parser's, else ``english``."""
    helps = catalog()["help"]
    for candidate in (key, fallback):
        entry = helps.get(candidate) if candidate else None
        if entry and entry.get("en") == english and entry.get(lang):
            return entry[lang]
    return english


def word(english: str, lang: str) -> str:
    """One of argparse's own words (``"usage: "``, ``"options"``) in ``lang``."""
    return catalog()["argparse"].get(english, {}).get(lang, english)


@lru_cache(maxsize=None)
def _templates() -> tuple[tuple[re.Pattern[str], str], ...]:
    """argparse's error templates as patterns: ``%(value)r`` and ``%s`` match any text."""
    out = []
    for english in catalog()["argparse"]:
        if "%" not in english:
            continue
        parts = re.split(r"(%\(\w+\)[sr]|%[sr])", english)
        pattern = "".join(f"(?P<{p[2:-2]}>.+?)" if p.startswith("%(") else "(.+?)" if p.startswith("%")
                          else re.escape(p) for p in parts)
        out.append((re.compile(f"^{pattern}$", re.S), english))
    return tuple(out)


def error_sentence(message: str, lang: str) -> str:
    """An argparse error in ``lang`` ("argument --lang: invalid choice: ..."); unknown ones stay."""
    if lang == "en":
        return message
    for pattern, english in _templates():
        match = pattern.match(message)
        if not match:
            continue
        translated = word(english, lang)
        named = match.groupdict()
        if "message" in named:
            named["message"] = error_sentence(named["message"], lang)
        if named:
            # the values were already rendered by argparse: put them back as they were
            return re.sub(r"%\((\w+)\)[sr]", lambda m: named[m.group(1)], translated)
        values = iter(match.groups())
        return re.sub(r"%[sr]", lambda _: next(values), translated)
    return message


def error_line(command: str, sentence: str, lang: str) -> str:
    """``ari-jupyter <command>: error: <sentence>``, the word "error" in ``lang`` as argparse's
    own usage errors say it."""
    return f"ari-jupyter {command}: {word('error: ', lang)}{sentence}"


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter with the usage prefix in ``lang`` and lines wrapped by terminal
    columns (a CJK character takes two)."""

    lang = "en"

    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, prefix if prefix is not None
                          else word("usage: ", self.lang))

    def _split_lines(self, text, width):
        return wrap(text, width)

    def _fill_text(self, text, width, indent):
        return "\n".join(indent + line for line in wrap(text, width - len(indent)))


class LocalizedParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage line and errors speak ``lang`` (see ``localize``)."""

    lang = "en"

    def _get_formatter(self):
        if self.lang == "en" or self.formatter_class is not argparse.HelpFormatter:
            return super()._get_formatter()
        formatter = _Formatter(prog=self.prog)
        formatter.lang = self.lang
        return formatter

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: {word('error: ', self.lang)}{error_sentence(message, self.lang)}\n")


def localize(parser: argparse.ArgumentParser, lang: str, command: str = "") -> None:
    """Put ``parser`` and its sub-commands' parsers into ``lang`` (help texts, titles, usage)."""
    if isinstance(parser, LocalizedParser):
        parser.lang = lang
    if lang == "en":
        return
    parser.description = _said(f"{command}:description", parser.description, lang)
    for group in parser._action_groups:
        if group.title in ("positional arguments", "options"):
            group.title = word(group.title, lang)
        elif group.title:  # a group of the command's own ("ARI run settings")
            key = f"{command} group:{group.title}"
            group.description = _said(f"{key}:description", group.description, lang)
            group.title = _said(key, group.title, lang)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                name = f"{command} {choice.dest}".strip()
                choice.help = _said(f"{name}:help", choice.help, lang)
            for name, sub in action.choices.items():
                localize(sub, lang, f"{command} {name}".strip())
        elif action.help and action.help is not argparse.SUPPRESS:
            key = help_key(command, action)
            action.help = _said(key, action.help, lang, fallback=f"* {key.split()[-1]}")
