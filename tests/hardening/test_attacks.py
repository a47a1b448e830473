"""The workspace attacked the way a second member of a group-shared workspace could: symlinks
planted where emit takes its lock, opens its directories and makes its backups; files named
like emit's temps; option-like values where names are expected.

Each protection has a control that removes it (a flag dropped, the old code put back) and shows
the same check then finds the damage, so a zero here is a measurement. "lost" counts files
outside the checkpoint that changed, links written through, and user files deleted.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

import ari_jupyter.checkpoint.emit as emit_module
from ari_jupyter.ari import validate as validate_module
from ari_jupyter.ari.profile import PRESETS
from ari_jupyter.checkpoint.emit import EmitError, emit_checkpoint
from ari_jupyter.base.files import TMP_MARKER

from ._support import valid_state
from .figures import record

PRECIOUS = b"someone's data: must never change\n"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else b"<dir>")
            for p in sorted(root.rglob("*"))}


# -- 1. the lock file ---------------------------------------------------------------------------

def _plant_lock_link(state, victim: Path) -> Path:
    launch = Path(state.workspace) / "launch"
    launch.mkdir(parents=True, exist_ok=True)
    lock = launch / f".{state.run_id}.lock"
    lock.symlink_to(victim)
    return lock


@pytest.mark.parametrize("existing", [False, True], ids=["fresh", "refused-as-existing"])
def test_a_symlinked_lock_file_is_refused_and_its_target_never_changes(tmp_path, existing):
    state = valid_state(tmp_path)
    if existing:
        emit_checkpoint(state.copy())
    victim = tmp_path / "victim.txt"
    victim.write_bytes(PRECIOUS)
    lock = Path(state.workspace) / "launch" / f".{state.run_id}.lock"
    lock.unlink(missing_ok=True)
    _plant_lock_link(state, victim)
    with pytest.raises(EmitError, match="symbolic link"):
        emit_checkpoint(state)
    changed = victim.read_bytes() != PRECIOUS
    record("Attacks", "lock file planted as a symlink to another file", cases=1,
           survived=int(not changed), lost=int(changed), unit="attempts")
    assert not changed


def test_control_the_victim_check_sees_a_lock_that_follows_links(tmp_path, monkeypatch):
    """Control: with O_NOFOLLOW dropped from the lock's flags the same plant changes the victim."""
    monkeypatch.setattr(emit_module, "_LOCK_FLAGS", emit_module._LOCK_FLAGS & ~os.O_NOFOLLOW)
    state = valid_state(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(PRECIOUS)
    _plant_lock_link(state, victim)
    try:
        emit_checkpoint(state)
    except EmitError:
        pass
    assert victim.read_bytes() != PRECIOUS


def test_a_hard_linked_lock_file_is_locked_but_never_written(tmp_path):
    state = valid_state(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(PRECIOUS)
    launch = Path(state.workspace) / "launch"
    launch.mkdir(parents=True)
    os.link(victim, launch / f".{state.run_id}.lock")
    emit_checkpoint(state)
    assert victim.read_bytes() == PRECIOUS


def test_a_lock_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path):
    state = valid_state(tmp_path)
    launch = Path(state.workspace) / "launch"
    launch.mkdir(parents=True)
    os.mkfifo(launch / f".{state.run_id}.lock")
    with pytest.raises(EmitError, match="not a regular file"):
        emit_checkpoint(state)


# -- 2. symlinked directories below the workspace -------------------------------------------------

LINKED_DIRS = ["checkpoints", "checkpoints/{run_id}", "launch", "launch/backup",
               "launch/backup/{run_id}", "slurm_logs"]


def _plant_dir_link(state, relative: str, outside: Path) -> None:
    """Replace ``workspace/relative`` by a symlink to ``outside`` (a full copy of what was there
    plus a precious file, so a write through the link overwrites something)."""
    link = Path(state.workspace) / relative.format(run_id=state.run_id)
    outside.mkdir(parents=True)
    if link.is_dir():
        shutil.copytree(link, outside, dirs_exist_ok=True, symlinks=True)
        shutil.rmtree(link)
    for name in ("experiment.md", ".env", "launch_config.json", f"{state.run_id}.sh"):
        if (outside / name).exists():
            (outside / name).write_bytes(PRECIOUS)
    (outside / "precious.txt").write_bytes(PRECIOUS)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside, target_is_directory=True)


