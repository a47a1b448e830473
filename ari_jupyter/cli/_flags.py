"""Messages that name the flags of the command that was run.

The probes' fixes are written once, in the words of ``ari-jupyter probe`` (``--checkpoint-dir``,
``--timeout``), and the core's refusals name no flag at all ("force writes it anyway"): the
wizard shows the same texts beside its own buttons. Each command passes what it prints through
``speak`` so that ``emit`` says ``--workspace``/``--probe-timeout``/``--force`` and
``check-handoff`` points at the command that writes a checkpoint.
"""
from __future__ import annotations

import re

_SAYINGS: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "probe": (),
    "emit": (
        (re.compile(r"(?<![\w-])--checkpoint-dir(?![\w-])"), "--workspace"),
        (re.compile(r"(?<![\w-])--timeout(?![\w-])"), "--probe-timeout"),
        (re.compile(r"\(force writes it anyway\)"), "(--force writes it anyway)"),
        (re.compile(r"or force an overwrite"), "or add --force to overwrite"),
        # the same refusals in Japanese and Chinese (messages/handoff.json)
        (re.compile(r"（強制すれば書き出せます）"), "（--force を付ければ書き出せます）"),
        (re.compile(r"選ぶか、上書きしてください"), "選ぶか、--force を付けて上書きしてください"),
        (re.compile(r"（强制仍可写出）"), "（加 --force 仍可写出）"),
        (re.compile(r"或者覆盖它"), "或者加 --force 覆盖它"),
    ),
    "check-handoff": (
        (re.compile(r"e\.g\. --checkpoint-dir (\S+?)(?=[.,;]?(?:\s|$))"),
         r"e.g. `ari-jupyter emit --workspace \1 ...` (then check the new checkpoint)"),
        # the same fix in Japanese and Chinese (messages/probes.json)
        (re.compile(r"(例: |例如 )--checkpoint-dir (\S+?)(?=[。（(]|\s|$)"),
         r"\1`ari-jupyter emit --workspace \2 ...`"),
        # with no network filesystem mounted: the folder the site names
        (re.compile(r"then pass that folder with --checkpoint-dir"),
         "then write a new checkpoint there with `ari-jupyter emit --workspace <folder> ...`"),
        (re.compile(r"そのフォルダを --checkpoint-dir で指定してください"),
         "そこに `ari-jupyter emit --workspace <フォルダ> ...` でチェックポイントを書き出し直してください"),
        (re.compile(r"再用 --checkpoint-dir 指定那个文件夹"),
         "再用 `ari-jupyter emit --workspace <文件夹> ...` 在那里重新写出检查点"),
    ),
}


def speak(command: str, text: str) -> str:
    """``text`` with the flags of other commands replaced by those of ``command``."""
    for pattern, replacement in _SAYINGS.get(command, ()):
        text = pattern.sub(replacement, text)
    return text


def rewritten_sources(command: str) -> tuple[str, ...]:
    """The patterns ``speak`` rewrites for ``command`` (a test checks each still occurs)."""
    return tuple(pattern.pattern for pattern, _ in _SAYINGS.get(command, ()))
