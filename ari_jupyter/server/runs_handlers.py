"""Authenticated endpoints for the Runs panel, over the workspace's checkpoints only.

``GET  <base_url>/ari-jupyter/runs``                    the workspace's runs (``runs_json``)
``GET  <base_url>/ari-jupyter/runs/ids``                the run ids only (``run_ids_json``): the
                                                        panel's cheap watch for a new run
``GET  <base_url>/ari-jupyter/runs/<run_id>``           one run's status (``status_json``), plus
                                                        ``lab_folder``: its workspace as a contents
                                                        path, or null where the lab cannot open it
``POST <base_url>/ari-jupyter/runs/<run_id>/cancel``    cancel its jobs (``cancel_json``);
                                                        body ``{"job_ids": [...]}`` or
                                                        ``{"all": true}``, nothing else
                                                        (``runs.cancel_request``; 400)
``POST <base_url>/ari-jupyter/runs/forget``             take a recorded workspace off the
                                                        list (body ``{"workspace": path}``); its
                                                        checkpoints stay, the default one stays
On a demo site (the wizard's: the one a wizard under this server chose, ``wizard.site_choice``,
else outside an allocation ``ARI_JUPYTER_DEMO_SITE`` or ``c.AriWizard.demo_site``) the routes list the site's recorded run beside the user's own, answer
jobs from the recording and never call the machine's SLURM; cancel says it is a recording.
The two run routes take ``?lang=en|ja|zh``: the findings, the process sentence and the notes
come back in that language (ids and parameters kept); English without it.
A request names a run id, never a path: ``<run_id>`` must look like ARI's
(``YYYYmmddHHMMSS_<slug>``) and is looked up under ``<workspace>/checkpoints/`` of the listed
workspaces: the wizard's (site config ``AriWizard.workspace_template``) and each one a
checkpoint was written to (``runs.known_workspaces``), as for ``ari-jupyter runs``.
POST goes through jupyter_server's XSRF check; all routes need the server's token or login.
"""
from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from ..i18n import DEFAULT_LANGUAGE, LANGUAGES
from ..runs import NotACheckpoint
from ..runs.status import UnreadableCheckpoint
from ..runs.workspace import is_dir
from ..runs.cancel_request import BadCancelRequest, cancel_targets
from ..runs.localize import cancel_in_language, runs_in_language, status_in_language
from ..runs.service import (cancel_json, listed_workspaces, place_recorded_runs, run_ids_json,
                            runs_json, same_workspace, server_views, status_json)
from .bodies import BoundedJSONBody
from .queue_cache import QueueCachingHost
from ..hosts.host import LocalHost
from ..checkpoint.known_workspaces import forget_workspace, recorded_workspaces

WORKSPACE_KEY = "ari_jupyter_runs_workspace"
HOST_KEY = "ari_jupyter_runs_host"
SHARED_HOST_KEY = "ari_jupyter_runs_shared_host"
RUN_ID = r"[0-9]{8,14}_[A-Za-z0-9_.-]{0,200}"
_RUN_ID = re.compile(rf"^{RUN_ID}$")


class _RunsBase(APIHandler):
    auth_resource = "ari_jupyter"

    @property
    def workspace(self) -> str:
        return self.settings.get(WORKSPACE_KEY) or server_views()[0]

    @property
    def workspaces(self) -> list[str]:
        return listed_workspaces(self.workspace)

    @property
    def host(self):
        """The injected host, else the wizard's: a demo site outside an allocation (its jobs from
        its recording, never the machine's SLURM); this machine inside one, through the server's
        one ``QueueCachingHost`` whose queue answers every tab and poll share (``queue_cache``)."""
        host = self.settings.get(HOST_KEY)
        if host is not None:
            return host
        chosen = server_views()[1]  # the wizard's site, as the status bar's
        if not isinstance(chosen, LocalHost):
            return chosen
        shared = self.settings.get(SHARED_HOST_KEY)
        if shared is None:
            shared = self.settings[SHARED_HOST_KEY] = QueueCachingHost()
        return shared

    def checkpoint(self, run_id: str) -> Path:
        if not _RUN_ID.match(run_id) or ".." in run_id:
            raise web.HTTPError(400, f"not a run id: {run_id!r}")
        workspaces = self.workspaces
        for workspace in workspaces:
            path = Path(workspace) / "checkpoints" / run_id
            if is_dir(path) or path.is_symlink():  # one this user cannot read: 403 below
                return path
        raise web.HTTPError(404, f"no run {run_id} in {', '.join(workspaces)}")

    def lab_folder(self, workspace: Path) -> str | None:
        """The workspace as a contents path of this server ('' for its root), where the panel's
        "Reopen in the wizard" puts its notebook beside the wizard's; None when JupyterLab
        cannot open it (outside the server root, or hidden while hidden files are not shown)."""
        contents = self.contents_manager
        root = Path(getattr(contents, "root_dir", None) or self.settings["server_root_dir"])
        try:
            relative = workspace.resolve().relative_to(root.expanduser().resolve())
        except (OSError, ValueError):
            return None
        if not getattr(contents, "allow_hidden", False) and any(
                part.startswith(".") for part in relative.parts):
            return None
        return relative.as_posix() if relative.parts else ""

    @property
    def lang(self) -> str:
        value = self.get_query_argument("lang", "") or DEFAULT_LANGUAGE
        if value not in LANGUAGES:
            raise web.HTTPError(400, f"lang must be one of {', '.join(LANGUAGES)}")
        return value

    def answer(self, data) -> None:
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(data))


