"""RunStatus over real ``ari run`` checkpoints and hand-made partial ones (table-driven).

Each row starts from a checkpoint a real ``ari run`` wrote (tests/fixtures/runs/real), changes
it the way a run in progress or a crash would, and states the verdict.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from ari_jupyter.runs import NotACheckpoint, read_status
from ari_jupyter.runs.reading import tail

from runs_support import (append, ari_log_line, copy_case, finished_with_success, handoff_log,
                          live_ari, live_handoff)


def truncate_tree(ckpt: Path) -> None:
    text = (ckpt / "tree.json").read_text()
    (ckpt / "tree.json").write_text(text[: len(text) // 2])


def truncate_both(ckpt: Path) -> None:
    truncate_tree(ckpt)
    (ckpt / "nodes_tree.json").write_text('{"experiment_goal": "x", "nodes": [')


def pipeline_started(ckpt: Path) -> None:
    (ckpt / ".pipeline_started").touch()
    append(ckpt / "ari.log", ari_log_line("=== Stage [write_paper]: LLM writes the paper ==="))


def reproducing(ckpt: Path) -> None:
    (ckpt / ".pipeline_started").touch()
    (ckpt / "repro_sandbox").mkdir()
    append(ckpt / "ari.log", ari_log_line("=== Stage [ors_run_reproduce]: run reproduce.sh ==="))


def keyboard_interrupt(ckpt: Path) -> None:
    append(handoff_log(ckpt), "Traceback (most recent call last):\n  ...\nKeyboardInterrupt\n")


def handoff_log_removed(ckpt: Path) -> None:
    for path in ckpt.glob("ari_run_*.log"):
        path.unlink()


def pid_reused(ckpt: Path) -> None:
    (ckpt / ".ari_pid").write_text(str(os.getpid()))  # alive, but pytest, not ari


def garbage_pid(ckpt: Path) -> None:
    (ckpt / ".ari_pid").write_text("not-a-pid\n")


def handoff_ended(ckpt: Path) -> None:
    """The hand-off ran and is gone before ARI wrote .ari_pid (module or import failure)."""
    dead = _ended_pid()
    (ckpt / ".ari_handoff_pid").write_text(f"{dead}\n")
    (ckpt / "ari_run_20261201100000.log").write_text("Traceback ...\nImportError: no ari\n")


def handoff_pid_reused(ckpt: Path) -> None:
    (ckpt / ".ari_handoff_pid").write_text(str(os.getpid()))  # alive, but pytest, not the script
    (ckpt / "ari_run_20261201100000.log").touch()


def ari_pid_older(ckpt: Path) -> None:
    """The .ari_pid a killed earlier run left, older than the new hand-off."""
    os.utime(ckpt / ".ari_pid", (time.time() - 3600, time.time() - 3600))


MISSING_KEY = ("exception: openai.OpenAIError: Missing credentials. Please pass an `api_key`, "
               "`workload_identity`, `admin_api_key`, or set the `OPENAI_API_KEY` or "
               "`OPENAI_ADMIN_KEY` environment variable.")


def no_api_key(ckpt: Path) -> None:
    """Every node failed on the openai SDK's own refusal: no key where `ari run` ran."""
    handoff_log_removed(ckpt)
    for name in ("nodes_tree.json", "tree.json"):
        path = ckpt / name
        if path.exists():
            data = json.loads(path.read_text())
            for node in data["nodes"]:
                if node.get("error_log"):
                    node["error_log"] = MISSING_KEY
            path.write_text(json.dumps(data))


def _ended_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


