"""Request bodies of bounded size and depth for the extension's POST routes.

A handler using ``BoundedJSONBody`` (with ``@web.stream_request_body``) tells tornado its
limit before the body is read: a larger body is refused by tornado itself (400, connection
closed) and never held in memory, and JSON nested too deep for the parser is a 400, not a
500.
"""
from __future__ import annotations

import json
from typing import Any

from tornado import web

MAX_BODY = 64 * 1024
"""Bytes: a cancel request of a thousand job ids, or the wizard-notebook request, fits."""


class BoundedJSONBody:
    """Mixin for an ``APIHandler`` decorated with ``@web.stream_request_body``."""

    max_body = MAX_BODY

    async def prepare(self) -> None:
        self._body_parts: list[bytes] = []
        self._body_size = 0
        self._body_too_big = False
        self.request.connection.set_max_body_size(self.max_body)
        await super().prepare()  # type: ignore[misc]

    def data_received(self, chunk: bytes) -> None:
        self._body_size += len(chunk)
        if self._body_size > self.max_body:
            self._body_too_big = True
            self._body_parts.clear()
        elif not self._body_too_big:
            self._body_parts.append(chunk)

    def json_body(self, empty: Any = None) -> Any:
        """The body as JSON (``empty`` when there is none); 413 when too big, 400 when it is
        not JSON or nests deeper than the parser goes."""
        if self._body_too_big:
            raise web.HTTPError(413, f"the body is larger than {self.max_body} bytes")
        data = b"".join(self._body_parts)
        if not data.strip():
            return empty
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            raise web.HTTPError(400, "the body must be JSON (and not nested too deep)") from None
