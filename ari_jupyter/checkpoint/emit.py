"""Write a checkpoint ARI adopts, and the one-command hand-off for a second terminal.

Layout (spec §0, §2)::

    <workspace>/checkpoints/<run_id>/experiment.md, .env, launch_config.json[, workflow.yaml]
    <workspace>/launch/<run_id>.sh          the hand-off script
    <workspace>/launch/.<run_id>.lock       exclusive lock while writing
    <workspace>/launch/backup/<run_id>/...  previous files when overwriting with force

ARI copies every non-meta file in the checkpoint root into every node's work dir (spec §0
item 9), so the lock, backups and the script live outside it. Every file is replaced
atomically (temp file in the same directory, fsync, rename, directory fsync): a writer
killed at any instant leaves each file either complete-old or complete-new, never partial.
All temps are written before the first rename, so a full disk changes nothing.
``launch_config.json`` is written last and records the sha256 of the others, so a set torn
by a crash between two renames is detectable (``check-handoff`` does).

Below the workspace nothing is followed: each directory is opened relative to its parent's
descriptor with ``O_NOFOLLOW`` and each file written relative to its directory's descriptor,
so a symlink planted by another member of a group-shared workspace is refused, not written
through. launch_config.json passes through the redactor (it is copied to every node).
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..ari import render
from ..ari.decided import decide
from ..ari.followup import FOLLOWUP_SCRIPT
from ..ari.install import NO_ARI, find_ari_workflow
from ..i18n import message, message_of, text
from ..wizard.state import WizardState
from ..ari.arguments import BFTS_ENV_FILE
from ..ari.choices import Choices
from ..ari.judge import probe_is_for
from ..base.files import NotARegularFile, Target, copy_entry, remove_stale_temps, write_all
from ..base.redact import redact_tree
from ..hosts.host import LocalHost
from ..probes import ProbeContext, run_probes_sync
from ..slurm.allocation import Allocation
from .errors import (CheckpointExists, CheckpointInUse, CheckpointLocked, EmitBlocked, EmitError,
                     NodeLocalWorkspace, UnsafeWorkspace)
from ..ari.naming import is_short_name, make_run_id, slug_is_hashed, slug_names_nothing
from .known_workspaces import record_workspace
from ..ari.markers import live_process
from ..wizard.run_settings_view import handoff_key_variable
from .ownership import (WORKSPACE_FOLDERS, Unsafe, first_unsafe_on_the_way, folder_on_the_way,
                        only_own_group_writes, ours)


DIR_MODE = 0o750
FILE_MODE = 0o640
ENV_MODE = 0o600
SCRIPT_MODE = 0o750

CHECKPOINT_FILES = ("experiment.md", ".env", "bfts_env.sh", "workflow.yaml", FOLLOWUP_SCRIPT,
                    "launch_config.json")


@dataclass(frozen=True)
class EmitResult:
    checkpoint_dir: str
    files: tuple[str, ...]
    handoff_command: str
    handoff_script: str
    notes: tuple[str, ...] = ()
    backup_dir: str = ""
    written: Mapping[str, str] = field(default_factory=dict)
    """File name -> sha256 of what was written."""

    def to_json(self) -> dict[str, Any]:
        return {"checkpoint_dir": self.checkpoint_dir, "files": list(self.files),
                "handoff_command": self.handoff_command, "handoff_script": self.handoff_script,
                "notes": list(self.notes), "backup_dir": self.backup_dir}


# -- public API ---------------------------------------------------------------------------

def emit_checkpoint(state: WizardState, *, force: bool = False, host: Any = None,
                    now: datetime | None = None, ari_workflow: str | Path | None = None) -> EmitResult:
    """Write the checkpoint for ``state``; raise an ``EmitError`` subclass when refusing.

    ``force`` overwrites an existing checkpoint (keeping a backup outside it) and accepts a
    node-local workspace. ``host`` runs the shared-filesystem probe when the state has no
    verdict for this workspace (default: this machine). ``now`` fixes the clock (run id,
    backup name); ``ari_workflow`` points at ARI's packaged workflow.yaml instead of looking
    for an importable ARI.
    """
    now = now or datetime.now().astimezone()
    notes: list[str] = []

    # Stages switched off need ARI's workflow.yaml: refused as the wizard refuses them
    workflow_found = _workflow_available(ari_workflow) if state.run_settings.disabled_stages() else None
    blocking = [p for p in state.blocking_problems(workflow_found=workflow_found)
                if not _is_shared_fs_problem(p)]
    if blocking:
        raise EmitBlocked(blocking)
    short_name = state.run_id if is_short_name(state.run_id) else ""
    if state.run_id and not short_name:
        return _emit(state, force, host, now, ari_workflow, notes)
    # A minted id is kept only with the checkpoint it names: after a refusal the title the user
    # edits next mints the id again (a frozen one would name the old title), and a short name
    # typed in Run id is what the user sees again.
    state.run_id = make_run_id(state.title, now, short_name)
    said = "" if short_name else "field.run_id_hashed" if slug_is_hashed(state.title) else \
        "field.run_id_partial" if slug_names_nothing(state.title) else ""
    if said:  # what step 4 said beside Run id, now that it is minted
        notes.append(text("emit.note.run_id_from_title", problem=message(
            said, slug=state.run_id.split("_", 1)[1]), fix=message(said + ".fix")))
    try:
        return _emit(state, force, host, now, ari_workflow, notes)
    except BaseException:
        state.run_id = short_name
        raise


def _emit(state: WizardState, force: bool, host: Any, now: datetime,
          ari_workflow: str | Path | None, notes: list[str]) -> EmitResult:
    """emit_checkpoint once ``state.run_id`` is known."""
    workspace = Path(state.workspace)
    checkpoint = workspace / "checkpoints" / state.run_id
    launch_dir = workspace / "launch"
    script = launch_dir / f"{state.run_id}.sh"

    verdict = _shared_fs_verdict(state, str(checkpoint), host)
    if verdict is None:
        notes.append(text("emit.note.shared_fs_unchecked"))
    elif verdict.status == "fail":
        if not force:
            raise NodeLocalWorkspace(text(
                "emit.error.node_local_fix" if verdict.fix else "emit.error.node_local",
                summary=_summary(verdict), fix=_fix(verdict)), verdict=verdict)
        notes.append(text("emit.note.forced", summary=_summary(verdict)))
    elif verdict.status in ("warn", "unknown"):
        notes.append(text("emit.note.shared_fs", summary=_summary(verdict)))

    # Render everything before touching disk: a value that cannot be written stops here.
    contents = _render_all(state, str(checkpoint), str(script), ari_workflow, notes)

    try:
        files, written, backup_dir = _write(state, contents, checkpoint, launch_dir, script,
                                            force, now, notes)
    except OSError as exc:
        raise EmitError(text("emit.error.cannot_write", error=str(exc))) from None
    if state.site_name:  # where the script stops here: the first module, or `ari` without any
        notes.append(text("emit.note.demo_handoff" if state.module_loads else "emit.note.demo_handoff_no_modules",
                          site=state.site_name, checkpoint=str(checkpoint)))

    record_workspace(workspace)  # the Runs panel lists it even when it is not the default
    return EmitResult(checkpoint_dir=str(checkpoint), files=tuple(files),
                      handoff_command=render.handoff_command(str(script)),
                      handoff_script=str(script), notes=tuple(notes), backup_dir=backup_dir,
                      written=written)


def _write(state: WizardState, contents: dict[str, tuple[bytes, int]], checkpoint: Path,
           launch_dir: Path, script: Path, force: bool, now: datetime,
           notes: list[str]) -> tuple[list[str], dict[str, str], str]:
    """Under the lock: refuse or back up an existing checkpoint, then replace every file.

    Every directory below the workspace is opened relative to its parent's descriptor without
    following a symlink, and every file is written relative to its directory's descriptor: a
    symlink planted anywhere under the workspace is refused, never written through.
    """
    workspace = Path(state.workspace)
    _refuse_unsafe(first_unsafe_on_the_way(workspace))
    _make_dirs(workspace)
    with _Tree(workspace) as tree:
        _refuse_unsafe(folder_on_the_way(workspace, os.fstat(tree.root_fd)))
        # The run's folders at the workspace root (checkpoints/, launch/, slurm_logs/,
        # experiments/) are this user's, made by this emit or checked before anything is made
        # in them: one another user made first (a world-writable sticky workspace) is refused,
        # and before any of them is made.
        _refuse_foreign_folders(tree, workspace)
        opened = {}
        for parts in (*((name,) for name in WORKSPACE_FOLDERS), ("checkpoints", state.run_id)):
            opened[parts] = tree.open(parts, create=True)
            _refuse_unsafe(_ours_made_private(workspace.joinpath(*parts), opened[parts]))
        ckpt_fd, launch_fd = opened[("checkpoints", state.run_id)], opened[("launch",)]
        with _exclusive_lock(launch_fd, launch_dir / f".{state.run_id}.lock", state.run_id):
            existing = [name for name in CHECKPOINT_FILES if _lexists(ckpt_fd, name)]
            script_exists = _lexists(launch_fd, script.name)
            backup_dir = ""
            if existing:
                _refuse_a_running_checkpoint(checkpoint)
            if existing or script_exists:
                if not force:
                    shown = existing + ([script.name] if script_exists else [])
                    raise CheckpointExists(text("emit.error.exists", checkpoint=str(checkpoint),
                                                files=", ".join(shown)), shown)
                sources = [(ckpt_fd, checkpoint, name) for name in existing]
                if script_exists:
                    sources.append((launch_fd, launch_dir, script.name))
                backup_dir = str(_backup(tree, sources, state.run_id, now))
                notes.append(text("emit.note.backed_up", path=str(backup_dir)))
            # Only now that this emit writes: the temps a killed writer of this run id left.
            remove_stale_temps(ckpt_fd, CHECKPOINT_FILES)
            remove_stale_temps(launch_fd, (script.name,))  # launch/ is shared with other run ids
            for optional in ("workflow.yaml", FOLLOWUP_SCRIPT):  # written only when chosen
                if optional in existing and optional not in contents:
                    os.unlink(optional, dir_fd=ckpt_fd)

            written: dict[str, str] = {}
            items: list[tuple[Target, bytes, int]] = []
            for name, (data, mode) in contents.items():
                target = (Target(launch_fd, script.name, script) if name == "handoff"
                          else Target(ckpt_fd, name, checkpoint / name))
                items.append((target, data, mode))
                written[target.name] = hashlib.sha256(data).hexdigest()
            # launch_config.json last: it names the hashes of the checkpoint files written before it.
            config = render.launch_config(
                state.choices(), files={k: v for k, v in written.items() if k != script.name},
                written_at=now.isoformat(timespec="seconds"),
                handoff_sha256=written.get(script.name, ""), decided=decide(state.choices()))
            data = (json.dumps(redact_tree(config), indent=2, ensure_ascii=False)
                    + "\n").encode("utf-8")
            items.append((Target(ckpt_fd, "launch_config.json", checkpoint / "launch_config.json"),
                          data, FILE_MODE))
            written["launch_config.json"] = hashlib.sha256(data).hexdigest()
            write_all(items)
            files = [str(checkpoint / name) for name in CHECKPOINT_FILES if name in written]
            files.append(str(script))

    return files, written, backup_dir


def _refuse_foreign_folders(tree: "_Tree", workspace: Path) -> None:
    """Refuse when one of the run's folders at the workspace root is there already and is not
    this user's alone (checked before emit makes the missing ones)."""
    for name in WORKSPACE_FOLDERS:
        try:
            fd = tree.open((name,), create=False)
        except FileNotFoundError:
            continue
        _refuse_unsafe(_ours_made_private(workspace / name, fd))


