"""Writing a checkpoint when things go wrong: kill -9 at every step and at random moments,
a read-only or full workspace, many writers at once, and the file modes.

Every check reads the files back and compares them byte for byte with what one complete emit
would have written; "lost" counts partial files, leftover temp files after the next emit, or
inconsistent sets that nothing flags.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import random
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from _hypothesis_profiles import PROFILE
from ari_jupyter.ari import arguments, render
from ari_jupyter.checkpoint.emit import DIR_MODE, ENV_MODE, FILE_MODE, SCRIPT_MODE, EmitError, ari_jupyter_command, emit_checkpoint
from ari_jupyter.base.files import TMP_MARKER
from ari_jupyter.checkpoint.handoff import _check_files

from ._support import valid_state
from .figures import record

ITERATIONS = {"ci": 300, "dev": 60}[PROFILE]
"""Random-moment kills per run (the exhaustive step-by-step kills come on top)."""
IS_ROOT = os.geteuid() == 0


def _variants(tmp: Path):
    """Two states for the same run id whose every file differs (A is on disk first)."""
    big = "\n".join(f"Line {i}: tiles are assigned round-robin." for i in range(3000))
    a = valid_state(tmp, goal="Variant A.\n" + big, max_cpus=4, module_loads=["a/1"])
    b = valid_state(tmp, goal="Variant B.\n" + big, max_cpus=6, module_loads=["b/2"], walltime="00:30:00")
    return a, b


def _expected(state) -> dict[str, bytes]:
    ckpt = state.checkpoint_dir
    script = f"{state.workspace}/launch/{state.run_id}.sh"
    return {"experiment.md": render.render_experiment_md(state.choices()).encode(),
            ".env": render.render_env(state.choices()).encode(),
            "handoff": render.render_handoff_script(state.choices(), ckpt, script,
                                                    ari_jupyter=ari_jupyter_command(),
                                                    files_sha256=_hashes(state)).encode()}


def _hashes(state) -> dict[str, str]:
    """The checkpoint files' sha256, which the hand-off script emit writes checks."""
    return {name: hashlib.sha256(text.encode()).hexdigest() for name, text in (
        ("experiment.md", render.render_experiment_md(state.choices())), (".env", render.render_env(state.choices())),
        (arguments.BFTS_ENV_FILE, render.render_bfts_env(state.choices())))}


def _check_set(state, allowed: list[dict[str, bytes]], states_json: list[dict]) -> tuple[int, bool]:
    """(partial files, set consistent). Every file must be one complete variant."""
    ckpt = Path(state.checkpoint_dir)
    script = Path(state.workspace) / "launch" / f"{state.run_id}.sh"
    partial = 0
    for name in ("experiment.md", ".env", "handoff"):
        path = script if name == "handoff" else ckpt / name
        if path.exists() and path.read_bytes() not in {v[name] for v in allowed}:
            partial += 1
    config_path = ckpt / "launch_config.json"
    consistent = True
    if config_path.exists():
        try:
            config = json.loads(config_path.read_text())
        except ValueError:
            return partial + 1, False
        if config["ari_jupyter"]["state"] not in states_json:
            partial += 1
        for name, digest in config["ari_jupyter"]["files_sha256"].items():
            path = ckpt / name
            if not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
                consistent = False
    return partial, consistent


