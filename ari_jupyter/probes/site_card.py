"""The site card: what the probes found about a site that a hub's spawner form needs.

A site admin runs ``ari-jupyter site-card`` once on a login node and gets the partitions
(their state, time limit, nodes, CPUs and memory per node, GRES), the module system with its
MPI and CUDA modules, and the SLURM version: nothing of the user who ran it (no job, no path,
no user name), and every value through the one redactor. From the card come a batchspawner
``options_form`` with the ``options_from_form`` that checks what a user sent against the card
(each value ends up in a ``#SBATCH`` line, so only values the card allows get through), and
ProfilesSpawner profiles, one per partition.
"""
from __future__ import annotations

import html
import pprint
import re
from typing import Any, Iterable, Mapping

from ..base.redact import redact_tree
from ..i18n import t
from ..slurm.parsers import parse_gres_spec, parse_slurm_duration

CARD_FORMAT = "ari-jupyter site card 1"
PROBES_FOR_CARD = ("sbatch", "partitions", "gres", "modules", "mpi")
"""The probes a card is made of (the others describe the user's job or workspace)."""

UNLIMITED = ("infinite", "unlimited")
MAX_FORM_HOURS = 24 * 7
"""The form's hour field for a partition without a time limit: a week, not forever."""


class FormError(ValueError):
    """What a user sent in the spawner form is not something the card allows; the message is
    shown above the form again."""


def _minutes(limit: str) -> int | None:
    """A partition's time limit in minutes; None when it has none (``infinite``) or sinfo's
    text is not a duration."""
    if limit.strip().lower() in UNLIMITED:
        return None
    try:
        return parse_slurm_duration(limit) // 60
    except ValueError:
        return None


def _gpus(gres: Iterable[str]) -> dict[str, int]:
    """GPUs per node by type (``gpu:a100:4(S:0-1)`` -> ``{"a100": 4}``; an untyped ``gpu:2``
    counts under ``""``)."""
    found: dict[str, int] = {}
    for entry in gres:
        spec = parse_gres_spec(entry)
        if spec and spec.name == "gpu" and spec.count:
            found[spec.type or ""] = max(found.get(spec.type or "", 0), spec.count)
    return found


def _partition(entry: Mapping[str, Any]) -> dict[str, Any]:
    limit = str(entry.get("timelimit") or "")
    gres = [str(g) for g in entry.get("gres") or []]
    return {
        "name": str(entry["name"]),
        "default": bool(entry.get("default")),
        "state": str(entry.get("avail") or ""),
        "max_time": limit,
        "max_time_minutes": _minutes(limit),
        "nodes": entry.get("nodes"),
        "cpus_per_node": entry.get("cpus"),
        "memory_mb_per_node": entry.get("memory_mb"),
        "gres": gres,
        "gpus_per_node": _gpus(gres),
    }


