"""Run a coroutine to completion from synchronous code, event loop or not.

The command line has no event loop, so ``asyncio.run`` is enough there. A notebook cell (or
any caller inside a running loop) cannot nest ``asyncio.run``; the coroutine then gets a fresh
loop in a short-lived worker thread while the caller waits. Results and exceptions come back
to the caller's thread unchanged.
"""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Coroutine, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, from a worker thread when this thread already runs a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ari-jupyter-sync") as pool:
        return pool.submit(asyncio.run, coro).result()
