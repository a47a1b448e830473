"""Everything the wizard knows, in one traitlets object the widgets link to and the CLI fills.

``WizardState`` holds values only; its traits accept half-typed input (an empty title, a
walltime being typed) so a form never fights the user. What is wrong is answered by
``problems()``, which combines the field checks below, the experiment.md lints on the text
that would be written, and the execution-profile validator — the same list the wizard shows
inline and ``emit`` refuses on. ``to_json``/``from_json`` round-trip the whole state; it is
stored in ``launch_config.json`` so a checkpoint reopens exactly as it was written.
"""
from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, Mapping

from traitlets import Bool, Dict, HasTraits, Instance, Int, List, Unicode

from ..slurm.allocation import Allocation
from ..probes import PROBE_IDS
from ..ari.partition import resolve_partition
from ..ari.profile import ExecutionProfile, ProfileError
from ..i18n import text
from ..ari.choices import STATE_SCHEMA, Choices

_CHOICE_FIELDS = ("allocation", "probe_results", "site_name", "partition", "partition_source",
                  "profile", "module_loads", "max_cpus", "walltime", "nodes", "mem_gb",
                  "allow_no_gres", "followups", "run_settings", "title", "goal", "metrics",
                  "min_expected_metric", "provided_files", "workspace", "run_id", "lang")
"""Every trait the user's choices are made of (``Choices``' fields)."""

if TYPE_CHECKING:
    from ..base.verdict import ProbeResult

# The validation rules (ari.render, ari.lint_experiment, ari.finding) are imported by the checks
# that use them, and the execution profile, the run settings and probe results when a value
# first needs them: a wizard shows its first step without loading them.


class _LazyInstance(Instance):
    """An ``Instance`` of a class named by its path, imported at the first value or default.

    traitlets' own ``Instance("pkg.mod.Class")`` imports the class as soon as an object with the
    trait is made, which is what this defers.
    """

    def instance_init(self, obj: Any) -> None:
        pass

    def validate(self, obj: Any, value: Any) -> Any:
        self._resolve_classes()
        return super().validate(obj, value)

    def make_dynamic_default(self) -> Any:
        self._resolve_classes()
        return super().make_dynamic_default()



"""ARI's run id: 14-digit timestamp, '_', a slug of [A-Za-z0-9_-] (R10); a pattern for
``re.fullmatch``, compiled at its first use."""


def _rules():
    """ARI's rules (``ari.judge``): loaded when a verdict is first asked for."""
    from ..ari import judge  # cold start: ARI's rules wait until a verdict is asked for

    return judge


class StateError(ValueError):
    """Invalid state JSON; ``messages`` names each bad key."""

    def __init__(self, messages: list[str]):
        self.messages = list(messages)
        super().__init__("invalid wizard state: " + "; ".join(self.messages))