def _ours_made_private(path: Path, fd: int) -> Unsafe | None:
    """``ours`` of an opened folder, after making 0750 one that only the user's own private
    group could write besides him (``experiments/`` made by ARI under umask 002)."""
    info = os.fstat(fd)
    if only_own_group_writes(info):
        os.fchmod(fd, DIR_MODE)
        info = os.fstat(fd)
    return ours(path, info)


def _refuse_unsafe(problem: Unsafe | None) -> None:
    if problem is not None:
        raise UnsafeWorkspace(text("emit.error.unsafe_folder",
                                   problem=message(problem.message_id, **problem.params()),
                                   fix=message("ownership.fix", path=problem.path)), problem)


def _workflow_available(ari_workflow: str | Path | None) -> bool:
    """Whether ARI's workflow.yaml can be read here (the given file, else ARI's own)."""
    if ari_workflow is not None:
        return Path(ari_workflow).is_file()
    return find_ari_workflow()[0] is not None


def _refuse_a_running_checkpoint(checkpoint: Path) -> None:
    """Raise CheckpointInUse while ``ari run`` (or the hand-off about to start it) works in
    ``checkpoint``: a rewrite would change the .env and profile under a running run, and a
    backup would not bring its state back. The Runs panel's own reading of the PID files."""
    process = live_process(checkpoint)
    if process is not None:
        raise CheckpointInUse(text("emit.error.in_use", checkpoint=str(checkpoint),
                                   pid=process.pid or "?"))


