"""Read a shell script as logical command lines with their first physical line number."""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WRAPPERS = {"exec", "nohup", "time", "command", "builtin", "env", "stdbuf", "nice"}

SETUP_COMMANDS = frozenset("""
set export unset module ml source . cd pushd popd mkdir echo printf cp mv rm ln tar unzip gzip
eval conda pip pip3 git wget curl if then else elif fi for do done while until case esac function
local declare readonly trap exit return true false test [ [[ which type hash ulimit umask sleep wait
cat ls chmod chown touch tee date hostname shift read { } ( ) : sed awk grep head tail sort uniq wc
cut tr find xargs basename dirname realpath readlink printenv env_setup shopt alias let
""".split())
"""Commands that prepare the job rather than run the experiment (no fan-out needed)."""

BUILD_COMMANDS = frozenset("""
make cmake ninja gcc g++ cc c++ gfortran mpicc mpicxx mpic++ mpif90 mpifort nvcc icc icpc icx icpx
ifort ifx aocc clang clang++ javac cargo go meson
""".split())
"""Build tools: module loads must come before them (L5)."""

LAUNCHERS = frozenset({"srun", "mpirun", "mpiexec", "orterun"})


@dataclass(frozen=True)
class Command:
    line: int
    text: str
    words: tuple[str, ...]

    @property
    def program(self) -> str:
        """The program that actually runs, past ``VAR=x`` and wrappers like ``timeout 60``."""
        words = list(self.words)
        while words:
            head = words[0]
            if _ASSIGNMENT.match(head):
                words.pop(0)
            elif head in _WRAPPERS:
                words.pop(0)
            elif head == "timeout":
                words.pop(0)
                while words and (words[0].startswith("-") or re.fullmatch(r"[\d.]+[smhd]?", words[0])
                                 or words[0].startswith("$")):
                    words.pop(0)
            else:
                return head
        return ""

    @property
    def is_setup(self) -> bool:
        prog = self.program
        if not prog:
            return True
        if prog in {"python", "python3"} and len(self.words) > 2 and self.words[1:3] == ("-m", "pip"):
            return True
        return prog in SETUP_COMMANDS or prog.endswith(("()", "{"))

    @property
    def is_build(self) -> bool:
        return self.program in BUILD_COMMANDS

    @property
    def is_run(self) -> bool:
        """Runs the experiment: anything that is neither setup nor build."""
        return not self.is_setup and not self.is_build


def raw_words(text: str) -> list[str]:
    """Split on unquoted blanks but keep each word as written (quotes, ``$VARS``, ``>``)."""
    words: list[str] = []
    current: list[str] = []
    quote = ""
    escaped = False
    for ch in text:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\" and quote != "'":
            current.append(ch)
            escaped = True
        elif quote:
            current.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            current.append(ch)
            quote = ch
        elif ch.isspace():
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        words.append("".join(current))
    return words


def _split_words(text: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(text, comments=True))
    except ValueError:  # unbalanced quotes: fall back to whitespace
        return tuple(text.split())


def commands(text: str) -> list[Command]:
    """Logical lines (backslash continuations joined), comments and blanks dropped.

    Lines joined with ``;``/``&&`` stay one command; the first program decides its class,
    which is what a reader of ``reproduce.sh`` sees first.
    """
    result: list[Command] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
            stripped = raw.strip()
            if not stripped or stripped.startswith("#"):
                continue
        if raw.rstrip().endswith("\\"):
            pending.append(raw.rstrip()[:-1])
            continue
        pending.append(raw)
        joined = " ".join(part.strip() for part in pending)
        pending = []
        words = _split_words(joined)
        if words:
            result.append(Command(start, joined, words))
    if pending:
        joined = " ".join(part.strip() for part in pending)
        result.append(Command(start, joined, _split_words(joined)))
    return result


def comment_lines(text: str, prefix: str) -> list[int]:
    """1-based numbers of lines whose stripped text starts with ``prefix``."""
    return [n for n, raw in enumerate(text.splitlines(), start=1) if raw.strip().startswith(prefix)]
