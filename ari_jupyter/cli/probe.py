"""``ari-jupyter probe``: check this machine (or a demo site) the way the wizard does.

Human output prints one line per probe in the wizard's order (the same on every run), each as
soon as it and every probe before it have answered; on a terminal the live line on stderr
names the probes still running, so a slow controller shows up there. ``--json`` prints a
single object once everything is in. Exit code: 0 when no probe failed, 1 when one did, 2 on
usage errors.
"""
from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path
from typing import Optional, TextIO

from ._columns import columns, hang, pad, terminal_width
from ..i18n import Text, error_text, labels, sentence_gap, t
from . import output_lang
from ._localized import error_line
from ..probes import selected_ids, ProbeContext, PROBE_IDS, run_probes_sync, STATUSES
from ._config import command_config
from ..slurm.allocation import Allocation
from ..probes.context import valid_partition
from ..wizard.config import open_host
from ..hosts.host import SiteError
from ..hosts.recording import RecordingHost
from ._progress import LiveChecks, wants_live_line
from ..base.files import atomic_write

MAX_TIMEOUT = 600.0
RECORD_MODE = 0o600
"""A recorded site file is redacted, yet it holds paths, user names and command output: the
owner decides whom to share it with (chmod), nobody reads it by default."""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "probe",
        help="check the site: sbatch, partitions, GRES, shared FS, MPI, modules, GPUs, ARI",
        description="Run the site probes concurrently and report a verdict per probe "
        "(ok, warn, fail, skip, unknown) with its evidence and fix.",
    )
    parser.add_argument("--json", action="store_true",
                        help='print {"allocation", "probes", "elapsed_s"} as one JSON object')
    # --workspace too: emit's name for the same folder
    parser.add_argument("--checkpoint-dir", "--workspace", dest="checkpoint_dir", metavar="DIR",
                        help="directory the shared-filesystem probe judges "
                        "(default: the configured workspace)")
    parser.add_argument("--partition", metavar="P",
                        help="partition to test (default: ARI_SLURM_PARTITION, then the allocation's)")
    parser.add_argument("--timeout", metavar="SECONDS", type=float,
                        help="seconds each probe may take (default 10, or the site config)")
    parser.add_argument("--only", metavar="ID,...",
                        help="comma-separated probe ids to run (default: all)")
    parser.add_argument("--site", metavar="NAME|FILE",
                        help="probe a recorded demo site instead of this machine "
                        "(sx40, rccs-cloud, gres-cluster, laptop, or a site JSON file)")
    parser.add_argument("--record-site", metavar="FILE",
                        help="also record what the probes ran and saw on this machine as a demo "
                        "site file (secrets redacted); `--site FILE` replays it without SLURM")
    parser.add_argument("--force", action="store_true",
                        help="with --record-site: replace an existing file")
    parser.set_defaults(handler=run)


class UsageError(ValueError):
    """Bad command-line input: exit code 2."""


def _parse_only(text: Optional[str]) -> Optional[list[str]]:
    if text is None:
        return None
    ids = [part.strip() for part in text.split(",") if part.strip()]
    if not ids:
        raise UsageError(Text("cli.probe.only_empty"))
    try:
        selected_ids(ids)
    except ValueError as exc:  # its Text names the unknown ids
        raise UsageError(*exc.args) from exc
    return ids


def _load_config():
    """The site's Jupyter config for ari_jupyter (a bad value is named and left out)."""

    return command_config("probe")


def _site_defaults(host, config):
    """Workspace and per-probe timeouts, chosen exactly as the wizard chooses them."""
    return config.workspace_for_host(host), config.probe_timeout, dict(config.probe_timeouts)


def build_context(args, host, config=None):
    """The ProbeContext for these arguments (raises UsageError)."""

    only = _parse_only(args.only)
    if args.timeout is not None and not 0 < args.timeout <= MAX_TIMEOUT:
        raise UsageError(Text("cli.timeout_range", {"flag": "--timeout", "max": f"{MAX_TIMEOUT:g}",
                                                    "value": f"{args.timeout:g}"}))
    if args.partition is not None and not valid_partition(args.partition):
        raise UsageError(Text("cli.probe.not_a_partition", {"value": repr(args.partition)}))
    workspace, timeout, timeouts = _site_defaults(host, config or _load_config())
    if args.timeout is not None:
        timeout, timeouts = args.timeout, {}
    return ProbeContext(
        allocation=Allocation.from_env(host.env),
        partition=args.partition,
        checkpoint_dir=args.checkpoint_dir,
        timeout=timeout,
        timeouts=timeouts,
        only=only,
        workspace=workspace,
    )


def open_site(site: Optional[str], config=None):
    """This machine, or a demo site with its demo workspace mapped as the wizard maps it."""

    try:
        return open_host(site or None, config)
    except SiteError as exc:
        raise UsageError(*exc.args) from exc