class RunsHandler(_RunsBase):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.answer(runs_in_language(await runs_json(self.workspaces, self.host), self.lang))


class RunIdsHandler(_RunsBase):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        await asyncio.to_thread(place_recorded_runs, self.host)  # a demo site's run, on first use
        self.answer(run_ids_json(self.workspaces))


class RunStatusHandler(_RunsBase):
    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        try:
            lang = self.lang
            checkpoint = self.checkpoint(run_id)
            answer = status_in_language(await status_json(checkpoint, self.host), lang)
            self.answer({**answer, "lab_folder": self.lab_folder(checkpoint.parent.parent)})
        except UnreadableCheckpoint as exc:
            raise web.HTTPError(403, str(exc)) from None
        except NotACheckpoint as exc:
            raise web.HTTPError(404, str(exc)) from None


@web.stream_request_body
class RunCancelHandler(BoundedJSONBody, _RunsBase):
    auth_action = "write"

    @web.authenticated
    @authorized
    async def post(self, run_id: str) -> None:
        checkpoint = self.checkpoint(run_id)
        try:  # only a well-formed request: a malformed one never means "all"
            ids = cancel_targets(self.json_body())
        except BadCancelRequest as exc:
            raise web.HTTPError(400, str(exc)) from None
        lang = self.lang
        try:
            answer = await cancel_json(checkpoint, ids, self.host)
            self.answer(cancel_in_language(answer, lang))
        except NotACheckpoint as exc:
            raise web.HTTPError(404, str(exc)) from None


@web.stream_request_body
class ForgetWorkspaceHandler(BoundedJSONBody, _RunsBase):
    """Forget a workspace the list recorded (never the default one, never a file). The body is
    bounded as the cancel route's: 413 past its size, 400 when it is not JSON or too deep."""

    auth_action = "write"

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body(empty={})
        workspace = body.get("workspace") if isinstance(body, dict) else None
        if not isinstance(workspace, str) or not workspace.startswith("/"):
            raise web.HTTPError(400, "workspace must be an absolute path")
        if same_workspace(workspace, self.workspace):
            raise web.HTTPError(400, "the default workspace is always listed")
        if workspace not in recorded_workspaces():
            raise web.HTTPError(404, "not a recorded workspace")
        self.answer({"forgotten": forget_workspace(workspace), "workspaces": self.workspaces})


def setup_runs_handlers(web_app, workspace: str | None = None, host=None) -> None:
    """Register the runs routes; ``workspace`` and ``host`` are injectable for tests."""
    if workspace:
        web_app.settings[WORKSPACE_KEY] = workspace
    if host is not None:
        web_app.settings[HOST_KEY] = host
    base = url_path_join(web_app.settings.get("base_url", "/"), "ari-jupyter", "runs")
    web_app.add_handlers(".*$", [
        (base, RunsHandler),
        (url_path_join(base, "ids"), RunIdsHandler),
        (url_path_join(base, "forget"), ForgetWorkspaceHandler),
        (url_path_join(base, f"({RUN_ID})"), RunStatusHandler),
        (url_path_join(base, f"({RUN_ID})", "cancel"), RunCancelHandler),
    ])
