"""A learner's own copies of the lessons: placed on first open, kept once edited, reset on ask.

The lessons are package data (``lessons.lessons_folder``). ``ari-jupyter lab --lessons`` opens
a per-user copy of them, in ``$XDG_DATA_HOME/ari-jupyter/lessons/<student|teacher>/<lang>``
(``~/.local/share/...`` without XDG_DATA_HOME): the student version (no solutions,
``assignment.student_version``) or, with ``--teacher``, the teacher's (the source with its
solutions). Never a folder inside a git work tree: a class's answers must not end up in a
clone, and the next class must not get them.

A copy is written when absent. One already there is replaced only when nobody edited it (the
fingerprint of its cells, recorded when it was placed, still matches) and this version's
lesson differs (a newer ari-jupyter); an edited one is kept as it is.
``ari-jupyter lessons reset`` puts the packaged lesson back over an edited one, after moving
the edited one to a hidden ``.reset/`` folder beside it (nothing a learner wrote is lost).

``ari-jupyter lessons export DIR`` (``export_lessons``) writes every lesson, in every language,
to a hand-out folder, often one the class can write: it writes only into folders the user owns,
each opened without following a link (a student's ``ja -> <the teacher's own copies>`` is
refused, never written through), and the teacher's version (the solutions) never into a git
work tree, as the copies.
"""
from __future__ import annotations

import hashlib
import json
import os
import pwd
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from ..base.files import Target, write_all
from ..i18n import LANGUAGES
from ..base.bounded_read import read_json_bounded
from . import assignment
from .lessons import packaged_lessons

VERSIONS = ("student", "teacher")
RESET_FOLDER = ".reset"


class LessonsRefused(Exception):
    """The lessons' folder is inside a git work tree (``folder``, ``tree``)."""

    def __init__(self, folder: Path, tree: Path) -> None:
        super().__init__(f"{folder} is inside the git work tree {tree}")
        self.folder, self.tree = folder, tree


class ExportRefused(Exception):
    """A folder the export would write into is a link (``why`` "link"), not a folder ("not_a_folder")
    or another user's ("owner", ``owner`` names him)."""

    def __init__(self, folder: Path, why: str, owner: str = "") -> None:
        super().__init__(f"{folder}: {why} {owner}".strip())
        self.folder, self.why, self.owner = folder, why, owner


@dataclass
class PlacedLessons:
    folder: Path
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    """Copies left as they are: edited by the learner, or the same as this version's."""


def lessons_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME") or str(Path.home()),
                                                    ".local", "share")
    return Path(base) / "ari-jupyter" / "lessons"


def copies_folder(lang: str, teacher: bool = False, env: Mapping[str, str] | None = None) -> Path:
    return lessons_home(env) / ("teacher" if teacher else "student") / lang


def git_work_tree(folder: Path) -> Path | None:
    """The top of the git work tree holding ``folder`` (or the nearest existing parent)."""
    folder = Path(os.path.abspath(folder))
    for parent in (folder, *folder.parents):
        if (parent / ".git").exists():
            return parent
    return None


def fingerprint(notebook: dict) -> str:
    """What a placed lesson records of its cells (type and text; outputs and metadata left
    out), so a later look tells an unedited copy from an edited one."""
    cells = [(c.get("cell_type"), assignment.source_of(c)) for c in notebook.get("cells", [])]
    return hashlib.sha256(json.dumps(cells, ensure_ascii=False).encode("utf-8")).hexdigest()


def as_placed(source: Path, teacher: bool) -> dict:
    """The packaged lesson at ``source`` as a learner's copy: its version (student or
    teacher), with its fingerprint, and the ``language_info`` its kernel reports (so a lesson
    just opened shows no unsaved change)."""
    notebook = assignment.version(json.loads(source.read_text(encoding="utf-8")), teacher)
    metadata = notebook.setdefault("metadata", {})
    metadata["ari_jupyter"] = {"placed_cells": fingerprint(notebook),
                               "lesson_version": "teacher" if teacher else "student"}
    try:
        from ipykernel.ipkernel import IPythonKernel

        metadata["language_info"] = dict(IPythonKernel.language_info)
    except (ImportError, AttributeError):
        pass
    return notebook


