"""Input a command cannot read, said in the user's language."""
from __future__ import annotations

from ..i18n import Text


def cannot_read(path: str, exc: BaseException) -> Text:
    """"<path> does not exist", or "cannot read <path>: <the system's reason>"."""
    if isinstance(exc, FileNotFoundError):
        return Text("cli.file_missing", {"path": str(path)})
    return Text("cli.cannot_read", {"path": str(path), "error": getattr(exc, "strerror", None) or str(exc)})
