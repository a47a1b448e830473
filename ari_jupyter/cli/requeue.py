"""``ari-jupyter requeue CHECKPOINT``: make a run its allocation cut resumable, and say how."""
from __future__ import annotations

import argparse
import asyncio
import json
import sys

from ..i18n import t
from . import output_lang
from ..runs.requeue import requeue

HELP = "make a run that was cut (allocation ended, job cancelled) resumable by ari resume"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "requeue", help=HELP, description=HELP[0].upper() + HELP[1:] + ". The nodes the cut left "
        "running are marked failed (tree.json is kept as tree.json.before-requeue), so ari resume "
        "runs them again, and the run's scope is written for it (resume.yaml); then the one "
        "command that continues the run is printed. Nothing is "
        "changed while ARI or a job of the run is alive, or for a run that is not yours.")
    parser.add_argument("checkpoint", metavar="CHECKPOINT")
    parser.add_argument("--force", action="store_true",
                        help="requeue although the run's files changed in the last minutes or its "
                        ".ari_pid names a pid not running here (after checking that it no longer runs)")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    lang = output_lang(args)
    outcome = asyncio.run(requeue(args.checkpoint, force=args.force))
    said = t(outcome.message_id, lang, **outcome.params)
    if args.json:
        print(json.dumps({**outcome.to_json(), "message": t(outcome.message_id, "en", **outcome.params)},
                         indent=2, ensure_ascii=False))
    elif outcome.result == "refused":
        print(f"ari-jupyter requeue: {said}", file=sys.stderr)
    else:
        print(said)
        print(outcome.command)
    return 1 if outcome.result == "refused" else 0