def _attack_dir(tmp_path: Path, relative: str) -> tuple[bool, dict, dict, str]:
    state = valid_state(tmp_path)
    emit_checkpoint(state.copy())
    emit_checkpoint(state.copy(), force=True)  # launch/backup/<run_id> exists too
    outside = tmp_path / "outside"
    _plant_dir_link(state, relative, outside)
    before = _snapshot(outside)
    try:
        emit_checkpoint(state.copy(), force=True)
        message = ""
    except EmitError as exc:
        message = str(exc)
    return bool(message), before, _snapshot(outside), message


@pytest.mark.parametrize("relative", LINKED_DIRS)
def test_a_symlinked_directory_below_the_workspace_is_refused(tmp_path, relative):
    refused, before, after, message = _attack_dir(tmp_path, relative)
    lost = int(after != before)
    record("Attacks", "directory below the workspace planted as a symlink (force overwrite)",
           cases=1, survived=int(refused and not lost), lost=lost, unit="attempts")
    assert refused and "symbolic link" in message and "Nothing was changed" in message
    assert after == before


def test_control_without_o_nofollow_the_planted_directory_is_written_through(tmp_path, monkeypatch):
    """Control: the same attack with O_NOFOLLOW dropped from the directory opens writes into
    the link's target, and the scan sees it."""
    monkeypatch.setattr(emit_module, "_DIR_FLAGS", emit_module._DIR_FLAGS & ~os.O_NOFOLLOW)
    refused, before, after, _ = _attack_dir(tmp_path, "checkpoints/{run_id}")
    assert not refused and after != before


