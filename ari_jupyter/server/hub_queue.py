"""A user's server asks the hub's queue service instead of SLURM, when the hub offers one.

The hub offers it by setting ``ARI_JUPYTER_STATUS_URL`` in the server's environment
(``hubservice.config``); the server authenticates with its own ``JUPYTERHUB_API_TOKEN`` and
asks for ``JUPYTERHUB_USER``'s jobs only. ``QueueCachingHost`` asks it for the user-wide
``squeue -u`` line (``queue_service.user_argv``) and takes its rows as that line's answer;
anything else (no service, no answer within :data:`TIMEOUT`, a stale, private or foreign
answer) and the server runs its own squeue, as without a hub. After a failed ask the service
is left alone for :data:`BACKOFF_SECONDS`, so a service that is down costs no request a poll.
"""
from __future__ import annotations

import json
import time
from typing import Callable, Mapping
from urllib.parse import quote

from ..runs.queue_service import JOBS_PATH, URL_ENV, usable_rows, user_argv

TIMEOUT = 3.0
"""Seconds the service may take (connect and answer) before the server asks SLURM itself."""
BACKOFF_SECONDS = 60.0
MAX_AGE = 600.0
"""An answer older than this is not taken (a service stuck on an old answer)."""


class HubQueueClient:
    """The service as one user's server sees it."""

    def __init__(self, url: str, user: str, token: str, *, timeout: float = TIMEOUT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.url = url.rstrip("/") + "/"
        self.user, self.token, self.timeout = user, token, timeout
        self._clock = clock
        self._skip_until = 0.0
        self.asked = self.taken = 0
        self.age = 0.0
        """How old the service said the last rows it gave were, in seconds."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "HubQueueClient | None":
        """The hub's service when the environment offers one (its URL, this server's user and
        token), else None."""
        url, user, token = env.get(URL_ENV, ""), env.get("JUPYTERHUB_USER", ""), env.get("JUPYTERHUB_API_TOKEN", "")
        if not (url.startswith(("http://", "https://")) and user and token):
            return None
        return cls(url, user, token)

    def answers(self, argv: tuple[str, ...]) -> bool:
        return argv == user_argv(self.user) and self._clock() >= self._skip_until

    async def rows(self, fresh: bool = False) -> str | None:
        """This user's rows from the service; None when it gives none worth taking."""
        # cold start: tornado's HTTP client loads with the first ask of the service
        from tornado.httpclient import AsyncHTTPClient

        self.asked += 1
        url = f"{self.url}{JOBS_PATH}/{quote(self.user, safe='')}" + ("?fresh=1" if fresh else "")
        try:
            response = await AsyncHTTPClient().fetch(
                url, headers={"Authorization": f"token {self.token}"}, raise_error=False,
                connect_timeout=self.timeout, request_timeout=self.timeout, follow_redirects=False)
            reply = json.loads(response.body) if response.code == 200 else None
        except Exception:  # refused, timed out, not JSON: the server's own squeue answers
            reply = None
        rows = usable_rows(reply, self.user, MAX_AGE)
        if rows is None:
            self._skip_until = self._clock() + BACKOFF_SECONDS
        else:
            self.taken += 1
            self.age = max(0.0, float(reply["age_s"]))
        return rows