class WizardState(HasTraits):
    """The wizard's inputs and the site facts they are checked against."""

    # -- site facts ------------------------------------------------------------------------
    allocation = Instance(Allocation, allow_none=True, help="The SLURM allocation (None outside one).")
    probe_results = Dict(value_trait=_LazyInstance("ari_jupyter.base.verdict.ProbeResult"),
                         help="Latest ProbeResult per probe id.")
    site_name = Unicode("", help="Demo site name, or '' for this machine.")

    # -- SLURM choices ---------------------------------------------------------------------
    partition = Unicode("", help="Partition for ARI's jobs (ARI_SLURM_PARTITION).")
    partition_source = Unicode("", help="Where the partition came from (explicit, env, ...).")
    profile = _LazyInstance("ari_jupyter.ari.profile.ExecutionProfile", args=(),
                            help="execution_profile for the reproduce job.")
    module_loads = List(Unicode(), help="Modules the hand-off loads before `ari run`.")
    max_cpus = Int(None, allow_none=True, help="CPUs per job: Max CPUs and ARI_SLURM_CPUS.")
    walltime = Unicode("", help="Job time limit HH:MM:SS or D-HH:MM:SS ('' = ARI's default).")
    nodes = Int(None, allow_none=True, help="Nodes for the reproduce job (caller argument).")
    mem_gb = Int(None, allow_none=True, help="Memory per BFTS job in GB (ARI_SLURM_MEM_GB).")
    followups = Int(0, help="Follow-up allocations approved, each with the run's partition, nodes "
                    "and time limit (0: none).")
    allow_no_gres = Bool(False, help="Write ARI_SLURM_ALLOW_NO_GRES=1 (GPU flags dropped).")
    run_settings = _LazyInstance("ari_jupyter.ari.run_settings.RunSettings", args=(),
                                 help="ARI's run settings (LLM, scope, stages, paper).")

    # -- experiment.md ---------------------------------------------------------------------
    title = Unicode("", help="One-line title (also the run id slug).")
    goal = Unicode("", help="Research goal, free Markdown.")
    metrics = List(Unicode(), help="Primary metric first.")
    min_expected_metric = Int(None, allow_none=True, help="Integer threshold (0 disables).")
    provided_files = List(Unicode(), help="Absolute paths copied into every node work dir.")

    # -- where ----------------------------------------------------------------------------
    workspace = Unicode("", help="Workspace root; the checkpoint is <workspace>/checkpoints/<run_id>.")
    run_id = Unicode("", help="YYYYmmddHHMMSS_<slug>; minted at Write when empty.")
    lang = Unicode("en", help="Wizard language (en, ja, zh).")

    # -- convenience ----------------------------------------------------------------------
    def set_probe_result(self, result: ProbeResult) -> None:
        """Store one probe verdict (a new dict, so observers fire)."""
        self.probe_results = {**self.probe_results, result.id: result}

    def probe(self, probe_id: str) -> ProbeResult | None:
        return self.probe_results.get(probe_id)

    def probe_list(self) -> list[ProbeResult]:
        """Probe results in the engine's canonical order, unknown ids last."""
        order = {pid: i for i, pid in enumerate(PROBE_IDS)}
        return sorted(self.probe_results.values(), key=lambda r: (order.get(r.id, len(order)), r.id))

    @property
    def checkpoint_dir(self) -> str:
        """``<workspace>/checkpoints/<run_id>`` ('' until both are known)."""
        if not self.workspace or not self.run_id:
            return ""
        return os.path.join(self.workspace.rstrip("/") or "/", "checkpoints", self.run_id)

    def apply_site_defaults(self, env: Mapping[str, str]) -> None:
        """Fill choices still empty from the environment, the allocation and the probes.

        Partition: ARI's precedence plus the wizard-only defaults (the allocation's own
        partition, then sinfo's default), with the winning source recorded. Max CPUs:
        ``ARI_SLURM_CPUS``, else the allocation's CPUs per task, else its CPUs on this node.
        Nodes: the allocation's node count. The wizard and the CLI call this same method.
        """
        if not self.partition:
            default = self._probe_data("partitions", "default")
            env = dict(env)
            if self.allocation is not None and self.allocation.partition:
                env.setdefault("SLURM_JOB_PARTITION", self.allocation.partition)
            choice = resolve_partition(None, env, None, for_wizard=True,
                                       sinfo_default=default if isinstance(default, str) else None)
            if choice.partition:
                self.partition, self.partition_source = choice.partition, choice.source
        if self.max_cpus is None:
            raw = env.get("ARI_SLURM_CPUS", "").strip()
            alloc = self.allocation
            if raw.isdigit() and int(raw) > 0:
                self.max_cpus = int(raw)
            elif alloc is not None and (alloc.cpus_per_task or alloc.cpus_on_node):
                self.max_cpus = int(alloc.cpus_per_task or alloc.cpus_on_node)
        if self.nodes is None and self.allocation is not None and self.allocation.num_nodes:
            self.nodes = int(self.allocation.num_nodes)

    # -- serialisation --------------------------------------------------------------------
    _SCALARS = Choices.SCALARS
    _LISTS = Choices.LISTS

    def to_json(self) -> dict[str, Any]:
        """The complete state as JSON-ready data (``from_json`` gives an equal state back)."""
        return self.choices().to_json()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "WizardState":
        """Rebuild a state; missing keys keep their defaults; raise ``StateError`` naming bad keys."""
        if not isinstance(data, Mapping):
            raise StateError([f"state must be a JSON object, got {type(data).__name__}"])
        messages: list[str] = []
        schema = data.get("schema", STATE_SCHEMA)
        if schema != STATE_SCHEMA:
            raise StateError([f"schema: this ari-jupyter reads state schema {STATE_SCHEMA}, got {schema!r}"])
        known = {"schema", "allocation", "probe_results", "profile", "run_settings", *cls._SCALARS,
                 *cls._LISTS}
        for key in data:
            if key not in known:
                messages.append(f"{key}: not a wizard field (known: {', '.join(sorted(known - {'schema'}))})")
        values: dict[str, Any] = {}
        if data.get("allocation") is not None:
            if isinstance(data["allocation"], Mapping):
                values["allocation"] = Allocation.from_json(data["allocation"])
            else:
                messages.append("allocation: must be an object or null")
        from ..ari.run_settings import RunSettings  # cold start: the run settings load when a saved state is read
        from ..base.verdict import ProbeResult

        results: dict[str, ProbeResult] = {}
        raw_results = data.get("probe_results") or []
        if isinstance(raw_results, Mapping):
            raw_results = list(raw_results.values())
        if not isinstance(raw_results, list):
            messages.append("probe_results: must be a list of probe results")
            raw_results = []
        for i, raw in enumerate(raw_results):
            try:
                result = ProbeResult.from_json(raw)
            except (KeyError, TypeError, ValueError) as exc:
                messages.append(f"probe_results[{i}]: {exc}")
                continue
            results[result.id] = result
        values["probe_results"] = results
        if "profile" in data:
            try:
                values["profile"] = ExecutionProfile.from_json(data["profile"])
            except ProfileError as exc:
                messages += [f"profile.{m}" for m in exc.messages]
        if "run_settings" in data:
            try:
                values["run_settings"] = RunSettings.from_json(data["run_settings"])
            except ValueError as exc:
                messages.append(str(exc))
        state = cls()
        for name in cls._SCALARS:
            if name in data:
                values[name] = data[name]
        for name in cls._LISTS:
            if name not in data:
                continue
            items = data[name]
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                messages.append(f"{name}: must be a list of strings, got {items!r}")
            else:
                values[name] = list(items)
        for name, value in values.items():
            try:
                setattr(state, name, value)
            except Exception as exc:  # traitlets.TraitError: wrong JSON type for this field
                messages.append(f"{name}: {str(exc).splitlines()[0][:300]}")
        if messages:
            raise StateError(messages)
        return state

    def copy(self) -> "WizardState":
        return type(self).from_json(self.to_json())

    # -- validation -----------------------------------------------------------------------
    def choices(self) -> Choices:
        """The user's choices as the one frozen value ARI's rules take (``ari.choices``)."""
        return Choices.of(**{name: getattr(self, name) for name in _CHOICE_FIELDS})

    def job_nodes(self):
        """The nodes the reproduce job asks for (``Choices.job_nodes``)."""
        return self.choices().job_nodes()

    def problems(self, env: Mapping[str, str] | None = None, fan_out: bool | None = None,
                 workflow_found: bool | None = None) -> list:
        """Every finding about these choices, each cause once (``judge.judge``): fields,
        experiment.md lints, the profile against the site and the ranks' placement.

        Each item is a ``Finding`` (rule, field, severity error|warning|info, message id and
        parameters, English message and fix); errors block Write.
        """
        return _rules().judge(self.choices(), env=env, fan_out=fan_out, workflow_found=workflow_found)

    def blocking_problems(self, workflow_found: bool | None = None) -> list:
        return [p for p in self.problems(workflow_found=workflow_found) if p.severity == "error"]

    def field_problems(self) -> list:
        """Each field's own rules, then the run settings' rules (``judge.field_findings``)."""
        return _rules().field_findings(self.choices())

    # -- helpers ---------------------------------------------------------------------------
    def _probe_data(self, probe_id: str, key: str) -> Any:
        result = self.probe(probe_id)
        if result is None or result.status in ("unknown", "skip"):
            return None
        return (result.data or {}).get(key)


UNSET_BY_ZERO = frozenset({"mem_gb"})
"""Counts whose 0 means "not set": memory 0 is the partition's default (no --mem)."""


def resource_value(name: str, value: int | None) -> int | None:
    """What a count typed into step 3 or passed to ``emit`` means, read once for both.

    Memory 0 is "the partition's default" (None). Nodes 0 is ARI's own "not given": the
    profile's requested_nodes decide (spec 3.4.2), so it stays 0 and is valid. Everything else
    is judged as typed (Max CPUs 0 is refused as "at least 1", never replaced by a default).
    """
    if value == 0 and name in UNSET_BY_ZERO:
        return None
    return value


def min_expected_metric_of(typed: str) -> int | None:
    """The threshold a person typed, as ARI's agent will read it: digits only (it would take
    12.5 as 12), so a fraction or a word is refused with why, not cut; '' is no threshold."""
    value = typed.strip()
    if not value:
        return None
    if value.isascii() and value.isdigit():
        return int(value)
    if re.fullmatch(r"[0-9]+\.[0-9]*", value):
        raise ValueError(text("field.min_metric_fraction", value=value, agent=value.split(".")[0]))
    raise ValueError(text("field.min_metric_not_number", value=value))
