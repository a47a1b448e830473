"""Run ids and workspace paths that ARI's CLI, dashboard and path resolver all accept.

ARI adopts the checkpoint directory's basename as ``run_id`` when ``ARI_CHECKPOINT_DIR`` is
exported; its dashboard lists only names matching ``^[0-9]{8,14}_`` and strips a leading
``^\\d{14}_`` for display (spec R10). ARI's slug rule: every character outside
``[A-Za-z0-9_-]`` becomes ``_``, ``_`` is trimmed and runs collapsed, the result is cut (80
in the CLI, 40 in the GUI's ``PathManager.slugify``). A title with no ASCII letters or digits
(e.g. only CJK) slugs to nothing; ARI then asks an LLM for an English title, which is not
reproducible, so here it falls back to ``experiment_<8 hex of sha256(title)>``.

Workspace root: ARI walks up from the checkpoint and takes the parent of the *outermost*
directory named ``checkpoints`` as the root (``_infer_workspace_root``). A workspace that
itself has an ancestor named ``checkpoints`` therefore sends ``experiments/`` somewhere else.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import datetime
from pathlib import Path

SLUG_MAX = 40
"""The GUI's limit (the stricter of ARI's two), so both conventions hold."""

RUN_ID_RE = re.compile(r"^(?P<stamp>\d{14})_(?P<slug>[A-Za-z0-9_-]{1,80})$")
DASHBOARD_RE = re.compile(r"^[0-9]{8,14}_")

WORKSPACE_FOLDERS = ("checkpoints", "launch", "slurm_logs", "experiments")
"""Every folder a run writes or reads at the workspace root: ``checkpoints/`` and ``launch/``
(the checkpoint and the hand-off script), ``slurm_logs/`` (``SLURM_LOG_DIR``: slurmstepd opens a
BFTS job's ``slurm_job_<id>.out`` as the user, truncating it) and ``experiments/`` (ARI's node
work dirs, ``experiments/<run_id>/<node_id>``, where each job runs its ``run_job.sh``). ARI's
resolver also names ``staging/``, ``paper_registry/`` and ``runs/`` there, which ``ari run``
neither writes nor reads (its dashboard's uploads and PaperBench; the bucketed layout is
read by no caller at ARI e41c806)."""


class WorkspaceError(ValueError):
    """A workspace (or checkpoint) path ARI would misplace files for."""


def slugify(title: str, max_len: int = SLUG_MAX) -> str:
    """ARI's slug character rule; ``""`` when nothing ASCII survives."""
    # Compatibility-decompose first so "Café" gives "Cafe" and full-width "ＧＰＵ" gives "GPU"
    # instead of underscores; ARI's rule then keeps exactly [A-Za-z0-9_-].
    text = unicodedata.normalize("NFKD", title)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    slug = re.sub(r"[^A-Za-z0-9_-]", "_", text)
    slug = re.sub(r"_{2,}", "_", slug).strip("_")
    return slug[:max_len].strip("_-")


def _first_line(title: str) -> str:
    return next((ln.strip().lstrip("#").strip() for ln in title.splitlines()
                 if ln.strip().lstrip("#").strip()), "")


def slug_is_hashed(title: str) -> bool:
    """Whether nothing of ``title`` survives ARI's slug rule, so the run id gets the hash."""
    first = _first_line(title)
    return bool(first) and not slugify(first)


def slug_names_nothing(title: str) -> bool:
    """Whether ARI's slug rule drops letters of ``title`` that have no ASCII form and keeps no
    word that names the run ("ステンシル計算の2ノード" -> "2"), while something survives (nothing
    surviving is ``slug_is_hashed``). A kept word of three ASCII letters or more ("… stencil",
    "GPU…") names it: a title that follows the hint to add one is not told again."""
    first = _first_line(title)
    slug = slugify(first)
    if not slug:
        return False
    dropped = any(unicodedata.category(ch).startswith("L") and not slugify(ch) for ch in first)
    return dropped and not re.search(r"[A-Za-z]{3,}", slug)