def _dump(notebook: dict) -> bytes:
    return (json.dumps(notebook, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


NOTEBOOK_CAP = 64 * 1024 * 1024
"""A learner's copy larger than this (or /dev/zero behind its name) is not read: it is kept."""


def _read(path: Path) -> dict | None:
    try:
        notebook = read_json_bounded(path, NOTEBOOK_CAP)
    except (OSError, ValueError):  # also a FIFO, a device, or a file too large or too deep
        return None
    return notebook if isinstance(notebook, dict) else None


def is_edited(path: Path) -> bool:
    """Whether the copy at ``path`` differs from what was placed there (or cannot be read as
    a placed lesson: then it is the learner's, and kept)."""
    notebook = _read(path)
    if notebook is None:
        return True
    recorded = ((notebook.get("metadata") or {}).get("ari_jupyter") or {}).get("placed_cells")
    return recorded != fingerprint(notebook)


def _write(path: Path, data: bytes, *, exclusive: bool) -> bool:
    """Write ``data`` to ``path`` in one step; with ``exclusive`` only if ``path`` is absent
    (two labs starting at once place a lesson once). True when written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(temp, 0o644)
        if exclusive:
            try:
                os.link(temp, path)
            except FileExistsError:
                return False
        else:
            os.replace(temp, path)
            temp = ""
        return True
    finally:
        if temp:
            os.unlink(temp)


def _refuse_git(folder: Path) -> None:
    tree = git_work_tree(folder)
    if tree is not None:
        raise LessonsRefused(folder, tree)


def place_lessons(lang: str, teacher: bool = False, env: Mapping[str, str] | None = None,
                  folder: Path | None = None) -> PlacedLessons:
    """Put the learner's copies of the lessons in ``lang`` in place (see the module doc)."""
    folder = Path(os.path.abspath(folder or copies_folder(lang, teacher, env)))
    _refuse_git(folder)
    placed = PlacedLessons(folder)
    for source in packaged_lessons(lang):
        target = folder / source.name
        wanted = as_placed(source, teacher)
        if not target.exists():
            if _write(target, _dump(wanted), exclusive=True):
                placed.written.append(target)
            else:
                placed.kept.append(target)
            continue
        current = _read(target)
        same = current is not None and fingerprint(current) == fingerprint(wanted)
        if same or is_edited(target):
            placed.kept.append(target)
        else:  # an older version's lesson nobody touched
            _write(target, _dump(wanted), exclusive=False)
            placed.written.append(target)
    return placed


def reset_lessons(lang: str, teacher: bool = False, env: Mapping[str, str] | None = None,
                  names: Iterable[str] = (), folder: Path | None = None) -> list[tuple[Path, Path | None]]:
    """Put the packaged lessons (all, or those named: ``01``, ``01_allocation_and_hostlists``
    or the file name) back in the learner's folder. Returns (lesson, where the replaced copy
    was kept or None); an unknown name raises KeyError."""
    folder = Path(os.path.abspath(folder or copies_folder(lang, teacher, env)))
    _refuse_git(folder)
    sources = packaged_lessons(lang)
    chosen = list(sources)
    if names:
        chosen = []
        for name in names:
            match = [s for s in sources if s.name == name or s.stem == name
                     or s.name.split("_", 1)[0] == name]
            if not match:
                raise KeyError(name)
            chosen.extend(m for m in match if m not in chosen)
    stamp = time.strftime("%Y%m%d%H%M%S")
    done: list[tuple[Path, Path | None]] = []
    for source in chosen:
        target = folder / source.name
        kept = None
        if target.exists() and is_edited(target):
            kept = folder / RESET_FOLDER / f"{source.stem}.{stamp}.ipynb"
            kept.parent.mkdir(parents=True, exist_ok=True)
            os.replace(target, kept)
        _write(target, _dump(as_placed(source, teacher)), exclusive=False)
        done.append((target, kept))
    return done


_EXPORT_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _own_folder(parent_fd: int | None, folder: Path) -> int:
    """The descriptor of ``folder`` (made 0755 when missing), opened without following a link
    (relative to ``parent_fd`` when given): refused unless it is a folder this user owns."""
    name = folder.name if parent_fd is not None else str(folder)
    if parent_fd is None:
        folder.parent.mkdir(parents=True, exist_ok=True)  # the path above, as the user gave it
    try:
        os.mkdir(name, 0o755, dir_fd=parent_fd)
    except FileExistsError:
        pass
    try:
        fd = os.open(name, _EXPORT_DIR_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        try:
            is_link = stat.S_ISLNK(os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode)
        except OSError:
            raise exc from None
        raise ExportRefused(folder, "link" if is_link else "not_a_folder") from None
    info = os.fstat(fd)
    if info.st_uid != os.geteuid():
        os.close(fd)
        try:
            owner = pwd.getpwuid(info.st_uid).pw_name
        except (KeyError, OverflowError):
            owner = str(info.st_uid)
        raise ExportRefused(folder, "owner", owner)
    return fd


def export_lessons(directory: Path, teacher: bool = False) -> int:
    """Write every lesson, in every language, to ``directory`` (English) and its ``ja``/``zh``
    folders; returns how many. Raises ``ExportRefused`` (see the module doc) or, for the
    teacher's version in a git work tree, ``LessonsRefused``; nothing is written then."""
    directory = Path(os.path.abspath(directory))
    if teacher:
        _refuse_git(directory)
    root = _own_folder(None, directory)
    fds = [root]
    try:
        folders = {"en": root}
        for lang in LANGUAGES:
            if lang != "en":
                folders[lang] = _own_folder(root, directory / lang)
                fds.append(folders[lang])
        items = [(Target(folders[lang], source.name, directory / source.name if lang == "en"
                         else directory / lang / source.name),
                  _dump(as_placed(source, teacher)), 0o644)
                 for lang in LANGUAGES for source in packaged_lessons(lang)]
        write_all(items)
        return len(items)
    finally:
        for fd in fds:
            os.close(fd)
