"""The answers the CLI and the JupyterLab Runs panel both give, as JSON-ready dicts.

``ari-jupyter runs|status|cancel --json`` print exactly these; the server's
``/ari-jupyter/runs`` endpoints return exactly these. One place, so the views cannot disagree.
"""
from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..hosts.host import Host, LocalHost, SiteError
from ..hosts.recorded_run import RecordedRun
from .jobs import cancel_jobs, current_user, jobs_of_runs
from .reading import linked_out
from .status import (NotACheckpoint, UnreadableCheckpoint, is_checkpoint, read_status,
                     refuse_linked_out)
from .workspace import RUN_ID, checkpoint_dirs, is_dir, readable
from ..wizard.config import AriWizard, select_host, wizard_config
from ..wizard.site_choice import wizard_site
from ..checkpoint.known_workspaces import recorded_workspaces
from ..i18n import message_of, text
from .reopen import wizard_written


def default_workspace(env: Mapping[str, str] | None = None, site: str | None = None) -> str:
    """The wizard's workspace: the site's ``AriWizard.workspace_template`` inside an allocation,
    the local demo workspace where the wizard starts on a demo site (``ari-jupyter lab`` on a
    laptop), so the runs Write made there are the runs listed. ``site`` names the demo site
    looked at, as ``emit --site`` does (an unknown one raises ``SiteError``)."""
    env = dict(os.environ if env is None else env)
    try:
        config = wizard_config()
    except Exception:  # a broken site config must not hide the runs
        config = AriWizard()
    if site:
        host, _name, _reason = select_host(site, config=config, env=env)
        return config.workspace_for_host(host, env)
    try:
        host, _name, _reason = select_host(config=config, env=env)
    except Exception:  # an unreadable demo site: the site's template, as before
        return config.workspace_for(env)
    return config.workspace_for_host(host, env)


def same_workspace(a: str, b: str) -> bool:
    """Whether two spellings name one workspace folder (``~``, a trailing slash, ``x/..``): a
    run written to ``a`` is then among those listed for ``b``."""
    return os.path.normpath(os.path.expanduser(a)) == os.path.normpath(os.path.expanduser(b))


def listed_workspaces(default: str | Path, env: Mapping[str, str] | None = None) -> list[str]:
    """The workspaces the Runs panel and ``ari-jupyter runs`` list: ``default`` first, then
    each one a checkpoint was written to (see :mod:`.known_workspaces`) that still exists."""
    listed = [str(Path(default).expanduser())]
    for workspace in recorded_workspaces(env):
        if is_dir(workspace) and not any(same_workspace(workspace, w) for w in listed):
            listed.append(workspace)
    return listed


def _config() -> AriWizard:
    try:
        return wizard_config()
    except Exception:  # a broken site config must not hide the runs
        return AriWizard()


def runs_host(site: str | None = None, env: Mapping[str, str] | None = None) -> Host:
    """The host the runs answers ask about jobs: the demo site when ``site`` names one or the
    wizard would start on one (outside an allocation, ``ARI_JUPYTER_DEMO_SITE`` or
    ``c.AriWizard.demo_site``), so a demo site never reaches this machine's SLURM; else this
    machine. An unknown ``site`` raises ``SiteError``."""
    env = dict(os.environ if env is None else env)
    if site:
        return select_host(site, config=_config(), env=env)[0]
    try:
        return select_host(config=_config(), env=env)[0]
    except Exception:  # an unreadable demo site: this machine, as default_workspace does
        return LocalHost(env)


def server_views(env: Mapping[str, str] | None = None) -> tuple[str, Host]:
    """(default workspace, host) of the Jupyter server's Runs routes: those of the site the
    wizard under this server looks at (``wizard.site_choice``: a demo site, ``""`` for this
    machine), so the panel follows the wizard as the status bar does; else those of the
    configured demo site, as ``ari-jupyter runs`` has them."""
    chosen = wizard_site(env=env)
    if chosen:
        try:
            return default_workspace(env, chosen), runs_host(chosen, env)
        except Exception:  # a site the wizard named that is gone: the configured one
            pass
    elif chosen == "":
        here = dict(os.environ if env is None else env)
        return _config().workspace_for(here), LocalHost(here)
    return default_workspace(env), runs_host(env=env)


def place_recorded_runs(host: Host, env: Mapping[str, str] | None = None) -> list[Path]:
    """Copy the demo site's recorded runs into its local demo workspace, once: a checkpoint or
    a file already there is never overwritten. What cannot be written (a read-only home) is
    simply not shown. Returns the checkpoints placed or found."""
    if not host.is_demo:
        return []
    workspace = _config().demo_workspace_for(host.name, env)
    placed = []
    for run_id in getattr(host, "runs", ()):
        there = Path(workspace) / "checkpoints" / run_id
        if os.path.lexists(there):  # placed before (or the user's own): never read again
            placed.append(there)
            continue
        try:
            placed.append(RecordedRun.load(run_id).place(workspace, current_user()))
        except (SiteError, OSError):
            continue
    return placed


