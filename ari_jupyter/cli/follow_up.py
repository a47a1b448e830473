"""``ari-jupyter follow-up CHECKPOINT``: the next link of a run's chain of follow-up allocations.

The hand-off (inside an allocation) and each follow-up job call it: ``--after JOB`` submits the
next follow-up, to start once JOB has ended (``sbatch --dependency=afterany:JOB
--kill-on-invalid-dep=yes``, the run's partition, nodes and walltime exactly), unless the
search is finished or every approved follow-up was submitted. ``--finished`` answers whether
the run is finished (exit 0) or not (1), for a follow-up job to end at once.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys

from ..i18n import error_text, t
from . import output_lang
from ..runs import NotACheckpoint
from ..runs.chain import submit_next
from ..runs.status import run_status

HELP = "submit the next follow-up allocation of a run (the hand-off and each follow-up job call it)"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "follow-up", help=HELP, description=HELP[0].upper() + HELP[1:] + ". Nothing is submitted "
        "once the run is finished, beyond the follow-ups approved at Write, or outside the run's "
        "partition, nodes and walltime.")
    parser.add_argument("checkpoint", metavar="CHECKPOINT")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--after", metavar="JOB", help="the job the follow-up waits for (afterany)")
    what.add_argument("--finished", action="store_true",
                      help="exit 0 when the run is finished, 1 when it is not")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.set_defaults(handler=run)


async def _finished(checkpoint: str) -> bool:
    return (await run_status(checkpoint)).phase == "finished"


def run(args: argparse.Namespace) -> int:
    lang = output_lang(args)
    try:
        finished = asyncio.run(_finished(args.checkpoint))
    except NotACheckpoint as exc:
        print(f"ari-jupyter follow-up: {error_text(exc, lang)}", file=sys.stderr)
        return 1
    if args.finished:
        print(t("followup.is_finished" if finished else "followup.not_finished", lang))
        return 0 if finished else 1
    outcome = asyncio.run(submit_next(args.checkpoint, args.after, finished=finished))
    said = t(outcome.message_id, lang, **outcome.params)
    if args.json:
        print(json.dumps({**outcome.to_json(), "message": t(outcome.message_id, "en", **outcome.params)},
                         indent=2, ensure_ascii=False))
    elif outcome.result == "refused":
        print(f"ari-jupyter follow-up: {said}", file=sys.stderr)
    else:
        print(said)
    return 1 if outcome.result == "refused" else 0
