"""run_sync: the one way sync callers (CLI, notebook cells) run the core's coroutines."""
from __future__ import annotations

import asyncio
import threading

import pytest

from ari_jupyter.base.aio import run_sync


async def where_am_i() -> tuple[str, bool]:
    await asyncio.sleep(0)
    return threading.current_thread().name, asyncio.get_running_loop().is_running()


def test_without_a_loop_it_runs_in_this_thread():
    name, running = run_sync(where_am_i())
    assert name == threading.current_thread().name and running


def test_inside_a_running_loop_it_uses_a_worker_with_its_own_loop():
    async def notebook_cell():
        outer = asyncio.get_running_loop()
        name, _ = run_sync(where_am_i())
        return name, outer

    name, outer = asyncio.run(notebook_cell())
    assert name.startswith("ari-jupyter-sync") and outer.is_closed()


@pytest.mark.parametrize("inside_a_loop", [False, True])
def test_exceptions_reach_the_caller_unchanged(inside_a_loop):
    class Boom(RuntimeError):
        pass

    async def fails():
        raise Boom("from the coroutine")

    def call():
        return run_sync(fails())

    async def cell():
        return call()

    with pytest.raises(Boom, match="from the coroutine"):
        asyncio.run(cell()) if inside_a_loop else call()


def test_handoff_check_works_from_a_notebook_cell(tmp_path):
    """check_handoff is called from the wizard's kernel, where a loop is always running."""
    from ari_jupyter.checkpoint.handoff import check_handoff

    async def cell():
        return check_handoff(tmp_path / "missing", env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})

    first = asyncio.run(cell())[0]
    assert (first.id, first.status) == ("checkpoint", "fail")
    assert f"{tmp_path / 'missing'} does not exist" in first.summary
