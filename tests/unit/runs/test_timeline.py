"""The phase history of a run (runs/timeline.py): when it entered each phase, from its files."""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ari_jupyter.cli._runs_text import history_lines, status_text
from ari_jupyter.hosts.recorded_run import RecordedRun
from ari_jupyter.i18n import t
from ari_jupyter.runs.status import read_status
from ari_jupyter.runs.timeline import phase_timeline
from ari_jupyter.teaching import recorded_run

T0 = datetime(2026, 12, 5, 22, 43, 20, tzinfo=timezone.utc).timestamp()


def _iso(offset: float) -> str:
    return datetime.fromtimestamp(T0 + offset, tz=timezone.utc).isoformat(timespec="seconds")


def _file(path: Path, text: str, offset: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (T0 + offset, T0 + offset))


def _log_line(offset: float, msg: str) -> str:
    return json.dumps({"ts": _iso(offset), "level": "INFO", "logger": "ari", "msg": msg, "run_id": "r"})


def _tree(first_node_offset: float, saved_offset: float) -> str:
    """tree.json in ARI's indent=2 layout: the tree's created_at is when it was saved."""
    node = {"id": "node_root", "parent_id": None, "status": "success", "created_at": _iso(first_node_offset),
            "metrics": {"GFlops": 1.0}, "error_log": None}
    return json.dumps({"run_id": "r", "created_at": _iso(saved_offset), "nodes": [node]}, indent=2) + "\n"


def _handoff_name(offset: float) -> str:
    # the hand-off script's `date +%Y%m%d%H%M%S`: this machine's local time
    return "ari_run_" + datetime.fromtimestamp(T0 + offset).strftime("%Y%m%d%H%M%S") + ".log"


FINISHED_LOG = "\n".join([
    _log_line(300, "=== Stage [write_paper]: writing ==="),
    _log_line(500, "=== Stage [ors_generate_rubric]: rubric ==="),
    _log_line(560, "=== Stage [ors_grade]: grade ==="),
    _log_line(600, "Paper pipeline completed: ['write_paper', 'ors_grade']"),
    _log_line(617, "[LoggingWorker] atexit: Flushing 3 remaining events..."),
]) + "\n"

# (name, files: {relative path: (text, mtime offset)}, the phase history as (phase, offset, source))
CASES = [
    ("written by the wizard, not started",
     {"experiment.md": ("# T\n", 0), "launch_config.json": ("{}", 2)},
     [("not-started", 0, "experiment.md")]),
    ("a whole run that finished: the tree's first node, not its save time, starts the search",
     {"experiment.md": ("# T\n", 0), "launch_config.json": ("{}", 0), _handoff_name(19): ("out\n", 617),
      "tree.json": (_tree(99, 194), 194), ".pipeline_started": ("", 194), "ari.log": (FINISHED_LOG, 617)},
     [("not-started", 0, "experiment.md"), ("starting", 19, _handoff_name(19)),
      ("exploring", 99, "tree.json"), ("paper", 194, ".pipeline_started"),
      ("reproduce", 500, "ari.log"), ("finished", 600, "ari.log")]),
    ("a run that failed with no time in its logs ends at the log's last write",
     {"experiment.md": ("# T\n", 0), _handoff_name(19): ("[Paper Pipeline] ERROR: boom\n", 250),
      "tree.json": (_tree(99, 194), 194)},
     [("not-started", 0, "experiment.md"), ("starting", 19, _handoff_name(19)),
      ("exploring", 99, "tree.json"), ("failed", 250, "log")]),
    ("a tree copied from a run days before this start is left out (times never go back)",
     {"experiment.md": ("# T\n", 0), _handoff_name(19): ("[Paper Pipeline] ERROR: boom\n", 250),
      "tree.json": (_tree(-5 * 86400, -5 * 86400), 194)},
     [("not-started", 0, "experiment.md"), ("starting", 19, _handoff_name(19)), ("failed", 250, "log")]),
]


