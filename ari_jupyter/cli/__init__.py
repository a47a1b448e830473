"""The ``ari-jupyter`` command line.

Each sub-command lives in its own module in this package and exposes ``register(subparsers)``,
which adds its parser and sets ``handler`` (a function of the parsed args returning the exit
code). ``COMMANDS`` names every command with its module and its one-line summary (as pip's
command table does): the parser loads only the module of the command that runs, and gives the
others a stub parser holding their summary, so ``ari-jupyter --help`` lists them all without
importing any. A command's module therefore imports what it needs at its top.
Exit codes: 0 success, 1 a finding/failure, 2 usage error (argparse's own), 130 Ctrl-C.

Every command takes ``--lang en|ja|zh`` (default: the locale, LC_ALL/LC_MESSAGES/LANG) for
the sentences it prints, its ``--help`` and argparse's errors (``_localized``); ``--json`` keeps
English text and adds each message's id and params.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import NamedTuple, Sequence

from ..base.version import __version__
from ..i18n import LANGUAGES, default_lang, t
from ._localized import LocalizedParser, language_of, localize


class Command(NamedTuple):
    module: str
    """The module of this package that registers the command."""
    summary: str
    """Its line in ``ari-jupyter --help``: the ``help=`` its ``register`` gives (a test holds
    the two equal; ``cli/help_text.json`` translates it under ``<name>:help``)."""


COMMANDS: dict[str, Command] = {
    "allocation": Command("allocation", "show the SLURM allocation read from the environment"),
    "cancel": Command("cancel", "cancel the SLURM jobs of one ARI run (asks first unless --yes)"),
    "check-handoff": Command("check_handoff",
                             "verify what the hand-off terminal will see for a checkpoint"),
    "doctor": Command("doctor", "explain a failed run: log, reproduce.sh or experiment.md -> cause and fix"),
    "emit": Command("emit", "write a checkpoint (experiment.md, .env, launch_config.json) and hand-off script"),
    "follow-up": Command("follow_up", "submit the next follow-up allocation of a run (the hand-off and each follow-up job call it)"),
    "guide": Command("guide", "show where the user guides shipped with ari-jupyter are"),
    "lab": Command("lab", "open JupyterLab on the ARI multi-node wizard notebook"),
    "lessons": Command("lessons", "the teaching lessons: reset your copies, show where they are, export them"),
    "lint": Command("lint", "check an experiment.md against ARI's parse rules (E1-E10)"),
    "preview": Command("preview", "show what ARI will run (the reproduce sbatch line)"),
    "probe": Command("probe", "check the site: sbatch, partitions, GRES, shared FS, MPI, modules, GPUs, ARI"),
    "requeue": Command("requeue", "make a run that was cut (allocation ended, job cancelled) resumable by ari resume"),
    "runs": Command("runs", "list the workspace's ARI runs with phase, nodes, best metric and jobs"),
    "site-card": Command("site_card", "the site's partitions, GRES and modules, for a hub's spawner form"),
    "status": Command("status", "show one ARI run: phase, nodes, best metric, findings, jobs, log tail"),
}


def command_module(name: str):
    """The module of command ``name``, imported now (``COMMANDS`` lists literal names, which
    tests/test_architecture.py reads as this package's imports)."""
    # cold start: a command's module loads only when that command runs
    return importlib.import_module(f"{__name__}.{COMMANDS[name].module}")


def command_named(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs: its first word that is not an option of ``ari-jupyter``
    itself (``--lang`` takes the word after it), None when there is none or it is unknown."""
    words = iter(argv)
    for word in words:
        if word == "--lang":
            next(words, None)
        elif word == "--":
            return None
        elif not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of ``ari-jupyter``. With ``argv``, only the command it names is loaded and
    registered in full; the other commands are stubs that carry their summary. Without it,
    every command is (the reference doc, the help tests)."""
    wanted = None if argv is None else command_named(argv)
    parser = LocalizedParser(
        prog="ari-jupyter",
        description="Check a SLURM site and prepare an ARI checkpoint for a multi-node run.",
    )
    parser.add_argument("--version", action="version", version=f"ari-jupyter {__version__}")
    parser.add_argument("--lang", choices=LANGUAGES, default=None,
                        help="language of the printed messages, before or after the command "
                        "(default: from LC_ALL/LC_MESSAGES/LANG)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, command in COMMANDS.items():
        if argv is None or name == wanted:
            command_module(name).register(subparsers)
        else:
            subparsers.add_parser(name, help=command.summary)
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
    given = sys.argv[1:] if argv is None else argv
    parser = build_parser(given)
    _own_usage(parser)
    localize(parser, language_of(given))
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
