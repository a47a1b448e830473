"""``POST <base_url>/ari-jupyter/wizard-notebook``: place the wizard notebook for the card.

Body ``{"cwd": "<folder the file browser shows>", "lang": "en|ja|zh", "open": ["<path>", ...]}``
(``lang``: the language of the notebook's explanations, optional; ``open``: contents paths the
lab has open, optional - an open notebook is never rewritten in another language); answers ``{"path", "folder", "created"}``
(a contents path the lab opens) or 409 with the reason nothing was placed. The folders are
chosen by :func:`ari_jupyter.wizard.notebooks.place_wizard_notebook`; the request names at most
the browsed folder, checked to be below the server root. Needs the token and passes XSRF.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from ..wizard.notebooks import PlacementRefused, place_wizard_notebook
from ..i18n import default_lang, normalize_lang
from .bodies import BoundedJSONBody

ROUTE = "/ari-jupyter/wizard-notebook"


@web.stream_request_body
class WizardNotebookHandler(BoundedJSONBody, APIHandler):
    auth_resource = "ari_jupyter"
    auth_action = "write"
    max_body = 1024 * 1024  # the paths of every open tab

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body(empty={})  # 413 when too big, 400 when not JSON or too deep
        cwd = body.get("cwd", "") if isinstance(body, dict) else None
        if not isinstance(cwd, str):
            raise web.HTTPError(400, "cwd must be a string")
        asked = body.get("lang") or ""
        if not isinstance(asked, str):
            raise web.HTTPError(400, "lang must be a string")
        opened = body.get("open") or []
        if not isinstance(opened, list) or not all(isinstance(p, str) for p in opened):
            raise web.HTTPError(400, "open must be a list of paths")
        contents = self.contents_manager
        root = Path(getattr(contents, "root_dir", None) or self.settings["server_root_dir"])
        try:
            placed = place_wizard_notebook(root, cwd, os.environ,
                                           allow_hidden=bool(getattr(contents, "allow_hidden",
                                                                     False)),
                                           lang=self._lang(asked),
                                           open_paths=frozenset(p.strip("/") for p in opened))
        except PlacementRefused as exc:
            raise web.HTTPError(409, str(exc)) from None
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps({"path": placed.path, "folder": placed.folder,
                                "created": placed.created}))


    def _lang(self, asked: str) -> str:
        """The notebook's language: the wizard's (the extension sends it), else the browser's
        first Accept-Language, else the server's locale."""
        browser = self.request.headers.get("Accept-Language", "").split(",")[0].split(";")[0]
        return normalize_lang(asked) or normalize_lang(browser.strip()) or default_lang(os.environ)


def setup_notebook_handlers(web_app) -> None:
    route = url_path_join(web_app.settings.get("base_url", "/"), ROUTE)
    web_app.add_handlers(".*$", [(route, WizardNotebookHandler)])
