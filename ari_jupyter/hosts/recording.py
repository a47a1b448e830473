"""Record this machine as a demo site: what the probes ran and saw, replayable by RecordedSite.

A teacher runs ``ari-jupyter probe --record-site mycluster.json`` once inside an allocation
on the real cluster; ``--site mycluster.json`` (or ``Wizard(site=...)``) then gives the same
verdicts anywhere, without SLURM. What is kept: every command a probe ran (argv, output, exit
status; a command that timed out replays as one that hangs), where ``which`` found each
program, the mount table, the paths the probes resolved, and the environment variables the
probes and the allocation read. Outputs and variables pass through the same redaction as
probe evidence, so no secret reaches the file.
"""
from __future__ import annotations

import os
import posixpath
from typing import Any, Mapping, Sequence

from .host import Host
from ..base.mounts import Mount
from ..base.commands import CommandResult
from ..base.redact import redact, redact_env

# The environment a site file keeps: what allocation.py, the probes and the wizard read.
KEPT_PREFIXES = ("SLURM_", "SBATCH_", "SALLOC_", "SRUN_", "CUDA_", "LMOD_", "MODULE", "ARI_",
                 "LC_")
KEPT_NAMES = frozenset({"HOME", "USER", "LOGNAME", "PWD", "PATH", "LANG", "MODULEPATH",
                        "MODULESHOME", "LOADEDMODULES", "BASH_ENV", "NVIDIA_VISIBLE_DEVICES"})
HANG_DELAY_S = 3600.0  # replayed as a command that never answers within any probe timeout


def kept_env(env: Mapping[str, str]) -> dict[str, str]:
    """The variables a site file records, redacted, in name order."""
    kept = {k: v for k, v in env.items() if k in KEPT_NAMES or k.startswith(KEPT_PREFIXES)}
    return dict(sorted(redact_env(kept).items()))


class RecordingHost(Host):
    """Wraps a real host; answers exactly as it does and notes everything for ``to_site``."""

    def __init__(self, inner: Host) -> None:
        self.inner = inner
        self.env = inner.env
        self.name = inner.name
        self.description = inner.description
        self.programs: dict[str, str] = {}
        self.commands: list[dict[str, Any]] = []
        self.symlinks: dict[str, str] = {}
        self.mount_table: list[Mount] | None = None

    # -- Host interface -----------------------------------------------------------------------

    def which(self, program: str, env: Mapping[str, str] | None = None) -> str | None:
        found = self.inner.which(program, env) if env is not None else self.inner.which(program)
        if found:
            # A program asked for by path ($LMOD_CMD) replays under its base name.
            self.programs.setdefault(posixpath.basename(program), program if "/" in program else found)
        return found

    async def run(self, argv: Sequence[str], timeout: float,
                  env: Mapping[str, str] | None = None) -> CommandResult:
        result = await self.inner.run(argv, timeout, env)
        if not result.not_found:
            self._note(tuple(str(a) for a in argv), result)
        return result

    def mounts(self) -> list[Mount]:
        table = self.inner.mounts()
        self.mount_table = list(table)
        return table

    def realpath(self, path: str) -> str:
        resolved = self.inner.realpath(path)
        asked = os.path.normpath(os.path.join(os.getcwd(), os.path.expanduser(path)))
        if resolved != asked:
            self.symlinks[asked] = resolved
        return resolved

    # -- the site file ------------------------------------------------------------------------

    def _note(self, argv: tuple[str, ...], result: CommandResult) -> None:
        name = posixpath.basename(argv[0])
        if name not in self.programs:
            self.which(argv[0])
        recorded = (name, *argv[1:])
        if any(tuple(c["argv"]) == recorded for c in self.commands):
            return  # the first answer is the one replayed
        entry: dict[str, Any] = {"argv": list(recorded)}
        if result.timed_out:
            entry["delay"] = HANG_DELAY_S
        else:
            entry.update(stdout=redact(result.stdout, self.env), stderr=redact(result.stderr, self.env),
                         returncode=result.returncode)
        self.commands.append(entry)

    def to_site(self, name: str, description: str = "") -> dict[str, Any]:
        """The recording as a site JSON object (the format of ``ari_jupyter/hosts/sites/*.json``)."""
        env = kept_env(self.env)
        env["PWD"] = os.getcwd()  # realpath() keyed relative paths on it: replay resolves the same
        return {
            "name": name,
            "description": description or f"Recorded on {self.name} by `ari-jupyter probe "
                                          "--record-site`.",
            "env": env,
            "mounts": [{"mountpoint": m.mountpoint, "fstype": m.fstype, "source": m.source}
                       for m in self.mount_table or []],
            "symlinks": dict(sorted(self.symlinks.items())),
            "which": dict(sorted(self.programs.items())),
            "commands": self.commands,
        }
