"""jupyter_server extension: the allocation the server runs in, for the lab status bar.

Enabled by ``jupyter-config/server-config/ari_jupyter.json`` (installed into
``etc/jupyter/jupyter_server_config.d``) as ``{"ServerApp": {"jpserver_extensions":
{"ari_jupyter.server": true}}}``. It adds authenticated endpoints: ``GET <base_url>/ari-jupyter/allocation`` (see
:mod:`ari_jupyter.server.handlers`), the Runs panel's (:mod:`ari_jupyter.server.runs_handlers`)
and the launcher card's ``POST <base_url>/ari-jupyter/wizard-notebook``
(:mod:`ari_jupyter.server.notebook_handlers`).
"""
from __future__ import annotations
from .handlers import setup_handlers


def _jupyter_server_extension_points():
    return [{"module": "ari_jupyter.server"}]


def _load_jupyter_server_extension(server_app) -> None:
    setup_handlers(server_app.web_app)
    server_app.log.info("ari_jupyter.server: /ari-jupyter/allocation, /ari-jupyter/runs and "
                        "/ari-jupyter/wizard-notebook and /ari-jupyter/guides enabled")
