"""The hub's one queue answer (hubservice/queue.py): one squeue for all users per interval,
each user given their own rows, fresh answers within the ceilings, a failed or hung squeue
answered with the last rows marked stale, PrivateData respected, and the admin's figures."""
from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from ari_jupyter.hosts.host import LocalHost
from ari_jupyter.hubservice.queue import HubQueue, slurm_user

S = "\x1f"


def row(job_id: str, user: str) -> str:
    return S.join([job_id, "job", "RUNNING", "1:00", "1", "n1", user, "/w", "large", "1", "N/A", "1:00:00"])


QUEUE = f"{row('1', 'alice')}\n{row('2', 'bob')}\n{row('3', 'alice')}\n"


def _queue(tmp_path: Path, *, private: str = "none", slurm: str = "slurm", **budget):
    """A HubQueue on this machine whose squeue prints ``tmp_path/queue`` (exit ``tmp_path/rc``,
    after ``tmp_path/delay`` seconds) and whose scontrol shows the given PrivateData; the clock
    is the test's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (tmp_path / "queue").write_text(QUEUE)
    (tmp_path / "rc").write_text("0")
    (tmp_path / "delay").write_text("0")
    (bin_dir / "squeue").write_text(
        f"#!/bin/sh\necho \"$*\" >> {tmp_path}/calls\nsleep $(cat {tmp_path}/delay)\n"
        f"cat {tmp_path}/queue\nexit $(cat {tmp_path}/rc)\n")
    (bin_dir / "scontrol").write_text(
        f"#!/bin/sh\necho scontrol >> {tmp_path}/calls\n"
        f"printf 'SlurmUser = {slurm}(64030)\\nPrivateData = {private}\\n'\n")
    for name in ("squeue", "scontrol"):
        (bin_dir / name).chmod(0o755)
    now = [100.0]
    me = budget.pop("me", "hubsvc")
    queue = HubQueue(LocalHost({**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}),
                     clock=lambda: now[0], me=lambda: me, **budget)
    return queue, now


def _calls(tmp_path: Path) -> list[str]:
    path = tmp_path / "calls"
    return path.read_text().splitlines() if path.exists() else []


def _squeues(tmp_path: Path) -> int:
    return sum(1 for c in _calls(tmp_path) if c != "scontrol")


BUDGETS = [
    # (interval, hub ceiling, user ceiling) -> (interval kept, seconds between one user's fresh answers)
    ((30, 10, 4), (30, 30)),
    ((5, 10, 4), (12, 30)),     # the hub's ceiling lengthens a short interval: 2 RPCs every 12 s
    ((60, 4, 60), (60, 30)),    # a user's fresh answers never come faster than the hub allows
    ((30, 0, 4), (float("inf"), float("inf"))),  # a ceiling of 0: never ask
]


@pytest.mark.parametrize("settings,expected", BUDGETS)
def test_the_ceilings_bound_the_interval_and_a_users_fresh_answers(tmp_path, settings, expected):
    interval, hub, user = settings
    queue, _ = _queue(tmp_path, interval=interval, hub_ceiling=hub, user_ceiling=user)
    assert (queue.interval, queue.user_spacing) == expected


def test_all_users_within_the_interval_share_one_squeue_and_each_gets_their_own_rows(tmp_path):
    queue, now = _queue(tmp_path)

    async def many():
        return await asyncio.gather(*(queue.answer_for(u) for u in ("alice", "bob", "alice", "carol")))

    alice, bob, _, carol = asyncio.run(many())
    assert alice["rows"] == f"{row('1', 'alice')}\n{row('3', 'alice')}\n" and alice["user"] == "alice"
    assert bob["rows"] == f"{row('2', 'bob')}\n"
    assert carol["state"] == "ok" and carol["rows"] == ""  # no job: an answer, not another's rows
    assert _calls(tmp_path)[0] == "scontrol" and _squeues(tmp_path) == 1
    assert "-u" not in _calls(tmp_path)[1].split()  # one line for everyone
    now[0] += 29.9
    asyncio.run(queue.answer_for("bob"))
    assert _squeues(tmp_path) == 1
    now[0] += 0.1
    asyncio.run(queue.answer_for("bob"))
    assert _squeues(tmp_path) == 2
    figures = queue.figures()
    assert (figures["queries"], figures["rpcs"], figures["requests"], figures["users_served"]) == (2, 5, 6, 3)


FRESH = [
    # (what, asks: (seconds, user, fresh), squeues asked) at 30 s, 10 RPCs/min per hub, 4 per user
    ("a fresh answer 12 s after the last squeue", [(0, "bob", False), (12, "alice", True)], 2),
    ("not before 12 s: the hub's ceiling", [(0, "bob", False), (11.9, "alice", True)], 1),
    ("one user's second fresh answer within 30 s: the held one",
     [(0, "bob", False), (12, "alice", True), (41.9, "alice", True)], 2),
    ("one user's second fresh answer 30 s later", [(0, "bob", False), (12, "alice", True),
                                                  (42, "alice", True)], 3),
    ("another user's fresh answer is theirs to ask", [(0, "bob", False), (12, "alice", True),
                                                     (24, "bob", True)], 3),
    ("a plain ask within the interval", [(0, "bob", False), (29.9, "alice", False)], 1),
]


@pytest.mark.parametrize("what,asks,squeues", FRESH, ids=[f[0] for f in FRESH])
def test_a_fresh_answer_is_given_within_the_ceilings(tmp_path, what, asks, squeues):
    queue, now = _queue(tmp_path, interval=30, hub_ceiling=10, user_ceiling=4)
    start = now[0]
    for at, user, fresh in asks:
        now[0] = start + at
        asyncio.run(queue.answer_for(user, fresh=fresh))
    assert _squeues(tmp_path) == squeues


def test_a_failing_squeue_gives_the_last_rows_marked_stale_and_is_asked_an_interval_later(tmp_path):
    queue, now = _queue(tmp_path)
    (tmp_path / "rc").write_text("1")
    first = asyncio.run(queue.answer_for("alice"))
    assert first["state"] == "error" and first["rows"] == ""  # never answered: nothing to give
    (tmp_path / "rc").write_text("0")
    now[0] += 30
    assert asyncio.run(queue.answer_for("alice"))["stale"] is False
    (tmp_path / "rc").write_text("1")
    now[0] += 30
    said = asyncio.run(queue.answer_for("alice"))
    assert said["state"] == "ok" and said["stale"] is True and said["age_s"] == 30
    assert said["rows"] == f"{row('1', 'alice')}\n{row('3', 'alice')}\n"
    asyncio.run(queue.answer_for("alice"))
    assert _squeues(tmp_path) == 3  # not asked again on every request
    assert queue.figures()["stale"] is True


def test_a_hung_squeue_is_given_up_after_the_timeout(tmp_path):
    queue, now = _queue(tmp_path, timeout=1)
    asyncio.run(queue.answer_for("alice"))
    (tmp_path / "delay").write_text("20")
    now[0] += 30
    started = time.monotonic()
    said = asyncio.run(queue.answer_for("alice"))
    assert time.monotonic() - started < 5
    assert said["stale"] is True and said["rows"]


PRIVATE = [
    # (PrivateData, the service's user, answered "private")
    ("jobs,usage", "hubsvc", True),
    ("jobs", "root", False),      # root sees every job
    ("jobs", "slurm", False),     # so does the SlurmUser
    ("none", "hubsvc", False),
    ("usage", "hubsvc", False),
]


@pytest.mark.parametrize("private,me,said_private", PRIVATE)
def test_private_data_is_said_and_costs_no_squeue(tmp_path, private, me, said_private):
    queue, _ = _queue(tmp_path, private=private, me=me)
    said = asyncio.run(queue.answer_for("alice"))
    assert (said["state"] == "private") is said_private
    assert _squeues(tmp_path) == (0 if said_private else 1)
    assert queue.figures()["private_data"] is said_private
    assert said_private or said["rows"]


def test_slurm_user_is_read_from_the_config():
    assert slurm_user("SlurmUser               = slurm(64030)\n") == "slurm"
    assert slurm_user("ClusterName = x\n") == ""


def test_until_scontrol_answers_no_user_is_given_rows_it_may_not_tell_whole(tmp_path):
    queue, now = _queue(tmp_path, private="jobs")
    scontrol = tmp_path / "bin" / "scontrol"
    working = scontrol.read_text()
    scontrol.write_text("#!/bin/sh\necho scontrol >> " + str(tmp_path) + "/calls\nexit 1\n")
    assert asyncio.run(queue.answer_for("alice"))["state"] == "error"
    now[0] += 11.9
    assert asyncio.run(queue.answer_for("alice"))["state"] == "error"
    assert _calls(tmp_path) == ["scontrol"]  # asked again only after the hub's spacing
    scontrol.write_text(working)
    now[0] += 0.1
    assert asyncio.run(queue.answer_for("alice"))["state"] == "private"
    assert _squeues(tmp_path) == 0
