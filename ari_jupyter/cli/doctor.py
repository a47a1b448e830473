"""``ari-jupyter doctor``: diagnose run logs, reproduce.sh and experiment.md files."""
from __future__ import annotations

import argparse
import json
import sys
import os
from pathlib import Path

from ._columns import pad
from ..i18n import render, t
from ..ari.dotenv import read_dotenv
from ..base.bounded_read import OPTION_FILE_CAP, read_json_bounded
from ..base.numbers import count_of
from . import output_lang
from ._localized import error_line
from ..doctor import options_from_choices, detect_kind, diagnose_text, has_errors
from ..checkpoint.emit import EmitError
from ..checkpoint.load import load_checkpoint
from ..base.bounded_read import (
    read_stream, read_window, EXPERIMENT_CAP, HEAD_BYTES, TAIL_BYTES, BoundedReadError, TooLarge,
    human_size,
)
from ..ari.profile import ProfileError
from ..doctor.detect import unrecognized
from ..doctor.log_checks import checkpoint_from_log_path
from ._errors import cannot_read

HELP = "explain a failed run: log, reproduce.sh or experiment.md -> cause and fix"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "doctor", help=HELP, description=HELP[0].upper() + HELP[1:] + ". The kind of each FILE is detected ('-' reads stdin).")
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--json", action="store_true",
                        help='print a JSON list of {"rule","severity","line","message","fix"}')
    parser.add_argument("--profile", metavar="FILE",
                        help="execution_profile JSON (a bare profile, a rubric, a file with an "
                             "\"execution_profile\" key, or a checkpoint's launch_config.json)")
    parser.add_argument("--nodes", type=int, metavar="N",
                        help="nodes of the allocation the job runs in (default: $SLURM_JOB_NUM_NODES)")
    parser.add_argument("--kind", choices=("log", "reproduce", "experiment", "handoff"),
                        help="skip detection and treat every FILE as this kind")
    parser.add_argument("--checkpoint", metavar="DIR",
                        help="the checkpoint the run should have used (a run elsewhere is an "
                             "error); one written by ari-jupyter also gives its profile, nodes, "
                             "GRES answer and .env, as the wizard's Doctor step uses them")
    parser.add_argument("--gres", choices=("yes", "no"),
                        help="whether the cluster has GRES (default: unknown, not probed)")
    parser.set_defaults(handler=run)


def _load_profile(path: str):
    """Return (profile dict or None, expected_artifacts list)."""
    data = read_json_bounded(path, OPTION_FILE_CAP)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    ours = data.get("ari_jupyter")
    if isinstance(ours, dict) and isinstance(ours.get("state"), dict):  # launch_config.json
        return ours["state"].get("profile") or {}, []
    contract = data.get("reproduce_contract")
    if isinstance(contract, dict):
        return contract.get("execution_profile") or {}, list(contract.get("expected_artifacts") or [])
    if isinstance(data.get("execution_profile"), dict):
        return data["execution_profile"], list(data.get("expected_artifacts") or [])
    return data, []


def _checkpoint_options(checkpoint: str | None) -> dict:
    """What a checkpoint written by ari-jupyter knows ({} for any other directory, e.g. one
    ARI wrote alone): the same options the wizard's Doctor step gives its state."""

    if not checkpoint:
        return {}
    try:
        state = load_checkpoint(checkpoint)
    except (EmitError, TypeError, ValueError):
        return {}
    return options_from_choices(state.choices(), os.environ)


def _default_nodes() -> int | None:
    value = os.environ.get("SLURM_JOB_NUM_NODES", "")
    return count_of(value)


def _read(path: str):
    """A bounded read (``base.bounded_read``): a log's head and tail, a regular file only."""

    if path == "-":
        return read_stream(sys.stdin.buffer)
    return read_window(path)


def _print_human(path: str, kind: str, findings, show_path: bool, lang: str = "en") -> None:
    if show_path:
        print(f"== {path} ({kind})")
    if not findings:
        print(t("cli.doctor.unrecognized" if kind == "unrecognized" else "cli.no_problems", lang))
        return
    for f in findings:
        where = t("cli.line", lang, line=f.line) if f.line else t("cli.file", lang)
        severity = f.severity.upper() if lang == "en" else t(f"doctor_severity_{f.severity}", lang)
        print(f"{pad(severity, 8)}{f.rule:28} {where}")
        print(f"        {f.text(lang)}")
        print("        " + t("cli.fix_line", lang, fix=f.fix_text(lang)))


