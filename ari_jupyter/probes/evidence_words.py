"""The lines of a probe's evidence that ari-jupyter writes itself, in every language.

Evidence is a record: what the commands printed, verbatim, plus a few lines of ours (how a
command ended, where the checkpoint lies, what ARI's rules make of it). The record is kept in
English (results files, ``probe --json``); a person reads it in their language, so the wizard
shows ``evidence_in(result, lang)``: the command output untouched, our lines worded in ``lang``.
Each of our lines is written by a function here, so the English record and its translation
come from the same catalog entry.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from ..i18n import t
from ..ari.sbatch import BIND_FLAGS, SHARED_FS_PREFIXES as ARI_SHARED_PREFIXES

SHARED_FS_SOURCES = {
    "checkpoint directory": "evidence.shared_fs.source.checkpoint_dir",
    "configured workspace": "evidence.shared_fs.source.workspace",
}
"""The shared-filesystem probe's targets that are words (the others name a variable)."""

_ENDINGS = (  # the lines ``evidence_of`` closes a command with, as their English reads
    (re.compile(r"\[exit (-?\d+)\]"), "evidence.ending.exit", ("code",)),
    (re.compile(r"\[timed out after ([0-9.]+)s\]"), "evidence.ending.timed_out", ("seconds",)),
    (re.compile(r"\[not found on PATH\]"), "evidence.ending.not_found", ()),
    (re.compile(r"\[\.\.\. (\d+) more characters\]"), "evidence.more_characters", ("count",)),
)


def command_ending(result: Any, lang: str = "en") -> str:
    """How a command ended: ``[exit 0]``, ``[timed out after 5.0s]``, ``[not found on PATH]``."""
    if result.not_found:
        return t("evidence.ending.not_found", lang)
    if result.timed_out:
        return t("evidence.ending.timed_out", lang, seconds=f"{result.elapsed:.1f}")
    return t("evidence.ending.exit", lang, code=result.returncode)


def more_characters(count: int, lang: str = "en") -> str:
    return t("evidence.more_characters", lang, count=count)


def bind_flags_note(flags: list[str] | None, lang: str = "en") -> str:
    """What ARI does with the profile's cpu_bind/mem_bind on this site (``sbatch --help``)."""
    if flags is None:
        return t("evidence.bind_flags.unknown", lang)
    missing = [flag for flag in BIND_FLAGS if flag not in flags]
    if not missing:
        return t("evidence.bind_flags.all", lang)
    if not flags:
        return t("evidence.bind_flags.none", lang)
    return t("evidence.bind_flags.some", lang, flag=flags[0], missing=missing[0])


def shared_fs_evidence(data: Mapping[str, Any], prefixes: tuple[str, ...], lang: str = "en") -> str:
    """The shared-filesystem probe's evidence from its data: the directory judged, its mount,
    ARI's prefix rule, and the network filesystems this node mounts."""
    path, resolved = data["path"], data["resolved"]
    shown = path if resolved == path else f"{path} (-> {resolved})"
    source = data["path_source"]
    source = t(SHARED_FS_SOURCES[source], lang) if source in SHARED_FS_SOURCES else source
    separator = t("list.separator", lang)
    lines = [t("evidence.shared_fs.target", lang, source=source, path=shown)]
    if data.get("mountpoint"):
        lines.append(t("evidence.shared_fs.mount", lang, mountpoint=data["mountpoint"],
                       fstype=data["fstype"], device=data["source"]))
    else:
        lines.append(t("evidence.shared_fs.no_mount", lang))
    verdict = "shared" if data["ari_thinks_shared"] else "not_shared"
    lines.append(t("evidence.shared_fs.ari_rule", lang, prefixes=", ".join(prefixes),
                   home=data.get("home"), verdict=t(f"evidence.shared_fs.ari_rule.{verdict}", lang)))
    mounts = separator.join(data.get("network_mounts") or ()) \
        or t("evidence.shared_fs.network_mounts.none", lang)
    lines.append(t("evidence.shared_fs.network_mounts", lang, mounts=mounts))
    return "\n".join(lines)


def evidence_in(result: Any, lang: str | None) -> str:
    """``result.evidence`` with ari-jupyter's own lines in ``lang``; the commands' output as
    they printed it. A result whose data lacks what a line needs (written by an older version)
    keeps its recorded English."""
    evidence = result.evidence or ""
    if not evidence or not lang or lang == "en":
        return evidence
    data = result.data or {}
    if result.id == "shared_fs" and {"path", "resolved", "path_source", "ari_thinks_shared",
                                     "home"} <= set(data):
        return shared_fs_evidence(data, ARI_SHARED_PREFIXES, lang)
    if "bind_flags" in data:
        note = bind_flags_note(data["bind_flags"])
        if evidence.endswith(note):
            evidence = evidence[:-len(note)] + bind_flags_note(data["bind_flags"], lang)
    return "\n".join(_line_in(line, lang) for line in evidence.split("\n"))


def _line_in(line: str, lang: str) -> str:
    for pattern, key, names in _ENDINGS:
        found = pattern.fullmatch(line)
        if found:
            return t(key, lang, **dict(zip(names, found.groups())))
    return line
