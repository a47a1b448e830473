"""The HTTP side: one fixed, authenticated, read-only route.

``GET <base_url>/ari-jupyter/allocation`` answers the JSON of
:meth:`ari_jupyter.server.status.AllocationStatus.snapshot`. The route has no path
parameters and its query arguments are ``lang=en|ja|zh`` (the time-left sentence in the status
bar's language; English without it), a language code, and ``refresh=1`` (ask squeue for the time
left now rather than count down the last answer), so no request can name a file.
Requests without a valid token are refused by jupyter_server (403 for API handlers).
"""
from __future__ import annotations

import json

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from .status import AllocationStatus
from ..i18n import LANGUAGES, render_message
from .runs_handlers import setup_runs_handlers
from .notebook_handlers import setup_notebook_handlers
from .guides_handlers import setup_guides_handlers
from .terminal_handlers import setup_terminal_handlers

ROUTE = "/ari-jupyter/allocation"
SETTINGS_KEY = "ari_jupyter_allocation_status"


class AllocationHandler(APIHandler):
    """GET the allocation the server runs in and the time it has left."""

    auth_resource = "ari_jupyter"

    @web.authenticated
    @authorized
    async def get(self) -> None:
        status: AllocationStatus = self.settings[SETTINGS_KEY]
        lang = self.get_query_argument("lang", "")
        if lang and lang not in LANGUAGES:
            raise web.HTTPError(400, f"lang must be one of {', '.join(LANGUAGES)}")
        answer = await status.snapshot(refresh=self.get_query_argument("refresh", "") == "1")
        left = answer.get("time_left")
        if lang and isinstance(left, dict):
            answer = {**answer, "time_left": {**left, "summary": render_message(
                left.get("summary", ""), left, lang)}}
        idle = answer.get("idle_cull")
        if lang and isinstance(idle, dict):
            answer = {**answer, "idle_cull": {**idle, "text": render_message(idle["text"], idle, lang)}}
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(answer))


def setup_handlers(web_app, status: AllocationStatus | None = None) -> None:
    """Register the route; ``status`` is injectable for tests (default: this process's env)."""
    web_app.settings[SETTINGS_KEY] = status or AllocationStatus()
    route = url_path_join(web_app.settings.get("base_url", "/"), ROUTE)
    web_app.add_handlers(".*$", [(route, AllocationHandler)])

    setup_runs_handlers(web_app)

    setup_notebook_handlers(web_app)

    setup_guides_handlers(web_app)

    setup_terminal_handlers(web_app)
