"""``ari-jupyter runs``: the workspace's checkpoints with phase and progress."""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from ..i18n import error_text, t
from . import output_lang
from ._localized import error_line
from ..hosts.host import SiteError
from ..runs.service import default_workspace, listed_workspaces, runs_host, runs_json
from ._runs_text import runs_table
from ..runs.workspace import is_dir

HELP = "list the workspace's ARI runs with phase, nodes, best metric and jobs"


def register(subparsers) -> None:
    parser = subparsers.add_parser("runs", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    parser.add_argument("--workspace", metavar="W",
                        help="only this workspace root holding checkpoints/ (default: the "
                             "wizard's workspace and every workspace a checkpoint was written to, "
                             "as the Runs panel)")
    parser.add_argument("--site", metavar="NAME|FILE",
                        help="the runs on this demo site: its local demo workspace, with the run "
                             "the site recorded (jobs from the recording; SLURM is never asked)")
    parser.add_argument("--json", action="store_true", help="print the JSON the Runs panel shows")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    lang = output_lang(args)
    try:
        workspace = args.workspace or default_workspace(site=args.site)
        host = runs_host(args.site)  # a demo site answers from its recording, never SLURM
    except SiteError as exc:
        print(error_line("runs", error_text(exc, lang), lang), file=sys.stderr)
        return 2
    if args.workspace and not is_dir(Path(workspace).expanduser()):
        # a workspace named on the command line that is not there is a verdict, as for status
        print(f"ari-jupyter runs: {t('runs.not_a_directory', lang, path=workspace)}", file=sys.stderr)
        return 1
    # --site: only that demo site's workspace, as its help says (another demo site's recorded
    # workspace is not "written on this demo site"); else as the Runs panel: the default
    # workspace and those checkpoints were written to
    only_one = bool(args.workspace or args.site)
    answer = asyncio.run(runs_json([workspace] if only_one else listed_workspaces(workspace), host))
    if args.json:
        print(json.dumps(answer, indent=2, ensure_ascii=False))
        return 0
    print(runs_table(answer, lang))
    if answer.get("skipped"):  # once, below the table: what could not be read is left out
        print(t("runs.skipped", lang, count=len(answer["skipped"]),
                paths=", ".join(answer["skipped"])), file=sys.stderr)
    if not answer["runs"] and not args.workspace and not args.site:
        print(t("runs.none_hint", lang), file=sys.stderr)
    return 0