# id, real case, change, live processes (ari, handoff), phase, (total, done, failed, running),
# rules, stage
CASES = [
    ("emit-only", "not-started", None, (), "not-started", (0, 0, 0, 0), set(), ""),
    ("bfts-live", "exploring", None, ("ari",), "exploring", (1, 0, 0, 1), set(), ""),
    ("bfts-pid-left-behind", "exploring", None, (), "interrupted", (1, 0, 0, 1),
     {"run-interrupted"}, ""),
    ("bfts-pid-reused", "exploring", pid_reused, (), "interrupted", (1, 0, 0, 1),
     {"run-interrupted"}, ""),
    ("bfts-pid-garbage", "exploring", garbage_pid, (), "interrupted", (1, 0, 0, 1),
     {"run-interrupted"}, ""),
    ("bfts-tree-half-written", "exploring", truncate_tree, ("ari",), "exploring", (1, 0, 0, 1), set(), ""),
    ("bfts-both-trees-cut", "exploring", truncate_both, ("ari",), "exploring", (1, 0, 0, 1), set(), ""),
    ("paper-live", "failed", pipeline_started, ("ari",), "paper", (1, 0, 1, 0),
     {"llm-unreachable"}, "write_paper"),
    ("reproduce-live", "failed", reproducing, ("ari",), "reproduce", (1, 0, 1, 0), set(),
     "ors_run_reproduce"),
    ("real-failed", "failed", None, (), "failed", (1, 0, 1, 0),
     {"run-no-successful-node", "llm-unreachable", "run-pipeline-ended"}, ""),
    ("real-failed-no-handoff-log", "failed", handoff_log_removed, (), "failed", (1, 0, 1, 0),
     {"run-no-successful-node"}, ""),
    ("real-failed-no-api-key", "failed", no_api_key, (), "failed", (1, 0, 1, 0),
     {"run-no-successful-node", "llm-key-missing"}, ""),
    ("finished", "failed", finished_with_success, (), "finished", (3, 2, 1, 0), set(), ""),
    ("real-interrupted-in-paper", "interrupted-paper", None, (), "interrupted", (1, 0, 1, 0),
     {"run-interrupted", "llm-unreachable"}, ""),
    ("ctrl-c", "failed", keyboard_interrupt, (), "interrupted", (1, 0, 1, 0),
     {"run-interrupted"}, ""),
    ("handoff-loading-ari", "not-started", None, ("handoff",), "starting", (0, 0, 0, 0), set(), ""),
    ("handoff-gone-before-ari", "not-started", handoff_ended, (), "interrupted", (0, 0, 0, 0),
     {"run-interrupted"}, ""),
    ("handoff-pid-reused", "not-started", handoff_pid_reused, (), "interrupted", (0, 0, 0, 0),
     {"run-interrupted"}, ""),
    ("handoff-after-a-killed-run", "exploring", ari_pid_older, ("handoff",), "starting",
     (1, 0, 0, 1), set(), ""),
    ("bfts-live-from-handoff", "exploring", None, ("ari", "handoff"), "exploring", (1, 0, 0, 1),
     set(), ""),
]


@pytest.mark.parametrize("name,case,change,live,phase,nodes,rules,stage", CASES,
                         ids=[c[0] for c in CASES])
def test_status_table(tmp_path, name, case, change, live, phase, nodes, rules, stage):
    ckpt = copy_case(case, tmp_path)
    if change:
        change(ckpt)
    with contextlib.ExitStack() as stack:
        if "handoff" in live:
            stack.enter_context(live_handoff(ckpt))
            if change is ari_pid_older:  # the new hand-off started after the old .ari_pid
                os.utime(ckpt / ".ari_handoff_pid")
        if "ari" in live:
            stack.enter_context(live_ari(ckpt))
        status = read_status(ckpt)
    assert status.phase == phase
    n = status.nodes
    assert (n.total, n.done, n.failed, n.running) == nodes
    assert rules <= {f.rule for f in status.findings}
    assert status.stage == stage
    assert status.run_id == ckpt.name
    assert status.title == "Stream triad"
    if phase in ("not-started", "starting", "exploring", "paper", "reproduce", "finished"):
        assert not any(f.rule == "run-interrupted" for f in status.findings)


def test_finished_best_metric_is_the_primary_metric(tmp_path):
    ckpt = copy_case("failed", tmp_path)
    finished_with_success(ckpt)
    best = read_status(ckpt).best_metric
    assert (best.name, best.value, best.node_id) == ("GBps", 57.25, "node_b")


def test_lower_is_better_metric(tmp_path):
    ckpt = copy_case("failed", tmp_path)
    finished_with_success(ckpt)
    (ckpt / "evaluation_criteria.json").write_text(
        json.dumps({"primary_metric": "GBps", "higher_is_better": False}))
    assert read_status(ckpt).best_metric.node_id == "node_a"


def test_salvaged_counts_are_noted(tmp_path):
    ckpt = copy_case("exploring", tmp_path)
    truncate_both(ckpt)
    status = read_status(ckpt)
    assert any("partial" in note for note in status.notes), status.notes


