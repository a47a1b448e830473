"""LocalHost against real processes: no shell, capped and decoded output, and a timeout that
ends the whole process group (grandchildren included) within timeout + 0.5 s."""
from __future__ import annotations

import asyncio
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ari_jupyter.hosts.host import DEFAULT_OUTPUT_CAP, LocalHost
from ari_jupyter.base.mounts import Mount, mount_for_path, parse_mountinfo
from ari_jupyter.base.redact import MASK, is_secret_name, redact, redact_env

from probe_support import OUTPUTS

PY = sys.executable


def run(host, argv, timeout=10.0, env=None):
    return asyncio.run(host.run(argv, timeout, env))


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent to reap it counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def wait_gone(pid: int, within: float = 1.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return not alive(pid)


# A child that starts a grandchild ignoring SIGTERM, reports both pids, then never returns.
SPAWNER = textwrap.dedent("""
    import os, signal, subprocess, sys, time
    grandchild = subprocess.Popen(
        [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"])
    with open(sys.argv[1], "w") as f:
        f.write(f"{os.getpid()} {grandchild.pid}")
    print("spawned", flush=True)
    time.sleep(120)
""")


def read_pids(path: Path, within: float = 5.0) -> tuple[int, int]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            child, grandchild = path.read_text().split()
            return int(child), int(grandchild)
        time.sleep(0.01)
    raise AssertionError("spawner did not report its pids")


def test_runs_without_a_shell_and_reports_exit_code():
    result = run(LocalHost(), ["echo", "$HOME", "a b"])
    assert result.ok and result.returncode == 0
    assert result.stdout == "$HOME a b\n"  # no shell: nothing expanded or split
    assert result.command == "echo '$HOME' 'a b'"
    assert not result.timed_out and not result.not_found


def test_stdout_and_stderr_are_separate_and_nonzero_exit_is_kept():
    result = run(LocalHost(), [PY, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"])
    assert (result.returncode, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.ok
    assert result.output == "out\nerr"


def test_environment_is_the_hosts_or_the_given_one():
    host = LocalHost(env={"PATH": os.environ["PATH"], "ARI_PROBE_MARK": "host"})
    script = [PY, "-c", "import os; print(os.environ.get('ARI_PROBE_MARK'))"]
    assert run(host, script).stdout == "host\n"
    assert run(host, script, env={"PATH": os.environ["PATH"], "ARI_PROBE_MARK": "given"}).stdout == "given\n"


def test_missing_program_is_not_found_not_an_exception():
    result = run(LocalHost(), ["ari-jupyter-no-such-program", "--version"])
    assert result.not_found and result.returncode == 127 and not result.ok
    assert "command not found" in result.stderr


def test_program_missing_from_a_custom_path_is_not_found(tmp_path):
    host = LocalHost(env={"PATH": str(tmp_path)})
    assert host.which("sh") is None
    assert run(host, ["sh", "-c", "true"]).not_found


def test_file_that_is_not_executable_gives_126(tmp_path):
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    host = LocalHost(env={"PATH": str(tmp_path)})
    assert run(host, ["tool"]).stdout == "hi\n"
    script.write_bytes(b"\x7fELF-not-really")  # executable bit set, but exec fails
    result = run(host, [str(script)])
    assert result.returncode in (126, 127) and not result.ok


def test_invalid_utf8_is_replaced_not_fatal():
    result = run(LocalHost(), [PY, "-c", "import sys; sys.stdout.buffer.write(b'GPU 0: \\xff\\xfeTesla\\n')"])
    assert result.stdout == "GPU 0: \ufffd\ufffdTesla\n"


def test_huge_output_is_capped_and_says_so():
    result = run(LocalHost(), [PY, "-c", "import sys; sys.stdout.write('x' * (3 << 20)); sys.stderr.write('e' * 10)"])
    assert result.returncode == 0
    assert result.stdout.startswith("x" * 1000)
    assert len(result.stdout) < DEFAULT_OUTPUT_CAP + 100
    assert f"[truncated: {(3 << 20) - DEFAULT_OUTPUT_CAP} more bytes]" in result.stdout
    assert result.stderr == "e" * 10


def test_cap_is_configurable():
    result = run(LocalHost(output_cap=5), ["echo", "0123456789"])
    assert result.stdout.startswith("01234\n[truncated: 6 more bytes]")


def test_timeout_kills_the_whole_group_including_a_term_ignoring_grandchild(tmp_path):
    pids_file = tmp_path / "pids"
    timeout = 1.0
    started = time.monotonic()
    result = run(LocalHost(), [PY, "-c", SPAWNER, str(pids_file)], timeout=timeout)
    elapsed = time.monotonic() - started
    child, grandchild = read_pids(pids_file)
    assert result.timed_out and result.returncode is None and not result.ok
    assert result.stdout == "spawned\n"  # what came before the kill is kept
    assert elapsed < timeout + 0.5, elapsed
    assert wait_gone(child) and wait_gone(grandchild), "a process outlived the timeout"


def test_background_child_holding_the_pipes_does_not_stall_a_finished_command(tmp_path):
    marker = tmp_path / "bg.pid"
    script = f"sleep 60 & echo $! > {marker}; echo started"
    started = time.monotonic()
    result = run(LocalHost(), ["sh", "-c", script], timeout=10)
    assert time.monotonic() - started < 2.0
    assert result.returncode == 0 and not result.timed_out
    assert result.stdout == "started\n"
    assert wait_gone(int(marker.read_text()))


def test_cancellation_kills_the_group(tmp_path):
    pids_file = tmp_path / "pids"

    async def cancel_soon():
        task = asyncio.ensure_future(LocalHost().run([PY, "-c", SPAWNER, str(pids_file)], 30))
        await asyncio.sleep(0.5)
        read_pids(pids_file)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_soon())
    child, grandchild = read_pids(pids_file)
    assert wait_gone(child) and wait_gone(grandchild)


def test_cancellation_while_a_background_child_holds_the_pipes_kills_it(tmp_path):
    """The leader has exited and run() is giving the pipes their grace period: a cancellation
    there must still end the group (the background child), not just stop waiting."""
    pids_file = tmp_path / "pids"
    script = f"sleep 60 & echo $$ $! > {pids_file}"

    async def cancel_in_the_pipe_grace():
        task = asyncio.ensure_future(LocalHost().run(["sh", "-c", script], 30))
        while not (pids_file.exists() and pids_file.read_text().endswith("\n")):
            await asyncio.sleep(0.01)
        leader, background = (int(p) for p in pids_file.read_text().split())
        assert wait_gone(leader, within=5.0) and alive(background)
        await asyncio.sleep(0.1)  # run() notices the exit and waits PIPE_GRACE for the pipes
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return background

    assert wait_gone(asyncio.run(cancel_in_the_pipe_grace()))


def test_a_run_cancelled_while_starting_closes_its_pipes_on_its_own_loop(tmp_path, monkeypatch):
    """Cancelled while asyncio still starts the command, and a process that left the group holds
    the pipes: run() must still close them on this loop. Left to the garbage collector they are
    closed after ``asyncio.run`` has closed the loop, and Python reports "Event loop is closed"."""
    escaped_pid = tmp_path / "escaped"
    script = f"setsid sh -c 'echo $$ > {escaped_pid}; exec sleep 60' & exec sleep 60"
    real_start, transports = asyncio.create_subprocess_exec, []

    async def slow_start(*args, **kwargs):  # the start outlasts the cancellation, deterministically
        proc = await real_start(*args, **kwargs)
        transports.append(proc._transport)
        while not (escaped_pid.exists() and escaped_pid.read_text().endswith("\n")):
            await asyncio.sleep(0.01)
        return proc

    monkeypatch.setattr(asyncio, "create_subprocess_exec", slow_start)

    async def cancel_while_starting():
        task = asyncio.ensure_future(LocalHost().run(["sh", "-c", script], 30))
        await asyncio.sleep(0)  # run() is now waiting for the start
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        asyncio.run(cancel_while_starting())
        assert len(transports) == 1 and transports[0].is_closing()
    finally:
        if escaped_pid.exists():
            os.kill(int(escaped_pid.read_text()), 9)


def test_a_start_that_outlasts_the_cancellation_is_cleaned_up_when_it_finishes(tmp_path, monkeypatch):
    """In a kernel the loop keeps running: when asyncio finishes starting the command only after
    run() has given up waiting (1 s), the command's group is killed and its pipes are closed then."""
    pid_file = tmp_path / "pid"
    real_start, transports = asyncio.create_subprocess_exec, []

    async def very_slow_start(*args, **kwargs):
        proc = await real_start(*args, **kwargs)
        transports.append(proc._transport)
        await asyncio.sleep(1.5)  # past run()'s 1 s wait for the start
        return proc

    monkeypatch.setattr(asyncio, "create_subprocess_exec", very_slow_start)

    async def kernel_loop():
        task = asyncio.ensure_future(LocalHost().run(["sh", "-c", f"echo $$ > {pid_file}; exec sleep 60"], 30))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert transports and not transports[0].is_closing()  # still starting
        await asyncio.sleep(1.0)  # the loop goes on, as a kernel's does
        return int(pid_file.read_text())

    pid = asyncio.run(kernel_loop())
    assert transports[0].is_closing()
    assert wait_gone(pid)


def test_concurrent_runs_do_not_wait_for_each_other():
    async def three():
        host = LocalHost()
        return await asyncio.gather(*(host.run(["sleep", "0.4"], 5) for _ in range(3)))

    started = time.monotonic()
    results = asyncio.run(three())
    assert all(r.ok for r in results)
    assert time.monotonic() - started < 1.1


# --------------------------------------------------------------------------- mounts


def test_mounts_are_read_from_mountinfo(tmp_path):
    host = LocalHost(mountinfo_path=str(OUTPUTS / "mountinfo" / "cluster_node.txt"))
    mounts = host.mounts()
    assert Mount("/work", "lustre", "10.1.0.11@o2ib:/work") in mounts
    assert Mount("/work/projects/big data", "nfs", "nas02:/export/big data") in mounts
    assert LocalHost(mountinfo_path=str(tmp_path / "missing")).mounts() == []


def test_this_machine_has_a_root_mount():
    mounts = LocalHost().mounts()
    assert any(m.mountpoint == "/" for m in mounts)


@pytest.mark.parametrize(
    "fixture, expected_count, sample",
    [
        ("cluster_node.txt", 17, Mount("/home", "nfs4", "nas01:/export/home")),
        ("laptop_overlay.txt", 7, Mount("/", "overlay", "overlay")),
        ("malformed.txt", 2, Mount("/opt", "nfs4", "filer:/opt")),  # optional fields: shared:5 master:1
    ],
)
def test_parse_mountinfo(fixture, expected_count, sample):
    mounts = parse_mountinfo((OUTPUTS / "mountinfo" / fixture).read_text())
    assert len(mounts) == expected_count
    assert sample in mounts


@pytest.mark.parametrize(
    "path, mountpoint, fstype",
    [
        ("/work/alice/ari", "/work", "lustre"),
        ("/work", "/work", "lustre"),
        ("/workshop/x", "/", "xfs"),  # a prefix of the name is not a parent directory
        ("/work/projects/big data/run", "/work/projects/big data", "nfs"),
        ("/home/alice-bind/x", "/home/alice-bind", "nfs4"),
        ("/etc/hosts", "/", "xfs"),
    ],
)
def test_longest_mount_prefix_wins(path, mountpoint, fstype):
    mounts = parse_mountinfo((OUTPUTS / "mountinfo" / "cluster_node.txt").read_text())
    found = mount_for_path(path, mounts)
    assert (found.mountpoint, found.fstype) == (mountpoint, fstype)


def test_stacked_mounts_the_last_one_is_on_top():
    mounts = parse_mountinfo((OUTPUTS / "mountinfo" / "laptop_overlay.txt").read_text())
    assert mount_for_path("/stacked/x", mounts).fstype == "nfs4"
    assert mount_for_path("/x", []) is None


# --------------------------------------------------------------------------- redaction


@pytest.mark.parametrize(
    "name, secret",
    [
        ("OPENAI_API_KEY", True), ("HF_TOKEN", True), ("GITHUB_TOKEN", True),
        ("AWS_SECRET_ACCESS_KEY", True), ("SLURM_SSH_PASSWORD", True), ("DB_PASSWD", True),
        ("ANTHROPIC_API_KEY", True), ("my_client_secret", True), ("OPENAI_KEY", True),
        ("SLURM_JOB_ID", False), ("PATH", False), ("TOKENIZERS_PARALLELISM", False),
        ("SSH_AUTH_SOCK", False), ("KEYBOARD", False), ("ARI_SLURM_PARTITION", False),
    ],
)
def test_is_secret_name(name, secret):
    assert is_secret_name(name) is secret


def test_redact_hides_env_values_assignments_and_known_token_shapes():
    env = {"OPENAI_API_KEY": "abcd1234efgh", "HF_TOKEN": "x", "PATH": "/usr/bin"}
    text = (
        "key=abcd1234efgh in a log line\n"
        "export GITHUB_TOKEN=ghp_notinenv\n"
        "MY_PASSWORD: hunter22\n"
        "leaked sk-proj-ABCDEFGHIJKLMNOPQRST and hf_abcdefghijklmnopqrstuv\n"
        "PATH=/usr/bin stays\n"
    )
    out = redact(text, env)
    assert "abcd1234efgh" not in out and "ghp_notinenv" not in out and "hunter22" not in out
    assert "sk-proj-ABCDEFGHIJKLMNOPQRST" not in out and "hf_abcdefghijklmnopqrstuv" not in out
    assert f"GITHUB_TOKEN={MASK}" in out and f"MY_PASSWORD: {MASK}" in out
    assert "PATH=/usr/bin stays" in out
    assert redact("", env) == ""


def test_short_secret_values_are_not_hunted_in_free_text():
    assert redact("exit 1 after 1 try", {"HF_TOKEN": "1"}) == "exit 1 after 1 try"


def test_redact_env_keeps_names_drops_values():
    assert redact_env({"HF_TOKEN": "abc", "USER": "alice", "EMPTY_TOKEN": ""}) == {
        "HF_TOKEN": MASK, "USER": "alice", "EMPTY_TOKEN": ""}
