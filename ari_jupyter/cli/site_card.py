"""``ari-jupyter site-card``: the site's partitions, GRES and modules, for a hub's spawner form.

Runs the probes a card needs (sbatch, partitions, gres, modules, mpi) on this machine or a demo
site and prints the card: one line per partition, the modules, the launcher. ``--json`` prints
the card itself; ``--hub-config form|profiles`` prints a ``jupyterhub_config.py`` fragment made
from it (the admin guide, `ari-jupyter guide admin`). Exit code: 0 with a card, 1 when sinfo listed no partition that is up,
2 on usage errors.
"""
from __future__ import annotations

import json
import sys
from typing import Optional, TextIO

from ..i18n import Text, error_text, t
from . import output_lang
from ._localized import error_line
from .probe import UsageError, open_site
from ..probes import ProbeContext, run_probes_sync
from ..probes.site_card import PROBES_FOR_CARD, build_card, hub_config, partition_line
from ..slurm.allocation import Allocation


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "site-card",
        help="the site's partitions, GRES and modules, for a hub's spawner form",
        description="Probe the site's partitions (limits, GRES), modules and MPI launcher and "
        "print them as a card, redacted and free of anything about your job or files; or a "
        "jupyterhub_config.py fragment made from it.",
    )
    parser.add_argument("--json", action="store_true", help="print the card as one JSON object")
    parser.add_argument("--hub-config", choices=("form", "profiles"), default=None,
                        help="print a jupyterhub_config.py fragment: a batchspawner options_form "
                        "(form) or wrapspawner ProfilesSpawner profiles (profiles)")
    parser.add_argument("--site", metavar="NAME|FILE",
                        help="the card of a recorded demo site instead of this machine's "
                        "(sx40, rccs-cloud, gres-cluster, laptop, or a site JSON file)")
    parser.add_argument("--timeout", metavar="SECONDS", type=float, default=10.0,
                        help="seconds each probe may take (default 10)")
    parser.set_defaults(handler=run)


def _card(args):
    """The card of this machine or of ``--site``, and the partitions probe's result."""

    if not 0 < args.timeout <= 600:
        raise UsageError(Text("cli.timeout_range", {"flag": "--timeout", "max": "600",
                                                    "value": f"{args.timeout:g}"}))
    host = open_site(args.site)
    ctx = ProbeContext(allocation=Allocation.from_env(host.env), timeout=args.timeout,
                       only=list(PROBES_FOR_CARD))
    results = run_probes_sync(host, ctx)
    partitions = next(r for r in results if r.id == "partitions")
    return build_card(results, host.env), partitions


def run(args, stdout: Optional[TextIO] = None, stderr: Optional[TextIO] = None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    lang = output_lang(args)
    try:
        card, partitions = _card(args)
    except UsageError as exc:
        stderr.write(error_line("site-card", error_text(exc, lang), lang) + "\n")
        return 2
    if not any(p["state"] == "up" for p in card["partitions"]):
        stderr.write(error_line("site-card", t("cli.site_card.no_partitions", lang,
                                               reason=partitions.text(lang)), lang) + "\n")
        return 1
    if args.hub_config:
        stdout.write(hub_config(card, args.hub_config, lang))
        return 0
    if args.json:
        json.dump(card, stdout, indent=2, ensure_ascii=False)
        stdout.write("\n")
        return 0
    none = t("site_card.none", lang)
    stdout.write(t("cli.site_card.header", lang, version=card["slurm_version"] or "?",
                   count=len(card["partitions"])) + "\n")
    for partition in card["partitions"]:
        stdout.write("  " + partition_line(partition, lang) + "\n")
    modules = card["modules"]
    if modules["system"]:
        stdout.write(t("cli.site_card.modules", lang, system=modules["system"],
                       mpi=", ".join(modules["mpi"]) or none,
                       cuda=", ".join(modules["cuda"]) or none) + "\n")
    else:
        stdout.write(t("cli.site_card.no_modules", lang) + "\n")
    stdout.write(t("cli.site_card.launcher", lang, launcher=card["launcher"] or none,
                   plugins=", ".join(card["srun_mpi_plugins"]) or none) + "\n")
    stdout.write(t("cli.site_card.next", lang) + "\n"
                 "  ari-jupyter site-card --hub-config form >> jupyterhub_config.py\n")
    return 0
