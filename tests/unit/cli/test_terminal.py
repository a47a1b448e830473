"""The CLI at a real terminal: a live line naming the checks still running, Ctrl-C.

Each command runs as its own process on a pseudo-terminal that is its controlling terminal,
so Ctrl-C is the byte a keyboard sends (the line discipline turns it into SIGINT for the
foreground process group), and the hung stand-ins are real processes in their own sessions,
which only ari-jupyter itself can stop.
"""
from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import termios
import time
import uuid
from pathlib import Path

import pytest

from test_widgets_support import make_site
from env_support import env_without

CLEAR = "\r\x1b[K"
RUN_ID = "20261201120000_terminal"
EMIT_ARGS = ("--title", "terminal", "--goal", "g", "--metric", "m", "--walltime", "00:10:00",
             "--max-cpus", "1", "--run-id", RUN_ID, "--lang", "en")


def _controlling_tty() -> None:  # runs in the child, after stdin became the pty's slave
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    # a terminal user's shell has Ctrl-C's default: a test run started in the background (`cmd &`
    # in a script ignores SIGINT, and children inherit that) must not hand its deafness on
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def in_pty(argv, env, *, ctrl_c_when=None, timeout: float = 90.0):
    """Run ``argv`` on a pty; type Ctrl-C once ``ctrl_c_when()`` is true. (exit code, text)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                            preexec_fn=_controlling_tty, close_fds=True)
    os.close(slave)
    chunks, sent, deadline = [], False, time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if ctrl_c_when is not None and not sent and ctrl_c_when():
                os.write(master, b"\x03")
                sent = True
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: every writer closed the slave
                    break
                if not data:
                    break
                chunks.append(data)
        else:
            proc.kill()
            pytest.fail(f"{argv} still running after {timeout}s: {b''.join(chunks)!r}")
        code = proc.wait(10)
    finally:
        os.close(master)
    return code, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def without_live_line(text: str) -> str:
    """What stays on the screen: every live line is cleared before anything else is printed."""
    return re.sub(re.escape(CLEAR) + r"[^\r\n]*?(?=" + re.escape(CLEAR) + ")", "", text).replace(CLEAR, "")


def env_for(tmp_path: Path, **extra) -> dict:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = env_without("SLURM_", "ARI_")
    env.update(HOME=str(home), TERM="xterm", JUPYTER_CONFIG_DIR=str(tmp_path / "no-config"),
               COLUMNS="200", **extra)
    return env


def cli(*args) -> list[str]:
    return [sys.executable, "-m", "ari_jupyter", *args]


# -- the live line ------------------------------------------------------------------------------

@pytest.fixture()
def slow_site(tmp_path):
    """A demo site whose sbatch answers after 1.5 s: long enough to be seen waiting."""
    return make_site(tmp_path, "rccs-cloud", delays={("sbatch",): 1.5})


def test_probe_on_a_terminal_names_what_is_still_running(tmp_path, slow_site):
    env = env_for(tmp_path)
    argv = cli("probe", "--site", str(slow_site), "--only", "sbatch,mpi,gres")
    code, text = in_pty(argv, env)
    live = re.findall(re.escape(CLEAR) + r"([^\r\n]*?)(?=" + re.escape(CLEAR) + ")", text)
    assert any(re.fullmatch(r"[|/\\-] +\d+\.\ds still running: .*sbatch.*", line) for line in live), live
    assert not any("mpi" in line for line in live[-3:])  # mpi answers at once, sbatch is last
    plain = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert plain.stderr == ""  # not a terminal: nothing extra
    screen = without_live_line(text).splitlines()
    # the same lines in the same order, the wizard's, though sbatch answers last (the tally
    # line carries the time)
    assert screen[:-1] == plain.stdout.splitlines()[:-1]
    assert [line.split()[1] for line in screen[1:-1]] == ["sbatch", "gres", "mpi"]
    assert code == plain.returncode


@pytest.mark.parametrize("lang, said, waiting", [
    ("ja", "実行中のチェック:", "パーティション"), ("zh", "仍在运行的检查：", "分区")])
def test_the_live_line_and_the_check_names_speak_the_users_language(tmp_path, lang, said, waiting):
    """A Japanese or Chinese terminal reads the checks as the wizard names them, waiting too."""
    site = make_site(tmp_path, "rccs-cloud", delays={("sinfo",): 1.5})
    env = env_for(tmp_path, LANG={"ja": "ja_JP.UTF-8", "zh": "zh_CN.UTF-8"}[lang])
    code, text = in_pty(cli("probe", "--site", str(site), "--only", "partitions,mpi"), env)
    live = re.findall(re.escape(CLEAR) + r"([^\r\n]*?)(?=" + re.escape(CLEAR) + ")", text)
    assert any(re.fullmatch(r"[|/\\-] +\d+\.\ds " + re.escape(said) + " " + waiting, line)
               for line in live), live
    screen = without_live_line(text)
    assert waiting in screen and "partitions" not in screen and "still running" not in text


def test_probe_json_on_a_terminal_prints_only_the_json(tmp_path, slow_site):
    code, text = in_pty(cli("probe", "--json", "--site", str(slow_site), "--only", "sbatch"),
                        env_for(tmp_path))
    assert "\r" not in text and "still running" not in text
    assert json.loads(text)["probes"][0]["id"] == "sbatch"


def test_emit_and_check_handoff_on_a_terminal_show_their_waits(tmp_path, slow_site):
    env = env_for(tmp_path)
    code, text = in_pty(cli("emit", "--site", str(slow_site), "--workspace", str(tmp_path / "ws"),
                            *EMIT_ARGS), env)
    assert code == 0, text
    assert "probing the site, still running: " in text and "sbatch" in text
    assert "checkpoint: " in without_live_line(text)
    checkpoint = tmp_path / "ws" / "checkpoints" / RUN_ID
    code, text = in_pty(cli("check-handoff", "--site", str(slow_site), str(checkpoint)), env)
    assert re.search(re.escape(CLEAR) + r"[|/\\-] +\d+\.\ds checking, still running: [^\r]*sbatch", text), text
    screen = without_live_line(text)
    assert "[ok  ] checkpoint:" in screen and "\x1b" not in screen
    for argv in (cli("check-handoff", "--site", str(slow_site), str(checkpoint)),
                 cli("emit", "--site", str(slow_site), "--workspace", str(tmp_path / "ws"),
                     *EMIT_ARGS, "--run-id", "20261201120001_terminal")):
        plain = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
        assert "\r" not in plain.stdout + plain.stderr and "still running" not in plain.stderr


# -- Ctrl-C -------------------------------------------------------------------------------------

HUNG = """#!/bin/sh
echo $$ >> {pids}
exec sleep {marker}
"""


@pytest.fixture()
def hung_slurm(tmp_path):
    """sbatch, sinfo, scontrol and srun that never answer; each records its pid."""
    bin_dir = tmp_path / "hung-bin"
    bin_dir.mkdir()
    pids = tmp_path / "pids"
    marker = 86400 + uuid.uuid4().int % 10000
    for name in ("sbatch", "sinfo", "scontrol", "squeue", "srun"):
        path = bin_dir / name
        path.write_text(HUNG.format(pids=pids, marker=marker))
        path.chmod(0o755)
    yield bin_dir, pids, marker
    for pid in _sleepers(marker):  # only when the test failed: leave the machine clean
        os.kill(pid, 9)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _sleepers(marker: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[:2] == [b"sleep", str(marker).encode()] and _alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def _written_checkpoint(tmp_path) -> Path:
    site = make_site(tmp_path, "rccs-cloud")
    proc = subprocess.run(cli("emit", "--site", str(site), "--workspace", str(tmp_path / "ws"),
                              *EMIT_ARGS), capture_output=True, text=True,
                          env=env_for(tmp_path), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return tmp_path / "ws" / "checkpoints" / RUN_ID


@pytest.mark.parametrize("command", ["probe", "emit", "check-handoff"])
def test_ctrl_c_says_interrupted_exits_130_and_leaves_nothing_running(tmp_path, hung_slurm, command):
    bin_dir, pids, marker = hung_slurm
    env = env_for(tmp_path, PATH=f"{bin_dir}:{os.environ['PATH']}")
    argv = {
        "probe": cli("probe", "--only", "sbatch,partitions", "--timeout", "300"),
        "emit": cli("emit", "--workspace", str(tmp_path / "ws2"), "--probe-timeout", "300",
                    "--force", *EMIT_ARGS),
        "check-handoff": cli("check-handoff", "--timeout", "300",
                             str(_written_checkpoint(tmp_path) if command == "check-handoff" else "")),
    }[command]
    started = time.monotonic()
    code, text = in_pty(argv, env, ctrl_c_when=lambda: pids.exists() and time.monotonic() - started > 1.0)
    assert pids.exists(), f"no stand-in ever ran: {text}"
    assert code == 130, text
    assert f"ari-jupyter {command}: interrupted; nothing is left running" in text
    assert "Traceback" not in text
    deadline = time.monotonic() + 5
    while _sleepers(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _sleepers(marker) == []
    assert [pid for pid in map(int, pids.read_text().split()) if _alive(pid)] == []
