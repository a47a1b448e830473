"""Kernel side of "Open in terminal": a Comm to the ari-jupyter lab extension.

Protocol (version 1). Transport: a Jupyter Comm with target name ``ari_jupyter_terminal``,
opened by the kernel; the lab extension registers that target on every notebook kernel. No DOM
widget is involved. Every message is a JSON object with a ``type``.

1. kernel -> frontend, comm_open data: ``{"type": "ari-jupyter:hello", "protocol": 1}``
2. frontend -> kernel: ``{"type": "ari-jupyter:ready", "protocol": 1, "locale": "ja"}``. Only
   after this does the wizard show "Open in terminal"; without the extension the frontend closes
   the comm and the button stays hidden (Copy still works, e.g. in Voilà or plain Notebook 7).
   ``locale`` (optional) is the language the wizard speaks when its notebook names none: the
   extension's "Wizard language" setting, else JupyterLab's Settings > Language; "" = none.
3. kernel -> frontend: ``{"type": "ari-jupyter:open-terminal", "request_id": "<hex>",
   "cwd": "/abs/dir" or "", "command": "<one shell line>", "run": false}``. ``run: false`` types
   the line without Enter so the user reviews it; ``run: true`` also sends ``\\r``.
4. frontend -> kernel: ``{"type": "ari-jupyter:terminal-opened", "request_id": "<same>",
   "ok": true, "terminal": "<name>"}`` or ``{..., "ok": false, "error": "<text>"}``.

5. A reloaded page (the kernel kept running): the frontend finds comms on the target still open
   in the kernel (``comm_info_request``), opens one itself with ``{"type": "ari-jupyter:page",
   "protocol": 1}``; the kernel closes it and every bridge opens its comm anew (step 1), which
   the new page answers (step 2). The old page's comms are left unused. A request made before
   the new page answered (a click at once after the reload) is sent to it with READY, once.

Unknown types are ignored on both sides. The command is one line: a newline would let the
terminal execute part of it even with ``run: false``, so it is refused here.
"""
from __future__ import annotations

import os
import uuid
import weakref
from typing import Any, Callable

from traitlets import Bool, Dict, HasTraits, Unicode

from ._base import running_loop

TARGET_NAME = "ari_jupyter_terminal"
PROTOCOL = 1
HELLO = "ari-jupyter:hello"
READY = "ari-jupyter:ready"
OPEN_TERMINAL = "ari-jupyter:open-terminal"
TERMINAL_OPENED = "ari-jupyter:terminal-opened"
PAGE = "ari-jupyter:page"
SITE_CHANGED = "ari-jupyter:site-changed"

_BRIDGES: "weakref.WeakSet[TerminalBridge]" = weakref.WeakSet()
"""The bridges of this kernel, for a reloaded page to reach (step 5)."""
_PAGE_TARGET_REGISTERED = False


def _register_page_target() -> None:
    """Let a reloaded page reach the bridges (step 5); once per kernel, never raises."""
    global _PAGE_TARGET_REGISTERED
    if _PAGE_TARGET_REGISTERED:
        return
    try:
        import comm

        comm.get_comm_manager().register_target(TARGET_NAME, _on_page_opened)
        _PAGE_TARGET_REGISTERED = True
    except Exception:  # no kernel (a script, a test): nothing can reload
        pass


def _on_page_opened(page_comm, open_msg) -> None:
    data = (open_msg.get("content") or {}).get("data") or {}
    try:
        page_comm.close()
    except Exception:
        pass
    if data.get("type") == PAGE:
        for bridge in list(_BRIDGES):
            bridge.reconnect()


def _default_comm_factory(**kwargs):
    import comm

    return comm.create_comm(**kwargs)


