"""``ari-jupyter cancel CHECKPOINT``: cancel the run's SLURM jobs (this user's, this run's only)."""
from __future__ import annotations

import argparse
import asyncio
import json
import sys

from ..i18n import error_text, render_message, t
from . import output_lang
from ..runs import NotACheckpoint
from ..runs.cancel_request import BadCancelRequest, cli_targets
from ..runs.localize import cancel_in_language
from ..runs.service import cancel_json, status_json, demo_checkpoint, runs_host
from ._runs_text import phase_text
from ..hosts.host import SiteError
from ..hosts.recorded_run import recording_of

HELP = "cancel the SLURM jobs of one ARI run (asks first unless --yes)"


def register(subparsers) -> None:
    parser = subparsers.add_parser("cancel", help=HELP, description=HELP[0].upper() + HELP[1:] + ". Only jobs of this "
                                   "user that belong to the run are cancelled (scancel --user).")
    parser.add_argument("checkpoint", metavar="CHECKPOINT")
    parser.add_argument("--job", action="append", metavar="ID",
                        help="cancel only this job of the run (repeatable)")
    parser.add_argument("--all", action="store_true", dest="all_jobs",
                        help="cancel every active job of the run (explicitly: without --job or "
                             "--all nothing is cancelled)")
    parser.add_argument("--site", metavar="NAME|FILE",
                        help="a demo site: its runs are recordings, nothing is cancelled")
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--json", action="store_true", help="print the outcomes and the new status")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    lang = output_lang(args)
    try:  # only a well-formed --job or an explicit --all: never "all" by omission
        wanted = cli_targets(args.job, args.all_jobs)
    except BadCancelRequest as exc:
        print(f"ari-jupyter cancel: {t(exc.message_id, lang, **exc.params)}", file=sys.stderr)
        return 2
    try:
        host = runs_host(args.site)
    except SiteError as exc:
        print(f"ari-jupyter cancel: {error_text(exc, lang)}", file=sys.stderr)
        return 2
    checkpoint = demo_checkpoint(args.checkpoint, host)
    if host.is_demo or recording_of(checkpoint) is not None:  # a recording: no queue to ask
        print(t("runs.cancel.recording", lang, run_id=checkpoint.name))
        return 0
    try:
        status = asyncio.run(status_json(args.checkpoint))
    except NotACheckpoint as exc:
        print(f"ari-jupyter cancel: {error_text(exc, lang)}", file=sys.stderr)
        return 1
    jobs = status["jobs"]
    active = [j for j in jobs["jobs"] if j["state"] in _ACTIVE]
    named = set(wanted or ())
    targets = [j for j in active if not named or j["job_id"] in named]
    if jobs["scheduler"] != "ok":
        problem = render_message(jobs["problem"], jobs.get("problem_message"), lang)
        print(f"ari-jupyter cancel: {t('runs.cancel.no_slurm', lang, problem=problem)}", file=sys.stderr)
        return 1
    if not targets and not named:
        print(t("runs.cancel.nothing_queued", lang, run_id=status["run_id"]))
        return 0
    if not args.yes:
        listing = ", ".join(f"{j['job_id']} ({j['name']}, {j['state']})" for j in targets) or \
            ", ".join(sorted(named))
        if not sys.stdin.isatty():
            print(f"ari-jupyter cancel: {t('runs.cancel.would_cancel', lang, listing=listing)}",
                  file=sys.stderr)
            return 2
        answer = input(t("runs.cancel.ask", lang, listing=listing, run_id=status["run_id"])).strip().lower()
        if answer not in ("y", "yes"):
            print(t("runs.cancel.kept", lang))
            return 0
    ids = sorted(named) if named else [j["job_id"] for j in targets]
    result = asyncio.run(cancel_json(args.checkpoint, ids))
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        shown = cancel_in_language(result, lang)
        for outcome in shown["outcomes"]:
            print(t("runs.cancel.outcome", lang, job=outcome["job_id"], message=outcome["message"],
                    result=t(f"runs.cancel.result.{outcome['result']}", lang)))
        print(t("runs.cancel.phase_now", lang, phase=phase_text(result["status"]["phase"], lang)))
    bad = [o for o in result["outcomes"] if o["result"] in ("refused", "error", "invalid")]
    return 1 if bad else 0


_ACTIVE = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING",
           "SIGNALING", "STAGE_OUT"}
