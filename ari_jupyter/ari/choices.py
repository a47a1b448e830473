"""The user's choices as one plain, frozen value: the only thing ARI's rules read.

The wizard keeps its inputs in ``wizard.state.WizardState`` (traitlets, half-typed while a
form is being filled) and the CLI fills the same state from its flags; both hand ARI's rules
(``render``, ``judge``, ``validate``, the hand-off checks) a ``Choices`` made by
``WizardState.choices()``. Nothing here changes after it is made, so a rule can never see a
value half-way through an edit, and what the rules depend on is written down in one place.

The two conversions every rule shares, from choices to what ARI receives, are in
``arguments.py``. This module stays light: the wizard's first step imports it.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

from ..slurm.allocation import Allocation
from .profile import ExecutionProfile

if TYPE_CHECKING:
    from ..base.verdict import ProbeResult
    from .run_settings import RunSettings

PROBE_ORDER = ("sbatch", "partitions", "gres", "shared_fs", "mpi", "modules", "gpus", "ari",
               "time_left")
"""The probes' canonical order (``probes.PROBE_IDS``; a test keeps the two equal)."""

PARTITION_NAME = re.compile(r"^[A-Za-z0-9_-]+\Z")
"""What ARI's partition hint can carry (R5 captures ``[\\w-]+``; kept ASCII for the shell)."""

_ENV_VALUE_PUNCTUATION = frozenset("._/+@%:,=-")


def env_value_problem(value: str) -> str:
    """Why ``value`` cannot be an unquoted .env value, or "" when it can.

    The checkpoint .env is read by python-dotenv, ARI's GUI parser (no quote stripping) and
    ``set -a; . .env; set +a`` in bash, so values are limited to letters, digits and
    ``._/+@%:,=-``: no spaces, quotes, ``$``, back-ticks, ``;``, ``#``, ``~`` or newlines.
    """
    if value == "":
        return "is empty"
    bad = sorted({ch for ch in value if not (ch.isalnum() or ch in _ENV_VALUE_PUNCTUATION)})
    if bad:
        shown = " ".join(repr(ch) for ch in bad)
        return f"contains characters a .env value cannot carry unquoted: {shown}"
    return ""


@dataclass(frozen=True)
class Choices:
    """What the user chose and the site facts it is judged against, frozen.

    The field names are the wizard state's, so a saved state and a ``Choices`` read alike;
    ``to_json`` is the layout saved in ``launch_config.json``.
    """

    # -- site facts ------------------------------------------------------------------------
    allocation: Allocation | None = None
    probe_results: Mapping[str, ProbeResult] = field(default_factory=lambda: MappingProxyType({}))
    site_name: str = ""
    # -- SLURM choices ---------------------------------------------------------------------
    partition: str = ""
    partition_source: str = ""
    profile: ExecutionProfile = field(default_factory=ExecutionProfile)
    module_loads: tuple[str, ...] = ()
    max_cpus: int | None = None
    walltime: str = ""
    nodes: int | None = None
    mem_gb: int | None = None
    allow_no_gres: bool = False
    followups: int = 0
    """Follow-up allocations the user approved (``ari/followup``); 0: none."""
    run_settings: RunSettings = field(default_factory=lambda: _default_run_settings())
    # -- experiment.md ---------------------------------------------------------------------
    title: str = ""
    goal: str = ""
    metrics: tuple[str, ...] = ()
    min_expected_metric: int | None = None
    provided_files: tuple[str, ...] = ()
    # -- where -----------------------------------------------------------------------------
    workspace: str = ""
    run_id: str = ""
    lang: str = "en"

    SCALARS = ("site_name", "partition", "partition_source", "max_cpus", "walltime", "nodes",
               "mem_gb", "allow_no_gres", "title", "goal", "min_expected_metric", "workspace",
               "run_id", "lang", "followups")
    LISTS = ("module_loads", "metrics", "provided_files")

    @classmethod
    def of(cls, **values: Any) -> "Choices":
        """A ``Choices`` from plain values: lists become tuples, the probe results a read-only
        mapping and the profile a copy of its own, so nothing outside can change it later."""
        for name in cls.LISTS:
            if name in values:
                values[name] = tuple(values[name] or ())
        if "probe_results" in values:
            values["probe_results"] = MappingProxyType(dict(values["probe_results"] or {}))
        if values.get("profile") is not None:
            values["profile"] = ExecutionProfile.from_json(values["profile"].to_json())
        return cls(**values)

    # -- reading ---------------------------------------------------------------------------
    @property
    def checkpoint_dir(self) -> str:
        """``<workspace>/checkpoints/<run_id>`` ('' until both are known)."""
        if not self.workspace or not self.run_id:
            return ""
        return os.path.join(self.workspace.rstrip("/") or "/", "checkpoints", self.run_id)

    def probe(self, probe_id: str) -> ProbeResult | None:
        return self.probe_results.get(probe_id)

    def probe_list(self) -> list[ProbeResult]:
        """Probe results in the probes' canonical order, unknown ids last."""
        order = {pid: i for i, pid in enumerate(PROBE_ORDER)}
        return sorted(self.probe_results.values(), key=lambda r: (order.get(r.id, len(order)), r.id))

    def probe_data(self, probe_id: str, key: str) -> Any:
        """One value a probe found, or None when it did not answer (unknown, skipped)."""
        result = self.probe(probe_id)
        if result is None or result.status in ("unknown", "skip"):
            return None
        return (result.data or {}).get(key)

    def job_nodes(self) -> int | Allocation | None:
        """The nodes the reproduce job asks for, as ARI merges them: Nodes when given, else
        (0) the profile's requested_nodes; nothing decided yet (None): the allocation (its
        ``num_nodes``), or None."""
        if self.nodes:
            return self.nodes
        if self.nodes == 0 and self.profile.requested_nodes:
            return self.profile.requested_nodes
        return self.allocation

    def to_json(self) -> dict[str, Any]:
        """The choices as JSON-ready data, in the layout ``WizardState.from_json`` reads."""
        data: dict[str, Any] = {"schema": STATE_SCHEMA}
        data["allocation"] = self.allocation.to_json() if self.allocation is not None else None
        data["probe_results"] = [r.to_json() for r in self.probe_list()]
        data["profile"] = self.profile.to_json()
        data["run_settings"] = self.run_settings.to_json()
        for name in self.SCALARS:
            data[name] = getattr(self, name)
        if not data["followups"]:  # none approved: the layout as before follow-ups existed
            del data["followups"]
        for name in self.LISTS:
            data[name] = list(getattr(self, name))
        return data


STATE_SCHEMA = 1
"""Version of the saved layout (``Choices.to_json``); bumped when a key changes meaning."""


def _default_run_settings() -> RunSettings:
    """ARI's run settings as nobody changed them, for a ``Choices`` made without any."""
    from .run_settings import RunSettings  # cold start: only choices made without settings need it

    return RunSettings()