class TerminalBridge(HasTraits):
    """Opens the comm once; ``available`` turns True when the extension answered."""

    available = Bool(False, help="The lab extension answered the hello.")
    frontend_lang = Unicode("", help="The language the frontend asks for (READY's locale).")
    last_result = Dict(help="The latest terminal-opened reply (ok, terminal or error).")
    last_request_id = Unicode("")

    def __init__(self, comm_factory: Callable[..., Any] | None = None, **kwargs):
        super().__init__(**kwargs)
        self._comm_factory = comm_factory or _default_comm_factory
        self._comm = None
        self._pending: dict | None = None  # the request no page has answered yet
        self._reconnecting = False  # a reloaded page is about to answer the new hello

    def connect(self) -> None:
        """Open the comm (idempotent). Failures leave the bridge unavailable, never raise."""
        if self._comm is not None:
            return
        try:
            self._comm = self._comm_factory(
                target_name=TARGET_NAME, data={"type": HELLO, "protocol": PROTOCOL}
            )
        except Exception:  # no kernel, or a frontend without comm support
            self._comm = None
            return
        self._comm.on_msg(self._on_msg)
        self._comm.on_close(self._on_close)
        _BRIDGES.add(self)
        _register_page_target()

    def connect_soon(self) -> None:
        """``connect()`` once the running cell is done (a kernel's loop turns), else now.

        A new wizard's hello waits for the loop as its probes do: the page answers only
        after the cell anyway, and the cell that made the wizard returns one comm sooner.
        """
        loop = running_loop()
        if loop is None:
            self.connect()
            return
        loop.call_soon(self.connect)

    def reconnect(self) -> None:
        """Open the comm anew: the page that had it is gone (a reloaded JupyterLab says so,
        step 5). The new page answers the hello as the first one did, so
        "Open in terminal" works again and the wizard follows the new page's language. Until
        it answers the bridge is unavailable (the button is hidden, never dead)."""
        # The old comm is left as it is: closing it would send the new page a close for a comm
        # it never had (JupyterLab logs "Comm not found"), and the old page is gone.
        self._comm = None
        self.available = False
        self.connect()
        self._reconnecting = self._comm is not None

    def _on_msg(self, msg: dict) -> None:
        data = (msg.get("content") or {}).get("data") or {}
        kind = data.get("type")
        if kind == READY:
            locale = data.get("locale")
            self.frontend_lang = locale if isinstance(locale, str) else ""
            self._reconnecting = False
            self.available = True
            if self._pending is not None:
                # asked for while the page was reloading: the old page never got it
                self._comm.send(self._pending)
        elif kind == TERMINAL_OPENED and data.get("request_id") == self.last_request_id:
            self._pending = None
            self.last_result = {k: data[k] for k in ("ok", "terminal", "error") if k in data}

    def _on_close(self, msg: dict) -> None:
        self.available = False
        self._comm = None
        if self._reconnecting and self._pending is not None:
            # the new page has no extension: the click waiting for it gets an answer
            self.last_result = {"ok": False, "unavailable": True}
        self._reconnecting = False

    def site_changed(self) -> None:
        """Tell the page the wizard looks at another site (it told the server): the status bar
        asks the server again. Nothing to tell before the page answered the hello (its answer
        makes it ask anyway)."""
        if self._comm is not None and self.available:
            self._comm.send({"type": SITE_CHANGED})

    def open_terminal(self, command: str, cwd: str = "", run: bool = False) -> str:
        """Ask the extension to open a terminal with ``command`` typed in; returns the request id."""
        if "\n" in command or "\r" in command:
            raise ValueError("the hand-off command must be a single line")
        if cwd and not os.path.isabs(cwd):
            raise ValueError(f"cwd must be absolute, got {cwd!r}")
        if self._comm is None or not (self.available or self._reconnecting):
            raise RuntimeError("the ari-jupyter lab extension is not connected")
        request_id = uuid.uuid4().hex
        self.last_request_id = request_id
        self.last_result = {}
        self._pending = {"type": OPEN_TERMINAL, "request_id": request_id,
                         "cwd": cwd, "command": command, "run": bool(run)}
        if self.available:
            self._comm.send(self._pending)
        # else: clicked on a reloaded page before it answered the new hello; READY sends it
        return request_id

    def close(self) -> None:
        if self._comm is not None:
            try:
                self._comm.close()
            finally:
                self._comm = None
                self.available = False