def _experiment_env(path: str) -> dict[str, str]:
    """The environment ``ari run`` will see for an experiment.md, as ``lint`` reads it: this
    one, completed by the checkpoint's own .env beside the file (exported values win)."""

    env_file = None if path == "-" else Path(path).resolve().parent / ".env"
    env = read_dotenv(env_file) if env_file is not None and env_file.is_file() else {}
    env.update(os.environ)
    return env


def run(args: argparse.Namespace) -> int:
    profile, artifacts = None, []
    if args.profile:
        try:
            profile, artifacts = _load_profile(args.profile)
        except (OSError, ValueError) as exc:
            lang = output_lang(args)
            said = t("cli.preview.cannot_read", lang, what="--profile", path=args.profile,
                     error=exc.strerror or str(exc)) if isinstance(exc, OSError) else \
                t("cli.preview.not_json", lang, what="--profile", path=args.profile, error=str(exc))
            print(error_line("doctor", said, lang), file=sys.stderr)
            return 2
    if args.nodes is not None and args.nodes < 0:  # as emit refuses it: no check silently gone

        lang = output_lang(args)
        print(error_line("doctor", t("cli.nodes_range", lang, flag="--nodes", value=args.nodes), lang),
              file=sys.stderr)
        return 2
    known = _checkpoint_options(args.checkpoint)
    if profile is None and known:
        profile = known["profile"]
    # --nodes 0 is ARI's "not given", as in emit and step 3: the profile's requested_nodes
    nodes = args.nodes if args.nodes is not None else known.get("nodes") or _default_nodes()
    if nodes == 0:
        nodes = (profile.requested_nodes if profile is not None else 0) or _default_nodes()
    has_gres = {"yes": True, "no": False}.get(args.gres or "", known.get("has_gres"))
    allow_no_gres = known.get("allow_no_gres") or os.environ.get("ARI_SLURM_ALLOW_NO_GRES") == "1"
    results = []
    failed = False

    for path in args.files:
        try:
            window = _read(path)
            text = window.text
        except BoundedReadError as exc:  # a device, a FIFO, a too large input: said, not read
            print("ari-jupyter doctor: " + t(exc.message_id, output_lang(args), **exc.params),
                  file=sys.stderr)
            return 2
        except OSError as exc:
            print("ari-jupyter doctor: " + render(cannot_read(path, exc), output_lang(args)),
                  file=sys.stderr)
            return 2
        name = None if path == "-" else os.path.basename(path)
        kind = args.kind or detect_kind(text, name)
        if kind == "experiment" and window.size > EXPERIMENT_CAP:
            refused = TooLarge(path, size=human_size(window.size), cap=human_size(EXPERIMENT_CAP))
            print("ari-jupyter doctor: " + t(refused.message_id, output_lang(args), **refused.params),
                  file=sys.stderr)
            return 2
        if window.omitted and not args.json:
            print("ari-jupyter doctor: " + t("read.window", output_lang(args), path=path,
                                             size=human_size(window.size), head=human_size(HEAD_BYTES),
                                             tail=human_size(TAIL_BYTES)), file=sys.stderr)
        checkpoint = args.checkpoint
        if kind == "log" and not checkpoint and path != "-":
            checkpoint = checkpoint_from_log_path(path)
        env = _experiment_env(path) if kind == "experiment" else known.get("env", os.environ)
        try:
            findings = diagnose_text(text, kind=kind, profile=profile, nodes=nodes, has_gres=has_gres,
                                     allow_no_gres=allow_no_gres, checkpoint_dir=checkpoint,
                                     expected_artifacts=artifacts, filename=name, env=env,
                                     script_dir=None if path == "-" else os.path.dirname(os.path.abspath(path)),
                                     log_path=None if path == "-" else path)
        except ProfileError as exc:
            print(f"ari-jupyter doctor: {args.profile}: {exc}", file=sys.stderr)
            return 2
        failed = failed or has_errors(findings)
        if not findings and unrecognized(text, args.kind, kind):
            kind = "unrecognized"
        results.append((path, kind, findings))
    if args.json:
        several = len(results) > 1
        out = []
        for path, _kind, findings in results:
            for f in findings:
                item = f.to_json()
                if several:
                    item["file"] = path
                out.append(item)
        json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        for path, kind, findings in results:
            _print_human(path, kind, findings, show_path=len(results) > 1, lang=output_lang(args))
    return 1 if failed else 0
