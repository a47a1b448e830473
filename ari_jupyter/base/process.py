"""Running one command in a session of its own: capped output, a timeout, and on timeout or
cancellation the whole process group killed (TERM, then KILL), so that nothing a probe
started outlives it.

A module of its own so that ``host`` stays small: ``LocalHost.run`` loads it at the first
command, and a kernel's cold start of the wizard, which only schedules its probes, never does.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from typing import Mapping

from .commands import (NOT_EXECUTABLE_RETURNCODE, CommandResult, Capture,
                       not_found)

KILL_GRACE = 0.2
"""Seconds between SIGTERM and SIGKILL for a timed-out process group."""

PIPE_GRACE = 0.5
"""Seconds to wait for the pipes to close after the command itself exited (a background child
may hold them; it is killed with the group afterwards)."""

async def _drain(stream: asyncio.StreamReader | None, capture: Capture) -> None:
    if stream is None:
        return
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return
        capture.add(chunk)


async def _exited(proc: asyncio.subprocess.Process) -> int:
    """The process's exit status as soon as it exits. ``proc.wait()`` would also wait until
    its pipes close, which never happens while a background child still holds them."""
    delay = 0.005
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
    return proc.returncode


def _signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


async def _spawn(argv: tuple[str, ...], executable: str,
                 env: Mapping[str, str]) -> asyncio.subprocess.Process:
    """Start ``argv`` in a session of its own. A cancellation that arrives while asyncio is still
    wiring up the pipes must not leave the child running: asyncio would kill only the leader,
    so the spawn is finished and the whole group killed before the cancellation goes on."""
    spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
        *argv,
        executable=executable,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        start_new_session=True,
    ))
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        proc = None
        with contextlib.suppress(BaseException):
            proc = await asyncio.wait_for(asyncio.shield(spawn), 1.0)
        if proc is None:  # still starting (or failed to): clean up whenever it is done
            spawn.add_done_callback(_kill_when_spawned)
            raise
        _signal_group(proc.pid, signal.SIGKILL)
        try:
            # _exited, not proc.wait(): that also waits for pipes nobody reads any more
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(_exited(proc), 1.0)
        finally:
            _close_transport(proc)
        raise


def _kill_when_spawned(spawn: asyncio.Future) -> None:
    if spawn.cancelled() or spawn.exception() is not None:
        return
    proc = spawn.result()
    _signal_group(proc.pid, signal.SIGKILL)
    _close_transport(proc)


def _close_transport(proc: asyncio.subprocess.Process) -> None:
    """Close the child's pipe transport now, on its own loop. Left to the garbage collector it
    is closed after an ``asyncio.run`` loop is gone, and Python reports 'Event loop is closed'."""
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()


async def run_in_group(argv: tuple[str, ...], executable: str, env: Mapping[str, str],
                       timeout: float, output_cap: int, started: float) -> CommandResult:
    """Run ``argv`` (found at ``executable``) to completion or ``timeout`` seconds, whichever
    comes first; ``started`` is when the caller began (``elapsed`` counts from there)."""
    try:
        proc = await _spawn(argv, executable, env)
    except FileNotFoundError:
        return not_found(argv, started)
    except OSError as exc:
        return CommandResult(
            argv, NOT_EXECUTABLE_RETURNCODE, "", f"{argv[0]}: {exc}\n",
            elapsed=time.monotonic() - started,
        )

    out, err = Capture(output_cap), Capture(output_cap)
    readers = [asyncio.ensure_future(_drain(proc.stdout, out)),
               asyncio.ensure_future(_drain(proc.stderr, err))]
    leader = asyncio.ensure_future(_exited(proc))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(asyncio.shield(leader), max(timeout, 0.0))
        except asyncio.TimeoutError:
            timed_out = True
            await _terminate_group(proc)
        else:
            # The leader is done. What is left in the pipes arrives at once, unless a
            # background member of its group holds them open: give that a moment, then end
            # the group.
            left = timeout - (time.monotonic() - started)
            await _finish_readers(readers, max(0.0, min(left, PIPE_GRACE)), cancel=False)
        _signal_group(proc.pid, signal.SIGKILL)
        await _finish_readers(readers, 0.1)
    except BaseException:
        # Cancelled (the consumer stopped, a probe deadline) at any await above, even in the
        # middle of the TERM grace: nothing the command started may outlive this call.
        _signal_group(proc.pid, signal.SIGKILL)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(leader), 1.0)
        await _finish_readers(readers, 0.1)
        raise
    finally:
        leader.cancel()  # done already unless the kernel could not kill the leader
        _close_transport(proc)
    return CommandResult(
        argv=argv,
        returncode=None if timed_out else proc.returncode,
        stdout=out.text(),
        stderr=err.text(),
        timed_out=timed_out,
        elapsed=time.monotonic() - started,
        truncated=bool(out.dropped),
    )


async def _terminate_group(proc: asyncio.subprocess.Process) -> None:
    _signal_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(_exited(proc), KILL_GRACE)
    # Even if the leader obeyed TERM, children that ignore it are still in the group.
    _signal_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(_exited(proc), 1.0)


async def _finish_readers(readers: list[asyncio.Future], wait: float, *,
                          cancel: bool = True) -> None:
    """Collect what reached the pipes; a process that escaped the group may keep a pipe
    open, so end-of-file is awaited for ``wait`` seconds at most."""
    pending = [r for r in readers if not r.done()]
    if pending and wait > 0:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(asyncio.gather(*pending)), wait)
    if cancel:
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
