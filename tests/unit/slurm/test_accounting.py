"""sacct's answer read back (``slurm.accounting``), from what the test bed's accounting printed.

``tests/fixtures/outputs/sacct/testbed_acct.txt`` is ``sacct -X -P -n -j 1,2,3,4,5 -o
ACCOUNT_FIELDS`` on the test bed's variant ``acct`` (slurmdbd on MariaDB, Slurm 22.05): a job
named ``ok|pipe`` on two nodes, one that exited 3, one still running past its limit, one
cancelled while pending on a dependency.

``tests/fixtures/outputs/sshare/`` holds ``sshare -n -P -U -u root -o SHARE_FIELDS`` on the test
bed: ``testbed_acct.txt`` on variant ``acct`` (fair-share priority, ``priority/multifactor``),
``testbed_acct_basic.txt`` on the same with ``priority/basic``, ``testbed_noacct.txt`` without
accounting (sshare answers with no row).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ari_jupyter.slurm.accounting import (ACCOUNT_FIELDS, accounting_disabled, fair_shares,
                                          parse_accounting, sacct_argv, share_argv)
from ari_jupyter.slurm.pending import ADVISED, advice_id, parse_start, start_argv
from ari_jupyter.i18n import t

RECORDED = (Path(__file__).parents[2] / "fixtures" / "outputs" / "sacct" / "testbed_acct.txt").read_text()


def test_the_recorded_answer():
    rows, unreadable = parse_accounting(RECORDED)
    assert unreadable == 0
    got = [(r.job_id, r.name, r.state, r.exit_code, r.elapsed_s, r.nodes, r.node_list, r.node_seconds)
           for r in rows]
    assert got == [("1", "ok|pipe", "COMPLETED", "0:0", 1, 2, "n[1-2]", 2),
                   ("2", "fails", "FAILED", "3:0", 0, 1, "n1", 0),
                   ("3", "timeout", "RUNNING", "0:0", 78, 1, "n1", 78),
                   ("4", "pending", "COMPLETED", "0:0", 1, 2, "n[1-2]", 2),
                   ("5", "cancelled", "CANCELLED", "0:0", 0, 1, "None assigned", 0)]
    assert {(r.user, r.work_dir, r.time_limit) for r in rows} == {("root", "/tmp", "00:01:00")}


# name, one line, read (state, elapsed_s, nodes) or None when it must be counted unreadable
ROWS = [
    ("step row (no -X)", "1.batch|batch|COMPLETED|0:0|00:00:01|1|1|n1|||", None),
    ("array task", "7_3|a|TIMEOUT|0:15|01:00:00|3600|2|n[1-2]|u|/w|01:00:00", ("TIMEOUT", 3600, 2)),
    ("no ElapsedRaw: Elapsed read", "8|a|COMPLETED|0:0|1-00:00:02||1|n1|u|/w|UNLIMITED",
     ("COMPLETED", 86402, 1)),
    ("too few fields", "9|a|COMPLETED|0:0|00:00:01", None),
    ("nodes not a count", "10|a|COMPLETED|0:0|00:00:01|1|x|n1|u|/w|1", None),
    ("elapsed garbage", "11|a|COMPLETED|0:0|soon|later|1|n1|u|/w|1", None),
    ("empty state", "12|a||0:0|00:00:01|1|1|n1|u|/w|1", None),
    ("non-ASCII digits", "13|a|COMPLETED|0:0|０１:００|１|1|n1|u|/w|1", None),
]


@pytest.mark.parametrize("name,line,read", ROWS, ids=[r[0] for r in ROWS])
def test_rows(name, line, read):
    rows, unreadable = parse_accounting(line + "\n")
    if read is None:
        assert (rows, unreadable) == ([], 1)
    else:
        [row] = rows
        assert (row.state, row.elapsed_s, row.nodes) == read and unreadable == 0


@pytest.mark.parametrize("ids,asked", [
    (["1", "2", "3"], "1,2,3"),
    (["3", "1", "3"], "3,1"),              # each once, in order
    (["1", "1;rm -rf /", "7_3"], "1,7_3"),  # never a word that is not a job id
])
def test_one_line_for_all_the_jobs(ids, asked):
    argv = sacct_argv(ids)
    assert argv[:4] == ["sacct", "-X", "-P", "-n"]
    assert argv[argv.index("-j") + 1] == asked
    assert argv[argv.index("-o") + 1] == ",".join(ACCOUNT_FIELDS)


@pytest.mark.parametrize("output,disabled", [
    ("sacct: error: Slurm accounting storage is disabled\n", True),
    ("sacct: error: Problem talking to the database: Connection refused\n", False),
    ("", False),
])
def test_accounting_disabled(output, disabled):
    assert accounting_disabled(output) is disabled


# squeue --start's rows as the test bed printed them (a job waiting for nodes, one for its
# dependency), and the reasons a site shows
START_ROWS = [
    ("3|Resources|2026-12-07T01:56:39", ("Resources", "2026-12-07T01:56:39", "runs.pending.advice.Resources")),
    ("4|Dependency|N/A", ("Dependency", "", "runs.pending.advice.Dependency")),
    ("5|ReqNodeNotAvail, UnavailableNodes:n1|N/A",
     ("ReqNodeNotAvail", "", "runs.pending.advice.ReqNodeNotAvail")),
    ("6|QOSMaxJobsPerUserLimit|2026-12-08T00:00:00",
     ("QOSMaxJobsPerUserLimit", "2026-12-08T00:00:00", "runs.pending.advice.QOSMaxJobsPerUserLimit")),
    ("7|PartitionTimeLimit|N/A", ("PartitionTimeLimit", "", "runs.pending.advice.PartitionTimeLimit")),
    ("8|Priority|2026-12-07T03:00:00", ("Priority", "2026-12-07T03:00:00", "runs.pending.advice.Priority")),
    ("9|AssocGrpGRESMinutes|N/A", ("AssocGrpGRESMinutes", "", "runs.pending.advice.other")),
    ("10|None|N/A", ("", "", "runs.pending.advice.other")),
]


@pytest.mark.parametrize("line,read", START_ROWS, ids=[r[0].split("|")[1] for r in START_ROWS])
def test_pending_reason_and_expected_start(line, read):
    [(job_id, waiting)] = parse_start(line + "\n").items()
    assert job_id == line.split("|")[0]
    assert (waiting.reason, waiting.expected_start, advice_id(waiting.reason)) == read


def test_every_advice_is_in_the_catalogs():
    for reason in ADVISED + ("other",):
        for lang in ("en", "ja", "zh"):
            assert t(f"runs.pending.advice.{reason}", lang, reason=reason, job="5")


@pytest.mark.parametrize("text", ["", "garbage\n", "x|Resources|N/A\n", "5|Resources\n"])
def test_start_rows_it_cannot_read(text):
    assert parse_start(text) == {}


def test_start_argv():
    assert start_argv(["3", "3", "4;x", "5"]) == ["squeue", "--start", "-h", "-j", "3,5", "-o", "%i|%r|%S"]


# sshare -n -P -U -u <user> -o SHARE_FIELDS: the test bed's (recorded, tests/fixtures/outputs/sshare/),
# then sites' shapes
SHARE_DIR = Path(__file__).parents[2] / "fixtures" / "outputs" / "sshare"
SHARES = [
    ("test bed with accounting and fair-share priority (recorded)", (SHARE_DIR / "testbed_acct.txt").read_text(),
     ["root: FairShare=1.000000", "ari: FairShare=1.000000"]),
    # priority/basic: no normalized shares, a factor of 0 that means nothing
    ("test bed with accounting, priority/basic (recorded)", (SHARE_DIR / "testbed_acct_basic.txt").read_text(), []),
    ("test bed without accounting (recorded: no rows)", (SHARE_DIR / "testbed_noacct.txt").read_text(), []),
    ("two accounts", "proj1|alice|100|0.250000|0.412000|0.318000\nproj2|alice|1|0.010000|0.000000|1.000000\n",
     ["proj1: FairShare=0.318000", "proj2: FairShare=1.000000"]),
    ("a site that hides usage: no factor", "proj1|alice|100||||\n", []),
    ("an account's own row (no user) is not the user's", "proj1||100|0.250000|0.412000|\n", []),
    ("not a factor", "proj1|alice|100|0.25|0.4|inf\nproj2|alice|1|0.1|0.0|1.5\n", []),
    ("an error", "sshare: error: Problem with call to slurm_associations_get_shares\n", []),
    ("nothing", "", []),
]


@pytest.mark.parametrize("name,text,shares", SHARES, ids=[s[0] for s in SHARES])
def test_fair_shares(name, text, shares):
    assert fair_shares(text) == shares


def test_the_share_line_asks_the_users_own_rows_once():
    assert share_argv("alice") == ["sshare", "-n", "-P", "-U", "-u", "alice", "-o",
                                   "Account,User,RawShares,NormShares,EffectvUsage,FairShare"]