def test_a_directory_swapped_for_a_link_after_it_was_opened_is_not_followed(tmp_path, monkeypatch):
    """The race: the checkpoint directory is renamed away and replaced by a symlink right after
    emit opened it. The files land in the directory emit opened, never in the link's target."""
    state = valid_state(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_bytes(PRECIOUS)
    checkpoint = Path(state.checkpoint_dir)
    opened = emit_module._Tree.open

    def open_then_swap(self, parts, *, create):
        fd = opened(self, parts, create=create)
        if tuple(parts) == ("checkpoints", state.run_id):
            checkpoint.rename(checkpoint.with_name("moved"))
            checkpoint.symlink_to(outside, target_is_directory=True)
        return fd

    monkeypatch.setattr(emit_module._Tree, "open", open_then_swap)
    emit_checkpoint(state)
    assert _snapshot(outside) == {"precious.txt": PRECIOUS}
    assert (checkpoint.with_name("moved") / "experiment.md").is_file()


# -- 3. backups -----------------------------------------------------------------------------------

def _backup_after_links(tmp_path: Path) -> tuple[Path, Path]:
    state = valid_state(tmp_path)
    result = emit_checkpoint(state.copy())
    checkpoint = Path(result.checkpoint_dir)
    outside = tmp_path / "secret.txt"
    outside.write_bytes(PRECIOUS)
    outside.chmod(0o644)
    (checkpoint / ".env").unlink()
    (checkpoint / ".env").symlink_to(outside)
    (checkpoint / "experiment.md").chmod(0o644)
    backup = Path(emit_checkpoint(state.copy(), force=True).backup_dir)
    return backup, outside


def test_backups_copy_a_symlink_as_a_symlink_and_never_its_target(tmp_path):
    backup, outside = _backup_after_links(tmp_path)
    env = backup / ".env"
    ok = env.is_symlink() and os.readlink(env) == str(outside)
    ok = ok and stat.S_IMODE((backup / "experiment.md").lstat().st_mode) == 0o644
    record("Attacks", "backup of a checkpoint whose .env is a symlink", cases=1, survived=int(ok),
           lost=int(not ok), unit="attempts")
    assert ok
    assert outside.read_bytes() == PRECIOUS


def test_control_a_following_copy_is_caught_by_the_backup_check(tmp_path, monkeypatch):
    """Control: the old copy (shutil.copy2 follows links) puts the target's content in the backup."""
    def copy2(dir_fd, where, name, target_fd):
        shutil.copy2(where, f"/proc/self/fd/{target_fd}/{name}")

    monkeypatch.setattr(emit_module, "_copy_entry", copy2)
    backup, _ = _backup_after_links(tmp_path)
    assert not (backup / ".env").is_symlink() and (backup / ".env").read_bytes() == PRECIOUS


def test_a_backed_up_env_is_0600_whatever_its_mode_was(tmp_path):
    state = valid_state(tmp_path)
    checkpoint = Path(emit_checkpoint(state.copy()).checkpoint_dir)
    (checkpoint / ".env").chmod(0o644)
    backup = Path(emit_checkpoint(state.copy(), force=True).backup_dir)
    assert stat.S_IMODE((backup / ".env").stat().st_mode) == 0o600


# -- 4. the stale-temp sweep -----------------------------------------------------------------------

def _plant_temps(checkpoint: Path, live_pid: int) -> dict[str, Path]:
    """Files named like emit's temps that are not provably its stale ones, and one that is."""
    dead = 2 ** 22 + 12345  # above pid_max's default: no such process
    planted = {
        "user dot-file with the marker": checkpoint / f".notes{TMP_MARKER}keep",
        "marker, name of no file emit writes": checkpoint / f".results.csv{TMP_MARKER}{dead}-abcd1234",
        "temp of a live writer": checkpoint / f".experiment.md{TMP_MARKER}{live_pid}-abcd1234",
        "another user's temp": checkpoint / f".experiment.md{TMP_MARKER}{dead}-0therus3",
        "stale own temp": checkpoint / f".experiment.md{TMP_MARKER}{dead}-deadbeef",
    }
    for path in planted.values():
        path.write_text("data")
    os.chown(planted["another user's temp"], 65534, 65534)
    link = checkpoint / f".launch_config.json{TMP_MARKER}{dead}-11111111"
    link.symlink_to(checkpoint.parent.parent / "elsewhere")
    planted["link named like a temp"] = link
    return planted


def _sweep_outcome(tmp_path: Path) -> tuple[dict[str, bool], dict[str, bool]]:
    """Which planted files exist after a refused emit and after a forced one."""
    state = valid_state(tmp_path)
    checkpoint = Path(emit_checkpoint(state.copy()).checkpoint_dir)
    live = subprocess.Popen(["sleep", "60"])
    try:
        planted = _plant_temps(checkpoint, live.pid)
        with pytest.raises(EmitError):
            emit_checkpoint(state.copy())  # refused: already exists
        after_refusal = {k: os.path.lexists(p) for k, p in planted.items()}
        emit_checkpoint(state.copy(), force=True)
        after_write = {k: os.path.lexists(p) for k, p in planted.items()}
    finally:
        live.kill()
        live.wait()
    return after_refusal, after_write


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_the_sweep_removes_only_provably_stale_own_temps_and_only_when_writing(tmp_path):
    after_refusal, after_write = _sweep_outcome(tmp_path)
    kept = {k: v for k, v in after_write.items() if k != "stale own temp"}
    lost = sum(not v for v in after_refusal.values()) + sum(not v for v in kept.values())
    record("Attacks", "files named like emit's temps (user, other user, live writer, link)",
           cases=len(after_write) * 2, survived=len(after_write) * 2 - lost, lost=lost, unit="files")
    assert all(after_refusal.values()), after_refusal  # a refused emit removes nothing
    assert all(kept.values()), kept
    assert not after_write["stale own temp"]


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_control_the_old_sweep_is_caught_deleting_user_files(tmp_path, monkeypatch):
    """Control: the old sweep (any dot-file with the marker, before the exists check) deletes
    the user's files, and the same check sees it."""
    def old_sweep(dir_fd, names):
        for entry in os.listdir(dir_fd):
            if entry.startswith(".") and TMP_MARKER in entry:
                os.unlink(entry, dir_fd=dir_fd)

    monkeypatch.setattr(emit_module, "remove_stale_temps", old_sweep)
    _, after_write = _sweep_outcome(tmp_path)
    assert not after_write["user dot-file with the marker"]


# -- 7. option-like values ------------------------------------------------------------------------

DASH_NAMES = [
    ("partition", {"partition": "--wrap"}),
    ("partition", {"partition": "-p"}),
    ("requested_nodelist", {"profile_requested_nodelist": "--wrap=id"}),
    ("exclude_nodes", {"profile_exclude_nodes": "-x"}),
    ("exclude_nodes", {"profile_exclude_nodes": "--uid=0"}),
]
FIGHTING = ["--wrap=id", "--uid=0", "--gid=0", "--export=NONE", "--export=PATH", "--array=1-9",
            "--test-only", "--hold", "-H", "--error=/dev/null", "--get-user-env", "--help"]


def _state_with(tmp_path: Path, values: dict):
    profile = PRESETS["mpi"]()
    state_values = {}
    for key, value in values.items():
        if key.startswith("profile_"):
            setattr(profile, key[len("profile_"):], value)
        else:
            state_values[key] = value
    return valid_state(tmp_path, profile=profile, **state_values)


def _refusals(tmp_path: Path) -> list[bool]:
    refused = []
    for n, (field, values) in enumerate(DASH_NAMES):
        state = _state_with(tmp_path / str(n), values)
        try:
            emit_checkpoint(state)
            refused.append(False)
        except EmitError as exc:
            refused.append(f"- {field}:" in str(exc) and "starts with '-'" in str(exc))
    return refused


def test_names_that_start_with_a_dash_are_refused_with_the_field_named(tmp_path):
    refused = _refusals(tmp_path)
    record("Attacks", "option-like values for partition, nodelist, exclude", cases=len(refused),
           survived=sum(refused), lost=len(refused) - sum(refused), unit="cases")
    assert all(refused), list(zip(DASH_NAMES, refused))


def test_control_without_the_check_dash_names_are_written(tmp_path, monkeypatch):
    monkeypatch.setattr(validate_module, "_check_option_like_values", lambda ctx: None)
    assert not any(_refusals(tmp_path))


@pytest.mark.parametrize("token", FIGHTING)
def test_extra_sbatch_args_that_fight_aris_flags_are_warned(token):
    from ari_jupyter.ari.profile import ExecutionProfile
    from ari_jupyter.ari.sbatch import ReproduceArgs

    problems = validate_module.validate(ExecutionProfile(extra_sbatch_args=[token]),
                                        ReproduceArgs(partition="small"))
    mine = [p for p in problems if p.field == "extra_sbatch_args" and p.severity == "warning"
            and token in p.message and "repeats" not in p.message]
    record("Attacks", "extra_sbatch_args that fight ARI's own flags", cases=1, survived=int(bool(mine)),
           lost=int(not mine), unit="cases")
    assert mine, problems


def test_control_without_the_check_fighting_args_pass_silently():
    from ari_jupyter.ari.profile import ExecutionProfile
    from ari_jupyter.ari.sbatch import ReproduceArgs

    original = validate_module._check_option_like_values
    try:
        validate_module._check_option_like_values = lambda ctx: None
        problems = validate_module.validate(ExecutionProfile(extra_sbatch_args=["--wrap=id"]),
                                            ReproduceArgs(partition="small"))
    finally:
        validate_module._check_option_like_values = original
    assert not [p for p in problems if "--wrap" in p.message]
