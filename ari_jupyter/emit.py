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
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import importlib.util
import json
import os
import secrets
import shutil
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Mapping

from .ari import render
from .i18n import message, text
from .model import WizardState

_NO_ARI = "ARI is not importable in this Python and ARI_ROOT is not set"

DIR_MODE = 0o750
FILE_MODE = 0o640
ENV_MODE = 0o600
SCRIPT_MODE = 0o750

CHECKPOINT_FILES = ("experiment.md", ".env", "workflow.yaml", "launch_config.json")
TMP_MARKER = ".tmp-ari-jupyter-"
"""Part of every temporary file name, so a later run can remove what a killed writer left."""


class EmitError(Exception):
    """Nothing (or nothing new) was written; the message says why and what to do."""


class EmitBlocked(EmitError):
    """The state has blocking problems."""

    def __init__(self, problems: list):
        self.problems = list(problems)
        lines = [f"- {p.field}: {p.message}" + (f" ({p.fix})" if p.fix else "") for p in self.problems]
        super().__init__("cannot write the checkpoint:\n" + "\n".join(lines))


class CheckpointExists(EmitError):
    """The checkpoint (or its hand-off script) exists and ``force`` was not given."""


class CheckpointLocked(EmitError):
    """Another writer holds the lock for this run id."""


class NodeLocalWorkspace(EmitError):
    """The shared-filesystem probe says other nodes cannot see the workspace."""


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
    from .ari.naming import make_run_id

    now = now or datetime.now().astimezone()
    notes: list[str] = []

    blocking = [p for p in state.blocking_problems() if not _is_shared_fs_problem(p)]
    if blocking:
        raise EmitBlocked(blocking)
    if not state.run_id:
        state.run_id = make_run_id(state.title, now)

    workspace = Path(state.workspace)
    checkpoint = workspace / "checkpoints" / state.run_id
    launch_dir = workspace / "launch"
    script = launch_dir / f"{state.run_id}.sh"

    verdict = _shared_fs_verdict(state, str(checkpoint), host)
    if verdict is None:
        notes.append("shared filesystem not checked: the probe could not run here")
    elif verdict.status == "fail":
        if not force:
            raise NodeLocalWorkspace(
                f"refusing a node-local workspace: {verdict.summary}"
                + (f"\nfix: {verdict.fix}" if verdict.fix else "")
                + "\n(force writes it anyway)")
        notes.append(text("emit.note.forced", summary=_summary(verdict)))
    elif verdict.status in ("warn", "unknown"):
        notes.append(text("emit.note.shared_fs", summary=_summary(verdict)))

    # Render everything before touching disk: a value that cannot be written stops here.
    contents = _render_all(state, str(checkpoint), str(script), ari_workflow, notes)

    try:
        files, written, backup_dir = _write(state, contents, checkpoint, launch_dir, script,
                                            force, now, notes)
    except OSError as exc:
        raise EmitError(f"cannot write the checkpoint: {exc}") from None
    return EmitResult(checkpoint_dir=str(checkpoint), files=tuple(files),
                      handoff_command=render.handoff_command(str(script)),
                      handoff_script=str(script), notes=tuple(notes), backup_dir=backup_dir,
                      written=written)


def _write(state: WizardState, contents: dict[str, tuple[bytes, int]], checkpoint: Path,
           launch_dir: Path, script: Path, force: bool, now: datetime,
           notes: list[str]) -> tuple[list[str], dict[str, str], str]:
    """Under the lock: refuse or back up an existing checkpoint, then replace every file."""
    _make_dirs(checkpoint)
    _make_dirs(launch_dir)
    with _exclusive_lock(launch_dir / f".{state.run_id}.lock", state.run_id):
        _remove_stale_temps(checkpoint)
        _remove_stale_temps(launch_dir, of=script.name)  # launch/ is shared with other run ids
        existing = [checkpoint / name for name in CHECKPOINT_FILES if (checkpoint / name).exists()]
        if script.exists():
            existing.append(script)
        backup_dir = ""
        if existing:
            if not force:
                raise CheckpointExists(
                    f"checkpoint {checkpoint} already exists ({', '.join(p.name for p in existing)}); "
                    "nothing was changed. Choose another title/run id, or force an overwrite "
                    "(the current files are backed up first).")
            backup_dir = str(_backup(existing, launch_dir / "backup" / state.run_id, now))
            notes.append(f"previous files backed up to {backup_dir}")
            stale = checkpoint / "workflow.yaml"
            if stale.exists() and "workflow.yaml" not in contents:
                stale.unlink()
        log_dir = render.slurm_log_dir(state)
        if log_dir:
            _make_dirs(Path(log_dir))

        written: dict[str, str] = {}
        items: list[tuple[Path, bytes, int]] = []
        for name, (data, mode) in contents.items():
            target = script if name == "handoff" else checkpoint / name
            items.append((target, data, mode))
            written[target.name] = hashlib.sha256(data).hexdigest()
        # launch_config.json last: it names the hashes of the checkpoint files written before it.
        config = render.render_launch_config(
            state, files={k: v for k, v in written.items() if k != script.name},
            written_at=now.isoformat(timespec="seconds")).encode("utf-8")
        items.append((checkpoint / "launch_config.json", config, FILE_MODE))
        written["launch_config.json"] = hashlib.sha256(config).hexdigest()
        write_all(items)
        files = [str(checkpoint / name) for name in CHECKPOINT_FILES if name in written]
        files.append(str(script))

    return files, written, backup_dir


