"""``ari-jupyter allocation [--json] [--site NAME]``: what SLURM says about the job this
shell runs in, or about the job of a recorded demo site (what the wizard's step 1 shows there).

Reads only environment variables (no squeue: remaining time is the ``time_left``
probe). Problems with individual variables go to stderr in human mode and into
``problems`` in JSON; the exit code is 0 either way, because a half-readable
allocation is information, not a failure.
"""
from __future__ import annotations

import json
import sys
from typing import Optional, TextIO

from ..i18n import error_text, render, t
from . import output_lang
from ._columns import columns, pad
from ._localized import error_line
from .probe import UsageError, open_site
from ..slurm.allocation import Allocation, format_counts
from ..slurm.hostlist import abbreviate


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "allocation",
        help="show the SLURM allocation read from the environment",
        description="Show the SLURM allocation this process runs in, read from SLURM_* "
        "and CUDA_VISIBLE_DEVICES. Malformed variables are reported, never fatal.",
    )
    parser.add_argument("--json", action="store_true", help="print the allocation as one JSON object")
    parser.add_argument("--site", metavar="NAME|FILE",
                        help="the allocation of a recorded demo site instead of this shell's "
                        "(sx40, rccs-cloud, gres-cluster, laptop, or a site JSON file)")
    parser.set_defaults(handler=run)


def run(args, env=None, stdout: Optional[TextIO] = None, stderr: Optional[TextIO] = None) -> int:
    lang = output_lang(args)
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    if getattr(args, "site", None):
        try:
            env = open_site(args.site).env  # the demo's job, as the wizard reads it
        except UsageError as exc:
            stderr.write(error_line("allocation", error_text(exc, lang), lang) + "\n")
            return 2
    allocation = Allocation.from_env(env)
    if args.json:
        json.dump(allocation.to_json(), stdout, indent=2)
        stdout.write("\n")
        return 0
    lines = describe(allocation, lang)
    width = max([12, *(columns(label) for label, _ in lines)]) + 1
    for label, value in lines:
        stdout.write(f"{pad(label, width)}{value}\n" if label else f"{value}\n")
    for problem in allocation.problems:
        stderr.write(t("cli.allocation.problem", lang, problem=render(problem, lang)) + "\n")
    return 0


def _or_dash(value) -> str:
    return "-" if value is None or value == "" else str(value)


def describe(allocation, lang: str = "en") -> list[tuple[str, str]]:
    """(label, text) lines for humans; outside an allocation a single explanatory line."""

    def say(key: str, **params) -> str:
        return t(f"cli.allocation.{key}", lang, **params)

    if not allocation.inside_allocation:
        return [("", say("outside"))]
    a = allocation
    job = _or_dash(a.job_id)
    if a.job_name:
        job += f" ({a.job_name})"
    if a.cluster:
        job += say("on_cluster", cluster=a.cluster)
    nodes = _or_dash(a.num_nodes)
    if a.nodelist:
        nodes += say("nodelist", nodelist=abbreviate(a.nodelist), first=a.first_node)
    tasks = _or_dash(a.ntasks)
    if a.tasks_per_node is not None:
        tasks += say("tasks_per_node", counts=format_counts(a.tasks_per_node))
    cpus = say("cpus", per_node=format_counts(a.cpus_per_node) if a.cpus_per_node is not None else "-",
               on_node=_or_dash(a.cpus_on_node), per_task=_or_dash(a.cpus_per_task))
    gpus = say("gpus", on_node=_or_dash(a.gpus_on_node), job=_or_dash(a.job_gpus),
               per_task=_or_dash(a.gpus_per_task))
    if a.cuda_visible_devices is not None:
        gpus += say("cuda", value=repr(a.cuda_visible_devices))
    if a.mem_per_node_mb is not None:
        memory = say("mem_per_node", mb=a.mem_per_node_mb)
    elif a.mem_per_cpu_mb is not None:
        memory = say("mem_per_cpu", mb=a.mem_per_cpu_mb)
    else:
        memory = "-"
    return [
        (say("label.job"), job),
        (say("label.partition"), say("partition", partition=_or_dash(a.partition),
                                     account=_or_dash(a.account), qos=_or_dash(a.qos))),
        (say("label.nodes"), nodes),
        (say("label.tasks"), tasks),
        (say("label.cpus"), cpus),
        (say("label.gpus"), gpus),
        (say("label.memory"), memory),
        (say("label.submit_dir"), _or_dash(a.submit_dir)),
    ]
