"""Defaults that fit the site, and a site switch that keeps only what the user typed.

``derive(config, host, env, state)`` computes every site-derived value from what is known so
far (the site's config, the machine's environment, the allocation, the probes' answers):
CPUs that fit a node of the partition (and the profile's tasks per node), a walltime within
the partition's limit, nodes the partition has, the kind its hardware suggests, the admin's
suggested modules this site offers.

``follow(state, defaults)`` applies them to the fields the user has not touched: a field
follows the site while it is empty or still holds the default applied last, so a late probe
answer refines the defaults without ever overwriting a choice. ``use_site`` moves a state to
another site: afterwards every site-derived value equals a fresh wizard's there; the
experiment text (title, goal, metrics, files) and the language stay, and modules the user
added stay where the new site offers them (``settle_carried_modules``, once its modules check
answers; ``modules_left_out`` says which were dropped).
"""
from __future__ import annotations

from typing import Any, Mapping

from .config import default_partition_choice, seed_site
from ..ari.partition import resolve_partition
from ..ari.profile import ExecutionProfile, PRESETS
from ..slurm.allocation import Allocation
from .state import WizardState
from ..i18n import DEFAULT_LANGUAGE, labels, message, t, text

SITE_FIELDS = ("partition", "partition_source", "max_cpus", "walltime", "nodes", "mem_gb",
               "allow_no_gres", "profile", "module_loads", "workspace")
"""Every field whose default comes from the site."""

USER_FIELDS = ("title", "goal", "metrics", "min_expected_metric", "provided_files", "lang")
"""What the user typed: kept across a site switch."""

_APPLIED = "_site_defaults_applied"
_CARRIED = "_site_modules_carried"  # modules added on the previous site, not yet checked here
_LEFT_OUT = "_site_modules_left_out"  # (modules, site) the last switch dropped


