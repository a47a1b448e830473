"""``doctor`` and ``lint`` against inputs that would exhaust or block a shared login node:
/dev/zero, /dev/urandom, a FIFO with no writer, a 50 MB binary, a 1 GB log, an endless stdin.

Each command runs as a user runs it (a fresh process), under a limit it must not come near:
refused with a clear message (exit 2), or done. The 1 GB log is read in process under
tracemalloc: a head and tail window, whatever its size. ``benchmarks/hostile_inputs.py``
measures the same cases (time and peak memory) for the table in benchmarks/hostile_inputs.md.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from ari_jupyter.base.bounded_read import read_window
from ari_jupyter.doctor import diagnose_text

from .figures import record

LIMIT_S = 20.0


def _cli(*argv: str, stdin=None) -> tuple[subprocess.CompletedProcess | None, float]:
    start = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "ari_jupyter", *argv], capture_output=True,
                              text=True, timeout=LIMIT_S, stdin=stdin or subprocess.DEVNULL,
                              env={**os.environ, "LANG": "C.UTF-8"})
    except subprocess.TimeoutExpired:
        return None, LIMIT_S
    return done, time.monotonic() - start


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("hostile")
    fifo = tmp / "experiment.md"
    os.mkfifo(fifo)
    binary = tmp / "blob.bin"
    with open(binary, "wb") as handle:
        for _ in range(50):
            handle.write(os.urandom(1 << 20))
    return {"fifo": fifo, "binary": binary, "tmp": tmp}


CASES = [
    ("doctor", "/dev/zero", "is a character device, not a regular file"),
    ("doctor", "/dev/urandom", "is a character device, not a regular file"),
    ("lint", "/dev/zero", "is a character device, not a regular file"),
    ("lint", "/dev/urandom", "is a character device, not a regular file"),
    ("doctor", "fifo", "is a FIFO (named pipe), not a regular file"),
    ("lint", "fifo", "is a FIFO (named pipe), not a regular file"),
    ("lint", "binary", "more than the 512.0 KB such a file can be"),
]


@pytest.mark.parametrize("command, target, says", CASES)
def test_devices_fifos_and_oversized_files_are_refused_at_once(hostile, command, target, says):
    path = str(hostile.get(target, target))
    done, seconds = _cli(command, path)
    survived = done is not None and done.returncode == 2 and says in done.stderr
    record("Faults", "doctor/lint on /dev/zero, /dev/urandom, a FIFO, a 50 MB binary",
           cases=1, survived=int(survived), lost=int(not survived), unit="commands",
           hung=int(done is None))
    assert done is not None, f"{command} {target} still running after {LIMIT_S} s"
    assert survived, (done.returncode, done.stderr[-500:])
    assert "Traceback" not in done.stderr


def test_a_50_mb_binary_is_diagnosed_from_a_window(hostile):
    done, seconds = _cli("doctor", str(hostile["binary"]))
    survived = done is not None and done.returncode in (0, 1) and "were read" in done.stderr
    record("Faults", "doctor on a 50 MB binary: read as a head and tail window",
           cases=1, survived=int(survived), lost=int(not survived), unit="commands",
           hung=int(done is None))
    assert survived, done and done.stderr[-500:]
    assert seconds < 10  # the window, not the 50 MB (1 s in benchmarks/hostile_inputs.md)


def test_an_endless_stdin_is_refused_past_its_cap():
    with open("/dev/zero", "rb") as zero:
        done, _ = _cli("doctor", "-", stdin=zero)
    assert done is not None and done.returncode == 2
    assert "standard input is more than 16.0 MB" in done.stderr


def test_a_1_gb_log_is_diagnosed_from_its_head_and_tail_in_bounded_memory(tmp_path):
    log = tmp_path / "ari_run_20261201093000.log"
    with open(log, "wb") as handle:  # sparse: 1 GB long, real lines at both ends
        handle.write(b"ari run log\n" + b"[BFTS] node_00001 evaluating\n" * 1000)
        handle.seek(1024 ** 3 - 4096)
        handle.write(b"\n" + b"[BFTS] node_09999 evaluating\n" * 100
                     + b"srun: error: Unable to create step for job 4101: Memory required by task "
                       b"is not available\n")
    tracemalloc.start()
    start = time.perf_counter()
    window = read_window(log)
    findings = diagnose_text(window.text, filename=log.name)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    survived = peak < 100 * 1024 ** 2 and window.omitted > 1024 ** 3 - 400 * 1024
    record("Faults", "doctor on a 1 GB log: head and tail window, peak memory < 100 MB",
           cases=1, survived=int(survived), lost=int(not survived), unit="logs")
    assert survived, (peak, window.omitted)
    assert window.size > 1024 ** 3 - 4096 and "not read" in window.text
    assert any(f.rule for f in findings) and seconds < 5, (seconds, findings)