def build_card(results: Iterable, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The card from probe results (``ProbeResult``s of :data:`PROBES_FOR_CARD`), redacted."""
    data = {result.id: (result.data or {}) for result in results}
    modules = data.get("modules") or {}
    mpi = data.get("mpi") or {}
    srun = mpi.get("srun") or {}
    partitions = [_partition(p) for p in (data.get("partitions") or {}).get("partitions") or []]
    card = {
        "format": CARD_FORMAT,
        "slurm_version": (data.get("sbatch") or {}).get("version"),
        "default_partition": (data.get("partitions") or {}).get("default"),
        "partitions": partitions,
        "gpu_types": list((data.get("gres") or {}).get("gpu_types") or []),
        "modules": {
            "system": modules.get("system"),
            "mpi": list(modules.get("mpi_modules") or []),
            "cuda": list(modules.get("cuda_modules") or []),
            "all": list(modules.get("modules") or []),
        },
        "launcher": mpi.get("launcher"),
        "srun_mpi_plugins": list(srun.get("mpi_plugins") or []),
    }
    return redact_tree(card, env)


# ---- the batchspawner form ------------------------------------------------------------------

def _limit_text(partition: Mapping[str, Any], lang: str) -> str:
    if partition["max_time_minutes"] is None:
        return t("site_card.no_time_limit", lang)
    return t("site_card.time_limit", lang, limit=partition["max_time"])


def partition_line(partition: Mapping[str, Any], lang: str = "en") -> str:
    """One partition in a sentence (the form's choice and the CLI's line)."""
    gpus = ", ".join(f"{count} × {kind or 'gpu'}" for kind, count in partition["gpus_per_node"].items())
    memory = partition["memory_mb_per_node"]
    return t("site_card.partition", lang, name=partition["name"],
             default=t("site_card.default_mark", lang) if partition["default"] else "",
             state=partition["state"], limit=_limit_text(partition, lang),
             nodes=partition["nodes"], cpus=partition["cpus_per_node"],
             memory=f"{memory} MB" if isinstance(memory, int) else "?",
             gpus=t("site_card.gpus", lang, gpus=gpus) if gpus else "")


def _usable(card: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Partitions a user may choose: up, with a known node and CPU count."""
    return [p for p in card["partitions"] if p["state"] == "up"
            and isinstance(p["nodes"], int) and isinstance(p["cpus_per_node"], int)]


def _max_hours(partition: Mapping[str, Any]) -> int:
    minutes = partition["max_time_minutes"]
    return MAX_FORM_HOURS if minutes is None else max(1, minutes // 60)


def _runtime(minutes: int, limit: int | None) -> str:
    """``--time`` for ``minutes``, capped at a partition's limit (a 30-minute debug partition
    gets 00:30:00 for "1 hour", which sbatch would otherwise refuse)."""
    minutes = minutes if limit is None else min(minutes, limit)
    return f"{minutes // 60:02d}:{minutes % 60:02d}:00"


def options_form(card: Mapping[str, Any], lang: str = "en") -> str:
    """The HTML of batchspawner's ``options_form``: a partition, nodes, tasks per node, hours,
    and GPUs per node where a partition has them. Bounds shown are the widest of any
    partition; :func:`options_from_form` holds each value to the chosen partition's."""
    usable = _usable(card)
    if not usable:
        raise ValueError("the site card lists no partition that is up")
    chosen = next((p for p in usable if p["default"]), usable[0])

    def field(name: str, label: str, value: int, high: int) -> str:
        return (f'<div class="form-group"><label for="ari-{name}">{html.escape(label)}</label>'
                f'<input class="form-control" type="number" id="ari-{name}" name="{name}" '
                f'min="{0 if name == "gpus" else 1}" max="{high}" value="{value}" required></div>')

    choices = "".join(
        f'<option value="{html.escape(p["name"])}"{" selected" if p is chosen else ""}>'
        f'{html.escape(partition_line(p, lang))}</option>' for p in usable)
    parts = [
        f'<div class="form-group"><label for="ari-partition">{html.escape(t("site_card.form.partition", lang))}'
        f'</label><select class="form-control" id="ari-partition" name="partition">{choices}</select></div>',
        field("nodes", t("site_card.form.nodes", lang), min(2, chosen["nodes"]),
              max(p["nodes"] for p in usable)),
        field("tasks_per_node", t("site_card.form.tasks_per_node", lang), chosen["cpus_per_node"],
              max(p["cpus_per_node"] for p in usable)),
        field("hours", t("site_card.form.hours", lang), 1, max(_max_hours(p) for p in usable)),
    ]
    most_gpus = max((max(p["gpus_per_node"].values(), default=0) for p in usable), default=0)
    if most_gpus:
        parts.append(field("gpus", t("site_card.form.gpus", lang), 0, most_gpus))
    return "\n".join(parts)


def _whole(formdata: Mapping[str, Any], name: str, low: int, high: int, partition: str,
           lang: str, default: int | None = None) -> int:
    raw = formdata.get(name, [])
    raw = raw[0] if isinstance(raw, (list, tuple)) and raw else raw
    if (raw is None or raw == [] or raw == "") and default is not None:
        return default
    text = str(raw).strip()
    if not re.fullmatch(r"[0-9]{1,6}", text) or not low <= int(text) <= high:
        raise FormError(t("site_card.form.out_of_range", lang, field=t(f"site_card.form.{name}", lang),
                          value=text[:40], low=low, high=high, partition=partition))
    return int(text)


def options_from_form(card: Mapping[str, Any], formdata: Mapping[str, Any],
                      lang: str = "en") -> dict[str, str]:
    """batchspawner's user options from the submitted form, each checked against the card:
    ``partition``, ``runtime`` and ``options`` (``--nodes``, ``--ntasks-per-node``), and
    ``gres`` when GPUs were asked for. Raises :class:`FormError` on anything else."""
    usable = {p["name"]: p for p in _usable(card)}
    name = formdata.get("partition", [""])
    name = str(name[0] if isinstance(name, (list, tuple)) and name else name)
    partition = usable.get(name)
    if partition is None:
        raise FormError(t("site_card.form.bad_partition", lang, value=name[:40],
                          partitions=", ".join(usable)))
    nodes = _whole(formdata, "nodes", 1, partition["nodes"], name, lang)
    tasks = _whole(formdata, "tasks_per_node", 1, partition["cpus_per_node"], name, lang)
    hours = _whole(formdata, "hours", 1, _max_hours(partition), name, lang)
    gpu_types = partition["gpus_per_node"]
    gpus = _whole(formdata, "gpus", 0, max(gpu_types.values(), default=0), name, lang, default=0)
    options = {"partition": name, "runtime": _runtime(hours * 60, partition["max_time_minutes"]),
               "options": f"--nodes={nodes} --ntasks-per-node={tasks}"}
    if gpus:
        kind = next(iter(gpu_types))
        options["gres"] = f"gpu:{kind}:{gpus}" if kind else f"gpu:{gpus}"
    return options


# ---- ProfilesSpawner profiles and the hub config ---------------------------------------------

def profiles(card: Mapping[str, Any], lang: str = "en",
             spawner: str = "batchspawner.SlurmSpawner") -> list[tuple[str, str, str, dict]]:
    """wrapspawner ``ProfilesSpawner.profiles``: per usable partition, its whole first node
    (all CPUs as tasks, all its GPUs) for an hour, or its limit when shorter."""
    found = []
    for p in _usable(card):
        settings = {"req_partition": p["name"], "req_runtime": _runtime(60, p["max_time_minutes"]),
                    "req_options": f"--nodes=1 --ntasks-per-node={p['cpus_per_node']}"}
        gpus = p["gpus_per_node"]
        if gpus:
            kind, count = next(iter(gpus.items()))
            settings["req_gres"] = f"gpu:{kind}:{count}" if kind else f"gpu:{count}"
        found.append((partition_line(p, lang), f"ari-{p['name']}", spawner, settings))
    return found


HUB_CONFIG_KINDS = ("form", "profiles")


def hub_config(card: Mapping[str, Any], kind: str, lang: str = "en") -> str:
    """A ``jupyterhub_config.py`` fragment: the form (it imports this module, so the hub's
    Python needs ari-jupyter) or the profiles (plain values, nothing to import)."""
    literal = pprint.pformat(dict(card), indent=1, width=100, sort_dicts=False)
    if kind == "form":
        return (
            f"# The spawner form from the site card (ari-jupyter site-card --hub-config form --lang {lang}).\n"
            "# Run it again when the partitions change: the form offers what the card lists, no more.\n"
            "from ari_jupyter.probes.site_card import options_form, options_from_form\n\n"
            f"ARI_SITE_CARD = {literal}\n"
            f"c.BatchSpawnerBase.options_form = options_form(ARI_SITE_CARD, {lang!r})\n"
            "c.BatchSpawnerBase.options_from_form = (\n"
            f"    lambda formdata: options_from_form(ARI_SITE_CARD, formdata, {lang!r}))\n"
        )
    if kind == "profiles":
        listed = pprint.pformat(profiles(card, lang), indent=1, width=100, sort_dicts=False)
        return (
            f"# ProfilesSpawner profiles from the site card (ari-jupyter site-card --hub-config profiles --lang {lang}).\n"
            "# One per partition: its first node, whole, for an hour. Edit them as the site likes.\n"
            'c.JupyterHub.spawner_class = "wrapspawner.ProfilesSpawner"\n'
            f"c.ProfilesSpawner.profiles = {listed}\n"
        )
    raise ValueError(f"unknown hub config kind {kind!r}; choose one of {HUB_CONFIG_KINDS}")