def load_checkpoint(checkpoint_dir: str | Path) -> WizardState:
    """The wizard state stored in ``<checkpoint>/launch_config.json`` by ``emit_checkpoint``."""
    path = Path(checkpoint_dir) / "launch_config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EmitError(f"{path} does not exist: not a checkpoint written by ari-jupyter") from None
    except (OSError, ValueError) as exc:
        raise EmitError(f"cannot read {path}: {exc}") from None
    section = data.get(render.LAUNCH_CONFIG_KEY) if isinstance(data, dict) else None
    if not isinstance(section, dict) or not isinstance(section.get("state"), dict):
        raise EmitError(f"{path} has no '{render.LAUNCH_CONFIG_KEY}' section: "
                        "it was not written by ari-jupyter")
    return WizardState.from_json(section["state"])


def find_ari_workflow(env: Mapping[str, str] | None = None) -> tuple[Path | None, str]:
    """ARI's packaged ``workflow.yaml`` and how it was found, or (None, why not).

    Looks where ``ari run`` itself does (``ari-core/config/workflow.yaml`` next to the ``ari``
    package) when ``ari`` is importable here, then under ``$ARI_ROOT``.
    """
    env = os.environ if env is None else env
    looked: list[str] = []
    try:
        spec = importlib.util.find_spec("ari")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        package = Path(spec.origin).resolve().parent
        for candidate in (package.parent / "config" / "workflow.yaml", package / "config" / "workflow.yaml"):
            if candidate.is_file():
                return candidate, f"ARI package at {package}"
            looked.append(str(candidate))
    root = env.get("ARI_ROOT", "").strip()
    if root:
        candidate = Path(root) / "ari-core" / "config" / "workflow.yaml"
        if candidate.is_file():
            return candidate, f"ARI_ROOT={root}"
        looked.append(str(candidate))
    if looked:
        return None, "ARI's workflow.yaml not found (looked at " + ", ".join(looked) + ")"
    return None, _NO_ARI


def write_all(items: Iterable[tuple[Path, bytes, int]]) -> None:
    """Replace every ``(path, data, mode)`` so that nothing changes unless everything fits.

    All temp files are written and fsynced first; only then are they renamed, in order (a
    rename needs no space). A full or read-only disk therefore fails before any target is
    touched, and the temps are removed: the previous files, or none, stay as they were.
    """
    staged: list[tuple[Path, Path]] = []
    try:
        for path, data, mode in items:
            staged.append((_stage(path, data, mode), path))
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, path in staged:
        os.replace(tmp, path)
    for directory in dict.fromkeys(path.parent for _, path in staged):
        _fsync_dir(directory)


def atomic_write(path: Path, data: bytes, mode: int) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new file, never a mix."""
    write_all([(path, data, mode)])


def _stage(path: Path, data: bytes, mode: int) -> Path:
    """Write ``data`` to a fresh temp file beside ``path`` (same filesystem, so the later
    rename is atomic), with ``mode`` whatever the umask, fsynced; return the temp's path."""
    tmp = path.parent / f".{path.name}{TMP_MARKER}{os.getpid()}-{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


# -- steps ---------------------------------------------------------------------------------

