"""What a typed module name means on this site: one of ``module avail``'s names, or why not.

The wizard's module picker asks this for every entry, so a partial name such as ``openmpi``
is answered with the names it could mean instead of being dropped without a word.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Sequence

from .prelude import module_name_problem

MAX_CANDIDATES = 8

# The module systems' own modulefiles, listed by `module avail` beside the site's software:
# Lmod's (lmod, settarg, under Core/ on Debian) and Environment Modules' (dot, module-git,
# module-info, modules, null, use.own). Loading one does nothing for a run, so they are not
# suggested (typing one still gets an answer).
MODULE_SYSTEM_OWN = frozenset({"lmod", "settarg", "dot", "module-git", "module-info", "modules",
                               "null", "use.own"})


@dataclass(frozen=True)
class ModuleChoice:
    """``name`` when accepted; otherwise ``reason`` ("invalid", "unknown") and ``candidates``."""

    typed: str
    name: str | None
    reason: str = ""
    problem: str = ""
    candidates: tuple[str, ...] = ()

    @property
    def accepted(self) -> bool:
        return self.name is not None


def software_modules(names: Sequence[str]) -> list[str]:
    """``names`` without the module system's own modulefiles, in their order."""
    return [name for name in names if name.removeprefix("Core/") not in MODULE_SYSTEM_OWN]


def choose_module(typed: str, offered: Sequence[str]) -> ModuleChoice:
    """Accept ``typed`` when the site offers it (or offers no list to check against)."""
    text = typed.strip()
    problem = module_name_problem(text)
    if problem:
        return ModuleChoice(typed, None, "invalid", problem=problem)
    if not offered or text in offered:
        return ModuleChoice(typed, text)
    folded = text.casefold()
    starts = [name for name in offered if name.casefold().startswith(folded)]
    contains = [name for name in offered if folded in name.casefold() and name not in starts]
    # a typo (openmpi/4.l): the close names the validator names for `emit --module`
    close = [name for name in difflib.get_close_matches(text, list(offered), n=3)
             if name not in starts and name not in contains]
    return ModuleChoice(typed, None, "unknown",
                        candidates=tuple((starts + contains + close)[:MAX_CANDIDATES]))