# -- steps ---------------------------------------------------------------------------------

def _render_all(state: WizardState, checkpoint: str, script: str,
                ari_workflow: str | Path | None, notes: list[str]) -> dict[str, tuple[bytes, int]]:
    choices = state.choices()
    try:
        contents: dict[str, tuple[bytes, int]] = {
            "experiment.md": (render.render_experiment_md(choices).encode("utf-8"), FILE_MODE),
            ".env": (render.render_env(choices).encode("utf-8"), ENV_MODE),
            BFTS_ENV_FILE: (render.render_bfts_env(choices).encode("utf-8"), ENV_MODE),
        }
        said = len(notes)
        workflow = _render_workflow(choices, ari_workflow, notes)
        if workflow is not None:
            contents["workflow.yaml"] = (workflow.encode("utf-8"), FILE_MODE)
        elif state.run_settings.disabled_stages():
            # why it could not be written: the notes _render_workflow just gave (ARI found,
            # its file unreadable; ARI missing is refused before, as a finding)
            raise EmitError(text("emit.error.stages_need_workflow",
                                 notes=[message_of(n) or n for n in notes[said:]]))

        if choices.followups:  # the follow-up job's script, hashed with the others
            contents[FOLLOWUP_SCRIPT] = (render.render_followup_script(
                choices, checkpoint, ari_jupyter=ari_jupyter_command(),
                api_key=handoff_key_variable(choices)).encode("utf-8"), SCRIPT_MODE)
        hashes = {name: hashlib.sha256(data).hexdigest() for name, (data, _) in contents.items()}
        script_text = render.render_handoff_script(choices, checkpoint, script,
                                                   api_key=handoff_key_variable(choices),
                                                   ari_jupyter=ari_jupyter_command(),
                                                   files_sha256=hashes)
        contents["handoff"] = (script_text.encode("utf-8"), SCRIPT_MODE)
    except render.RenderError as exc:
        raise EmitError(text("emit.error.cannot_write", error=str(exc))) from None
    return contents