def test_log_tail_is_readable_text(tmp_path):
    """The hand-off log's ANSI colours are gone; ari.log's JSON becomes 'time LEVEL logger: msg'."""
    ckpt = copy_case("failed", tmp_path)
    status = read_status(ckpt)
    assert status.log_file.endswith(".log") and "ari_run_" in status.log_file
    assert status.log_tail[-1].startswith("[Paper Pipeline] ERROR: No enabled stages")
    assert not any("\x1b" in line for line in status.log_tail)
    handoff_log_removed(ckpt)
    status = read_status(ckpt)
    assert status.log_file.endswith("ari.log")
    assert status.log_tail[-1].split(" ", 2)[1:] == ["ERROR", "ari.core: No enabled pipeline stages in "
                                                     f"/tmp/runs-scratch/ws2/checkpoints/{ckpt.name}/workflow.yaml"]


def test_appended_while_reading(tmp_path):
    """A line appended after one status shows in the next one; a half line is not shown."""
    ckpt = copy_case("exploring", tmp_path)
    with live_ari(ckpt):
        first = read_status(ckpt)
        append(handoff_log(ckpt), "new line from ari\nhalf a li")
        second = read_status(ckpt)
    assert "new line from ari" not in first.log_tail
    assert second.log_tail[-2:] == ("new line from ari", "half a li")


@pytest.mark.parametrize("files", [[], ["notes.txt"], ["data.csv", "run.py"]])
def test_not_an_ari_checkpoint(tmp_path, files):
    for name in files:
        (tmp_path / name).write_text("x")
    with pytest.raises(NotACheckpoint, match="not an ARI checkpoint"):
        read_status(tmp_path)


def test_missing_directory(tmp_path):
    with pytest.raises(NotACheckpoint, match="not a directory"):
        read_status(tmp_path / "nope")


def test_two_gigabyte_log_is_read_from_the_end(tmp_path):
    ckpt = copy_case("exploring", tmp_path)
    log = handoff_log(ckpt)
    with open(log, "r+b") as handle:
        handle.truncate(2 * 1024 ** 3)  # sparse: 2 GB of NULs after the real text
        handle.seek(0, 2)
        handle.write(b"\nlast words\n")
    started = time.perf_counter()
    with live_ari(ckpt):
        status = read_status(ckpt)
    assert time.perf_counter() - started < 5  # a whole-file read would take far longer
    assert status.log_tail[-1] == "last words"
    assert status.phase == "exploring"


def test_tail_edges(tmp_path):
    path = tmp_path / "log"
    assert tail(path).exists is False
    path.write_bytes(b"")
    assert tail(path).lines == ()
    path.write_bytes(b"a\nb\nc")
    assert tail(path).lines == ("a", "b", "c")
    path.write_bytes(b"x" * 100 + b"\nkept\n")
    assert tail(path, max_bytes=50).lines == ("kept",)  # the cut line is dropped
    path.write_bytes("caf\xe9\n".encode("latin-1"))
    assert tail(path).lines == ("caf\ufffd",)


def _slow_tree(ckpt):
    import ari_jupyter.runs.tree as tree_module

    fast = tree_module._fast_summary
    tree_module._fast_summary = lambda *args: None
    try:
        return tree_module.read_tree(ckpt, "GBps")
    finally:
        tree_module._fast_summary = fast


@pytest.mark.parametrize("shape", ["real", "finished", "nested-metrics", "escaped-error", "compact"])
def test_layout_reader_agrees_with_a_full_parse(tmp_path, shape):
    """tree.json is read by its layout (fast); every shape must give what json.loads gives."""
    from ari_jupyter.runs.tree import _fast_nodes, read_tree

    ckpt = copy_case("failed", tmp_path)
    if shape != "real":
        finished_with_success(ckpt)
    tree = json.loads((ckpt / "tree.json").read_text())
    if shape == "nested-metrics":
        tree["nodes"][1]["metrics"] = {"GBps": 99.0, "per_rank": {"0": 1.0}}
    if shape == "escaped-error":
        tree["nodes"][0]["error_log"] = 'line 1\nline "2", with } and ]\n}'
    text = json.dumps(tree, indent=None if shape == "compact" else 2, ensure_ascii=False)
    (ckpt / "tree.json").write_text(text)
    fast = read_tree(ckpt, "GBps")
    assert fast == _slow_tree(ckpt)
    assert (_fast_nodes(text) is None) == (shape == "compact")  # nested metrics are read whole
