"""Whether an event loop runs in this thread, asked without importing asyncio.

A process in which nothing imported asyncio runs no event loop, so the question costs nothing
there: a plain script's ``Wizard()`` does not load asyncio to learn that it has no loop. (The
standard library has no such question; ``asyncio._get_running_loop`` is its documented
low-level answer once asyncio is loaded.)
"""
from __future__ import annotations

import sys
from typing import Any


def running_loop() -> Any:
    """The event loop running in this thread (a kernel's), else None."""
    aio = sys.modules.get("asyncio")
    return aio._get_running_loop() if aio is not None else None
