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

from ..i18n import LANGUAGES
from ..base.files import atomic_write
from .config import wizard_config
from ..slurm.allocation import Allocation

DEFAULT_DEMO_SITE = "rccs-cloud"


NOTEBOOK_NAME = "ari_multinode_wizard.ipynb"


def packaged_notebook(lang: str = "en") -> Path:
    """The wizard notebook with its explanations in ``lang`` (English for another language);
    it is placed as ``NOTEBOOK_NAME`` whatever its language."""
    folder = Path(__file__).resolve().parent.parent / "notebooks"
    translated = folder / NOTEBOOK_NAME.replace(".ipynb", f".{lang}.ipynb")
    return translated if lang != "en" and translated.is_file() else folder / NOTEBOOK_NAME


def _read_notebook(path: Path) -> dict | None:
    import json

    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        return notebook if isinstance(notebook, dict) else None
    except (OSError, ValueError):
        return None


def _sources_of(notebook: dict | None) -> list[tuple[str, str]] | None:
    """Each cell's type and text (outputs, counts and metadata left out; a source saved as a
    list of lines, as JupyterLab saves it, reads as the same text); None: not a notebook."""
    try:
        return [(c["cell_type"], "".join(c["source"]) if isinstance(c["source"], list) else c["source"])
                for c in notebook["cells"]]
    except (KeyError, TypeError):
        return None


def _cell_sources(path: Path) -> list[tuple[str, str]] | None:
    return _sources_of(_read_notebook(path))


def cells_fingerprint(sources: list[tuple[str, str]]) -> str:
    """What a placed notebook records of its cells (``metadata.ari_jupyter.placed_cells``): a
    later look tells unedited (same fingerprint) from edited, whichever version placed it."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(sources, ensure_ascii=False).encode("utf-8")).hexdigest()


def should_refresh(placed: Path, lang: str) -> bool:
    """Whether the notebook at ``placed`` is one this package placed, unedited, that differs
    from ``lang``'s packaged one (another language, or an older version's text): then it is
    replaced by ``lang``'s (only its outputs are lost, and running the cell makes them again).
    A notebook the user edited is never replaced. One placed before notebooks recorded their
    fingerprint is recognised only as a packaged notebook in another language."""
    wanted = packaged_notebook(lang)
    notebook = _read_notebook(placed)
    sources = _sources_of(notebook)
    if sources is None or sources == _cell_sources(wanted):
        return False
    recorded = ((notebook.get("metadata") or {}).get("ari_jupyter") or {}).get("placed_cells")
    if isinstance(recorded, str):
        return recorded == cells_fingerprint(sources)
    return any(sources == _cell_sources(packaged_notebook(other)) for other in LANGUAGES
               if packaged_notebook(other) != wanted)


NOTEBOOK_MODE = 0o644


def replace_atomically(source: Path, target: Path) -> None:
    """``target`` becomes a copy of ``source`` in one step (a reader never sees half a file)."""

    atomic_write(target, notebook_as_placed(source), NOTEBOOK_MODE)


def notebook_as_placed(source: Path) -> bytes:
    """The packaged notebook as it is placed: with the fingerprint of its cells (so a later
    version can tell it unedited, ``should_refresh``) and the ``language_info`` its kernel will
    report (ipykernel's, for this Python): JupyterLab writes the kernel's into a notebook whose
    own differs, and a notebook just opened would show unsaved changes nobody made."""
    import json

    data = source.read_bytes()
    notebook = json.loads(data)
    metadata = notebook.setdefault("metadata", {})
    metadata["ari_jupyter"] = {"placed_cells": cells_fingerprint(_sources_of(notebook))}
    try:
        from ipykernel.ipkernel import IPythonKernel

        metadata["language_info"] = dict(IPythonKernel.language_info)
    except (ImportError, AttributeError):
        pass
    return (json.dumps(notebook, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def user_data_dir(env: Mapping[str, str]) -> Path:
    """The per-user folder used when the workspace cannot be created (XDG data home)."""
    base = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME") or str(Path.home()),
                                                    ".local", "share")
    return Path(base) / "ari-jupyter"


def demo_site_for(demo_site: str | None, env: Mapping[str, str], configured: str) -> str:
    return demo_site or env.get("ARI_JUPYTER_DEMO_SITE") or configured or DEFAULT_DEMO_SITE


def default_directory(inside: bool, site: str, env: Mapping[str, str], config=None) -> Path:
    """The workspace the wizard writes to: the site's template inside an allocation, the local
    demo workspace of ``site`` outside one."""

    config = config or wizard_config()
    if inside:
        return Path(config.workspace_for(env))
    name = Path(site).stem if site.endswith(".json") else site
    return Path(config.demo_workspace_for(name, env))


class PlacementRefused(Exception):
    """No folder JupyterLab can open holds the notebook without littering a git work tree."""


@dataclass(frozen=True)
class Placement:
    path: str  # the notebook's path relative to the server root, "/"-separated
    folder: str  # "workspace", "user" or "browsed"
    created: bool


def candidate_folders(env: Mapping[str, str], config=None) -> list[tuple[str, Path]]:
    """The folders ``ari-jupyter lab`` would use, in its order of preference."""

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
