"""Demo sites: a site recorded in a JSON file (real command outputs, environment and mounts)
replayed with ``LocalHost``'s semantics, timeouts included, so the same probe code serves
teaching demos and unit tables.

Apart from ``host`` so that a wizard on a real machine never defines these classes.
"""
from __future__ import annotations

import fnmatch
import json
import os
import posixpath
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from .host import DEFAULT_OUTPUT_CAP, SITES_DIR, Host, SiteError, UnknownSiteError, list_sites
from ..base.mounts import Mount
from ..base.commands import CommandResult, cap_text, command_argv, not_found
from ..i18n import text as catalog_text


@dataclass(frozen=True)
class RecordedCommand:
    """One recorded answer. The first recording whose pattern matches a command answers it.

    Matching is token by token: ``*``/``?`` glob inside a token (``*`` spans newlines, so a
    ``bash -c`` script can be matched by its tail); a final ``**`` matches any rest, even
    none. ``rest_each`` (globs) instead requires one or more further arguments, each matching
    one of them: ``module load "$@"`` over the modules a site really has, while a later
    ``**`` recording answers any other list with the site's error.
    """

    argv: tuple[str, ...]
    stdout: str = ""
    stderr: str = ""
    returncode: int = 0
    delay: float = 0.0
    rest_each: tuple[str, ...] = ()

    def matches(self, argv: Sequence[str]) -> bool:
        pattern = self.argv
        if self.rest_each:
            rest = argv[len(pattern):]
            return (len(argv) > len(pattern)
                    and all(_token_matches(p, a) for p, a in zip(pattern, argv))
                    and all(any(_token_matches(g, a) for g in self.rest_each) for a in rest))
        if pattern and pattern[-1] == "**":
            pattern = pattern[:-1]
            if len(argv) < len(pattern):
                return False
            argv = argv[: len(pattern)]
        if len(argv) != len(pattern):
            return False
        return all(_token_matches(p, a) for p, a in zip(pattern, argv))


def _string_tuple(value: Any) -> tuple[str, ...]:
    """A JSON list of strings; a bare string would silently become its characters."""
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"expected a list of strings, got {value!r}")
    return tuple(value)


def _token_matches(pattern: str, token: str) -> bool:
    if pattern == token:
        return True
    if "*" not in pattern and "?" not in pattern:
        return False
    return fnmatch.fnmatchcase(token, pattern.replace("[", "[[]"))


