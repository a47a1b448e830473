"""A SLURM job's output (a reproduce job's reproduce.log, a BFTS job's slurm_job_N.out) is a log
the doctor reads: its ranks, metric lines and SLURM step lines are said, and the verdict agrees
with the run (ranks on both nodes: no "one node" error). First the recorded demo run's own
outputs, then a table."""
from __future__ import annotations

import json

import pytest

from ari_jupyter.cli import main
from ari_jupyter.doctor import diagnose_text
from ari_jupyter.doctor.detect import is_job_output, unrecognized
from ari_jupyter.hosts.recorded_run import RUNS_DIR
from ari_jupyter.hosts.recorded_site import RecordedSite

(RUN_ID,) = RecordedSite.load("rccs-cloud").runs  # the run every demo site shows
FILES = json.loads((RUNS_DIR / f"{RUN_ID}.json").read_text(encoding="utf-8"))["files"]
REPRODUCE_LOG = FILES[f"checkpoints/{RUN_ID}/repro_sandbox/reproduce.log"]["text"]
BFTS_JOB = FILES["slurm_logs/slurm_job_3.out"]["text"]


def _rules(findings):
    return [(f.rule, f.severity) for f in findings]


@pytest.mark.parametrize("name,text,ranks_said", [
    ("reproduce.log", REPRODUCE_LOG, "4 rank(s) on 2 node(s) (n1 n2)"),
    ("slurm_job_3.out", BFTS_JOB, "1 rank(s) on 1 node(s) (n1)"),
])
def test_the_recorded_runs_job_outputs_are_read_and_agree_with_the_run(name, text, ranks_said):
    findings = diagnose_text(text, nodes=2, filename=name)
    assert _rules(findings) == [("job-output", "info")]
    assert not unrecognized(text, None, "log")
    said = findings[0].message
    assert ranks_said in said and "triad_mbps" in said and "checked" in said
    for lang in ("ja", "zh"):
        assert "triad_mbps" in findings[0].text(lang) and findings[0].text(lang) != said
    # pasted without a name: the same
    assert _rules(diagnose_text(text, nodes=2)) == [("job-output", "info")]


def test_the_cli_says_what_it_read_in_the_reproduce_log(tmp_path, capsys):
    log = tmp_path / "reproduce.log"
    log.write_text(REPRODUCE_LOG)
    assert main(["doctor", "--nodes", "2", str(log)]) == 0
    out = capsys.readouterr().out
    assert "nothing was checked" not in out and "job-output" in out and "2 of the job's 2 nodes" in out


# (id, text, nodes, rules found)
TABLE = [
    ("ranks-on-both", "rank 0 on n1\nrank 1 on n2\n", 2, [("job-output", "info")]),
    ("ranks-on-one-of-two", "rank 0 on n1\nrank 1 on n1\n", 2, [("ranks-on-one-node", "error")]),
    ("metrics-only", "loss: 0.25\naccuracy = 0.9\n", None, [("job-output", "info")]),
    ("step-line", "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n", 2,
     [("job-output", "info")]),
    ("one-metric-is-no-job", "score: 3\n", None, []),
    ("prose", "Dear user,\nthe meeting is at noon.\n", None, []),
]


@pytest.mark.parametrize("case", TABLE, ids=[row[0] for row in TABLE])
def test_job_output_table(case):
    _id, text, nodes, expected = case
    findings = diagnose_text(text, nodes=nodes)
    assert _rules(findings) == expected
    assert is_job_output(text) == (_id not in ("one-metric-is-no-job", "prose"))
    assert unrecognized(text, None, "log") == (not expected)
