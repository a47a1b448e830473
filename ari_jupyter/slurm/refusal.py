"""Why the scheduler refused a test submission, read from its own words.

``sbatch --test-only`` is refused for reasons a researcher fixes in different ways: a partition
that does not admit their group or account needs another partition or the site's say-so; a node
that may not submit at all (the partition's ``AllocNodes``) needs a login node; a partition
that is not accepting jobs needs another one or patience. The texts are slurmctld's error
strings (``slurm_errno.c``), stable across versions; each maps to one kind and one fix.
"""
from __future__ import annotations

import re

# (kind, pattern) in order: the first match wins. Patterns are slurmctld's error strings.
REFUSAL_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("not_permitted", re.compile(
        r"User's group not permitted to use this partition"
        r"|Invalid account or account/partition combination specified"
        r"|account not permitted to use this partition"
        r"|Invalid qos specification"
        r"|qos not permitted to use this partition", re.IGNORECASE)),
    ("node_may_not_submit", re.compile(r"Access/permission denied", re.IGNORECASE)),
    ("unknown_partition", re.compile(r"Invalid partition name specified|invalid partition specified",
                                     re.IGNORECASE)),
    ("not_accepting", re.compile(
        r"Required partition not available|Partition in inactive state|partition .*(down|inactive)",
        re.IGNORECASE)),
    ("limits", re.compile(
        r"Requested time limit is invalid|Node count specification invalid"
        r"|Requested node configuration is not available|Memory specification can not be satisfied"
        r"|violates accounting/QOS policy|More processors requested than permitted",
        re.IGNORECASE)),
)

FIX_IDS = {kind: f"probe.sbatch.refused.fix.{kind}" for kind, _ in REFUSAL_KINDS}
GENERIC_FIX_ID = "probe.sbatch.refused.fix"


def refusal_kind(text: str) -> str:
    """The kind of refusal ``text`` (sbatch's whole stderr) states; ``other`` when none fits."""
    for kind, pattern in REFUSAL_KINDS:
        if pattern.search(text):
            return kind
    return "other"


def refusal_fix_id(kind: str) -> str:
    """The message id of the fix for a refusal of ``kind``."""
    return FIX_IDS.get(kind, GENERIC_FIX_ID)

