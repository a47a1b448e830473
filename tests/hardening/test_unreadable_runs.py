"""One unreadable entry must not break the Runs listing for everyone in the workspace.

Two real unprivileged users (useradd): bob's 0700 run folder and a link to a folder alice
cannot open sit beside alice's run in one workspace. As alice: the listing (what
``/ari-jupyter/runs`` returns), the run ids (``/runs/ids``), the status of each unreadable
run id (the status route) and ``ari-jupyter runs`` must show alice's run, skip the rest
saying so once, and never raise anything but the unreadable-run verdict (a 403, not a 500).
"""
from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from .figures import record

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("useradd"), reason="needs root and useradd")

CHILD = textwrap.dedent("""\
    import asyncio, contextlib, io, json, os, sys, traceback
    from pathlib import Path
    from ari_jupyter.cli import main
    from ari_jupyter.runs.service import run_ids_json, runs_json, status_json
    from ari_jupyter.runs import status
    UnreadableCheckpoint = getattr(status, "UnreadableCheckpoint", ())  # the verdict (403)

    ws, uid, gid, ids = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
    # every module the calls need, loaded while the interpreter (under /root) is readable
    import hashlib, unicodedata
    from ari_jupyter.cli import _localized  # the CLI's own words, a file under /root in CI
    _localized.catalog(), _localized._templates()
    asyncio.run(runs_json([ws]))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(["runs", "--workspace", ws])
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    out = {"uid": os.getuid()}

    def attempt(name, call):
        try:
            out[name] = call()
        except UnreadableCheckpoint as exc:
            out[name] = {"unreadable": str(exc)}
        except BaseException:
            out[name] = {"crashed": traceback.format_exc()[-800:]}

    attempt("runs", lambda: asyncio.run(runs_json([ws])))
    attempt("ids", lambda: run_ids_json([ws]))
    for run_id in ids:
        attempt(run_id, lambda: asyncio.run(status_json(Path(ws) / "checkpoints" / run_id)))
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        attempt("cli", lambda: main(["runs", "--workspace", ws]))
    out["cli_stdout"], out["cli_stderr"] = stdout.getvalue(), stderr.getvalue()
    print(json.dumps(out, default=str))
""")

MINE, BOBS, LINK = "20250101000000_mine", "20260101000000_bobs", "20260101000001_link"


@pytest.fixture()
def workspace():
    tag = f"{os.getpid() % 100000}"
    names = [f"ariralice{tag}", f"arirbob{tag}"]
    for name in names:
        subprocess.run(["useradd", "-M", "-N", "-d", "/nonexistent", "-s", "/usr/sbin/nologin",
                        name], check=True, capture_output=True)
    base = Path(tempfile.mkdtemp(prefix="ari-unreadable-", dir="/tmp"))
    try:
        alice, bob = (pwd.getpwnam(n) for n in names)
        base.chmod(0o755)
        ws = base / "ws"
        (ws / "checkpoints" / MINE).mkdir(parents=True)
        (ws / "checkpoints" / MINE / "experiment.md").write_text("# Mine\n")
        (ws / "checkpoints" / BOBS).mkdir()
        (ws / "checkpoints" / BOBS / "experiment.md").write_text("# Bob's\n")
        secret = base / "bob-private"
        (secret / "inner").mkdir(parents=True)
        (ws / "checkpoints" / LINK).symlink_to(secret / "inner")
        for path in [ws, *ws.rglob("*")]:
            os.chown(path, alice.pw_uid, alice.pw_gid, follow_symlinks=False)
        for path in [ws / "checkpoints" / BOBS, ws / "checkpoints" / BOBS / "experiment.md",
                     secret, secret / "inner"]:
            os.chown(path, bob.pw_uid, bob.pw_gid)
        (ws / "checkpoints" / BOBS).chmod(0o700)
        secret.chmod(0o700)
        yield ws, alice
    finally:
        shutil.rmtree(base, ignore_errors=True)
        for name in names:
            subprocess.run(["userdel", name], capture_output=True)


def test_unreadable_runs_are_skipped_once_and_never_break_the_listing(workspace):
    ws, alice = workspace
    proc = subprocess.run([sys.executable, "-c", CHILD, str(ws), str(alice.pw_uid),
                           str(alice.pw_gid), json.dumps([BOBS, LINK])],
                          capture_output=True, text=True, timeout=120, cwd="/")
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["uid"] == alice.pw_uid
    crashed = [name for name, value in out.items() if isinstance(value, dict) and "crashed" in value]
    listed = [row["run_id"] for row in out["runs"].get("runs", [])] if "runs" in out["runs"] else []
    good = (not crashed and listed == [MINE] and out["ids"].get("run_ids") == [MINE]
            and all("unreadable" in out[i] for i in (BOBS, LINK)) and out["cli"] == 0
            and MINE in out["cli_stdout"] and out["cli_stderr"].count("could not be read") == 1)
    record("Faults", "Runs listing with another user's 0700 run and a link to an unreadable folder",
           cases=5, survived=5 - len(crashed), lost=len(crashed), unit="calls",
           crashed=len(crashed))
    assert not crashed, {name: out[name]["crashed"] for name in crashed}
    assert good, out
    assert sorted(out["runs"]["skipped"]) == sorted(str(ws / "checkpoints" / n) for n in (BOBS, LINK))
    assert out["runs"]["skipped_message"]["message_id"] == "runs.skipped"
