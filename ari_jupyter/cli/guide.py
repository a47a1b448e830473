"""``ari-jupyter guide [NAME]``: where the user guides shipped with ari-jupyter are.

The messages that send a reader to a guide name this command (``docs/`` is in a clone only).
With NAME it prints the installed file of that guide in the output language (English where it
has no translation) and the address JupyterLab shows it at; without, every guide's file.
"""
from __future__ import annotations

import sys
from typing import Optional, TextIO

from ..base.guides import GUIDES, ROUTE, guide_file, guide_path
from ..i18n import t
from . import output_lang


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "guide",
        help="show where the user guides shipped with ari-jupyter are",
        description="Print the installed file of a user guide, in the language of the "
        "messages where it is translated, and its address in JupyterLab (Help menu). "
        "Without NAME, every guide.",
    )
    parser.add_argument("name", nargs="?", choices=GUIDES, metavar="NAME",
                        help="the guide: " + ", ".join(GUIDES))
    parser.set_defaults(handler=run)


def run(args, stdout: Optional[TextIO] = None) -> int:
    lang = output_lang(args)
    stdout = stdout or sys.stdout
    if args.name is None:
        for name in GUIDES:
            stdout.write(f"{name:<14} {guide_path(name, lang)}\n")
        return 0
    stdout.write(f"{guide_path(args.name, lang)}\n")
    stdout.write(t("cli.guide.in_lab", lang, route=f"<base_url>/{ROUTE}/{guide_file(args.name, lang)}")
                 + "\n")
    return 0
