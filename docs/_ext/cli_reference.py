"""The CLI reference in docs/cli.md, written from ``ari_jupyter.cli``'s parser.

The page holds the introduction, then one section per command (its help line and ``--help``
text) between ``<!-- cli-reference -->`` and ``<!-- /cli-reference -->``. The reference is
committed, so the page reads whole where it is read as a file (a repository browser), and
rewritten by ``python docs/_ext/cli_reference.py``; a test keeps it equal to the parser, and the
docs build writes it again (``source-read``), so a built page can never disagree either.
"""
from __future__ import annotations

import argparse
import os

MARKER = "<!-- cli-reference -->"
END_MARKER = "<!-- /cli-reference -->"
DOCNAME = "docs/cli"
PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "cli.md")


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


def with_reference(page: str) -> str:
    """``page`` with the reference between its markers written anew."""
    if MARKER not in page:
        raise ValueError(f"{DOCNAME}.md lost its {MARKER} marker")
    head, _, rest = page.partition(MARKER)
    _, _, tail = rest.partition(END_MARKER)
    return f"{head}{MARKER}\n\n{render_reference()}\n{END_MARKER}\n{tail.lstrip(chr(10))}"


def _source_read(app, docname, source):
    if docname == DOCNAME:
        source[0] = with_reference(source[0])


def setup(app):
    app.connect("source-read", _source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":  # python docs/_ext/cli_reference.py: rewrite the committed page
    import sys

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(PAGE))))  # this checkout
    with open(PAGE, encoding="utf-8") as handle:
        page = handle.read()
    with open(PAGE, "w", encoding="utf-8") as handle:
        handle.write(with_reference(page))