def derive(config: Any, host: Any, env: Mapping[str, str] | None, state: Any) -> dict[str, Any]:
    """The site-derived value of every field of ``SITE_FIELDS`` known from ``state``'s
    allocation and probe results (a value is left out while nothing tells it)."""
    out: dict[str, Any] = {"workspace": config.workspace_for_host(host, env)}
    host_env = dict(host.env)
    allocation = state.allocation
    probes = state.probe_results or {}
    partitions = _data(probes, "partitions")
    sinfo_default = partitions.get("default") if isinstance(partitions.get("default"), str) else None

    choice = default_partition_choice(config, host_env, sinfo_default)
    if not choice.partition:
        lookup = dict(host_env)
        if allocation is not None and allocation.partition:
            lookup.setdefault("SLURM_JOB_PARTITION", allocation.partition)
        choice = resolve_partition(None, lookup, None, for_wizard=True, sinfo_default=sinfo_default)
    out["partition"], out["partition_source"] = choice.partition or "", choice.source or ""
    # CPUs, walltime and nodes fit the partition the jobs will go to: the one the user chose,
    # else the default (an untouched Max CPUs follows a pick of a partition with smaller nodes).
    chosen = state.partition if state.partition and state.partition_source == "explicit" else ""
    part = next((p for p in partitions.get("partitions") or []
                 if p.get("name") == (chosen or out["partition"])), None)

    cpus = _positive_int(host_env.get("ARI_SLURM_CPUS", ""))
    if cpus is None and allocation is not None:
        cpus = allocation.cpus_per_task or allocation.cpus_on_node or None
    node_cpus = part.get("cpus") if part and isinstance(part.get("cpus"), int) else None
    if cpus is None:
        cpus = node_cpus
    if cpus is not None:
        out["max_cpus"] = min(int(cpus), node_cpus) if node_cpus else int(cpus)
    per_node = getattr(state.profile, "ntasks_per_node", 0) if state.profile is not None else 0
    if node_cpus and per_node and "max_cpus" in out:
        # a profile with N tasks per node (the mpi preset: 4) leaves each task a 1/N share of a
        # node: sbatch refuses tasks x CPUs beyond the node's CPUs
        out["max_cpus"] = max(1, min(out["max_cpus"], node_cpus // per_node))

    out["walltime"] = _walltime_within(part)

    if allocation is not None and allocation.num_nodes:
        nodes = int(allocation.num_nodes)
        if part and isinstance(part.get("nodes"), int) and part["nodes"] > 0:
            nodes = min(nodes, part["nodes"])
        out["nodes"] = nodes

    if "max_cpus" not in out and allocation is not None and not allocation.inside_allocation \
            and not partitions:
        out["max_cpus"] = 1  # nothing tells a node's size: one CPU until the site answers
    out["profile"] = _profile_for(config, probes, out.get("nodes") or 0)
    out["module_loads"] = config.suggested_for(probes.get("modules")) if "modules" in probes else []
    out["mem_gb"] = None
    out["allow_no_gres"] = False
    return out


SITE_PRESET = "site"
"""The preset list's entry for the profile this site suggests (``derive``'s), no named preset."""


def site_profile(config: Any, host: Any, env: Mapping[str, str] | None, state: Any):
    """The execution profile a new run on this site starts with, from what is known so far."""
    return derive(config, host, env, state)["profile"]


def presets_matching(profile: Any, site: Any) -> list[str]:
    """The preset list's entries ``profile`` equals: ``SITE_PRESET`` first when it is the
    site's own default (``site``), then every named preset with the same keys. Empty: a
    profile edited by hand (custom)."""
    names = [SITE_PRESET] if site == profile else []
    return names + [name for name, make in PRESETS.items() if make() == profile]


def named_preset(profile: Any) -> str | None:
    """The named preset ``profile`` equals (on sx40 the site's default is
    ``gpu_single_nogres``: kind gpu_single with no GPU request), or None."""
    return next((name for name in presets_matching(profile, None) if name != SITE_PRESET), None)


def follow(state: Any, defaults: Mapping[str, Any]) -> None:
    """Apply ``defaults`` to every field the user has not touched (see the module doc); the
    partition's source goes with the partition."""
    applied: dict[str, Any] = getattr(state, _APPLIED, None) or {}
    with state.hold_trait_notifications():
        for name, value in defaults.items():
            if name == "partition_source":
                continue
            if name in applied:
                untouched = _comparable(getattr(state, name)) == applied[name]
            else:
                untouched = _is_empty(name, state)
            if not untouched:
                continue
            if _comparable(getattr(state, name)) != _comparable(value):
                _set(state, name, value)
            applied[name] = _comparable(getattr(state, name))
            if name == "partition" and "partition_source" in defaults:
                state.partition_source = defaults["partition_source"] if value else ""
    setattr(state, _APPLIED, applied)


def use_site(state: Any, config: Any, host: Any, env: Mapping[str, str] | None) -> None:
    """Look at ``host`` from now on: site facts and site-derived values as a fresh wizard
    there has them; the user's text is kept, and the modules they added where ``host`` offers
    them (``settle_carried_modules``). Probe results are cleared (the caller runs the probes
    again); defaults that need them follow as they come."""
    applied: dict[str, Any] = getattr(state, _APPLIED, None) or {}
    added_modules = [m for m in state.module_loads if m not in (applied.get("module_loads") or [])]
    previous_workspace = applied.get("workspace")
    typed_workspace = state.workspace if state.workspace and state.workspace != previous_workspace \
        else ""
    fresh = WizardState()
    with state.hold_trait_notifications():
        for name in SITE_FIELDS:
            _set(state, name, _comparable(getattr(fresh, name)))
        state.probe_results = {}
        state.allocation = Allocation.from_env(host.env)
        state.site_name = host.name if getattr(host, "is_demo", False) else ""
        state.run_id = ""
    setattr(state, _APPLIED, {})
    if config.default_preset:
        state.profile = PRESETS[config.default_preset]()
    follow(state, derive(config, host, env, state))
    if typed_workspace:
        state.workspace = typed_workspace
    if added_modules:
        state.module_loads = [*state.module_loads,
                              *(m for m in added_modules if m not in state.module_loads)]
    setattr(state, _CARRIED, tuple(added_modules))
    setattr(state, _LEFT_OUT, None)
    settle_carried_modules(state)


def settle_carried_modules(state: Any) -> None:
    """Drop the modules carried over a site switch that the new site does not offer, once its
    modules check has answered: a module is a site's, and one from the previous site would
    only block Write here (a teacher switching sites in front of a class met red errors nobody
    had caused). Nothing changes while the check has not answered or could not tell."""
    carried = getattr(state, _CARRIED, None)
    result = (state.probe_results or {}).get("modules")
    if not carried or result is None or result.status == "unknown":
        return
    offered = list((result.data or {}).get("modules") or []) if result.status != "skip" else []
    dropped = [m for m in carried if m in state.module_loads and not _offers(offered, m)]
    setattr(state, _CARRIED, None)
    setattr(state, _LEFT_OUT, (tuple(dropped), state.site_name or "") if dropped else None)
    if dropped:
        state.module_loads = [m for m in state.module_loads if m not in dropped]


def _offers(offered: list[str], name: str) -> bool:
    """``module load name`` works there: the name itself, or a version of it (``openmpi``)."""
    return name in offered or ("/" not in name and any(m.startswith(name + "/") for m in offered))


def modules_left_out(state: Any):
    """The sentence saying which modules the last site switch dropped (a ``Text``), or None;
    silent again once the user has added them back."""
    left_out = getattr(state, _LEFT_OUT, None)
    if not left_out:
        return None
    modules = [m for m in left_out[0] if m not in state.module_loads]
    if not modules:
        return None
    return text("site.modules_left_out", modules=", ".join(modules),
                site=left_out[1] or message("validate.this_site"))


def site_description(host: Any, lang: str) -> str:
    """A demo site's description in ``lang`` (the site file's own text when none is in the
    catalogs, e.g. a site recorded with ``probe --record-site``)."""
    key = f"site_description_{getattr(host, 'name', '')}"  # a label: step 1 shows it
    return t(key, lang) if key in labels(DEFAULT_LANGUAGE) else getattr(host, "description", "")


def checklist_title_key(site_name: str) -> str:
    """The hand-off checklist's title: R-CCS Cloud's flow is named on R-CCS Cloud only."""
    return "exp_checklist_title" if site_name == "rccs-cloud" else "exp_checklist_title_generic"


# -- helpers ---------------------------------------------------------------------------------

def _data(probes: Mapping[str, Any], probe_id: str) -> dict:
    result = probes.get(probe_id)
    if result is None or result.status in ("unknown", "skip"):
        return {}
    return dict(result.data or {})


def _positive_int(text: str) -> int | None:
    text = (text or "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else None


def _walltime_within(part: Mapping[str, Any] | None) -> str:
    """'' (ARI's default, 6 h from the rubric) when it fits the partition, else its limit."""
    limit = str((part or {}).get("timelimit") or "")
    if limit.lower() in ("", "infinite", "unlimited", "n/a"):
        return ""
    # cold start: ARI's sbatch rules load with the first partition time limit the probes tell
    from ..ari.sbatch import DEFAULT_MAX_RUNTIME_SEC, walltime_str
    from ..slurm.parsers import parse_slurm_duration

    try:
        seconds = parse_slurm_duration(limit)
    except ValueError:
        return ""
    return "" if seconds >= DEFAULT_MAX_RUNTIME_SEC else walltime_str(seconds)


def _profile_for(config: Any, probes: Mapping[str, Any], nodes: int):
    """The site admin's preset, else the kind the hardware suggests: GPUs with GRES -> one
    GPU task; GPUs SLURM cannot hand out (no GRES) -> the GPU kind without a GPU request;
    several nodes and an MPI launcher -> one rank per node, started through srun (kind mpi,
    or cpu_single where no GPU is seen: ARI asks kind mpi for CUDA)."""
    if config.default_preset:
        return PRESETS[config.default_preset]()
    gpus = _data(probes, "gpus").get("count")
    has_gres = _data(probes, "gres").get("has_gres")
    if isinstance(gpus, int) and gpus > 0 and has_gres is not None:
        partition_gres = _data(probes, "gres").get("partition_has_gres")
        if has_gres and partition_gres is not False:
            return PRESETS["gpu_single"]()
        if not has_gres:
            return PRESETS["gpu_single_nogres"]()
    mpi = _data(probes, "mpi")
    if nodes > 1 and (mpi.get("srun") or mpi.get("mpirun") or mpi.get("mpiexec")):
        # cold start: ARI's validator loads once the probes see several nodes and a launcher
        from ..ari.validate import SiteFacts, site_has_no_gpu

        if site_has_no_gpu(SiteFacts.from_probes(probes.values())):
            # ARI tells the replicator that kind mpi must use CUDA (spec 4.3), which a site
            # without GPUs cannot run; cpu_single keeps the nodes, ranks and srun conventions
            return ExecutionProfile(kind="cpu_single", requested_nodes=nodes, ntasks_per_node=1,
                                    min_ranks=nodes)
        return ExecutionProfile(kind="mpi", requested_nodes=nodes, ntasks_per_node=1,
                                min_ranks=nodes, result_aggregation="rank0_csv")
    return ExecutionProfile()


def _comparable(value: Any) -> Any:
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, list):
        return list(value)
    return value


def _is_empty(name: str, state: Any) -> bool:
    value = getattr(state, name)
    if name == "profile":
        return value.to_json() == ExecutionProfile().to_json()
    # By identity for None and False: ``0 in (False,)`` is true, and a 0 the user typed is a
    # value to refuse ("at least 1"), not a blank to fill.
    return value is None or value is False or (isinstance(value, (str, list)) and not value)


def _set(state: Any, name: str, value: Any) -> None:
    if name == "profile":
        value = ExecutionProfile.from_json(value) if isinstance(value, Mapping) else value
        if isinstance(value, ExecutionProfile):
            value = ExecutionProfile.from_json(value.to_json())  # never share an instance
    elif isinstance(value, list):
        value = list(value)
    setattr(state, name, value)


def seed_defaults(state, config: Any, host, env: Mapping[str, str] | None = None, *,
                  keep_profile: bool = False) -> None:
    """Fill what ``state`` still lacks from the site and its config (``site_defaults``).

    The wizard's new run and ``ari-jupyter emit`` both start here, and call it again as probe
    answers arrive (a field nobody touched follows the better default), so the same config
    gives the same values on either side. ``env`` is this machine's environment (a demo
    workspace is local); ``keep_profile`` keeps a profile chosen already.
    """
    seed_site(state, host)
    defaults = derive(config, host, env, state)
    if keep_profile:
        defaults.pop("profile")
    follow(state, defaults)
    settle_carried_modules(state)
