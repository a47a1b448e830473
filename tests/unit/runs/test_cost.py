"""What a run has cost so far (``runs.cost``): node-hours per job kind from its jobs, and ARI's
own ``cost_summary.json`` (``tests/fixtures/outputs/ari/cost_summary_recorded_run.json`` is the
file ARI's cost tracker wrote in the recorded whole run of the demo sites)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ari_jupyter.i18n import say
from ari_jupyter.runs.cost import node_hours, read_llm_use, run_cost, usd_text
from ari_jupyter.runs.jobs import Job, JobsView

RECORDED = Path(__file__).parents[2] / "fixtures" / "outputs" / "ari" / "cost_summary_recorded_run.json"


def job(kind, nodes, elapsed="", elapsed_s=None, state="COMPLETED"):
    return Job("1", "n", state, elapsed, nodes, kind=kind, elapsed_s=elapsed_s)


# name, jobs, node-hours {bfts, reproduce, total}
HOURS = [
    ("accounting's seconds x nodes", [job("bfts", "2", elapsed_s=1800), job("reproduce", "2", elapsed_s=3600)],
     {"bfts": 1.0, "reproduce": 2.0, "total": 3.0}),
    ("the queue's elapsed for a running job", [job("bfts", "1", "30:00", state="RUNNING")],
     {"bfts": 0.5, "reproduce": 0.0, "total": 0.5}),
    ("accounting wins over the queue's text", [job("bfts", "2", "0:01", elapsed_s=3600)],
     {"bfts": 2.0, "reproduce": 0.0, "total": 2.0}),
    ("days", [job("bfts", "4", "1-00:00:00")], {"bfts": 96.0, "reproduce": 0.0, "total": 96.0}),
    ("never ran / unreadable: nothing counted", [job("bfts", "", "0:00"), job("bfts", "2", "soon"),
                                                 job("", "2", elapsed_s=3600)],
     {"bfts": 0.0, "reproduce": 0.0, "total": 0.0}),
]


@pytest.mark.parametrize("name,jobs,hours", HOURS, ids=[h[0] for h in HOURS])
def test_node_hours(name, jobs, hours):
    assert node_hours(jobs) == hours


def test_aris_recorded_cost_summary(tmp_path):
    shutil.copy(RECORDED, tmp_path / "cost_summary.json")
    use = read_llm_use(tmp_path)
    assert (use.total_tokens, use.total_cost_usd, use.calls) == (32, 0.0, 16)
    assert [(u.name, u.tokens) for u in use.by_phase] == [("react", 26), ("bfts", 6)]
    assert [(u.name, u.tokens) for u in use.by_model] == [("scripted-coding", 26), ("scripted-bfts", 6)]


# name, the file's text (None: no file), read
SUMMARIES = [
    ("none", None, False),
    ("not JSON", "{", False),
    ("a list", "[]", False),
    ("negative tokens", '{"total_tokens": -1, "total_cost_usd": 0}', False),
    ("tokens a string", '{"total_tokens": "5", "total_cost_usd": 0}', False),
    ("by_phase not a table", '{"total_tokens": 5, "total_cost_usd": 0, "by_phase": 3}', False),
    ("minimal", '{"total_tokens": 5, "total_cost_usd": 0.5}', True),
]


@pytest.mark.parametrize("name,content,read", SUMMARIES, ids=[s[0] for s in SUMMARIES])
def test_a_summary_of_another_shape_is_left_out(tmp_path, name, content, read):
    if content is not None:
        (tmp_path / "cost_summary.json").write_text(content)
    assert (read_llm_use(tmp_path) is not None) is read


def test_what_status_says(tmp_path):
    (tmp_path / "cost_summary.json").write_text(json.dumps({
        "total_cost_usd": 1.234567, "total_tokens": 123456, "call_count": 42,
        "by_phase": {"bfts": {"cost_usd": 1.0, "tokens": 100000}, "paper": {"cost_usd": 0.234567, "tokens": 23456}},
        "by_model": {"gpt-4o": {"cost_usd": 1.234567, "tokens": 123456}}}))
    jobs = JobsView((job("bfts", "2", elapsed_s=5400), job("reproduce", "2", elapsed_s=900)), accounting="yes")
    said = [say(line, "en") for line in run_cost(tmp_path, jobs).said()]
    assert said == ["node-hours used: 3.5 (BFTS 3, reproduce 0.5; SLURM accounting)",
                    "LLM use: 123,456 tokens, $1.23 in 42 calls (ARI's cost_summary.json)",
                    "by phase: bfts 100,000 tokens $1.00, paper 23,456 tokens $0.23",
                    "by model: gpt-4o 123,456 tokens $1.23"]
    ja = [say(line, "ja") for line in run_cost(tmp_path, jobs).said()]
    assert ja[0].startswith("使用ノード時間: 3.5") and "フェーズ別" in ja[2]
    assert say(run_cost(tmp_path, jobs).said()[2], "zh").startswith("按阶段")


@pytest.mark.parametrize("scheduler,accounting,first", [
    ("ok", "no", "node-hours used by the jobs in the queue now: 0"),
    ("error", "unknown", "node-hours used: unknown (SLURM did not answer)"),
    ("absent", "unknown", "node-hours used: not known here (no SLURM on this machine)"),
    ("recording", "unknown", "node-hours used by the jobs in the queue now"),
])
def test_without_accounting_a_partial_sum_is_never_the_whole(tmp_path, scheduler, accounting, first):
    cost = run_cost(tmp_path, JobsView((), scheduler, accounting=accounting))
    assert say(cost.said()[0], "en").startswith(first)
    assert (cost.to_json()["node_hours"] is None) is (scheduler in ("error", "absent"))


@pytest.mark.parametrize("cost,shown", [(0.0, "0.00"), (0.0042, "0.0042"), (1.5, "1.50"), (12.345, "12.35")])
def test_usd_text(cost, shown):
    assert usd_text(cost) == shown
