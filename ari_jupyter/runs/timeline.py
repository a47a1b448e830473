"""When a run entered each phase, read from the files it leaves (no SLURM query).

Each phase's start comes from one piece of evidence (``source`` names it):

- ``not-started``: the wizard's files (``experiment.md``, ``launch_config.json``) were written;
- ``starting``: the hand-off script wrote ``.ari_handoff_pid`` (while it runs), else the first
  hand-off log's name, ``ari_run_<YYYYmmddHHMMSS>.log`` (the script's ``date``: this machine's
  local time is assumed);
- ``exploring``: the tree's first node's ``created_at`` (ARI's tree search began; the tree's
  own ``created_at`` is when it was saved), else ``.ari_pid`` (written before the search);
- ``paper``: ``.pipeline_started`` (``pipeline/driver.py`` writes it as the paper pipeline begins);
- ``reproduce``: ari.log's first ``=== Stage [ors_…]`` line in the part read;
- an end (``finished``, ``failed``, ``interrupted``): the time of ari.log's end line, else the
  newest log's last write.

A phase with no evidence is left out (a run started by hand has no hand-off), so is one later
than the phase the status found (an earlier run's ``.pipeline_started`` in a checkpoint started
again), and one whose time is earlier than the phase before it (a tree copied from another run).
The entries come in the phases' order, their times never going back.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from ..ari import markers
from ..ari.render import HANDOFF_PID_FILE

ORDER = ("not-started", "starting", "exploring", "paper", "reproduce")
ENDS = ("finished", "failed", "interrupted")


@dataclass(frozen=True)
class PhaseEntry:
    phase: str
    at: str
    """When the run entered it (ISO 8601, UTC, seconds)."""
    source: str
    """The file (or log line) it was read from."""

    def to_json(self) -> dict[str, str]:
        return {"phase": self.phase, "at": self.at, "source": self.source}


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")


def _mtime(path: Path) -> datetime | None:
    try:
        return datetime.fromtimestamp(os.stat(path).st_mtime, tz=timezone.utc)
    except OSError:
        return None


def _record_time(line: str) -> datetime | None:
    record = markers.ari_log_record(line)
    try:
        moment = datetime.fromisoformat(str(record.get("ts", ""))) if record else None
    except ValueError:
        return None
    return moment if moment is None or moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _handoff_name_time(log: Path) -> datetime | None:
    stamp = log.name[len("ari_run_"):-len(".log")]
    try:  # the script's `date +%Y%m%d%H%M%S`: local time
        return datetime.strptime(stamp, "%Y%m%d%H%M%S").astimezone()
    except ValueError:
        return None


def _first_reproduce_stage(lines: Iterable[str]) -> datetime | None:
    for line in lines:
        record = markers.ari_log_record(line)
        match = markers.STAGE.search(str(record.get("msg", ""))) if record else None
        if match and match.group(1).startswith("ors_"):
            return _record_time(line)
    return None


def phase_timeline(checkpoint: Path, *, phase: str, tree_created: str, ari_log_lines: list[str],
                   handoff_logs: list[Path], end_line: str, last_write: float) -> tuple[PhaseEntry, ...]:
    """The phases ``checkpoint`` went through up to ``phase`` (the status's), each with when it
    began. ``ari_log_lines``: the part of ari.log read (its end); ``handoff_logs`` newest first;
    ``end_line``: the line that said how the run ended; ``last_write``: the newest log's mtime."""
    found: dict[str, tuple[datetime, str]] = {}

    def note(name: str, moment: datetime | None, source: str) -> None:
        if moment is not None and name not in found:
            found[name] = (moment, source)

    for name in markers.WIZARD_FILES:
        moment = _mtime(checkpoint / name)
        if moment is not None and ("not-started" not in found or moment < found["not-started"][0]):
            found["not-started"] = (moment, name)
    note("starting", _mtime(checkpoint / HANDOFF_PID_FILE), HANDOFF_PID_FILE)
    if handoff_logs:
        note("starting", _handoff_name_time(handoff_logs[-1]), handoff_logs[-1].name)
    try:
        created = datetime.fromisoformat(tree_created) if tree_created else None
    except ValueError:
        created = None
    if created is not None and created.tzinfo is None:
        created = created.replace(tzinfo=timezone.utc)
    note("exploring", created, "tree.json")
    note("exploring", _mtime(checkpoint / markers.PID_FILE), markers.PID_FILE)
    note("paper", _mtime(checkpoint / markers.PIPELINE_MARKER), markers.PIPELINE_MARKER)
    note("reproduce", _first_reproduce_stage(ari_log_lines), "ari.log")
    reached = ORDER if phase in ENDS else ORDER[:ORDER.index(phase) + 1] if phase in ORDER else ()
    entries = [PhaseEntry(name, _iso(found[name][0]), found[name][1]) for name in reached if name in found]
    if phase in ENDS:
        ended = next((_record_time(line) for line in reversed(ari_log_lines)
                      if _is_end(line, end_line) and _record_time(line)), None)
        if ended is not None:
            entries.append(PhaseEntry(phase, _iso(ended), "ari.log"))
        elif last_write:
            entries.append(PhaseEntry(phase, _iso(datetime.fromtimestamp(last_write, tz=timezone.utc)),
                                      "log"))
    return tuple(_in_time_order(entries))


def _in_time_order(entries: list[PhaseEntry]) -> list[PhaseEntry]:
    """Each phase begins no earlier than the one before it: evidence older than an earlier
    phase's (a tree copied from another run, files of an earlier start) is left out."""
    kept: list[PhaseEntry] = []
    for entry in entries:
        if not kept or entry.at >= kept[-1].at:
            kept.append(entry)
    return kept


def _is_end(line: str, end_line: str) -> bool:
    """An ari.log record saying the run ended: the status's end line, or ARI's end markers."""
    record = markers.ari_log_record(line)
    if record is None:
        return False
    msg = str(record.get("msg", ""))
    return bool(end_line and msg == end_line) or any(
        p.search(msg) for p in (*markers.END_OK, *markers.END_BAD))
