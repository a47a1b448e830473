"""Where the launcher card's wizard notebook lives, as a path JupyterLab can open.

The card opens the same explained notebook ``ari-jupyter lab`` opens, in the same folder: the
workspace (the site's template inside an allocation, the demo workspace outside one), else the
per-user folder. JupyterLab can only open files below its root and, by default, not below a
hidden folder; when neither folder is reachable that way, the folder the file browser shows is
used instead, unless it is inside a git work tree (the notebook would be litter there), in which
case the card refuses and says how to get the notebook. The notebook is copied when absent and
never overwritten once edited, so a user's edits survive and a second click opens the same
file; an unedited one in another language, or from an older version, is replaced by this
version's in the user's language. Nothing
here imports ipywidgets or jupyter_server.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Mapping

from .cli.lab import (NOTEBOOK_NAME, default_directory, demo_site_for, notebook_as_placed,
                      packaged_notebook, replace_atomically, should_refresh, user_data_dir)


class PlacementRefused(Exception):
    """No folder JupyterLab can open holds the notebook without littering a git work tree."""


@dataclass(frozen=True)
class Placement:
    path: str  # the notebook's path relative to the server root, "/"-separated
    folder: str  # "workspace", "user" or "browsed"
    created: bool


def candidate_folders(env: Mapping[str, str], config=None) -> list[tuple[str, Path]]:
    """The folders ``ari-jupyter lab`` would use, in its order of preference."""
    from .allocation import Allocation
    from .config import wizard_config

    config = config or wizard_config()
    inside = Allocation.from_env(env).inside_allocation
    site = demo_site_for(None, env, config.demo_site)
    workspace = default_directory(inside, site, env, config)
    return [("workspace", Path(os.path.abspath(os.path.expanduser(str(workspace))))),
            ("user", user_data_dir(env))]


def api_path(folder: Path, root: Path, allow_hidden: bool = False) -> str | None:
    """``folder`` as a contents path below ``root``, or None when JupyterLab cannot open it."""
    try:
        relative = folder.resolve().relative_to(root.resolve())
    except ValueError:
        return None
    parts = relative.parts
    if not allow_hidden and any(part.startswith(".") for part in parts):
        return None
    return "/".join(parts)


def browsed_folder(root: Path, cwd: str) -> Path:
    """The file browser's folder (a contents path) as a directory below ``root``."""
    pure = PurePosixPath(cwd.strip("/"))
    if pure.is_absolute() or ".." in pure.parts or "\\" in cwd or "\0" in cwd:
        raise PlacementRefused(f"not a folder of this JupyterLab: {cwd!r}")
    folder = (root / pure).resolve()
    if api_path(folder, root, allow_hidden=True) is None or not folder.is_dir():
        raise PlacementRefused(f"not a folder of this JupyterLab: {cwd!r}")
    return folder


def git_work_tree(folder: Path) -> Path | None:
    """The top of the git work tree holding ``folder``, if any."""
    for parent in (folder, *folder.parents):
        if (parent / ".git").exists():
            return parent
    return None


def place_in(source: Path, target: Path, lang: str, *, refresh: bool = True) -> bool:
    """Copy ``source`` to ``target`` unless a notebook is there; an unedited placed notebook in
    another language or an older version's is replaced by ``lang``'s (unless ``refresh`` is
    False: the lab has it open, and a file changed under an open tab makes JupyterLab ask to
    overwrite or revert it). True when the file was (re)written."""
    if refresh and target.is_file() and should_refresh(target, lang):
        replace_atomically(source, target)
        return True
    return copy_exclusive(source, target)


def copy_exclusive(source: Path, target: Path) -> bool:
    """Copy ``source`` to ``target`` atomically unless ``target`` exists; True when copied."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        return False
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(notebook_as_placed(source))
        os.link(temp, target)  # fails if another request placed it meanwhile
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(temp)


def place_wizard_notebook(root: Path, cwd: str, env: Mapping[str, str], *,
                          allow_hidden: bool = False, config=None,
                          source: Path | None = None, lang: str = "en",
                          open_paths: frozenset[str] = frozenset()) -> Placement:
    """Put the wizard notebook where the card opens it and say where (see the module doc);
    a notebook placed now explains itself in ``lang``. A notebook at one of ``open_paths``
    (contents paths the lab has open) is left as it is."""
    root = Path(root).resolve()
    source = source or packaged_notebook(lang)
    for kind, folder in candidate_folders(env, config):
        relative = api_path(folder, root, allow_hidden)
        if relative is None:
            continue
        path = "/".join(p for p in (relative, NOTEBOOK_NAME) if p)
        try:
            created = place_in(source, folder / NOTEBOOK_NAME, lang,
                               refresh=path not in open_paths)
        except OSError:
            continue  # an uncreatable workspace: try the next folder, as ``ari-jupyter lab``
        return Placement(path=path, folder=kind, created=created)
    folder = browsed_folder(root, cwd)
    tree = git_work_tree(folder)
    existing = (folder / NOTEBOOK_NAME).is_file()
    if tree is not None and not existing:
        reachable = ", ".join(str(f) for _, f in candidate_folders(env, config))
        raise PlacementRefused(
            f"{folder} is inside the git work tree {tree}, and neither {reachable} is below "
            f"this JupyterLab's root {root}; start JupyterLab with `ari-jupyter lab`, or browse "
            "to a folder outside the work tree and click the card again")
    relative = api_path(folder, root, allow_hidden=True)
    path = "/".join(p for p in (relative, NOTEBOOK_NAME) if p)
    created = place_in(source, folder / NOTEBOOK_NAME, lang, refresh=path not in open_paths)
    return Placement(path=path, folder="browsed", created=created)
