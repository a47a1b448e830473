"""``ari-jupyter status CHECKPOINT``: one run's phase, nodes, findings, jobs and log tail."""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

from ..i18n import error_text, t
from . import output_lang
from ._localized import error_line
from ..runs import NotACheckpoint
from ..hosts.host import SiteError
from ..runs.service import demo_checkpoint, runs_host, status_json
from ._runs_text import status_text, phase_text, nodes_line, stage_text

HELP = "show one ARI run: phase, nodes, best metric, findings, jobs, log tail"
SITE_HELP = ("a demo site: CHECKPOINT may be a run id of its local demo workspace (its recorded "
             "run included); jobs come from the recording, SLURM is never asked")
FOLLOW_FIRST_S = 2.0
FOLLOW_MAX_S = 30.0


def register(subparsers) -> None:
    parser = subparsers.add_parser("status", help=HELP, description=HELP[0].upper() + HELP[1:] + ". Exit 1 when the run "
                                   "failed or was interrupted, or CHECKPOINT is not a run's.")
    parser.add_argument("checkpoint", metavar="CHECKPOINT")
    parser.add_argument("--site", metavar="NAME|FILE", help=SITE_HELP)
    parser.add_argument("--json", action="store_true", help="print the JSON the Runs panel shows")
    parser.add_argument("--follow", action="store_true",
                        help="keep watching (new log lines, phase and node changes) until the run ends")
    parser.add_argument("--interval", type=float, default=FOLLOW_FIRST_S, metavar="SECONDS",
                        help=f"first wait between polls with --follow (default {FOLLOW_FIRST_S:g}; "
                             f"backs off to {FOLLOW_MAX_S:g} while nothing changes)")
    parser.set_defaults(handler=run)


def _exit_code(status: dict) -> int:
    return 1 if status["phase"] in ("failed", "interrupted") else 0


def run(args: argparse.Namespace) -> int:
    if args.interval <= 0:
        lang = output_lang(args)
        said = t("cli.more_than_zero", lang, flag="--interval", value=f"{args.interval:g}")
        print(error_line("status", said, lang), file=sys.stderr)
        return 2
    try:  # a demo site answers from its recording, never the machine's SLURM
        args.host = runs_host(args.site)
    except SiteError as exc:
        print(error_line("status", error_text(exc, output_lang(args)), output_lang(args)), file=sys.stderr)
        return 2
    args.checkpoint = str(demo_checkpoint(args.checkpoint, args.host))
    try:
        status = asyncio.run(status_json(args.checkpoint, args.host))
    except NotACheckpoint as exc:
        print(f"ari-jupyter status: {error_text(exc, output_lang(args))}", file=sys.stderr)
        return 1
    print(json.dumps(status, indent=2, ensure_ascii=False) if args.json
          else status_text(status, lang=output_lang(args)),
          flush=True)
    if args.follow:
        status = _follow(args, status)
    return _exit_code(status)


def _new_lines(before: list[str], after: list[str]) -> list[str]:
    """The lines of ``after`` past the longest suffix of ``before`` it starts with."""
    for start in range(len(before)):
        overlap = before[start:]
        if after[:len(overlap)] == overlap:
            return after[len(overlap):]
    return after


def _follow(args: argparse.Namespace, status: dict) -> dict:
    wait = max(0.1, args.interval)
    if status["phase"] == "not-started" and not args.json:
        # Written, not yet run: the user follows before starting `ari run` in another terminal.
        print(t("runs.status.waiting", output_lang(args)), flush=True)
    while status["active"] or status["phase"] == "not-started":
        time.sleep(wait)
        try:
            fresh = asyncio.run(status_json(args.checkpoint, args.host))
        except NotACheckpoint as exc:
            print(f"ari-jupyter status: {error_text(exc, output_lang(args))}", file=sys.stderr)
            return status
        changed = _print_changes(args, status, fresh)
        wait = max(0.1, args.interval) if changed else min(wait * 2, FOLLOW_MAX_S)
        status = fresh
    if not args.json:
        lang = output_lang(args)
        print(t("runs.status.ended", lang, phase=phase_text(status["phase"], lang)), flush=True)
    return status


def _print_changes(args: argparse.Namespace, old: dict, new: dict) -> bool:
    lines = _new_lines(old["log_tail"], new["log_tail"])
    keys = ("phase", "stage", "nodes", "best_metric")
    moved = [k for k in keys if old[k] != new[k]]
    jobs_moved = [(j["job_id"], j["state"]) for j in old["jobs"]["jobs"]] != \
                 [(j["job_id"], j["state"]) for j in new["jobs"]["jobs"]]
    if not (lines or moved or jobs_moved):
        return False
    if args.json:
        print(json.dumps(new, ensure_ascii=False), flush=True)
        return True

    lang = output_lang(args)
    if moved:
        print(t("runs.status.changed", lang, phase=phase_text(new["phase"], lang),
                stage=stage_text(new["stage"], lang), nodes=nodes_line(new)))
    if jobs_moved:
        jobs = ", ".join(f"{j['job_id']} {j['state']}" for j in new["jobs"]["jobs"]) \
            or t("runs.jobs.none_word", lang)
        print(t("runs.jobs.changed", lang, jobs=jobs))
    for line in lines:
        print(f"  {line}")
    sys.stdout.flush()
    return True