def format_line(result, lang: str = "en", columns: int | None = None) -> str:
    """A verdict line and its fix; with ``columns`` (a terminal's), wrapped under the text."""
    status = result.status if lang == "en" else t(f"status_{result.status}", lang)
    width, name_width = _status_width(lang), _name_width(lang)
    lines = [hang(f"{pad(status, width)}{pad(check_name(result.id, lang), name_width)}",
                  result.text(lang), columns)]
    fix = result.fix_text(lang)
    if fix and result.status in ("warn", "fail", "unknown"):
        label = "fix:" if lang == "en" else t("checks_fix", lang)
        lines.append(hang(f"{'':<{width + name_width}}{label}{sentence_gap(label)}", fix, columns))
    return "\n".join(lines)


def check_name(probe_id: str, lang: str) -> str:
    """A check as the wizard names it in ``lang``; English keeps the id, which scripts grep and
    ``--only`` takes."""
    key = f"probe_{probe_id}"
    return probe_id if lang == "en" or key not in labels("en") else t(key, lang)


def _name_width(lang: str) -> int:
    """The check column: its widest name in ``lang`` and a space (11 for the English ids)."""

    return max(11, 1 + max(columns(check_name(pid, lang)) for pid in PROBE_IDS))


def _status_width(lang: str) -> int:
    """The status column: its widest word in ``lang`` and a space (スキップ takes 8 columns)."""
    words = [s if lang == "en" else t(f"status_{s}", lang) for s in ("ok", "warn", "fail", "skip", "unknown")]
    return max(8, 1 + max(columns(w) for w in words))


class InOrder:
    """Passes results on in the order of ``ids``: each as soon as it and every one before it
    are in (probes finish in any order; the output must not change between runs)."""

    def __init__(self, ids, emit) -> None:
        self._waiting = list(ids)
        self._arrived: dict = {}
        self._emit = emit

    def add(self, result) -> None:
        self._arrived[result.id] = result
        while self._waiting and self._waiting[0] in self._arrived:
            self._emit(self._arrived.pop(self._waiting.pop(0)))


def run(args, stdout: Optional[TextIO] = None, stderr: Optional[TextIO] = None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    record_to = getattr(args, "record_site", None)
    try:
        if record_to and args.site:
            raise UsageError(Text("cli.probe.record_needs_this_machine"))
        if record_to and Path(record_to).exists() and not args.force:
            raise UsageError(Text("cli.probe.record_exists", {"path": record_to}))
        config = _load_config()
        host = open_site(args.site, config)
        if record_to:
            host = RecordingHost(host)
        ctx = build_context(args, host, config)
    except UsageError as exc:
        lang = output_lang(args)
        stderr.write(error_line("probe", error_text(exc, lang), lang) + "\n")
        return 2

    lang = output_lang(args)
    started = time.monotonic()
    if not args.json:
        key = "cli.probe.demo_site" if host.is_demo else "cli.probe.this_machine"
        stdout.write(t(key, lang, host=host.name) + "\n")
        stdout.flush()

    ids = selected_ids(ctx.only)
    live = LiveChecks(ids, enabled=wants_live_line(stderr, args.json), stream=stderr,
                      label=t("cli.live.probing", lang), name_of=lambda pid: check_name(pid, lang))
    width = terminal_width(stdout)
    printer = InOrder(ids, lambda result: live.write(stdout, format_line(result, lang, width) + "\n"))

    def arrived(result) -> None:
        live.done(result.id)
        if not args.json:
            printer.add(result)

    with live:
        results = run_probes_sync(host, ctx, on_result=arrived)
    elapsed = time.monotonic() - started
    failed = any(r.status == "fail" for r in results)
    if record_to:
        site = host.to_site(Path(record_to).stem)
        try:
            atomic_write(Path(record_to), (json.dumps(site, indent=2) + "\n").encode(), RECORD_MODE)
        except OSError as exc:
            said = t("cli.cannot_write", lang, path=record_to, error=exc.strerror or str(exc))
            stderr.write(error_line("probe", said, lang) + "\n")
            return 2
        replay = f"ari-jupyter probe --site {shlex.quote(record_to)}"
        stderr.write(t("cli.probe.recorded", lang, count=len(site["commands"]), path=record_to,
                       command=replay) + "\n")
    if args.json:
        order = {probe_id: n for n, probe_id in enumerate(PROBE_IDS)}
        payload = {
            "allocation": ctx.allocation.to_json(),
            "probes": [r.to_json() for r in sorted(results, key=lambda r: order[r.id])],
            "elapsed_s": round(elapsed, 3),
        }
        json.dump(payload, stdout, indent=2)
        stdout.write("\n")
    else:
        statuses = [r.status for r in results]
        counts = {s: statuses.count(s) for s in STATUSES if s in statuses}  # a fixed order
        tally = t("list.separator", lang).join(
            f"{n} {s}" if lang == "en" else t(f"status_count_{s}", lang, count=n)
            for s, n in counts.items())
        key = "cli.probe.done_one" if len(results) == 1 else "cli.probe.done"
        stdout.write(t(key, lang, count=len(results), seconds=f"{elapsed:.2f}", tally=tally) + "\n")
    return 1 if failed else 0
