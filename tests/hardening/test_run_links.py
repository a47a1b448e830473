"""A run folder that is a link out of the workspace's ``checkpoints/`` is never read as a run.

Another user who can write a listed workspace plants ``checkpoints/<run_id> -> <alice's home>``
(her home holds a draft experiment.md and three jobs of hers run there). Before, the Runs
listing showed it with her draft's title, attributed her three unrelated jobs to it, and
"cancel all" cancelled them. Now the listing leaves it out saying so, and status and cancel
(the route, the CLI, ``cancel_jobs`` itself) refuse it; nothing is cancelled.
"""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from ari_jupyter.i18n import say
from ari_jupyter.runs.jobs import cancel_jobs, current_user
from ari_jupyter.runs.service import cancel_json, runs_json, status_json
from ari_jupyter.runs.status import UnreadableCheckpoint, read_status

from unit.runs.test_jobs import FakeHost, row
from .figures import record

RUN_ID = "20261201094500_planted"


@pytest.fixture
def planted(tmp_path):
    home = tmp_path / "alice-home"
    (home / "thesis").mkdir(parents=True)
    (home / "experiment.md").write_text("# Alice's private draft title\n")
    (home / "launch_config.json").write_text("{}\n")
    ws = tmp_path / "shared-ws"
    (ws / "checkpoints").mkdir(parents=True)
    (ws / "checkpoints" / RUN_ID).symlink_to(home)
    jobs = [row(str(i), "thesis", "RUNNING", home / "thesis", user=current_user())
            for i in (31, 32, 33)]
    return ws, ws / "checkpoints" / RUN_ID, FakeHost(queue=jobs)


def _scancels(host) -> list:
    return [call for call in host.calls if call[0] == "scancel"]


def test_a_link_out_of_checkpoints_is_left_out_of_the_listing_and_refused(planted):
    ws, link, host = planted
    listing = asyncio.run(runs_json(ws, host))
    refused = {}
    for name, call in (("status", lambda: asyncio.run(status_json(link, host))),
                       ("cancel", lambda: asyncio.run(cancel_json(link, None, host))),
                       ("read", lambda: read_status(link))):
        try:
            call()
            refused[name] = False
        except UnreadableCheckpoint as exc:  # a 403 in the route, as an unreadable run
            refused[name] = type(exc).__name__
    direct = asyncio.run(cancel_jobs(link, host, settle=0))
    survived = (not listing["runs"] and all(refused.values()) and not _scancels(host)
                and [o.result for o in direct] == ["refused"])
    record("Attacks", "a run folder linked out of checkpoints/ to the user's home: not listed, "
           "status and cancel refused", cases=1, survived=int(survived), lost=int(not survived),
           unit="links")
    assert listing["runs"] == [] and listing["skipped"] == [str(link)], listing
    assert "out of checkpoints/" in say(listing["skipped_message"], "en")
    assert refused == {"status": "LinkedCheckpoint", "cancel": "LinkedCheckpoint",
                       "read": "LinkedCheckpoint"}, refused
    assert direct[0].message.message_id == "runs.linked_out"
    assert _scancels(host) == []


def test_cli_status_and_cancel_say_why_in_the_users_language(planted):
    _ws, link, _host = planted
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    for argv in (["status", str(link)], ["cancel", "--all", "--yes", str(link)]):
        done = subprocess.run([sys.executable, "-m", "ari_jupyter", *argv, "--lang", "ja"],
                              capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "checkpoints/ フォルダーの外" in done.stderr, done.stderr
        assert "Alice's private draft title" not in done.stdout + done.stderr


def test_a_link_that_stays_inside_checkpoints_and_a_real_folder_are_still_runs(tmp_path):
    ws = tmp_path / "ws"
    real = ws / "checkpoints" / "20261201094500_real"
    real.mkdir(parents=True)
    (real / "experiment.md").write_text("# Mine\n")
    (ws / "checkpoints" / "20261201094600_alias").symlink_to(real)
    assert read_status(real).title == "Mine"
    assert read_status(ws / "checkpoints" / "20261201094600_alias").title == "Mine"