@dataclass
class RecordedSite(Host):
    """A site replayed from a JSON recording (see ``ari_jupyter/hosts/sites/*.json``)."""

    name: str
    description: str = ""
    env: dict[str, str] = field(default_factory=dict)
    mount_table: list[Mount] = field(default_factory=list)
    programs: dict[str, str] = field(default_factory=dict)
    commands: list[RecordedCommand] = field(default_factory=list)
    symlinks: dict[str, str] = field(default_factory=dict)
    runs: tuple[str, ...] = ()
    """The recorded runs this site shows (``hosts/runs/<run_id>.json``, see ``recorded_run``)."""
    output_cap: int = DEFAULT_OUTPUT_CAP

    @property
    def is_demo(self) -> bool:
        return True

    # -- loading -------------------------------------------------------------------------------

    @classmethod
    def load(cls, name_or_path: str | os.PathLike) -> "RecordedSite":
        """A bundled site by name (``sx40``) or any site file by path."""
        text = str(name_or_path)
        looks_like_path = text.endswith(".json") or os.sep in text or Path(text).is_file()
        path = Path(text) if looks_like_path else SITES_DIR / f"{text}.json"
        if not path.is_file():
            if looks_like_path:
                raise SiteError(catalog_text("site.file_not_found", path=text))
            raise UnknownSiteError(catalog_text("site.unknown", name=repr(text),
                                                available=", ".join(list_sites()) or "-"))
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SiteError(f"cannot read site file {path}: {exc}") from exc
        return cls.from_dict(data, default_name=path.stem)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], default_name: str = "site") -> "RecordedSite":
        if not isinstance(data, Mapping):
            raise SiteError("a site must be a JSON object")
        try:
            env = {str(k): str(v) for k, v in (data.get("env") or {}).items()}
            mounts = [
                Mount(str(m["mountpoint"]), str(m["fstype"]), str(m.get("source", "")))
                for m in data.get("mounts") or []
            ]
            programs = {str(k): str(v) for k, v in (data.get("which") or {}).items()}
            commands = [
                RecordedCommand(
                    argv=tuple(str(a) for a in c["argv"]),
                    stdout=str(c.get("stdout", "")),
                    stderr=str(c.get("stderr", "")),
                    returncode=int(c.get("returncode", 0)),
                    delay=float(c.get("delay", 0.0)),
                    rest_each=_string_tuple(c.get("rest_each", ())),
                )
                for c in data.get("commands") or []
            ]
            symlinks = {str(k): str(v) for k, v in (data.get("symlinks") or {}).items()}
            runs = _string_tuple(data.get("runs") or ())
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SiteError(f"malformed site {data.get('name', default_name)!r}: {exc!r}") from exc
        for command in commands:
            if not command.argv:
                raise SiteError("a recorded command needs a non-empty argv")
        return cls(
            name=str(data.get("name") or default_name),
            description=str(data.get("description", "")),
            env=env,
            mount_table=mounts,
            programs=programs,
            commands=commands,
            symlinks=symlinks,
            runs=runs,
        )

    # -- Host interface ------------------------------------------------------------------------

    def which(self, program: str, env: Mapping[str, str] | None = None) -> str | None:
        if "/" in program:
            return program if program in self.programs.values() else None
        return self.programs.get(program)

    def mounts(self) -> list[Mount]:
        return list(self.mount_table)

    def realpath(self, path: str) -> str:
        """Normalise against the recorded home and follow the recorded symlinks (longest first)."""
        if path.startswith("~"):
            path = (self.home or "/") + path[1:]
        if not path.startswith("/"):
            path = posixpath.join(self.env.get("PWD") or self.home or "/", path)
        path = posixpath.normpath(path)
        for _ in range(40):  # symlink loops end somewhere
            for link in sorted(self.symlinks, key=len, reverse=True):
                if path == link or path.startswith(link.rstrip("/") + "/"):
                    path = posixpath.normpath(self.symlinks[link] + path[len(link):])
                    break
            else:
                return path
        return path

    def _program_name(self, program: str) -> str | None:
        if "/" not in program:
            return program if program in self.programs else None
        for name, location in self.programs.items():
            if location == program:
                return name
        return None

    async def run(
        self, argv: Sequence[str], timeout: float, env: Mapping[str, str] | None = None
    ) -> CommandResult:
        argv, started = command_argv(argv), time.monotonic()
        program = self._program_name(argv[0])
        if program is None:
            return not_found(argv, started)
        lookup = (program,) + argv[1:]
        recorded = next((c for c in self.commands if c.matches(lookup)), None)
        if recorded is None:
            return CommandResult(
                argv, 2, "",
                f"{argv[0]}: demo site {self.name!r} has no recording for `{shlex.join(argv)}`\n",
                elapsed=time.monotonic() - started,
            )
        if recorded.delay >= timeout:
            await _sleep(max(timeout, 0.0))
            return CommandResult(
                argv, None, "", "", timed_out=True, elapsed=time.monotonic() - started
            )
        if recorded.delay > 0:
            await _sleep(recorded.delay)
        return CommandResult(
            argv=argv,
            returncode=recorded.returncode,
            stdout=cap_text(recorded.stdout, self.output_cap),
            stderr=cap_text(recorded.stderr, self.output_cap),
            elapsed=time.monotonic() - started,
            truncated=len(recorded.stdout.encode("utf-8", errors="replace")) > self.output_cap,
        )


async def _sleep(seconds: float) -> None:
    """``asyncio.sleep``: a recorded answer's delay, as the site took it."""
    import asyncio  # cold start: runs on a loop, so asyncio is loaded; Wizard(site=...) does not load it

    await asyncio.sleep(seconds)
