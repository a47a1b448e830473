"""The lines of ``jupyterhub_config.py`` that start the service and let users' servers use it.

    from ari_jupyter.hubservice.config import add_status_service
    add_status_service(c, url="http://127.0.0.1:10101")

adds to the hub's config (appending to what is there):

- the managed service (``c.JupyterHub.services``), run by this Python with its settings
  (``StatusService`` traitlets as command-line options) and ``SLURM_CONF`` passed on;
- JupyterHub's default ``user`` role with ``access:services!service=ari-jupyter-status`` added
  to its ``self`` (users hold no access to services by default; a site that redefines ``user``
  adds the scope there instead);
- ``c.Spawner.server_token_scopes``: the server role's two scopes and that one, so each
  server's own token (``JUPYTERHUB_API_TOKEN``) may ask the service (unless the site sets them);
- ``ARI_JUPYTER_STATUS_URL`` in the servers' environment: where they find it, through the hub's
  proxy (``public_url``, as a compute node reaches the hub) or the service's own ``url``.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Mapping

from ..runs.queue_service import SERVICE_NAME, URL_ENV

SERVER_SCOPES = ("users:activity!user", "access:servers!server")
"""The scopes of JupyterHub's ``server`` role: a server's token keeps them."""
ACCESS_SCOPE = f"access:services!service={SERVICE_NAME}"


def service_entry(url: str, settings: Mapping[str, Any] | None = None,
                  python: str = sys.executable, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The ``c.JupyterHub.services`` entry: the command and what it is told."""
    env = os.environ if env is None else env
    options = [f"--StatusService.{key}={value}" for key, value in (settings or {}).items()]
    passed = {key: env[key] for key in ("SLURM_CONF", "PATH") if env.get(key)}
    return {"name": SERVICE_NAME, "url": url, "command": [python, "-m", "ari_jupyter.hubservice", *options],
            "environment": passed}


def add_status_service(c: Any, url: str, *, public_url: str = "", settings: Mapping[str, Any] | None = None,
                       python: str = sys.executable) -> None:
    """Add the service to the hub's config ``c`` (see the module's docstring)."""
    c.JupyterHub.services.append(service_entry(url, settings, python))
    c.JupyterHub.load_roles.append({"name": "user", "scopes": ["self", ACCESS_SCOPE]})
    if "server_token_scopes" not in c.Spawner:
        c.Spawner.server_token_scopes = [*SERVER_SCOPES, ACCESS_SCOPE]
    base = public_url.rstrip("/") if public_url else url.rstrip("/")
    c.Spawner.environment.update({URL_ENV: f"{base}/services/{SERVICE_NAME}/"})