def slug_for_title(title: str, max_len: int = SLUG_MAX) -> str:
    """A non-empty slug: ARI's rule, lower-cased, else a deterministic hash fallback."""
    first = _first_line(title)
    slug = slugify(first, max_len).lower()
    if slug:
        return slug
    if not first:
        return "experiment"
    return "experiment_" + hashlib.sha256(first.encode("utf-8")).hexdigest()[:8]


SHORT_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,79}")
"""A run id's name alone (``heat-scaling``): the time stamp is added at Write. A title in
Chinese or Japanese leaves nothing for ARI's slug rule, so this is how such a run gets a name."""


def make_run_id(title: str, now: datetime, short_name: str = "") -> str:
    """``YYYYmmddHHMMSS_<slug>`` for ``now`` (pass the clock in; tests fix it), the slug being
    ``short_name`` when given, else the title's."""
    return f"{now:%Y%m%d%H%M%S}_{short_name or slug_for_title(title)}"


def is_short_name(run_id: str) -> bool:
    """``run_id`` is a name without its time stamp (``heat-scaling``), not a whole run id."""
    return bool(SHORT_NAME_RE.fullmatch(run_id)) and not RUN_ID_RE.fullmatch(run_id)


def check_run_id(run_id: str) -> str:
    """Return ``run_id`` when ARI's CLI and dashboard both accept it; raise otherwise."""
    if not RUN_ID_RE.match(run_id):
        raise WorkspaceError(
            f"run id {run_id!r} is not YYYYmmddHHMMSS_<slug> with a slug of letters, digits, "
            "'_' or '-': ARI's dashboard would not list it or its CLI would show a wrong name")
    return run_id


def infer_workspace_root(checkpoint_dir: str | Path) -> Path:
    """ARI's ``_infer_workspace_root``: parent of the outermost ``checkpoints`` ancestor."""
    path = Path(checkpoint_dir)
    root = None
    for ancestor in path.parents:
        if ancestor.name == "checkpoints" and ancestor.parent.name != "checkpoints":
            root = ancestor.parent
    return root if root is not None else path.parent


def checkpoints_ancestors(workspace: Path) -> list[Path]:
    """The workspace itself or its ancestors named ``checkpoints``, outermost first."""
    found = [p for p in (workspace, *workspace.parents) if p.name == "checkpoints"]
    return list(reversed(found))


def check_workspace(path: str | Path, *, resolve: bool = True) -> Path:
    """Return the (resolved) workspace; refuse one ARI would not treat as the workspace root.

    ARI resolves symlinks, so the check runs on the resolved path: a symlink named anything
    that points into a ``checkpoints`` tree is refused too.
    """
    raw = Path(path).expanduser()
    if not raw.is_absolute() and not resolve:
        raise WorkspaceError(f"workspace {str(path)!r} must be an absolute path")
    workspace = raw.resolve() if resolve else raw
    bad = checkpoints_ancestors(workspace)
    if bad:
        checkpoint = workspace / "checkpoints" / "RUN"
        actual = infer_workspace_root(checkpoint)
        raise WorkspaceError(
            f"workspace {workspace} has a directory named 'checkpoints' in its path "
            f"({bad[0]}): ARI takes the parent of the outermost 'checkpoints' directory as the "
            f"workspace root, so it would write node work dirs to {actual / 'experiments'} "
            f"instead of {workspace / 'experiments'}. Choose a workspace whose path has no "
            f"'checkpoints' component, e.g. {bad[0].parent / 'ari-workspace'}.")
    return workspace


def checkpoint_dir(workspace: str | Path, run_id: str) -> Path:
    """``<workspace>/checkpoints/<run_id>`` after both parts pass their checks."""
    return check_workspace(workspace) / "checkpoints" / check_run_id(run_id)


def display_name(run_id: str) -> str:
    """What ARI's CLI shows for an adopted checkpoint: the basename minus ``^\\d{14}_``."""
    return re.sub(r"^\d{14}_", "", run_id)
