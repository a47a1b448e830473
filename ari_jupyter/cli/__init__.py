"""The ``ari-jupyter`` command line.

Every sub-command lives in its own module in this package and exposes
``register(subparsers)``, which adds its parser and sets ``handler`` (a
function of the parsed args returning the exit code). Modules are discovered,
so adding a command never touches this file. Handlers import heavy code lazily.
Exit codes: 0 success, 1 a finding/failure, 2 usage error (argparse's own), 130 Ctrl-C.

Every command takes ``--lang en|ja|zh`` (default: the locale, LC_ALL/LC_MESSAGES/LANG) for
the sentences it prints, its ``--help`` and argparse's errors (``_localized``); ``--json`` keeps
English text and adds each message's id and params.
"""
from __future__ import annotations

import argparse
import functools
import importlib
import pkgutil
import sys

from ..base.version import __version__
from ..i18n import LANGUAGES, default_lang, t
from ._localized import LocalizedParser, language_of, localize


@functools.lru_cache(maxsize=None)
def command_modules() -> tuple[str, ...]:
    """The modules of this package that may hold a command, listed once per process (the
    package's folder does not change under a running command)."""
    return tuple(sorted(info.name for info in pkgutil.iter_modules(__path__)
                        if not info.name.startswith("_")))


def build_parser() -> argparse.ArgumentParser:
    parser = LocalizedParser(
        prog="ari-jupyter",
        description="Check a SLURM site and prepare an ARI checkpoint for a multi-node run.",
    )
    parser.add_argument("--version", action="version", version=f"ari-jupyter {__version__}")
    parser.add_argument("--lang", choices=LANGUAGES, default=None,
                        help="language of the printed messages, before or after the command "
                        "(default: from LC_ALL/LC_MESSAGES/LANG)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in command_modules():
        module = importlib.import_module(f"{__name__}.{name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)
    for sub in subparsers.choices.values():
        _add_lang(sub)
    return parser


def _own_usage(parser: argparse.ArgumentParser) -> None:
    """Every command (and its own sub-commands) names itself as the parser of its arguments,
    so a misspelled option shows that command's usage, not the top level's."""
    parser.set_defaults(_usage_parser=parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _own_usage(sub)


def _add_lang(parser: argparse.ArgumentParser) -> None:
    """``--lang`` on a command and on each of its own sub-commands (``preview sbatch``).

    Its default is "not given" (SUPPRESS): argparse copies a sub-command's defaults over what
    the enclosing parser read, so ``ari-jupyter --lang ja probe`` and ``preview --lang ja
    sbatch`` would otherwise lose the language."""
    given = [a for a in parser._actions if "--lang" in a.option_strings]
    if given:
        for action in given:
            action.default = argparse.SUPPRESS
    else:
        parser.add_argument("--lang", choices=LANGUAGES, default=argparse.SUPPRESS,
                            help="language of the printed messages (default: from LC_ALL/LC_MESSAGES/LANG)")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _add_lang(sub)


def output_lang(args: argparse.Namespace) -> str:
    """The language a command prints in: ``--lang``, else the locale."""
    return getattr(args, "lang", None) or default_lang()


def _say_jupyter_args_go_after_dashes(unknown: list[str], args: argparse.Namespace) -> None:
    rest = [arg for arg in args.jupyter_args or () if arg != "--"]
    example = " ".join(["ari-jupyter", "lab", "--", *unknown, *rest])
    print(t("cli.lab.jupyter_args_after_dashes", output_lang(args), example=example), file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    _own_usage(parser)
    localize(parser, language_of(sys.argv[1:] if argv is None else argv))
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # argparse would report them with the top-level usage
        try:
            getattr(args, "_usage_parser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
        finally:
            if hasattr(args, "jupyter_args"):  # `ari-jupyter lab --no-browser`: say where it goes
                _say_jupyter_args_go_after_dashes(unknown, args)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        # Whatever the command started ran in its own process group and was killed when its
        # task was cancelled (asyncio.run cancels every task before re-raising Ctrl-C).
        sys.stderr.write(f"\nari-jupyter {args.command}: interrupted; nothing is left running\n")
        sys.stderr.flush()
        return 130
    except BrokenPipeError:
        return 0