def _fork(child) -> int:
    """Run ``child()`` in a forked process; return its wait status."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 0
        try:
            child()
        except BaseException:
            code = 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return status


_FILE_OPS = ("open", "write", "fsync", "replace", "rename", "unlink", "fchmod", "chmod", "mkdir",
             "close", "ftruncate", "pwrite")


def _die_before_op(k: int) -> None:
    """In a forked child: SIGKILL ourselves just before the k-th file-system call."""
    count = [0]
    for name in _FILE_OPS:
        original = getattr(os, name)

        def wrapper(*args, _original=original, **kwargs):
            count[0] += 1
            if count[0] == k:
                os.kill(os.getpid(), signal.SIGKILL)
            return _original(*args, **kwargs)

        setattr(os, name, wrapper)
    flock = fcntl.flock

    def flock_wrapper(*args):
        count[0] += 1
        if count[0] == k:
            os.kill(os.getpid(), signal.SIGKILL)
        return flock(*args)

    fcntl.flock = flock_wrapper


def _naive_write(items):
    """What emit's write_all protects against: writing each target in place, in two pieces."""
    for target, data, mode in items:
        fd = os.open(target.name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode, dir_fd=target.dir_fd)
        try:
            os.write(fd, data[: len(data) // 2])
            os.write(fd, data[len(data) // 2:])
        finally:
            os.close(fd)


def _kill_at_every_step(a, b, *, writer=None, limit: int = 500) -> tuple[int, int, int, int]:
    """Kill an emit of ``b`` over ``a`` before its k-th file-system call, k = 1, 2, ...
    Returns (kill points, partial files, torn sets, torn sets the hashes did not flag)."""
    import ari_jupyter.checkpoint.emit as emit_module

    allowed, states = [_expected(a), _expected(b)], [a.to_json(), b.to_json()]
    ckpt = Path(a.checkpoint_dir)
    steps = partial_total = torn = undetected = 0
    for k in range(1, limit + 1):
        emit_checkpoint(a, force=True)

        def child():
            if writer is not None:
                emit_module.write_all = writer
            _die_before_op(k)
            emit_checkpoint(b.copy(), force=True)

        status = _fork(child)
        if os.WIFEXITED(status):  # k is past the last call: this emit completed
            assert os.WEXITSTATUS(status) == 0
            break
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (k, status)
        steps += 1
        partial, consistent = _check_set(a, allowed, states)
        partial_total += partial
        if not partial and not consistent:
            torn += 1
            if _check_files(ckpt).status != "fail":
                undetected += 1
    return steps, partial_total, torn, undetected


def test_kill_9_before_every_file_system_call_of_emit(tmp_path):
    """Exhaustive: an emit over an existing checkpoint is killed just before its 1st, 2nd, ...
    file-system call. After each kill every file is complete-old or complete-new; a torn set
    is flagged by the recorded hashes; the next emit cleans up and succeeds."""
    a, b = _variants(tmp_path)
    emit_checkpoint(a)
    steps, partial_total, torn, undetected = _kill_at_every_step(a, b)
    assert steps > 20  # the emit really was instrumented
    emit_checkpoint(b.copy(), force=True)
    leftovers = [p for p in tmp_path.rglob(f"*{TMP_MARKER}*")]
    record("Writes", "kill -9 before each file-system call of emit", cases=steps,
           survived=steps - partial_total - undetected, lost=partial_total + undetected,
           unit="kill points", torn_sets_flagged=torn)
    assert partial_total == 0, f"{partial_total} partial files"
    assert undetected == 0, f"{undetected} torn sets not flagged by the hashes"
    assert leftovers == []


def test_control_the_kill_loop_finds_partial_files_of_an_in_place_writer(tmp_path):
    """Control: with emit's atomic write replaced by an in-place write, the same loop finds
    partial files — so its zero above is a measurement, not a blind spot."""
    a, b = _variants(tmp_path)
    emit_checkpoint(a)
    steps, partial_total, _, _ = _kill_at_every_step(a, b, writer=_naive_write)  # every kill point
    assert partial_total > 0, f"no partial file in {steps} kill points"


def test_kill_9_at_random_moments_of_repeated_emits(tmp_path):
    """A writer alternating A and B as fast as it can, SIGKILLed at a random moment, many times."""
    a, b = _variants(tmp_path)
    allowed, states = [_expected(a), _expected(b)], [a.to_json(), b.to_json()]
    emit_checkpoint(a)
    rng = random.Random(20250101)
    partial_total = torn = torn_undetected = 0
    ckpt = Path(a.checkpoint_dir)
    for _ in range(ITERATIONS):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            try:
                os.close(read)
                os.write(write, b"r")
                i = 0
                while True:
                    emit_checkpoint((a if i % 2 else b).copy(), force=True)
                    i += 1
            finally:
                os._exit(3)
        os.close(write)
        os.read(read, 1)
        os.close(read)
        time.sleep(rng.uniform(0.0, 0.08))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        partial, consistent = _check_set(a, allowed, states)
        partial_total += partial
        if not consistent:
            torn += 1
            if _check_files(ckpt).status != "fail":
                torn_undetected += 1
    emit_checkpoint(a, force=True)
    leftovers = [p for p in tmp_path.rglob(f"*{TMP_MARKER}*")]
    record("Writes", "kill -9 at random moments of back-to-back emits", cases=ITERATIONS,
           survived=ITERATIONS - partial_total - torn_undetected,
           lost=partial_total + torn_undetected + len(leftovers), unit="kills",
           torn_sets_flagged=torn)
    assert partial_total == 0 and torn_undetected == 0 and leftovers == []


# -- read-only and full workspaces ---------------------------------------------------------------

@contextlib.contextmanager
def tmpfs(path: Path, size: str = "1m"):
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path)],
                   check=True, capture_output=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _can_mount() -> str:
    if not IS_ROOT:
        return "needs root to mount a tmpfs"
    if shutil.which("mount") is None:
        return "no mount command"
    return ""


@pytest.mark.skipif(bool(_can_mount()), reason=_can_mount() or "mount available")
@pytest.mark.parametrize("existing", [False, True], ids=["fresh", "overwrite"])
def test_read_only_workspace_gives_a_clear_error_and_changes_nothing(tmp_path, existing):
    mount = tmp_path / "ro"
    with tmpfs(mount):
        a, b = _variants(tmp_path)
        for state in (a, b):
            state.workspace = str(mount / "ws")
            state.set_probe_result(state.probe("shared_fs").__class__(
                "shared_fs", "ok", "shared", data={"path": state.workspace}))
        if existing:
            emit_checkpoint(a)
        else:
            (mount / "ws").mkdir()
        before = _snapshot(mount)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True, capture_output=True)
        with pytest.raises(EmitError) as info:
            emit_checkpoint(b, force=True)
        after = _snapshot(mount)
    message = str(info.value)
    record("Writes", "read-only workspace (tmpfs remounted ro)", cases=1,
           survived=int(after == before), lost=int(after != before), unit="attempts")
    assert "cannot write the checkpoint" in message and "Read-only file system" in message
    assert after == before


@pytest.mark.skipif(IS_ROOT, reason="root ignores directory permissions; the read-only mount test covers root")
def test_unwritable_workspace_directory_gives_a_clear_error(tmp_path):
    a, _ = _variants(tmp_path)
    workspace = Path(a.workspace)
    workspace.mkdir()
    workspace.chmod(0o555)
    try:
        with pytest.raises(EmitError, match="Permission denied"):
            emit_checkpoint(a)
        assert list(workspace.iterdir()) == []
    finally:
        workspace.chmod(0o755)
    record("Writes", "workspace without write permission", cases=1, survived=1, unit="attempts")


def _full_disk_outcome(tmp_path: Path, goal_size: int) -> tuple[str, dict[str, bytes], str]:
    mount = tmp_path / f"full{goal_size}"
    with tmpfs(mount, size="64k"):
        state = valid_state(tmp_path, workspace=str(mount / "ws"), goal="x" * goal_size)
        try:
            emit_checkpoint(state)
            outcome, message = "written", ""
        except EmitError as exc:
            outcome, message = "refused", str(exc)
        files = _snapshot(mount)
    return outcome, files, message


@pytest.mark.skipif(bool(_can_mount()), reason=_can_mount() or "mount available")
def test_full_workspace_gives_a_clear_error_and_no_partial_file(tmp_path):
    """64 KiB tmpfs, goals from 4 KB to 80 KB: each emit is written whole or refused with
    ENOSPC in the message; no file is cut short and no temp file is left behind."""
    sizes = list(range(4000, 80001, 4000))
    partial = 0
    refused = 0
    for size in sizes:
        outcome, files, message = _full_disk_outcome(tmp_path, size)
        refused += outcome == "refused"
        if outcome == "refused":
            assert "No space left on device" in message and "cannot write the checkpoint" in message
        for name, data in files.items():
            if TMP_MARKER in name:
                partial += 1
            elif name.endswith("experiment.md") and not data.endswith(b"\n"):
                partial += 1
            elif name.endswith("launch_config.json"):
                json.loads(data)
    record("Writes", "full workspace (64 KiB tmpfs), 20 goal sizes", cases=len(sizes),
           survived=len(sizes) - partial, lost=partial, unit="attempts", refused=refused)
    assert refused >= 5 and partial == 0


@pytest.mark.skipif(bool(_can_mount()), reason=_can_mount() or "mount available")
def test_full_workspace_leaves_no_half_written_checkpoint(tmp_path):
    """A refused emit on a full disk leaves no file at all: no checkpoint without its
    launch_config.json, no runnable hand-off script, nothing that blocks the retry."""
    outcome, files, message = _full_disk_outcome(tmp_path, 30000)
    assert outcome == "refused"
    written = [name for name in files if not name.endswith(".lock")]
    assert written == [], f"left behind after the refusal: {written}"


# -- concurrent writers --------------------------------------------------------------------------

WRITERS = 8


def _race(states, force: bool) -> list[str]:
    """Start one forked writer per state at the same instant; their outcomes by class name."""
    gate_r, gate_w = os.pipe()
    pids = []
    outs = []
    for state in states:
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            code = 0
            try:
                os.close(gate_w)
                os.read(gate_r, 1)
                try:
                    emit_checkpoint(state, force=force)
                    os.write(out_w, b"written")
                except EmitError as exc:
                    os.write(out_w, f"{type(exc).__name__}: {exc}".encode()[:4000])
            except BaseException as exc:
                os.write(out_w, f"CRASH {exc!r}".encode())
                code = 3
            finally:
                os._exit(code)
        os.close(out_w)
        pids.append(pid)
        outs.append(out_r)
    os.close(gate_r)
    os.write(gate_w, b"x" * len(states))
    os.close(gate_w)
    results = []
    for pid, out_r in zip(pids, outs):
        os.waitpid(pid, 0)
        with os.fdopen(out_r, "rb") as handle:
            results.append(handle.read().decode())
    return results


def test_concurrent_writers_of_one_checkpoint(tmp_path):
    """8 writers race for the same run id, many rounds: exactly one writes, the others are
    told clearly (locked / exists); the files are the winner's, whole."""
    rounds = {"ci": 25, "dev": 6}[PROFILE]
    bad = 0
    for n in range(rounds):
        base = tmp_path / f"round{n}"
        states = [valid_state(base, max_cpus=i + 1, module_loads=[f"m/{i}"]) for i in range(WRITERS)]
        results = _race(states, force=False)
        winners = [i for i, r in enumerate(results) if r == "written"]
        losers = [r for r in results if r != "written"]
        ok = len(winners) == 1 and all(
            r.startswith(("CheckpointLocked: checkpoint", "CheckpointExists: checkpoint")) for r in losers)
        if ok:
            winner = states[winners[0]]
            partial, consistent = _check_set(winner, [_expected(winner)], [winner.to_json()])
            ok = partial == 0 and consistent
        bad += not ok
        assert ok, results
    record("Writes", f"{WRITERS} concurrent writers, same run id", cases=rounds * WRITERS,
           survived=rounds * WRITERS - bad, lost=bad, unit="writers")


def test_a_writer_never_removes_another_runs_temp_file(tmp_path):
    """Deterministic form of the race: run1's writer (this live process) is mid-write when an
    emit of run0 in the same workspace starts."""
    first = valid_state(tmp_path, run_id="20250101120000_run0")
    launch = Path(first.workspace) / "launch"
    launch.mkdir(parents=True)
    in_flight = launch / f".20250101120000_run1.sh{TMP_MARKER}{os.getpid()}-0000abcd"
    in_flight.write_text("half of run1's script")
    emit_checkpoint(first)
    assert in_flight.exists(), "run0's emit deleted the file run1's writer is writing"


def test_concurrent_writers_of_different_checkpoints_in_one_workspace(tmp_path):
    """Different run ids share launch/: no writer may disturb another's files (rounds of 8)."""
    rounds = {"ci": 10, "dev": 3}[PROFILE]
    for n in range(rounds):
        states = [valid_state(tmp_path / f"r{n}", run_id=f"20250101120000_run{i}", max_cpus=i + 1)
                  for i in range(WRITERS)]
        results = _race(states, force=False)
        assert results == ["written"] * WRITERS, results
        for state in states:
            assert _check_set(state, [_expected(state)], [state.to_json()]) == (0, True)
    record("Writes", f"{WRITERS} concurrent writers, different run ids, one workspace",
           cases=rounds * WRITERS, survived=rounds * WRITERS, unit="writers")


def test_concurrent_writers_of_different_checkpoints_in_separate_workspaces(tmp_path):
    states = [valid_state(tmp_path / f"w{i}", run_id=f"20250101120000_run{i}", max_cpus=i + 1)
              for i in range(WRITERS)]
    results = _race(states, force=False)
    assert results == ["written"] * WRITERS, results
    for state in states:
        assert _check_set(state, [_expected(state)], [state.to_json()]) == (0, True)
    record("Writes", f"{WRITERS} concurrent writers, separate workspaces", cases=WRITERS,
           survived=WRITERS, unit="writers")


def test_concurrent_forced_overwrites_leave_one_whole_version(tmp_path):
    states = [valid_state(tmp_path, max_cpus=i + 1, module_loads=[f"m/{i}"]) for i in range(WRITERS)]
    emit_checkpoint(states[0])
    results = _race(states, force=True)
    assert all(r == "written" or r.startswith("CheckpointLocked: checkpoint") for r in results), results
    assert "written" in results
    versions = [_expected(s) for s in states]
    partial, consistent = _check_set(states[0], versions, [s.to_json() for s in states])
    assert partial == 0 and consistent
    record("Writes", f"{WRITERS} concurrent forced overwrites", cases=WRITERS, survived=WRITERS,
           unit="writers")


# -- permissions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_modes_of_everything_emit_creates(tmp_path, umask):
    """Directories 0750, files 0640, .env 0600, the hand-off script 0750 — whatever the umask;
    nothing world-accessible, nothing group-writable (backups and logs included)."""
    state = valid_state(tmp_path)
    old = os.umask(umask)
    try:
        emit_checkpoint(state)
        emit_checkpoint(state.copy(), force=True)  # creates the backup tree too
    finally:
        os.umask(old)
    workspace = Path(state.workspace)
    ckpt = Path(state.checkpoint_dir)
    script = workspace / "launch" / f"{state.run_id}.sh"
    expected = {ckpt / "experiment.md": FILE_MODE, ckpt / ".env": ENV_MODE,
                ckpt / "launch_config.json": FILE_MODE, script: SCRIPT_MODE}
    wrong = []
    checked = 0
    for path in [workspace, *workspace.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        checked += 1
        if path in expected and mode != expected[path]:
            wrong.append((str(path), oct(mode)))
        elif path.is_dir() and mode != DIR_MODE:
            wrong.append((str(path), oct(mode)))
        elif mode & 0o007 or mode & 0o020:
            wrong.append((str(path), oct(mode)))
    record("Writes", "file and directory modes under umask 000/022/077", cases=checked,
           survived=checked - len(wrong), lost=len(wrong), unit="paths")
    assert wrong == []
    assert (DIR_MODE, FILE_MODE, ENV_MODE, SCRIPT_MODE) == (0o750, 0o640, 0o600, 0o750)
