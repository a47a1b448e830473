"""The runner: concurrent, results in completion order, one timeout per probe, shared sinfo
calls, crashing probes contained, and nothing left running afterwards."""
from __future__ import annotations

import asyncio
import os
import sys
import textwrap
import time

import pytest

from ari_jupyter.hosts.host import LocalHost
from ari_jupyter.hosts.recorded_site import RecordedSite
from ari_jupyter.probes import (
    PROBE_IDS,
    ProbeContext,
    UnknownProbeError,
    run_probes,
    run_probes_sync,
    selected_ids,
)
from ari_jupyter.probes import runner
from ari_jupyter.slurm.parsers import SINFO_FORMAT

from probe_support import cmd, output, site
from unit.hosts.test_host import alive, wait_gone


def test_probe_ids_are_the_cli_contract():
    assert PROBE_IDS == ("sbatch", "partitions", "gres", "shared_fs", "mpi", "modules", "gpus",
                         "ari", "time_left")


def test_selected_ids_keep_contract_order_and_refuse_unknown_ones():
    assert selected_ids(None) == list(PROBE_IDS)
    assert selected_ids(["gpus", "sbatch"]) == ["sbatch", "gpus"]
    with pytest.raises(UnknownProbeError, match="unknown probe ids bogus, nope; known: sbatch"):
        selected_ids(["bogus", "sbatch", "nope"])


def delayed_site() -> RecordedSite:
    """sinfo answers after 0.4 s, nvidia-smi after 0.2 s, everything else at once."""
    return site(
        programs=["sinfo", "nvidia-smi", "sbatch"],
        commands=[
            cmd(["sinfo", "--noheader", "-o", SINFO_FORMAT], output("sinfo/testbed_nogres.txt"), delay=0.4),
            cmd(["sinfo", "-h", "-o", "%G"], output("gres/testbed_nogres.txt"), delay=0.4),
            cmd(["nvidia-smi", "-L"], output("nvidia-smi/v100x4.txt"), delay=0.2),
            cmd(["sbatch", "--version"], output("sbatch/version_debian.txt")),
        ],
    )


def test_results_arrive_as_each_probe_finishes_and_probes_run_concurrently():
    arrivals: dict[str, float] = {}

    async def collect():
        started = time.monotonic()
        ctx = ProbeContext(allocation=None, only=["sbatch", "partitions", "gres", "gpus"])
        async for result in run_probes(delayed_site(), ctx):
            arrivals[result.id] = time.monotonic() - started

    asyncio.run(collect())
    assert list(arrivals)[0] == "sbatch" and arrivals["sbatch"] < 0.3
    assert arrivals["partitions"] >= 0.4 and arrivals["gpus"] >= 0.4
    # gres asks ARI's question and reads the partition's GRES from the shared listing at
    # once: one sinfo deep (0.4 s), not two in a row (0.8 s).
    assert max(arrivals.values()) < 0.75  # serial: 0.4 + 0.4 + 0.2 = 1.0 s or more


class CountingSite(RecordedSite):
    """Counts how often each command line ran."""

    async def run(self, argv, timeout, env=None):
        calls = self.__dict__.setdefault("calls", {})
        calls[tuple(argv)] = calls.get(tuple(argv), 0) + 1
        return await super().run(argv, timeout, env)


def test_the_controller_is_asked_once_per_run():
    base = delayed_site()
    host = CountingSite(name="count", env=base.env, programs=base.programs, commands=base.commands)
    run_probes_sync(host, ProbeContext(allocation=None, only=["partitions", "gres", "gpus"]))
    assert host.calls[("sinfo", "-h", "-o", "%G")] == 1
    assert host.calls[("sinfo", "--noheader", "-o", SINFO_FORMAT)] == 1


def test_each_probe_has_its_own_timeout():
    ctx = ProbeContext(allocation=None, only=["sbatch", "gpus"], timeouts={"gpus": 0.1})
    started = time.monotonic()
    results = {r.id: r for r in run_probes_sync(delayed_site(), ctx)}
    assert time.monotonic() - started < 0.6
    assert results["gpus"].status == "unknown"
    assert results["sbatch"].status == "ok"


def test_a_probe_that_ignores_its_deadline_is_cut_off(monkeypatch):
    async def stubborn(host, ctx):
        await asyncio.sleep(30)

    monkeypatch.setitem(runner.PROBES, "ari", stubborn)
    started = time.monotonic()
    (result,) = run_probes_sync(site(), ProbeContext(allocation=None, only=["ari"], timeout=0.2))
    assert time.monotonic() - started < 0.2 + 0.5
    assert (result.status, result.summary, result.fix) == (
        "unknown", "timed out after 0.2s", "Retry, or raise this probe's timeout (--timeout).")
    assert result.text("ja") == "0.2 秒でタイムアウトしました"


def test_a_crashing_probe_becomes_unknown_and_the_others_still_report(monkeypatch):
    async def broken(host, ctx):
        raise KeyError("surprise")

    monkeypatch.setitem(runner.PROBES, "gpus", broken)
    results = {r.id: r for r in run_probes_sync(site(), ProbeContext(allocation=None))}
    assert set(results) == set(PROBE_IDS)
    assert results["gpus"].status == "unknown"
    assert results["gpus"].summary == "probe error: KeyError: 'surprise'"
    assert results["ari"].status == "fail"  # the recording has no ari


