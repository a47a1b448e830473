"""``--help`` and argparse's own errors in the language the command prints in.

The help texts' Japanese and Chinese are kept beside the parser (``cli/help_text.json``); the
catalog test fails when a flag is added or its English changes without them.
"""
from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from ari_jupyter.cli import COMMANDS, build_parser, main
from ari_jupyter.cli._columns import columns, wrap
from ari_jupyter.cli._localized import catalog, error_sentence, help_key, language_of
from widget_text import english_sentences


def _help_texts(parser, command=""):
    """(key, English, fallback key) of every help text and description of the command line."""
    if parser.description:
        yield f"{command}:description", parser.description, None
    for group in parser._action_groups:
        if group.title and group.title not in ("positional arguments", "options"):
            yield f"{command} group:{group.title}", group.title, None
            if group.description:
                yield f"{command} group:{group.title}:description", group.description, None
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                yield f"{command} {choice.dest}".strip() + ":help", choice.help, None
            for name, sub in action.choices.items():
                yield from _help_texts(sub, f"{command} {name}".strip())
        elif action.help and action.help is not argparse.SUPPRESS:
            key = help_key(command, action)
            yield key, action.help, f"* {key.split()[-1]}"


def _commands():
    parser = build_parser()
    names = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                names.append([name])
                names += [[name, s] for a in sub._actions
                          if isinstance(a, argparse._SubParsersAction) for s in a.choices]
    return [[]] + names


def test_every_help_text_has_its_japanese_and_chinese_and_no_entry_is_stale():
    helps = catalog()["help"]
    used = set()
    for key, english, fallback in _help_texts(build_parser()):
        entry = helps.get(key) or (helps.get(fallback) if fallback else None)
        assert entry is not None, f"no ja/zh for {key!r}: add it to cli/help_text.json"
        assert entry["en"] == english, f"{key!r} changed in English: update its ja and zh"
        for lang in ("ja", "zh"):
            assert entry[lang].strip() and entry[lang].count("%") == english.count("%"), (key, lang)
        used.add(key if key in helps else fallback)
    assert set(helps) - used == set(), "entries no flag uses any more"


