"""``ari-jupyter check-handoff CHECKPOINT``: will the second terminal's `ari run` work?

Prints a verdict per check (with its fix) and the steps for this checkpoint: ARI's dashboard
command on a free port with its security warning and an SSH tunnel, the hand-off command, and
how the reproduce step gets sandbox_kind=slurm. Exit 0 when no check fails, 1 otherwise.
"""
from __future__ import annotations

import argparse
import json
import sys

from ..i18n import Text, error_text, messages, render, sentence_gap, t
from . import output_lang
from ._localized import error_line
from ._columns import hang, terminal_width
from ..wizard.config import open_host
from ..checkpoint.emit import EmitError
from ..checkpoint.load import load_checkpoint
from ..checkpoint.handoff import SLOW_CHECK_IDS, check_handoff, handoff_checklist, with_checks
from ..hosts.host import SiteError, list_sites
from ._progress import LiveChecks, wants_live_line
from ._flags import speak
from ._config import command_config

_MARK = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL", "skip": "skip", "unknown": "??  "}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check-handoff", help="verify what the hand-off terminal will see for a checkpoint",
        description="Check a written checkpoint from outside: files, shared filesystem, ari in a "
                    "login shell, ARI_CHECKPOINT_DIR, sbatch --test-only, module loads.")
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help="the checkpoint directory")
    parser.add_argument("--json", action="store_true", help='print {"checks": [...], "steps": [...]}')
    parser.add_argument("--site", metavar="NAME|FILE",
                        help="check against a demo site instead of this machine (a checkpoint in "
                             "the local demo workspace counts as being in the site's workspace); "
                             "default: the demo site the checkpoint was written on, else this "
                             "machine; --site '' for this machine")
    parser.add_argument("--timeout", type=float, default=20.0, metavar="SECONDS",
                        help="per command (default 20)")
    parser.add_argument("--port", type=int, help="dashboard port (default: the first free pair from 8765 + 2 × (your uid mod 500))")
    parser.set_defaults(handler=run)


MAX_DASHBOARD_PORT = 65534
"""The dashboard listens on --port (HTTP) and the port after it (WebSocket)."""


def run(args: argparse.Namespace) -> int:
    lang = output_lang(args)
    if args.port is not None and not 1 <= args.port <= MAX_DASHBOARD_PORT:
        print(error_line("check-handoff", t("cli.handoff_port_range", lang, port=args.port), lang),
              file=sys.stderr)
        return 2
    try:
        state = load_checkpoint(args.checkpoint)
    except (EmitError, OSError, ValueError):
        state = None  # the checks say what is wrong with it
    site = _site_to_check(args.site, _written_on(state), lang)
    try:
        # As `emit --site` does: the local demo workspace stands for the site's workspace.
        host = open_host(site or None, _config())
    except SiteError as exc:
        print(error_line("check-handoff", error_text(exc, lang), lang), file=sys.stderr)
        return 2
    live = LiveChecks(SLOW_CHECK_IDS, enabled=wants_live_line(sys.stderr, args.json),
                      label=t("cli.live.checking_handoff", lang),
                      name_of=lambda check_id: _check_name(check_id, lang))
    with live:
        checks = check_handoff(args.checkpoint, host=host, timeout=args.timeout, on_done=live.done)
    if len(checks) == 1 and (checks[0].data or {}).get("not_a_checkpoint"):
        return _not_a_checkpoint(checks[0], args.json, lang)
    try:
        steps = [] if state is None else with_checks(
            handoff_checklist(state.choices(), args.checkpoint, port=args.port, env=host.env), checks,
            state.probe_list())  # as the wizard's checklist does
    except (EmitError, ValueError):
        steps = []
    failed = any(c.status == "fail" for c in checks)
    if args.json:
        print(json.dumps({"checks": [_spoken(c) for c in checks],
                          "steps": [s.to_json() for s in steps]}, indent=2, ensure_ascii=False))
        return 1 if failed else 0

    print(report(checks, steps, lang, terminal_width(sys.stdout)))
    return 1 if failed else 0


def _written_on(state) -> str:
    """The bundled demo site a checkpoint's state was written on ("" for a real machine's,
    or when the checkpoint could not be read)."""

    name = (state.site_name or "") if state is not None else ""
    return name if name in list_sites() else ""


def _site_to_check(given: str | None, written_on: str, lang: str) -> str:
    """``--site`` as given; when left out, the demo site the checkpoint was written on (said
    on stderr), so a demo run's hand-off is checked where it was made."""
    width = terminal_width(sys.stderr)
    if given is None:
        if written_on:
            print(hang("", t("cli.handoff_site_recorded", lang, site=written_on), width, indent=2),
                  file=sys.stderr)
        return written_on
    if written_on and given and given != written_on:
        label = t("cli.warning", lang)
        print(hang(label + sentence_gap(label),
                   t("cli.handoff_site_differs", lang, written=written_on, site=given), width),
              file=sys.stderr)
    return given


def report(checks, steps, lang: str, columns: int | None = None) -> str:
    """Every check line (with its fix) and the numbered steps, in ``lang``; with ``columns``
    (a terminal's) the prose is wrapped to fit, never a command (it is copied as one line)."""

    lines = []
    for check in checks:
        mark = _MARK.get(check.status, check.status) if lang == "en" else t(f"status_{check.status}", lang)
        name = _check_name(check.id, lang)
        label = t("handoff.check_label", lang, name=name)  # the colon is the language's
        lines.append(hang(f"[{mark}] {label}{sentence_gap(label)}", check.text(lang), columns))
        if check.fix and check.status in ("fail", "warn", "unknown"):
            fix = t("cli.fix_line", lang, fix=speak("check-handoff", check.fix_text(lang)))
            lines.append(hang("       ", fix, columns))
    for number, step in enumerate(steps, start=1):
        state = t("handoff.state." + step.state.replace(" ", "_"), lang)
        lines.append("\n" + hang(f"{number}. ", f"{render(step.title, lang)} [{state}]", columns))
        if step.command:
            lines.append(f"   {step.command}")
        if step.warning:
            label = t("cli.warning", lang)
            lines.append(hang("   ", label + sentence_gap(label) + render(step.warning, lang), columns))
        lines += [hang("   ", render(extra, lang), columns) if isinstance(extra, Text)
                  else f"   {extra}" for extra in step.extra_commands]
        if step.detail:
            lines.append(hang("   ", render(step.detail, lang), columns))
    return "\n".join(lines)


def _spoken(check) -> dict:
    data = check.to_json()
    if data.get("fix"):
        data["fix"] = speak("check-handoff", data["fix"])
    return data


def _check_name(check_id: str, lang: str) -> str:
    """English keeps the ids (what a script greps); ja and zh read the check's name."""
    key = f"handoff.check_name.{check_id}"  # none for sbatch: a command's name in every language
    return t(key, lang) if lang != "en" and key in messages() else check_id


def _not_a_checkpoint(check, json_output: bool, lang: str) -> int:
    """One message and stop: no other check means anything without a checkpoint."""
    if json_output:
        print(json.dumps({"checks": [check.to_json()], "steps": []}, indent=2, ensure_ascii=False))
    else:
        said = check.text(lang) + ("." if lang == "en" else "。")
        print(f"ari-jupyter check-handoff: {said}{sentence_gap(said)}{check.fix_text(lang)}",
              file=sys.stderr)
    return 1


def _config():
    """The wizard's site config (demo workspace template); a bad value is named and left out."""

    return command_config("check-handoff")
