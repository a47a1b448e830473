"""``ari-jupyter status``'s lines for the newer ARI's submission ledger (``runs.ledger``)."""
from __future__ import annotations

import json
from typing import Any

from ..i18n import say, t


def ledger_lines(ledger: dict[str, Any] | None, lang: str = "en") -> list[str]:
    """Every job the ledger recorded: its id and handle, then its exact request (one JSON line,
    as ARI recorded it); [] when the run keeps no ledger."""
    if not ledger:
        return []
    if ledger.get("problem"):
        return [t("runs.ledger.problem", lang, path=ledger["path"],
                  problem=say(ledger["problem"], lang))]
    entries = ledger.get("entries") or []
    lines = [t("runs.ledger.header", lang, path=ledger["path"], count=len(entries))]
    for entry in entries:
        handle = entry.get("handle") or {}
        lines.append(t("runs.ledger.entry", lang, job_id=entry.get("job_id") or "-",
                       state=entry.get("state", ""), kind=entry.get("kind", ""),
                       handle=handle.get("handle_id") or "-",
                       submitted=handle.get("submitted_at") or entry.get("claimed_at", "")))
        lines.append("      " + json.dumps(entry.get("request"), sort_keys=True,
                                           ensure_ascii=False, separators=(",", ":")))
    return lines