def test_sync_wrapper_works_inside_a_running_event_loop():
    async def from_a_notebook_cell():
        return run_probes_sync(site(), ProbeContext(allocation=None, only=["ari"]))

    (result,) = asyncio.run(from_a_notebook_cell())
    assert result.id == "ari" and result.status == "fail"


def test_on_result_sees_every_result_in_arrival_order():
    seen = []
    results = run_probes_sync(delayed_site(), ProbeContext(allocation=None, only=["sbatch", "gpus"]),
                              on_result=seen.append)
    assert seen == results and [r.id for r in seen] == ["sbatch", "gpus"]


async def started_pid(pid_file, within: float = 10.0) -> int:
    """The pid a fake command wrote, once the whole line is there. The shell creates the file
    before it writes to it: an existing but empty file is not a pid yet (under load the shell
    can be descheduled, or killed, between the two)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        text = pid_file.read_text() if pid_file.exists() else ""
        if text.endswith("\n"):
            return int(text)
        await asyncio.sleep(0.02)
    raise AssertionError(f"the fake command did not report its pid within {within}s")


def test_stopping_early_kills_what_the_probes_started(tmp_path):
    """A consumer that stops after the first result must not leave commands running."""
    pid_file = tmp_path / "smi.pid"
    fake = tmp_path / "nvidia-smi"
    fake.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 60\n")
    fake.chmod(0o755)
    host = LocalHost(env={"PATH": f"{tmp_path}:/usr/bin:/bin", "HOME": str(tmp_path)})

    async def first_only():
        ctx = ProbeContext(allocation=None, only=["gpus", "ari"], timeout=30)
        agen = run_probes(host, ctx)
        first = await agen.__anext__()
        pid = await started_pid(pid_file)
        assert alive(pid), "the probe's command must still be running when the consumer stops"
        await agen.aclose()
        return first, pid

    first, pid = asyncio.run(first_only())
    assert first.id == "ari"
    assert wait_gone(pid)


HANGING_SMI = textwrap.dedent("""\
    #!{python}
    import os, subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"])
    open({pids!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
    time.sleep(60)
""")


def test_a_command_that_never_returns_ends_within_timeout_and_leaves_nothing(tmp_path):
    pids = tmp_path / "pids"
    fake = tmp_path / "nvidia-smi"
    fake.write_text(HANGING_SMI.format(python=sys.executable, pids=str(pids)))
    fake.chmod(0o755)
    host = LocalHost(env={"PATH": f"{tmp_path}:/usr/bin:/bin", "HOME": str(tmp_path)})
    timeout = 1.0
    started = time.monotonic()
    (result,) = run_probes_sync(host, ProbeContext(allocation=None, only=["gpus"], timeout=timeout))
    assert time.monotonic() - started < timeout + 0.5
    assert result.status == "unknown" and "did not answer" in result.summary
    child, grandchild = (int(p) for p in pids.read_text().split())
    assert wait_gone(child) and wait_gone(grandchild)
    assert os.getpid()  # this process is still fine, of course


def test_secrets_never_reach_a_result():
    """A tool that prints the API key (a traceback, a debug line) must not leak it anywhere."""
    key = "plainvalue-4242-zz"  # no known token shape: only the environment says it is secret
    host = site(programs=["ari"], env={"HOME": "/h", "OPENAI_API_KEY": key},
                commands=[cmd(["ari", "--version"], "", f"RuntimeError: bad key {key}\n", 1)])
    (result,) = run_probes_sync(host, ProbeContext(allocation=None, only=["ari"]))
    assert result.status == "warn"
    assert key not in repr(result.to_json())
    assert "***" in result.summary and "***" in result.evidence


def test_a_secret_cut_by_the_evidence_limit_is_masked_whole():
    """Evidence is cut at EVIDENCE_LIMIT; the cut must not leave the head of a secret behind."""
    from ari_jupyter.probes.context import EVIDENCE_LIMIT

    key = "plainvalue-4242-zz"
    # unmasked, the cut would fall inside the key and keep its first 11 characters
    printed = "y" * (EVIDENCE_LIMIT - 12) + "\n" + key + "\n" + "z" * 100 + "\n"
    host = site(programs=["ari"], env={"HOME": "/h", "DB_PASSWORD": key},
                commands=[cmd(["ari", "--version"], "", printed, 1)])
    (result,) = run_probes_sync(host, ProbeContext(allocation=None, only=["ari"]))
    assert "more characters]" in result.evidence  # the cut did happen
    assert key[:8] not in repr(result.to_json())


@pytest.mark.parametrize("size, on_loop", [(10, True), (16_383, True), (16_384, False), (None, False)])
def test_off_loop_keeps_small_work_on_the_loop_and_big_work_off_it(size, on_loop):
    """A few lines are parsed in place (a thread hand-off costs more); a big answer never
    holds the loop."""
    import asyncio
    import threading

    from ari_jupyter.probes.context import off_loop

    async def where():
        loop_thread = threading.current_thread()
        ran_in = await off_loop(threading.current_thread, size=size)
        return ran_in is loop_thread

    assert asyncio.run(where()) is on_loop


def test_input_size_counts_long_lists_as_lines():
    from ari_jupyter.probes.context import INLINE_LIMIT, input_size

    assert input_size("abc", {"k": "de"}) == 3 + 2 + 8
    assert input_size({"modules": [f"m/{i}" for i in range(20_000)]}) > INLINE_LIMIT