@pytest.mark.parametrize("lang", ["ja", "zh"])
@pytest.mark.parametrize("command", _commands(), ids=lambda c: " ".join(c) or "top")
def test_help_reads_in_the_language_with_no_english_sentence(command, lang, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help", "--lang", lang])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith({"ja": "使い方: ", "zh": "用法："}[lang]), text
    usage, _, rest = text.partition("\n\n")
    prose = [line for line in rest.splitlines() if line.strip()]
    assert english_sentences(prose) == [], prose
    # lines fit 80 terminal columns (pytest's terminal), but a flag's own list of choices
    assert all(columns(line) <= 80 for line in prose if "{" not in line), prose


def _listed(parser) -> list[tuple[str, str]]:
    """(command, summary) as ``ari-jupyter --help`` lists them."""
    return [(choice.dest, choice.help) for choice in parser._subparsers._group_actions[0]._choices_actions]


def test_the_command_table_holds_each_commands_own_summary():
    """``COMMANDS`` is what ``ari-jupyter --help`` lists without loading a command: each line
    is the ``help=`` the command's module registers, in the same order."""
    every = _listed(build_parser())
    assert every == [(name, command.summary) for name, command in COMMANDS.items()]
    assert _listed(build_parser(["--help"])) == every
    assert _listed(build_parser(["--lang", "ja", "lint", "x.md"])) == every


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_the_top_help_lists_every_command_with_its_summary(lang, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # one line per command
    with pytest.raises(SystemExit):
        main(["--help", "--lang", lang])
    lines = capsys.readouterr().out.splitlines()
    helps = catalog()["help"]
    for name in COMMANDS:
        said = helps[f"{name}:help"][lang]
        assert any(line.split() == [name, *said.split()] for line in lines), (name, said)


LOADED = ("import sys; from ari_jupyter.cli import COMMANDS, main\n"
          "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
          "print(sorted(n for n, c in COMMANDS.items() if 'ari_jupyter.cli.' + c.module in sys.modules))")


@pytest.mark.parametrize("argv, loaded", [
    (["--help"], []),
    (["--lang", "ja", "--help"], []),
    (["nosuch"], []),
    (["lint", "--help"], ["lint"]),
    (["--lang", "zh", "check-handoff", "--help"], ["check-handoff"]),
    (["status", "--lang", "ja", "--json", "--help"], ["status"]),
])
def test_a_command_loads_its_own_module_only(argv, loaded):
    """The parser imports the module of the command that runs, no other command's."""
    done = subprocess.run([sys.executable, "-c", LOADED, *argv], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.splitlines()[-1] == repr(loaded), done.stderr


def test_english_help_is_the_parsers_own(capsys):
    with pytest.raises(SystemExit):
        main(["emit", "--help", "--lang", "en"])
    text = capsys.readouterr().out
    assert text.startswith("usage: ari-jupyter emit") and "one-line experiment title" in text


# argv, lang, the sentence after "<prog>: error: " (the word "error" in the language too)
ERRORS = [
    (["probe", "--bogus"], "ja", "認識できない引数です: --bogus"),
    (["probe", "--bogus"], "zh", "无法识别的参数：--bogus"),
    (["probe", "--lang", "ja", "--timeout", "x"], "ja", "引数 --timeout: float として無効な値です: 'x'"),
    (["lint"], "ja", "次の引数が必要です: FILE"),
    (["emit", "--goal", "a", "--goal-file", "b"], "zh", "参数 --goal-file：不能与参数 --goal 同时使用"),
    (["nosuch"], "ja", "引数 COMMAND: 'nosuch' は選べません（選べるのは 'allocation', "),
    (["probe", "--bogus"], "en", "unrecognized arguments: --bogus"),
]


@pytest.mark.parametrize("argv, lang, sentence", ERRORS)
def test_argparse_errors_speak_the_language(argv, lang, sentence, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--lang", lang] if "--lang" not in argv else argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    command = "ari-jupyter" if argv[0] == "nosuch" else f"ari-jupyter {argv[0]}"
    prefix = {"ja": "エラー: ", "zh": "错误：", "en": "error: "}[lang]
    assert err.splitlines()[-1].startswith(f"{command}: {prefix}{sentence}"), err
    assert err.startswith({"ja": "使い方: ", "zh": "用法：", "en": "usage: "}[lang])


def test_an_error_argparse_words_differently_stays_as_it_was():
    assert error_sentence("something new: x", "ja") == "something new: x"


@pytest.mark.parametrize("argv, env, lang", [
    (["--lang", "ja", "probe"], {}, "ja"),
    (["probe", "--lang=zh"], {}, "zh"),
    (["probe", "--lang", "fr"], {"LANG": "ja_JP.UTF-8"}, "ja"),  # argparse refuses it, in Japanese
    (["lab", "--", "--lang", "ja"], {"LANG": "C"}, "en"),  # JupyterLab's argument, not ours
    (["probe"], {"LC_ALL": "zh_CN.UTF-8", "LANG": "ja_JP.UTF-8"}, "zh"),
])
def test_the_language_is_known_before_argparse_runs(argv, env, lang, monkeypatch):
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert language_of(argv) == lang


@pytest.mark.parametrize("text, width", [
    ("このマシンの代わりに記録されたデモサイトを調べます（sx40、rccs-cloud、またはサイトの JSON ファイル）", 24),
    ("検査がこのマシンで実行し見たものを、デモサイトのファイルとしても記録します。", 17),
    ("plain English words stay whole when wrapped", 12),
    ("パーティション", 5),
    ("フォルダ（既定: ワークスペース。作れなければ ~/.local/share/ari-jupyter）", 12),
    ("デモサイトを調べます（sx40、rccs-cloud）", 22),
])
def test_wrap_counts_terminal_columns_and_breaks_only_where_a_line_may(text, width):
    lines = wrap(text, width)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    # only a word that cannot be broken (a path, an identifier) may stand out past the width
    assert all(columns(line) <= width or len(line.split()) == 1 for line in lines), lines
    assert not any(line[0] in "、。）ーァィゥェォッャュョ:" for line in lines), lines
    assert not any(line[-1] in "（「(" for line in lines), lines
    words = {w for w in text.split() if w.isascii()}
    assert all(w in " ".join(lines).split() or not w.isalpha() for w in words), lines
