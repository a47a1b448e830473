"""What the hub's queue service and a user's server agree on (runs/queue_service.py): the
all-users answer split by user, PrivateData read from ``scontrol show config``, which of the
service's answers a server may take, and the line the service answers in a server's stead."""
from __future__ import annotations

import asyncio

import pytest

from ari_jupyter.base.commands import CommandResult
from ari_jupyter.hosts.host import Host
from ari_jupyter.runs import jobs
from ari_jupyter.runs.queue_service import (answer, private_jobs, rows_by_user,
                                            usable_rows, user_argv)

S = "\x1f"


def row(job_id: str, user: str, name: str = "job") -> str:
    return S.join([job_id, name, "RUNNING", "1:00", "1", "n1", user, "/w", "large", "1", "N/A", "1:00:00"])


SPLITS = [
    # (what, squeue's text, {user: rows}, unreadable)
    ("nothing in the queue", "", {}, 0),
    ("two users interleaved", f"{row('1', 'alice')}\n{row('2', 'bob')}\n{row('3', 'alice')}\n",
     {"alice": f"{row('1', 'alice')}\n{row('3', 'alice')}\n", "bob": f"{row('2', 'bob')}\n"}, 0),
    ("a job name holding the separator: the user counted from the end",
     f"{row('4', 'bob', name=f'x{S}alice')}\n", {"bob": f"{row('4', 'bob', name=f'x{S}alice')}\n"}, 0),
    ("a job name holding a line break stays in its row",
     f"{row('5', 'carol', name='a' + chr(10) + 'b')}\n",
     {"carol": f"{row('5', 'carol', name='a' + chr(10) + 'b')}\n"}, 0),
    ("a line no row owns is given to no one", f"garbage\n{row('6', 'alice')}\n",
     {"alice": f"{row('6', 'alice')}\n"}, 1),
    ("a row too short to name its user", f"7{S}job{S}RUNNING\n", {}, 1),
    ("a row with an empty user", f"{row('8', ' ')}\n", {}, 1),
]


@pytest.mark.parametrize("what,text,expected,unreadable", SPLITS, ids=[s[0] for s in SPLITS])
def test_the_all_users_answer_is_split_by_each_rows_user(what, text, expected, unreadable):
    assert rows_by_user(text) == (expected, unreadable)


PRIVATE = [
    ("PrivateData = jobs,usage", True),
    ("PrivateData               = accounts,jobs", True),
    ("PrivateData = none", False),
    ("PrivateData = accounts,events,usage", False),
    ("PriorityType = priority/basic\nPrivateData = all", True),
    ("ProctrackType = proctrack/linuxproc", False),
]


@pytest.mark.parametrize("config,private", PRIVATE)
def test_private_data_is_read_from_scontrol_show_config(config, private):
    assert private_jobs(config) is private


GOOD = answer("ok", user="alice", rows="r\n", age_s=3.0)
REPLIES = [
    ("a fresh answer about this user", GOOD, "r\n"),
    ("an empty queue is an answer too", {**GOOD, "rows": ""}, ""),
    ("stale", {**GOOD, "stale": True}, None),
    ("about another user", {**GOOD, "user": "bob"}, None),
    ("PrivateData", answer("private", user="alice"), None),
    ("no answer yet", answer("error", user="alice"), None),
    ("older than the server accepts", {**GOOD, "age_s": 601}, None),
    ("not the service's", {**GOOD, "service": "other"}, None),
    ("no age", {**GOOD, "age_s": None}, None),
    ("not an object", ["r"], None),
]


@pytest.mark.parametrize("what,reply,rows", REPLIES, ids=[r[0] for r in REPLIES])
def test_a_server_takes_only_a_fresh_ok_answer_about_its_own_user(what, reply, rows):
    assert usable_rows(reply, "alice", 600) == rows


class _Recorder(Host):
    def __init__(self):
        self.env, self.argvs = {}, []

    async def run(self, argv, timeout, env=None):
        self.argvs.append(tuple(argv))
        return CommandResult(tuple(argv), 0, "", "")


def test_the_service_answers_the_very_line_the_runs_views_ask():
    host = _Recorder()
    asyncio.run(jobs._squeue(host, "alice"))
    assert host.argvs == [user_argv("alice")]
