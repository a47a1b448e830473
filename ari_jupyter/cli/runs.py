"""``ari-jupyter runs``: the workspace's checkpoints with phase and progress."""
from __future__ import annotations

import argparse
import asyncio
import json

HELP = "list the workspace's ARI runs with phase, nodes, best metric and jobs"


def register(subparsers) -> None:
    parser = subparsers.add_parser("runs", help=HELP, description=HELP + ".")
    parser.add_argument("--workspace", metavar="W",
                        help="workspace root holding checkpoints/ (default: the wizard's workspace)")
    parser.add_argument("--json", action="store_true", help="print the JSON the Runs panel shows")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..runs.service import default_workspace, runs_json
    from . import output_lang
    from ._runs_text import runs_table

    answer = asyncio.run(runs_json(args.workspace or default_workspace()))
    print(json.dumps(answer, indent=2, ensure_ascii=False) if args.json else runs_table(answer, output_lang(args)))
    return 0
