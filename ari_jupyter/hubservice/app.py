"""The service's web side: JupyterHub's authentication in front of ``HubQueue``.

Routes, under the service's prefix (``/services/ari-jupyter-status/``):

- ``GET api/jobs/<user>``: that user's rows (``runs.queue_service.answer``), ``?fresh=1`` to ask
  for a fresh answer within the ceilings. The request must carry a hub token of that very user
  (``Authorization: token ...``) holding ``access:services!service=ari-jupyter-status``: no
  token or one the hub does not know is 401; another user's token, a service's, or one without
  the scope is 403. Headers such as ``X-Forwarded-User`` are never read; nor are cookies.
- ``GET api/figures``: what the service costs and serves (``HubQueue.figures``), for a token
  holding ``read:metrics`` (a hub admin's).

Settings are traitlets of ``StatusService`` (``--StatusService.interval=60`` on the service's
command line, or a config file): docs/admin.md says what each costs.
"""
from __future__ import annotations

import json
import os
import signal
from urllib.parse import urlparse

from jupyterhub.services.auth import HubAuth
from jupyterhub.utils import url_path_join
from tornado import ioloop, web
from traitlets import Float, Unicode
from traitlets.config import Application

from ..hosts.host import LocalHost
from ..runs.queue_service import FIGURES_PATH, JOBS_PATH, SERVICE_NAME
from .queue import QUERY_TIMEOUT, HubQueue

ACCESS_SCOPE = f"access:services!service={SERVICE_NAME}"
FIGURES_SCOPE = "read:metrics"


class _Authenticated(web.RequestHandler):
    """A request authenticated by the hub from its token alone."""

    def initialize(self, hub_auth: HubAuth, queue: HubQueue) -> None:
        self.hub_auth = hub_auth
        self.queue = queue

    def set_default_headers(self) -> None:
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")

    def write_error(self, status_code: int, **kwargs) -> None:
        self.finish(json.dumps({"service": SERVICE_NAME, "error": status_code,
                                "reason": self._reason}))

    async def owner(self, scope: str) -> dict:
        """The hub's model of the token's owner; 401 without a known token, 403 without
        ``scope``."""
        token = self.hub_auth.get_token(self, in_cookie=False)
        if not token:
            raise web.HTTPError(401, reason="no token")
        model = await self.hub_auth.user_for_token(token, sync=False)
        if not model:
            raise web.HTTPError(401, reason="unknown token")
        if not self.hub_auth.check_scopes({scope}, model):
            raise web.HTTPError(403, reason=f"the token lacks {scope}")
        return model


class JobsHandler(_Authenticated):
    async def get(self, name: str) -> None:
        model = await self.owner(ACCESS_SCOPE)
        if model.get("kind") != "user" or model.get("name") != name:
            raise web.HTTPError(403, reason="a user is answered only about their own jobs")
        fresh = self.get_argument("fresh", "") == "1"
        self.finish(json.dumps(await self.queue.answer_for(name, fresh=fresh)))


class FiguresHandler(_Authenticated):
    async def get(self) -> None:
        await self.owner(FIGURES_SCOPE)
        self.finish(json.dumps(self.queue.figures()))


class StatusService(Application):
    """The hub's queue service."""

    name = SERVICE_NAME
    description = "One squeue per interval for all of a hub's users; each user answered alone."

    interval = Float(30.0, config=True, help="""Seconds between two asks of squeue for all
        users (asked only when a user's server wants an answer): 2 RPCs each, so 4 RPCs a minute
        at 30 s, whatever the number of users.""")
    hub_ceiling = Float(10.0, config=True, help="""RPCs a minute the service may cost at most,
        fresh answers included: the interval is never shorter than 120 / hub_ceiling seconds.""")
    user_ceiling = Float(4.0, config=True, help="""RPCs a minute one user's asks for a fresh
        answer (after a Cancel) may cost: one fresh squeue every 120 / user_ceiling seconds per
        user, within hub_ceiling; beyond it the user gets the answer held.""")
    timeout = Float(QUERY_TIMEOUT, config=True, help="""Seconds one squeue may take: a request
        never waits longer, and an unanswered squeue leaves the last answer, marked stale.""")
    url = Unicode("", config=True, help="""Where to listen (default: $JUPYTERHUB_SERVICE_URL,
        which the hub sets from the service's "url").""")

    aliases = {"interval": "StatusService.interval", "hub-ceiling": "StatusService.hub_ceiling",
               "user-ceiling": "StatusService.user_ceiling", "timeout": "StatusService.timeout",
               "url": "StatusService.url"}

    def make_app(self) -> web.Application:
        prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", f"/services/{SERVICE_NAME}/")
        queue = HubQueue(LocalHost(), interval=self.interval, hub_ceiling=self.hub_ceiling,
                         user_ceiling=self.user_ceiling, timeout=self.timeout)
        args = {"hub_auth": HubAuth(api_token=os.environ.get("JUPYTERHUB_API_TOKEN", "")),
                "queue": queue}
        self.queue = queue
        return web.Application([
            (url_path_join(prefix, JOBS_PATH, r"([^/]+)"), JobsHandler, args),
            (url_path_join(prefix, FIGURES_PATH), FiguresHandler, args),
        ])

    def start(self) -> None:
        where = urlparse(self.url or os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"))
        app = self.make_app()
        app.listen(where.port or 80, where.hostname or "127.0.0.1")
        self.log.info("%s on %s: interval %gs, ceilings %g RPC/min per hub, %g per user", SERVICE_NAME,
                      where.geturl(), self.queue.interval, self.hub_ceiling, self.user_ceiling)
        loop = ioloop.IOLoop.current()
        signal.signal(signal.SIGTERM, lambda *_: loop.add_callback_from_signal(loop.stop))
        loop.start()


def main(argv=None) -> None:
    StatusService.launch_instance(argv)
