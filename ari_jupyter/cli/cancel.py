"""``ari-jupyter cancel CHECKPOINT``: cancel the run's SLURM jobs (this user's, this run's only)."""
from __future__ import annotations

import argparse
import asyncio
import json
import sys

HELP = "cancel the SLURM jobs of one ARI run (asks first unless --yes)"


def register(subparsers) -> None:
    parser = subparsers.add_parser("cancel", help=HELP, description=HELP + ". Only jobs of this "
                                   "user that belong to the run are cancelled (scancel --user).")
    parser.add_argument("checkpoint", metavar="CHECKPOINT")
    parser.add_argument("--job", action="append", metavar="ID",
                        help="cancel only this job of the run (repeatable)")
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--json", action="store_true", help="print the outcomes and the new status")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..runs import NotACheckpoint
    from ..runs.service import cancel_json, status_json

    try:
        status = asyncio.run(status_json(args.checkpoint))
    except NotACheckpoint as exc:
        print(f"ari-jupyter cancel: {exc}", file=sys.stderr)
        return 1
    active = [j for j in status["jobs"]["jobs"] if j["state"] in _ACTIVE]
    named = set(args.job or ())
    targets = [j for j in active if not named or j["job_id"] in named]
    if status["jobs"]["scheduler"] != "ok":
        print(f"ari-jupyter cancel: SLURM did not answer: {status['jobs']['problem']}", file=sys.stderr)
        return 1
    if not targets and not named:
        print(f"run {status['run_id']} has no job in the queue: nothing to cancel")
        return 0
    if not args.yes:
        listing = ", ".join(f"{j['job_id']} ({j['name']}, {j['state']})" for j in targets) or \
            ", ".join(sorted(named))
        if not sys.stdin.isatty():
            print(f"ari-jupyter cancel: would cancel {listing}; pass --yes to confirm "
                  "(no terminal to ask)", file=sys.stderr)
            return 2
        answer = input(f"Cancel {listing} of run {status['run_id']}? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("nothing cancelled")
            return 0
    ids = sorted(named) if named else [j["job_id"] for j in targets]
    result = asyncio.run(cancel_json(args.checkpoint, ids))
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        for outcome in result["outcomes"]:
            print(f"{outcome['job_id']}: {outcome['result']} - {outcome['message']}")
        print(f"phase now: {result['status']['phase']}")
    bad = [o for o in result["outcomes"] if o["result"] in ("refused", "error", "invalid")]
    return 1 if bad else 0


_ACTIVE = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING",
           "SIGNALING", "STAGE_OUT"}