def ari_jupyter_command() -> str:
    """ari-jupyter by absolute path, for the hand-off script to name when the terminal does not
    find it by name: JupyterLab's terminal is a login shell, and a login shell (Debian's
    /etc/profile) sets PATH anew, leaving out a venv's folder. The console script beside this
    Python, else the one on PATH, else just the name."""
    import shutil
    import sys

    beside = Path(sys.executable).with_name("ari-jupyter")  # a venv's bin, not its base Python's
    try:
        if beside.is_file() and os.access(beside, os.X_OK):
            return str(beside)
    except OSError:  # a folder this user may not look into (another user's Python): never fatal
        pass
    found = shutil.which("ari-jupyter")
    return os.path.abspath(found) if found else "ari-jupyter"


def _no_ari_note(choices: Choices) -> str:
    """The note's id: this machine, a demo site whose recording found ARI, or one without it."""
    if not choices.site_name:
        return "emit.note.no_ari"
    ari = choices.probe("ari")
    return "emit.note.no_ari_demo_site_lacks" if ari is not None and ari.status != "ok" \
        else "emit.note.no_ari_demo"  # found, or not asked (--no-probes)


def _render_workflow(choices: Choices, ari_workflow: str | Path | None,
                     notes: list[str]) -> str | None:
    if ari_workflow is not None:
        source, how = Path(ari_workflow), text("emit.how.given")
    else:
        source, how = find_ari_workflow()
    if source is None:
        if how == NO_ARI:  # the usual case on a laptop or a demo site: not a fault
            # On a demo site "here" would read as the site: say whether its recording has ARI.
            notes.append(text(_no_ari_note(choices)))
        else:
            notes.append(text("emit.note.no_workflow", why=how))
        return None
    try:
        text_ = render.render_workflow_yaml(source.read_text(encoding="utf-8"), choices)
    except ImportError:
        notes.append(text("emit.note.no_workflow", why=message("emit.why.no_yaml")))
        return None
    except Exception as exc:  # unreadable file, yaml.YAMLError, RenderError: say so, write the rest
        notes.append(text("emit.note.no_workflow", why=f"{source}: {exc}"))
        return None
    inputs = render.reproduce_inputs(choices)
    shown = ", ".join(f"{k}={v}" for k, v in inputs.items())
    notes.append(text("emit.note.workflow", source=str(source), how=how, inputs=shown))
    return text_


