"""Why a checkpoint was not written (or read): each error says why and what to do."""
from __future__ import annotations

from typing import Iterable


class EmitError(Exception):
    """Nothing (or nothing new) was written; the message says why and what to do."""


class EmitBlocked(EmitError):
    """The state has blocking problems."""

    def __init__(self, problems: list):
        self.problems = list(problems)
        lines = [f"- {p.field}: {p.message}" + (f" ({p.fix})" if p.fix else "") for p in self.problems]
        super().__init__("cannot write the checkpoint:\n" + "\n".join(lines))


class CheckpointExists(EmitError):
    """The checkpoint (or its hand-off script) exists and ``force`` was not given; ``files``
    names what exists (the wizard asks with them in its own words)."""

    def __init__(self, message: str, files: Iterable[str] = ()):
        super().__init__(message)
        self.files = tuple(files)


class CheckpointInUse(EmitError):
    """ARI (or the hand-off starting it) runs in this checkpoint: its files are not replaced,
    not even with ``force``."""


class CheckpointLocked(EmitError):
    """Another writer holds the lock for this run id."""


class NodeLocalWorkspace(EmitError):
    """The shared-filesystem probe says other nodes cannot see the workspace; ``verdict`` is
    that probe's result (the wizard asks with it in its own words)."""

    def __init__(self, message, verdict=None):
        super().__init__(message)
        self.verdict = verdict


class UnsafeWorkspace(EmitError):
    """Another user owns or can write a folder the checkpoint or its hand-off goes into; the
    message says which and how to fix the workspace. ``problem``: ``ownership.Unsafe``."""

    def __init__(self, message, problem=None):
        super().__init__(message)
        self.problem = problem