def _render_all(state: WizardState, checkpoint: str, script: str,
                ari_workflow: str | Path | None, notes: list[str]) -> dict[str, tuple[bytes, int]]:
    try:
        contents: dict[str, tuple[bytes, int]] = {
            "experiment.md": (render.render_experiment_md(state).encode("utf-8"), FILE_MODE),
            ".env": (render.render_env(state).encode("utf-8"), ENV_MODE),
        }
        workflow = _render_workflow(state, ari_workflow, notes)
        if workflow is not None:
            contents["workflow.yaml"] = (workflow.encode("utf-8"), FILE_MODE)
        contents["handoff"] = (render.render_handoff_script(state, checkpoint, script).encode("utf-8"),
                               SCRIPT_MODE)
    except render.RenderError as exc:
        raise EmitError(f"cannot write the checkpoint: {exc}") from None
    return contents


def _render_workflow(state: WizardState, ari_workflow: str | Path | None,
                     notes: list[str]) -> str | None:
    if ari_workflow is not None:
        source, how = Path(ari_workflow), "given"
    else:
        source, how = find_ari_workflow()
    if source is None:
        why = message("emit.why.no_ari") if how == _NO_ARI else how
        notes.append(text("emit.note.no_workflow", why=why))
        return None
    try:
        text_ = render.render_workflow_yaml(source.read_text(encoding="utf-8"), state)
    except ImportError:
        notes.append(text("emit.note.no_workflow", why=message("emit.why.no_yaml")))
        return None
    except Exception as exc:  # unreadable file, yaml.YAMLError, RenderError: say so, write the rest
        notes.append(text("emit.note.no_workflow", why=f"{source}: {exc}"))
        return None
    inputs = render.reproduce_inputs(state)
    shown = ", ".join(f"{k}={v}" for k, v in inputs.items())
    notes.append(text("emit.note.workflow", source=str(source), how=how, inputs=shown))
    return text_


def _shared_fs_verdict(state: WizardState, checkpoint: str, host: Any):
    """The shared_fs verdict for this workspace: the state's own, else a fresh probe run."""
    from .model import _probe_is_for

    result = state.probe("shared_fs")
    if result is not None and result.status != "unknown" and _probe_is_for(result, state.workspace):
        return result
    try:
        from .allocation import Allocation
        from .host import LocalHost
        from .probes import ProbeContext, run_probes_sync
    except ImportError:
        return None
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


def _is_shared_fs_problem(problem: Any) -> bool:
    return problem.field == "workspace" and problem.rule == "shared_fs"


def _make_dirs(path: Path) -> None:
    """``mkdir -p`` giving every directory it creates mode 0750 (whatever the umask)."""
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
        raise EmitError(f"{path} exists and is not a directory")


class _exclusive_lock:
    """``flock`` on a file outside the checkpoint root; a second writer fails at once."""

    def __init__(self, path: Path, run_id: str):
        self.path = path
        self.run_id = run_id
        self.fd = -1

    def __enter__(self) -> "_exclusive_lock":
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(self.fd, 64, 0).decode("ascii", "replace").strip()
            os.close(self.fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise CheckpointLocked(
                    f"checkpoint {self.run_id} is being written by another process"
                    + (f" (pid {holder})" if holder else "")
                    + f"; lock {self.path}. Wait for it to finish, then try again.") from None
            raise
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, str(os.getpid()).encode(), 0)
        return self

    def __exit__(self, *exc: Any) -> None:
        os.ftruncate(self.fd, 0)
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def _remove_stale_temps(directory: Path, of: str | None = None) -> None:
    """Temp files a killed writer left. Only those of files this run writes: the lock covers one
    run id, and a writer of another run id may be about to rename its temp in a shared
    directory. ``of`` limits the sweep to the temps of that one file name."""
    if not directory.is_dir():
        return
    prefix = f".{of}{TMP_MARKER}" if of else "."
    for entry in directory.iterdir():
        if entry.name.startswith(prefix) and TMP_MARKER in entry.name and entry.is_file():
            entry.unlink(missing_ok=True)


def _backup(paths: Iterable[Path], root: Path, now: datetime) -> Path:
    """Copy the current files (modes kept) to ``root/<timestamp>/`` before they are replaced."""
    _make_dirs(root)
    target = root / now.strftime("%Y%m%d%H%M%S")
    suffix = 1
    while target.exists():
        target = root / f"{now:%Y%m%d%H%M%S}-{suffix}"
        suffix += 1
    _make_dirs(target)
    for path in paths:
        shutil.copy2(path, target / path.name)
    for entry in target.iterdir():
        with open(entry, "rb") as handle:
            os.fsync(handle.fileno())
    _fsync_dir(target)
    return target


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
