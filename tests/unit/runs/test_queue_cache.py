"""The server's runs routes share one squeue answer per 30 s (server/queue_cache.py):
every tab and poll of a user costs the controller one listing, Cancel's checks never wait on a
stale one, and a failure is asked again."""
from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ari_jupyter.server.queue_cache import QueueCachingHost

LISTING = ["squeue", "-h", "-u", "alice", "-o", "%i"]


def _host(tmp_path: Path, fail: bool = False):
    """A host whose squeue, sacct and scancel are stand-ins counting their calls."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("squeue", "sacct", "scancel"):
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\necho {name} >> {tmp_path}/calls\nsleep 0.2\n"
                          f"echo 17\nexit {1 if fail and name == 'squeue' else 0}\n")
        script.chmod(0o755)
    now = [0.0]
    host = QueueCachingHost({**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
                            clock=lambda: now[0])
    return host, now


def _calls(tmp_path: Path) -> list[str]:
    path = tmp_path / "calls"
    return path.read_text().split() if path.exists() else []


def test_tabs_polling_at_once_and_within_thirty_seconds_share_one_squeue(tmp_path):
    host, now = _host(tmp_path)

    async def five_tabs():
        return await asyncio.gather(*(host.run(LISTING, timeout=10) for _ in range(5)))

    answers = asyncio.run(five_tabs())
    assert [a.stdout.strip() for a in answers] == ["17"] * 5
    now[0] = 29.9
    asyncio.run(host.run(LISTING, timeout=10))
    assert _calls(tmp_path) == ["squeue"]
    now[0] = 30.0
    asyncio.run(host.run(LISTING, timeout=10))
    assert _calls(tmp_path) == ["squeue", "squeue"]


def test_a_job_specific_line_and_a_cancel_go_to_slurm(tmp_path):
    host, _ = _host(tmp_path)
    asyncio.run(host.run(LISTING, timeout=10))
    asyncio.run(host.run(LISTING + ["-j", "17"], timeout=10))
    asyncio.run(host.run(LISTING + ["-j", "17"], timeout=10))
    asyncio.run(host.run(["scancel", "17"], timeout=10))
    asyncio.run(host.run(LISTING, timeout=10))  # after a cancel: the queue of now
    assert _calls(tmp_path) == ["squeue", "squeue", "squeue", "scancel", "squeue"]


def test_a_failed_listing_is_asked_again(tmp_path):
    host, _ = _host(tmp_path, fail=True)
    asyncio.run(host.run(LISTING, timeout=10))
    asyncio.run(host.run(LISTING, timeout=10))
    assert _calls(tmp_path) == ["squeue", "squeue"]


def test_the_views_job_specific_lines_are_shared_like_the_listing(tmp_path):
    """Each poll of a run with a pending job asks why it waits (squeue --start -j) and how
    its ended jobs ended (sacct -j): one answer per interval, as for the listing."""
    host, now = _host(tmp_path)
    start = ["squeue", "--start", "-h", "-j", "17", "-o", "%i|%r|%S"]
    ended = ["sacct", "-X", "-P", "-n", "-j", "17"]
    for _ in range(3):
        asyncio.run(host.run(start, timeout=10))
        asyncio.run(host.run(ended, timeout=10))
    assert _calls(tmp_path) == ["squeue", "sacct"]
    now[0] = 30.0
    asyncio.run(host.run(start, timeout=10))
    assert _calls(tmp_path) == ["squeue", "sacct", "squeue"]