def _shared_fs_verdict(state: WizardState, checkpoint: str, host: Any):
    """The shared_fs verdict for this workspace: the state's own, else a fresh probe run."""
    result = state.probe("shared_fs")
    if result is not None and result.status != "unknown" and probe_is_for(result, state.workspace):
        return result
    host = host or LocalHost()
    allocation = state.allocation or Allocation.from_env(host.env)
    ctx = ProbeContext(allocation=allocation, checkpoint_dir=checkpoint, workspace=state.workspace,
                       only=["shared_fs"])
    results = [r for r in run_probes_sync(host, ctx) if r.id == "shared_fs"]
    if not results:
        return None
    state.set_probe_result(results[0])
    return results[0]


def _summary(verdict: Any):
    """A probe verdict's summary as a sentence parameter (translated when it has an id)."""
    return message(verdict.message_id, **verdict.params) if verdict.message_id else verdict.summary


def _fix(verdict: Any):
    """A probe verdict's fix as a sentence parameter, like ``_summary``."""
    return message(verdict.fix_id, **verdict.params) if verdict.fix_id else verdict.fix or ""


def _is_shared_fs_problem(problem: Any) -> bool:
    return problem.field == "workspace" and problem.rule == "shared_fs"


def _make_dirs(path: Path) -> None:
    """``mkdir -p`` giving every directory it creates mode 0750 (whatever the umask). Used for
    the workspace itself, whose own path may go through symlinks (``/home`` -> ``/gpfs``)."""
    missing = []
    current = path
    while not current.exists():
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(directory, DIR_MODE)
    if not path.is_dir():
        raise EmitError(text("emit.error.not_a_directory", path=str(path)))


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class _Tree:
    """Directories below the workspace, each opened relative to its parent's descriptor with
    ``O_NOFOLLOW``: a symlink on the way is refused when it is met, not checked beforehand (no
    window between a check and the use). Closes every descriptor it opened."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fds: list[int] = []

    def __enter__(self) -> "_Tree":
        self.root_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self.fds.append(self.root_fd)
        return self

    def __exit__(self, *exc: Any) -> None:
        for fd in reversed(self.fds):
            os.close(fd)
        self.fds.clear()

    def open(self, parts: Iterable[str], *, create: bool) -> int:
        """The descriptor of ``root/parts...``; missing directories made 0750 when ``create``."""
        fd, where = self.root_fd, self.root
        for part in parts:
            if part in ("", ".", "..") or "/" in part:
                raise EmitError(text("emit.error.not_a_plain_name", path=str(where / part)))
            where = where / part
            fd = self._open_child(fd, part, where, create)
        return fd

    def _open_child(self, parent: int, name: str, where: Path, create: bool) -> int:
        for _ in range(3):
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(name, DIR_MODE, dir_fd=parent)
                except FileExistsError:
                    continue  # made by someone else meanwhile: open whatever is there now
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
                self.fds.append(fd)
                os.fchmod(fd, DIR_MODE)
                return fd
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _not_a_plain_directory(parent, name, where) from None
                raise
            self.fds.append(fd)
            return fd
        raise EmitError(text("emit.error.keeps_changing", path=str(where)))


def _not_a_plain_directory(parent: int, name: str, where: Path) -> EmitError:
    try:
        is_link = stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        is_link = False
    if is_link:
        return EmitError(text("emit.error.symlink_in_workspace", path=str(where)))
    return EmitError(text("emit.error.exists_not_a_directory", path=str(where)))


def _lexists(dir_fd: int, name: str) -> bool:
    """True when ``name`` is there at all: a dangling symlink counts (it would be replaced)."""
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


_LOCK_PID_WIDTH = 20
_LOCK_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class _exclusive_lock:
    """``flock`` on a file outside the checkpoint root; a second writer fails at once.

    The lock file is created with ``O_EXCL`` and opened with ``O_NOFOLLOW``, never truncated:
    a symlink planted in its place is refused, and a file that is not a regular file of ours
    with a single link (a hard link to someone's data) is locked but never written to.
    """

    def __init__(self, dir_fd: int, path: Path, run_id: str):
        self.dir_fd = dir_fd
        self.path = path
        self.name = path.name
        self.run_id = run_id
        self.fd = -1
        self.writable = False

    def _open(self) -> int:
        flags = _LOCK_FLAGS
        for _ in range(3):
            try:
                return os.open(self.name, os.O_RDWR | os.O_CREAT | os.O_EXCL | flags, FILE_MODE,
                               dir_fd=self.dir_fd)
            except FileExistsError:
                pass
            for mode in (os.O_RDWR, os.O_RDONLY):
                try:
                    return os.open(self.name, mode | flags, dir_fd=self.dir_fd)
                except FileNotFoundError:
                    break  # removed meanwhile: create it again
                except PermissionError:
                    if mode == os.O_RDONLY:
                        raise
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        raise EmitError(text("emit.error.lock_symlink",
                                             path=str(self.path))) from None
                    raise
        raise EmitError(text("emit.error.lock_disappearing", path=str(self.path)))

    def __enter__(self) -> "_exclusive_lock":
        self.fd = self._open()
        info = os.fstat(self.fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(self.fd)
            raise EmitError(text("emit.error.lock_not_regular", path=str(self.path)))
        access = fcntl.fcntl(self.fd, fcntl.F_GETFL)
        self.writable = (access & os.O_ACCMODE) == os.O_RDWR and info.st_uid == os.geteuid() \
            and info.st_nlink == 1
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(self.fd, 64, 0).decode("ascii", "replace").strip()
            os.close(self.fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise CheckpointLocked(text(
                    "emit.error.locked_by" if holder.isdigit() else "emit.error.locked",
                    run_id=self.run_id, pid=holder, lock=str(self.path))) from None
            raise
        self._note(str(os.getpid()))
        return self

    def _note(self, text: str) -> None:
        """Overwrite the fixed-width pid field in place (no truncation) in our own lock file."""
        if self.writable:
            os.pwrite(self.fd, text.ljust(_LOCK_PID_WIDTH).encode("ascii"), 0)

    def __exit__(self, *exc: Any) -> None:
        try:
            self._note("")
        finally:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)


def _backup(tree: _Tree, sources: list[tuple[int, Path, str]], run_id: str, now: datetime) -> Path:
    """Copy the current files to ``launch/backup/<run_id>/<timestamp>/`` before they are replaced.

    What is there is what is kept: a symlink is backed up as the same symlink (never its
    target's content), a regular file with its mode (``.env`` always 0600) and times; anything
    else is refused. Backup files are created ``O_EXCL`` in a directory made for this backup."""
    root_fd = tree.open(("launch", "backup", run_id), create=True)
    root = tree.root / "launch" / "backup" / run_id
    stamp = now.strftime("%Y%m%d%H%M%S")
    name, suffix = stamp, 1
    while True:
        try:
            os.mkdir(name, DIR_MODE, dir_fd=root_fd)
            break
        except FileExistsError:
            name = f"{stamp}-{suffix}"
            suffix += 1
    target_fd = tree.open(("launch", "backup", run_id, name), create=False)
    os.fchmod(target_fd, DIR_MODE)
    for dir_fd, directory, entry in sources:
        _copy_entry(dir_fd, directory / entry, entry, target_fd)
    os.fsync(target_fd)
    return root / name


def _copy_entry(dir_fd: int, where: Path, name: str, target_fd: int) -> None:
    """One entry into the backup (``base.files.copy_entry``); what is not a file is refused."""
    try:
        copy_entry(dir_fd, name, target_fd, mode=ENV_MODE if name == ".env" else None)
    except NotARegularFile as exc:
        raise EmitError(text("emit.error.backup_changed" if exc.changed
                             else "emit.error.backup_not_regular", path=str(where))) from None