def demo_checkpoint(checkpoint: str | Path, host: Host,
                    env: Mapping[str, str] | None = None) -> Path:
    """``checkpoint`` as a path; on a demo site a bare run id (``status --site rccs-cloud
    <run_id>``) names that run in the site's local demo workspace."""
    text = str(checkpoint)
    if host.is_demo and "/" not in text and RUN_ID.match(text):
        return Path(_config().demo_workspace_for(host.name, env)) / "checkpoints" / text
    return Path(text).expanduser()


def _local_host() -> Host:
    return runs_host()


async def runs_json(workspaces: str | Path | Sequence[str | Path],
                    host: Host | None = None) -> dict[str, Any]:
    """``{"workspace", "workspaces", "missing_workspaces", "runs": [row...], "scheduler",
    "accounting"}`` over one workspace or several (``workspace`` is the first given; in
    ``workspaces`` the missing ones come last), newest run first, each row with its
    ``workspace``; with ``problem`` (and ``problem_message``) when squeue failed: no run's job
    count is known."""
    host = host or _local_host()
    await asyncio.to_thread(place_recorded_runs, host)
    if isinstance(workspaces, (str, Path)):
        workspaces = [workspaces]
    roots = [str(Path(w).expanduser()) for w in workspaces]
    found = sorted(((path, root) for root in roots for path in checkpoint_dirs(root)),
                   key=lambda pair: pair[0].name, reverse=True)
    # what this user cannot read (another user's 0700 run, a link to a folder he cannot open)
    # is left out and named once in the answer; the rest is listed
    # and a run folder that is a link out of checkpoints/ (someone who can write the workspace
    # could point it at this user's own files)
    skipped = [str(path) for path, _root in found if not readable(path) or linked_out(path)]
    found = [(path, root) for path, root in found if str(path) not in skipped]
    paths = [path for path, _root in found]
    views = await jobs_of_runs(paths, host) if paths else {}

    def read_all() -> list[dict[str, Any]]:
        rows = []
        for path, root in found:
            try:
                rows.append({**read_status(path, views.get(str(path))).summary_json(),
                             "workspace": root})
            except UnreadableCheckpoint:
                skipped.append(str(path))
            except NotACheckpoint:
                continue
        return rows

    rows = await asyncio.to_thread(read_all)
    first = next(iter(views.values()), None)
    # A workspace that is not on this machine (a site template such as /work/$USER/ari read on
    # a laptop, a scratch folder since purged) holds no run: the ones that exist come first, so
    # the folder shown first is one the user can open; the missing ones stay listed, last, and
    # are named in ``missing_workspaces`` (the panel marks them), because the default one is
    # still where the wizard's next Write goes. ``workspace`` stays the default one.
    missing = [root for root in roots if not is_dir(root)]
    listed = [root for root in roots if root not in missing] + missing
    answer = {"workspace": roots[0], "workspaces": listed, "missing_workspaces": missing, "runs": rows,
              "scheduler": first.scheduler if first else "not-asked",
              "accounting": first.accounting if first else "unknown"}
    if skipped:
        answer["skipped"] = sorted(skipped, reverse=True)
        answer["skipped_message"] = message_of(text("runs.skipped", count=len(skipped),
                                                     paths=", ".join(answer["skipped"])))
    if first is not None and first.scheduler in ("error", "partial"):  # every run's count unknown
        answer.update({key: value for key, value in first.to_json().items()
                       if key in ("problem", "problem_message")})
    return answer


def run_ids_json(workspaces: str | Path | Sequence[str | Path]) -> dict[str, Any]:
    """``{"run_ids": [...]}``: the runs of the workspaces, newest first, without reading them or
    asking squeue. Cheap enough for the Runs panel to ask every few seconds, so a run just
    written (the wizard's Write, ``emit`` in a terminal) is seen at once."""
    if isinstance(workspaces, (str, Path)):
        workspaces = [workspaces]
    paths = [path for root in workspaces for path in checkpoint_dirs(root)]
    return {"run_ids": sorted({p.name for p in paths if is_checkpoint(p)}, reverse=True)}


async def status_json(checkpoint: str | Path, host: Host | None = None) -> dict[str, Any]:
    """``RunStatus.to_json()``; raises NotACheckpoint for a directory that is not a run's."""
    host = host or _local_host()
    await asyncio.to_thread(place_recorded_runs, host)
    path = Path(checkpoint).expanduser()
    refuse_linked_out(path)  # before its jobs are asked for
    if not is_dir(path):
        if path.is_symlink() or not is_dir(path.parent) or not readable(path.parent):
            raise UnreadableCheckpoint(text("runs.unreadable", path=str(path)))

        raise NotACheckpoint(text("runs.not_a_directory", path=str(path)))
    views = await jobs_of_runs([path], host)
    status = await asyncio.to_thread(read_status, path, views[str(path)])

    return {**status.to_json(), "wizard": wizard_written(path)}


async def cancel_json(checkpoint: str | Path, job_ids: Sequence[str] | None = None,
                      host: Host | None = None) -> dict[str, Any]:
    """Cancel the run's jobs (or the named ones); ``{"outcomes": [...], "status": {...}}``."""
    host = host or _local_host()
    path = Path(checkpoint).expanduser()
    await asyncio.to_thread(read_status, path)  # NotACheckpoint before anything is cancelled
    outcomes = await cancel_jobs(path, host, job_ids)
    return {"outcomes": [o.to_json() for o in outcomes], "status": await status_json(path, host)}
