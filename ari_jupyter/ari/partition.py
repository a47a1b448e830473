"""Which partition ARI's reproduce job will get, and which source decided it.

ARI (``_resolve_partition_for_repo``) takes the first non-empty of: the caller's ``partition``
argument, ``$ARI_SLURM_PARTITION``, ``$SLURM_PARTITION``, ``partition`` in
``<repo>/../launch_config.json``, then in ``<repo>/launch_config.json``. Values are used raw
(not stripped); an unreadable or malformed launch_config.json is skipped silently. ARI stops
there (and raises). The wizard additionally needs a *default* to offer, so with
``for_wizard=True`` two more sources follow: ``$SLURM_JOB_PARTITION`` (the notebook's own
allocation) and sinfo's default partition. Those two never reach ARI unless the wizard writes
them somewhere ARI looks.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, NamedTuple

SOURCES = ("explicit", "ARI_SLURM_PARTITION", "SLURM_PARTITION", "launch_config.json",
           "SLURM_JOB_PARTITION", "sinfo_default", "none")
"""Every value ``PartitionChoice.source`` can take, in precedence order."""

ARI_SOURCES = SOURCES[:4]
"""The sources ARI itself consults; the rest only seed the wizard's default."""


class PartitionChoice(NamedTuple):
    """The partition a run uses and where it came from (a NamedTuple: cheap to define, and
    every cold start defines it)."""

    partition: str
    source: str
    detail: str = ""
    """For launch_config.json: the file that supplied the value."""

    def to_json(self) -> dict[str, str]:
        return {"partition": self.partition, "source": self.source, "detail": self.detail}

    @property
    def ari_sees_it(self) -> bool:
        """False when ARI's reproduce step would not find this partition on its own."""
        return self.source in ARI_SOURCES


def launch_config_candidates(repo_dir: str | Path) -> tuple[Path, Path]:
    """Where ARI looks, in order: beside the repo dir (the checkpoint), then inside it."""
    repo = Path(repo_dir)
    return repo.parent / "launch_config.json", repo / "launch_config.json"


def read_launch_config_partition(path: Path) -> str:
    """``str(cfg.get("partition") or "")`` as ARI does; any read or parse error gives ``""``."""
    try:
        if not path.is_file():
            return ""
        cfg = json.loads(path.read_text())
        return str(cfg.get("partition") or "")
    except Exception:  # noqa: BLE001 - ARI swallows every error here; so must the mirror
        return ""


def resolve_partition(explicit: str | None, env: Mapping[str, str], repo_dir: str | Path | None,
                      *, for_wizard: bool = False,
                      sinfo_default: str | None = None) -> PartitionChoice:
    """First non-empty partition source, in ARI's order (plus the wizard-only defaults)."""
    if explicit:
        return PartitionChoice(explicit, "explicit")
    for name in ("ARI_SLURM_PARTITION", "SLURM_PARTITION"):
        value = env.get(name, "")
        if value:
            return PartitionChoice(value, name)
    if repo_dir is not None and str(repo_dir) != "":
        for candidate in launch_config_candidates(repo_dir):
            value = read_launch_config_partition(candidate)
            if value:
                return PartitionChoice(value, "launch_config.json", str(candidate))
    if for_wizard:
        value = env.get("SLURM_JOB_PARTITION", "").strip()
        if value:
            return PartitionChoice(value, "SLURM_JOB_PARTITION")
        if sinfo_default:
            return PartitionChoice(sinfo_default.strip().rstrip("*"), "sinfo_default")
    return PartitionChoice("", "none")
