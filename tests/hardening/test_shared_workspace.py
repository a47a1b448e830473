"""A group-shared workspace with two real unprivileged users: bob plants symlinks, alice emits.

The users and their group are made with useradd/groupadd (root only) and removed afterwards.
Each user's step runs in a child process that loads the code as root (the interpreter lives
under /root), then drops to that user's uid, gid and groups for good before doing anything;
the control repeats the attack with the protection removed inside alice's process.
"""
from __future__ import annotations

import grp
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

REPO = Path(__file__).resolve().parents[2]
PRECIOUS = "alice's own data: must never change\n"

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("useradd"), reason="needs root and useradd")

CHILD = textwrap.dedent("""\
    import json, os, sys
    sys.path.insert(0, {tests!r})
    from pathlib import Path
    import ari_jupyter.checkpoint.emit as emit_module
    from ari_jupyter.checkpoint.emit import EmitError, emit_checkpoint
    from hardening._support import mark_shared, valid_state

    spec = json.loads(sys.argv[1])
    # Load every module an emit needs while the interpreter is still readable (root).
    warm = valid_state(Path(spec["scratch"]))
    emit_checkpoint(warm)
    if spec.get("control") == "lock":
        emit_module._LOCK_FLAGS &= ~os.O_NOFOLLOW
    if spec.get("control") == "dirs":
        emit_module._DIR_FLAGS &= ~os.O_NOFOLLOW
    os.setgroups(spec["groups"])
    os.setgid(spec["gid"])
    os.setuid(spec["uid"])
    assert os.getuid() == os.geteuid() == spec["uid"] and os.getgid() == spec["gid"]
    os.umask(0o007)
    out = {{"uid": os.getuid()}}
    if spec["do"] == "plant":
        for path, mode in spec.get("mkdirs", []):
            os.mkdir(path)
            os.chmod(path, mode)
        for link, target in spec.get("links", []):
            os.symlink(target, link)
    else:
        state = valid_state(Path(spec["inputs"]), workspace=spec["workspace"],
                            run_id=spec["run_id"])
        mark_shared(state, spec["workspace"])
        try:
            emit_checkpoint(state, force=True)
            out["outcome"] = "written"
        except EmitError as exc:
            out["outcome"] = "refused"
            out["message"] = str(exc)
    print(json.dumps(out))
""").format(tests=str(REPO / "tests"))


def _run(spec: dict) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


class Member:
    def __init__(self, name: str, group: str) -> None:
        subprocess.run(["useradd", "-M", "-N", "-d", "/nonexistent", "-s", "/usr/sbin/nologin",
                        "-G", group, name], check=True, capture_output=True)
        entry = pwd.getpwnam(name)
        self.name, self.uid, self.gid = name, entry.pw_uid, entry.pw_gid
        self.groups = [grp.getgrnam(group).gr_gid]

    def spec(self, **values) -> dict:
        return {"uid": self.uid, "gid": self.gid, "groups": self.groups, **values}


@pytest.fixture()
def shared(tmp_path_factory):
    """A group-shared workspace (setgid, group rwx), alice's private directory, bob."""
    tag = f"{os.getpid() % 100000}"
    group = f"arishare{tag}"
    subprocess.run(["groupadd", group], check=True, capture_output=True)
    members = []
    base = Path(tempfile.mkdtemp(prefix="ari-shared-", dir="/tmp"))
    try:
        alice, bob = Member(f"arialice{tag}", group), Member(f"aribob{tag}", group)
        members = [alice, bob]
        base.chmod(0o755)
        workspace = base / "ws"
        workspace.mkdir()
        os.chown(workspace, 0, grp.getgrnam(group).gr_gid)
        workspace.chmod(0o2770)
        private = base / "alice"
        private.mkdir()
        (private / "notes.txt").write_text(PRECIOUS)
        for name in ("experiment.md", ".env", "launch_config.json"):
            (private / name).write_text(PRECIOUS)
        for path in [private, *private.iterdir()]:
            os.chown(path, alice.uid, alice.gid)
        private.chmod(0o700)
        inputs = base / "alice-inputs"
        inputs.mkdir()
        os.chown(inputs, alice.uid, alice.gid)
        scratch = Path(tempfile.mkdtemp(prefix="ari-scratch-"))
        yield {"alice": alice, "bob": bob, "workspace": workspace, "private": private,
               "inputs": inputs, "scratch": scratch, "run_id": "20250101120000_shared"}
        shutil.rmtree(scratch, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        for member in members:
            subprocess.run(["userdel", member.name], capture_output=True)
        subprocess.run(["groupdel", group], capture_output=True)


def _private_state(private: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(private.iterdir())}


def _attack(shared, plant: dict, control: str = "") -> tuple[dict, dict, dict]:
    alice, bob, ws = shared["alice"], shared["bob"], shared["workspace"]
    planted = _run(bob.spec(do="plant", scratch=str(shared["scratch"] / "bob"), **plant))
    assert planted["uid"] == bob.uid
    before = _private_state(shared["private"])
    result = _run(alice.spec(do="emit", scratch=str(shared["scratch"] / "alice"),
                             inputs=str(shared["inputs"]), workspace=str(ws),
                             run_id=shared["run_id"], control=control))
    assert result["uid"] == alice.uid
    return result, before, _private_state(shared["private"])


def _lock_plant(shared) -> dict:
    launch = shared["workspace"] / "launch"
    return {"mkdirs": [(str(launch), 0o2770)],
            "links": [(str(launch / f".{shared['run_id']}.lock"), str(shared["private"] / "notes.txt"))]}


def _dir_plant(shared) -> dict:
    checkpoints = shared["workspace"] / "checkpoints"
    return {"mkdirs": [(str(checkpoints), 0o2770)],
            "links": [(str(checkpoints / shared["run_id"]), str(shared["private"]))]}


def test_bob_cannot_make_alices_emit_empty_her_file_through_the_lock(shared):
    result, before, after = _attack(shared, _lock_plant(shared))
    record("Attacks", "group-shared workspace, two real users: lock and checkpoint links",
           cases=1, survived=int(after == before), lost=int(after != before), unit="attacks")
    assert result["outcome"] == "refused" and "symbolic link" in result["message"]
    assert after == before


def test_control_a_lock_that_follows_links_lets_bob_change_alices_file(shared):
    _, before, after = _attack(shared, _lock_plant(shared), control="lock")
    assert after != before


def test_bob_cannot_make_alices_forced_emit_write_into_her_private_directory(shared):
    result, before, after = _attack(shared, _dir_plant(shared))
    record("Attacks", "group-shared workspace, two real users: lock and checkpoint links",
           cases=1, survived=int(after == before), lost=int(after != before), unit="attacks")
    assert result["outcome"] == "refused" and "symbolic link" in result["message"]
    assert after == before


def test_control_directories_opened_following_links_let_bob_redirect_alices_files(shared):
    result, before, after = _attack(shared, _dir_plant(shared), control="dirs")
    assert result["outcome"] == "written" and after != before
