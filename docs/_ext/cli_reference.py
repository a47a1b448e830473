"""Write the CLI reference into docs/cli.md at build time, from ``ari_jupyter.cli``'s parser.

The committed page holds the introduction and a ``<!-- cli-reference -->`` marker; the
``source-read`` event replaces the marker with one section per command (its help line and
``--help`` text), so the reference can never disagree with the parser.
"""
from __future__ import annotations

import argparse
import os

MARKER = "<!-- cli-reference -->"
DOCNAME = "docs/cli"


def _subcommands(parser: argparse.ArgumentParser):
    for action in parser._actions:  # argparse keeps sub-parsers only here
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, helps.get(name) or "", sub


def render_reference() -> str:
    from ari_jupyter.cli import build_parser

    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal; a fixed width for the page
    parser = build_parser()
    parts = ["```text", parser.format_help().rstrip(), "```", ""]

    def walk(prefix: str, parser: argparse.ArgumentParser, level: int) -> None:
        for name, help_line, sub in sorted(_subcommands(parser)):
            command = f"{prefix} {name}"
            parts.extend([f"{'#' * level} `{command}`", "", (help_line[:1].upper() + help_line[1:]
                          + ".") if help_line else "", "", "```text", sub.format_help().rstrip(),
                          "```", ""])
            walk(command, sub, level + 1)

    walk("ari-jupyter", parser, 2)
    return "\n".join(parts)


def _source_read(app, docname, source):
    if docname == DOCNAME:
        if MARKER not in source[0]:
            raise ValueError(f"{DOCNAME}.md lost its {MARKER} marker")
        source[0] = source[0].replace(MARKER, render_reference())


def setup(app):
    app.connect("source-read", _source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