def _checkpoint(tmp_path: Path, files: dict) -> Path:
    ckpt = tmp_path / "checkpoints" / "20261205224320_t"
    ckpt.mkdir(parents=True)
    for name, (text, offset) in files.items():
        _file(ckpt / name, text, offset)
    return ckpt


@pytest.mark.parametrize("name, files, expected", CASES, ids=[c[0] for c in CASES])
def test_phase_history_from_the_files(tmp_path, name, files, expected):
    status = read_status(_checkpoint(tmp_path, files))
    assert [(e["phase"], e["at"], e["source"]) for e in status.to_json()["phase_history"]] == [
        (phase, _iso(offset), source) for phase, offset, source in expected]


@pytest.mark.parametrize("phase, expected", [
    ("exploring", ["not-started", "exploring"]),
    ("paper", ["not-started", "exploring", "paper"]),
    ("interrupted", ["not-started", "exploring", "paper", "interrupted"]),
])
def test_a_phase_after_the_one_found_is_left_out(tmp_path, phase, expected):
    """An earlier run's .pipeline_started in a checkpoint started again while the search runs
    (the status says exploring): the history stops at the phase the status found."""
    ckpt = _checkpoint(tmp_path, {"experiment.md": ("# T\n", 0), ".pipeline_started": ("", 50)})
    history = phase_timeline(ckpt, phase=phase, tree_created=_iso(30), ari_log_lines=[],
                             handoff_logs=[], end_line="", last_write=T0 + 60)
    assert [e.phase for e in history] == expected


def test_the_recorded_demo_run_tells_the_phases_status_saw_while_it_ran():
    """The rccs-cloud recording kept each phase `ari-jupyter status` saw while the run went
    (polled every few seconds): the history read from the files afterwards has the same
    phases, each as long as the recording saw it within the polling interval."""
    run = recorded_run("rccs-cloud")
    seen = list(RecordedRun.load(run["run_id"]).phases)
    history = run["phase_history"]
    assert [e["phase"] for e in history] == ["not-started"] + [p["phase"] for p in seen]
    at = [datetime.fromisoformat(e["at"]).timestamp() for e in history[1:]]
    for i in range(1, len(seen)):
        assert abs((at[i] - at[i - 1]) - (seen[i]["t"] - seen[i - 1]["t"])) < 10, (seen[i], history[i + 1])


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_status_says_the_history_in_each_language(lang):
    history = [{"phase": "not-started", "at": _iso(0), "source": "experiment.md"},
               {"phase": "exploring", "at": _iso(19), "source": "tree.json"},
               {"phase": "paper", "at": _iso(19 + 5400), "source": ".pipeline_started"}]
    local = [datetime.fromtimestamp(T0 + s).strftime("%Y-%m-%d %H:%M:%S") for s in (0, 19, 5419)]
    now = datetime.fromtimestamp(T0 + 5419 + 600, tz=timezone.utc)
    phase = {p: t(f"runs.phase.{p}", lang) for p in ("not-started", "exploring", "paper")}
    assert history_lines({"phase_history": history, "active": True}, lang, now=now) == [
        t("runs.status.history", lang),
        t("runs.status.history_entry", lang, at=local[0], phase=phase["not-started"],
          lasted=t("run_settings.duration.s", lang, n=19)),
        t("runs.status.history_entry", lang, at=local[1], phase=phase["exploring"],
          lasted=t("run_settings.duration.h_min", lang, h=1, n=30)),
        t("runs.status.history_since", lang, at=local[2], phase=phase["paper"],
          lasted=t("run_settings.duration.min", lang, n=10))]
    ended = history_lines({"phase_history": history, "active": False}, lang)
    assert ended[-1] == t("runs.status.history_last", lang, at=local[2], phase=phase["paper"])


def test_status_text_shows_the_history_under_the_phase():
    run = recorded_run("rccs-cloud")
    text = status_text(run).splitlines()
    start = text.index(t("runs.status.history", "en"))
    assert text[start - 3].startswith("phase: ")
    assert [line.split()[2] for line in text[start + 1:start + 7]] == [
        "not", "starting,", "exploring,", "paper,", "reproduce,", "finished"]
