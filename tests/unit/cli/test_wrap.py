"""At a terminal the commands wrap their prose to its width (a CJK character is two columns);
piped, each message stays on one line for grep. Commands to copy are never wrapped."""
from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

import pytest

from ari_jupyter.cli._columns import columns, hang


@pytest.mark.parametrize("prefix, text, width, expected", [
    ("ok      sbatch     ", "short enough", 80, ["ok      sbatch     short enough"]),
    # wrapped under the text's first column
    ("fail    x  ", "one two three four five six seven eight nine ten eleven", 40,
     ["fail    x  one two three four five six", "           seven eight nine ten eleven"]),
    # no width (a pipe): one line whatever its length
    ("- ", "word " * 40, None, ["- " + ("word " * 40)]),
    # too little room beside the prefix: the line stays whole rather than a ribbon
    (" " * 70, "one two three four", 80, [" " * 70 + "one two three four"]),
])
def test_hang(prefix, text, width, expected):
    assert hang(prefix, text, width).split("\n") == expected


def test_hang_japanese_counts_two_columns_a_character():
    text = "これは長い日本語の文です。幅を超えたら、次の行に折り返します。"
    lines = hang("失敗     x  ", text, 40).split("\n")
    assert len(lines) == 3 and "".join(line.strip() for line in lines).endswith(text)
    assert all(columns(line) <= 40 for line in lines)
    assert lines[1].startswith(" " * 12) and lines[1].strip()[0] not in "、。"


def _fits(lines, width, prefix=20):
    """The lines over ``width`` that wrapping should have kept in: a line may overflow only
    for an unbreakable word (a path) too long to fit beside any prefix."""
    return [line for line in lines
            if columns(line) > width and columns(line.split()[-1]) <= width - prefix]


def test_hang_with_its_own_indent():
    lines = hang("", "note: " + "alpha beta gamma delta " * 4, 30, indent=2).split("\n")
    assert lines[0].startswith("note: ") and all(line.startswith("  ") for line in lines[1:])
    assert all(columns(line) <= 30 for line in lines)


def _at_terminal(argv, cols, env=None):
    """``argv``'s output at a terminal ``cols`` wide (a pty), with the live status line gone."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
    full = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    full.update(env or {})
    proc = subprocess.Popen([sys.executable, "-m", "ari_jupyter", *argv], stdin=slave,
                            stdout=slave, stderr=slave, env=full, close_fds=True)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    proc.wait(timeout=60)
    text = out.decode().replace("\r\n", "\n")
    return [line.rsplit("\x1b[K", 1)[-1] for line in text.split("\n")]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_probe_fits_an_80_column_terminal_and_stays_one_line_piped(lang, tmp_path):
    argv = ["--lang", lang, "probe", "--site", "laptop"]
    env = {"HOME": str(tmp_path), "JUPYTER_CONFIG_DIR": "/nonexistent"}
    shown = _at_terminal(argv, 80, env)
    assert len([line for line in shown if line.strip()]) > 12  # verdicts and fixes, wrapped
    assert _fits(shown, 80) == []
    piped = subprocess.run([sys.executable, "-m", "ari_jupyter", *argv], capture_output=True,
                           text=True, timeout=60, env={**os.environ, **env}).stdout.splitlines()
    assert max(columns(line) for line in piped) > 80  # a whole message a line, for grep


def test_check_handoff_wraps_prose_but_never_a_command(tmp_path):
    env = {"HOME": str(tmp_path), "JUPYTER_CONFIG_DIR": "/nonexistent"}
    emitted = subprocess.run(
        [sys.executable, "-m", "ari_jupyter", "emit", "--site", "rccs-cloud", "--title", "wrap",
         "--goal", "g", "--metric", "m", "--walltime", "00:30:00", "--json"],
        capture_output=True, text=True, timeout=120, env={**os.environ, **env})
    assert emitted.returncode == 0, emitted.stderr
    import json
    checkpoint = json.loads(emitted.stdout)["checkpoint_dir"]
    shown = _at_terminal(["check-handoff", checkpoint, "--port", "9500"], 80, env)
    commands = [line for line in shown if line.startswith(("   ari viz ", "   bash ", "   ssh -N"))]
    assert len(commands) == 3 and any(columns(line) > 80 for line in commands)  # one line each
    assert _fits([line for line in shown if line not in commands], 80) == []
