"""The seam between the probes and a machine: environment, ``which``, commands, mounts.

Probes never touch ``os``/``subprocess`` directly; they ask a :class:`Host`. ``LocalHost`` is the
machine this process runs on. ``recorded_site.RecordedSite`` replays a site recorded in a JSON
file with the same semantics, timeouts included.

Commands run without a shell, in their own session: on timeout or cancellation the whole process
group is killed (TERM, then KILL) so that nothing a probe started outlives it (``process``);
``mounts`` reads the mount table.
"""
from __future__ import annotations

import os
import shutil
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

from ..base.commands import command_argv, not_found
from ..base.mounts import parse_mountinfo

if TYPE_CHECKING:
    from ..base.mounts import Mount
    from ..base.commands import CommandResult

DEFAULT_OUTPUT_CAP = 1 << 20
"""Bytes kept per stream; a runaway command must not fill the kernel's memory."""

SITES_DIR = Path(__file__).with_name("sites")


# ---------------------------------------------------------------------------------------------
# hosts


class Host:
    """What probes may know about a machine. Subclasses: LocalHost, RecordedSite."""

    name: str = "host"
    description: str = ""
    env: Mapping[str, str]

    def which(self, program: str) -> str | None:
        raise NotImplementedError

    async def run(
        self, argv: Sequence[str], timeout: float, env: Mapping[str, str] | None = None
    ) -> CommandResult:
        raise NotImplementedError

    def mounts(self) -> list[Mount]:
        raise NotImplementedError

    def realpath(self, path: str) -> str:
        raise NotImplementedError

    @property
    def home(self) -> str | None:
        return self.env.get("HOME") or None

    @property
    def is_demo(self) -> bool:
        return False


class LocalHost(Host):
    """The machine this process runs on."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        mountinfo_path: str = "/proc/self/mountinfo",
    ) -> None:
        self.env = dict(os.environ if env is None else env)
        self.output_cap = output_cap
        self.mountinfo_path = mountinfo_path
        self.name = socket.gethostname() or "localhost"
        self.description = "this machine"

    def which(self, program: str, env: Mapping[str, str] | None = None) -> str | None:
        search = (env if env is not None else self.env).get("PATH", os.defpath)
        return shutil.which(program, path=search)

    def mounts(self) -> list[Mount]:
        try:
            with open(self.mountinfo_path, encoding="utf-8", errors="replace") as handle:
                return parse_mountinfo(handle.read())
        except OSError:
            return []

    def realpath(self, path: str) -> str:
        return os.path.realpath(os.path.expanduser(path))

    async def run(
        self, argv: Sequence[str], timeout: float, env: Mapping[str, str] | None = None
    ) -> CommandResult:
        # cold start: base.process (asyncio's subprocesses) loads with the first command run
        from ..base.process import run_in_group

        argv, started = command_argv(argv), time.monotonic()
        run_env = dict(self.env if env is None else env)
        executable = self.which(argv[0], run_env)
        if executable is None:
            return not_found(argv, started)
        return await run_in_group(argv, executable, run_env, timeout, self.output_cap, started)


# ---------------------------------------------------------------------------------------------
# recorded demo sites


class SiteError(ValueError):
    """A site file is missing or malformed."""


class UnknownSiteError(SiteError, LookupError):
    """No demo site by that name."""


def list_sites() -> list[str]:
    """Names of the bundled demo sites (a plain listing: ``Path.glob`` compiles a pattern, a
    cost step 1 of ``Wizard()`` would pay in every fresh kernel)."""
    return sorted(name[:-len(".json")] for name in os.listdir(SITES_DIR) if name.endswith(".json"))


