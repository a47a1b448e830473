"""The status bar's time left is read from squeue once and counted down here (server/status.py):
the job's end is fixed, so polls cost slurmctld nothing until the re-read (a changed time
limit), a count at zero, or an explicit refresh; an unanswered re-read keeps the last answer,
marked stale."""
from __future__ import annotations

import asyncio

import pytest

from ari_jupyter.base.verdict import ProbeResult
from ari_jupyter.server.status import AllocationStatus
from ari_jupyter.slurm.parsers import format_slurm_duration, parse_slurm_duration

ENV = {"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": "n1", "SLURM_JOB_NUM_NODES": "1"}


class ScriptedProbe:
    """squeue's answers in turn: seconds left (int), None for no answer (a timeout)."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = 0

    async def __call__(self, allocation):
        answer = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        if answer is None:
            return ProbeResult.of("time_left", "unknown", "probe.unanswered.timeout", command="squeue",
                                  params={"command": "squeue", "seconds": "3",
                                          "what": "the time left"}).to_json()
        return {"id": "time_left", "status": "ok", "summary": "", "command": "squeue -h -j 42 -o %L",
                "evidence": "", "data": {"job_id": "42", "seconds": answer, "raw": format_slurm_duration(answer),
                         "unlimited": False}}


@pytest.mark.parametrize("seconds, text", [
    (0, "0:00"), (59, "0:59"), (600, "10:00"), (3599, "59:59"), (3600, "1:00:00"),
    (86399, "23:59:59"), (86400, "1-00:00:00"), (90061, "1-01:01:01"), (-5, "0:00"),
])
def test_a_duration_is_written_as_squeue_writes_it_and_reads_back(seconds, text):
    assert format_slurm_duration(seconds) == text
    assert parse_slurm_duration(text) == max(0, seconds)


# (seconds after the first read, refresh?, squeue calls so far, seconds shown, stale)
SCHEDULE = [
    (0, False, 1, 7200, False),
    (29, False, 1, 7171, False),     # the status bar's next polls: counted, no squeue
    (299, False, 1, 6901, False),
    (300, False, 2, 5000, False),    # re-read: an admin cut the limit (scontrol update TimeLimit=)
    (310, True, 3, 4000, False),     # an explicit refresh asks now
    (400, False, 3, 3910, False),
    (610, False, 4, 3700, True),     # the re-read got no answer: the last one, counted, stale
    (611, False, 4, 3699, True),     # an unanswered read is kept CACHE_SECONDS (30 s)
    (640, False, 5, 3670, True),
]


def test_the_time_left_is_counted_down_and_read_again_only_when_due():
    now = [1000.0]
    probe = ScriptedProbe(7200, 5000, 4000, None, None)
    status = AllocationStatus(env=ENV, time_left_probe=probe, clock=lambda: now[0])

    async def scenario():
        for at, refresh, calls, shown, stale in SCHEDULE:
            now[0] = 1000.0 + at
            snap = await status.snapshot(refresh=refresh)
            assert (probe.calls, snap["time_left"]["data"]["seconds"], snap["time_left_stale"]) == \
                (calls, shown, stale), f"at {at} s"
            assert snap["time_left"]["data"]["raw"] == format_slurm_duration(shown)

    asyncio.run(scenario())


def test_a_count_reaching_zero_asks_again_and_the_words_follow_the_count():
    now = [0.0]
    probe = ScriptedProbe(3700, 3000)
    status = AllocationStatus(env=ENV, time_left_probe=probe, clock=lambda: now[0])

    async def scenario():
        assert (await status.snapshot())["time_left"]["data"]["seconds"] == 3700
        now[0] = 60.0  # 3640 s: still over the hour, the probe's own words
        counted = (await status.snapshot())["time_left"]
        assert (counted["status"], counted["message_id"], counted["params"]["left"]) == \
            ("ok", "probe.time_left.ok", "1:00:40")
        now[0] = 200.0  # 3500 s left: under the hour, the warning's words, no squeue
        later = (await status.snapshot())["time_left"]
        assert (probe.calls, later["status"], later["message_id"]) == (1, "warn", "probe.time_left.short")
        assert later["params"] == {"job": "42", "left": "58:20", "minutes": 58}
        now[0] = 3700.0  # counted to zero: squeue is asked rather than show 0:00
        assert (await status.snapshot())["time_left"]["data"]["seconds"] == 3000 and probe.calls == 2

    asyncio.run(scenario())
