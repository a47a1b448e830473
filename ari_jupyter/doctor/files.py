"""The files of a checkpoint worth showing the doctor, for the wizard's "pick a file" list."""
from __future__ import annotations

from pathlib import Path

_FIXED = ("experiment.md", "repro_sandbox/reproduce.sh", "repro_sandbox/submission/reproduce.sh",
          "repro_sandbox/reproduce.log")
_LOG_GLOBS = ("ari_run_*.log", "*.log")


def checkpoint_files(checkpoint_dir: str | Path) -> list[Path]:
    """Run logs (newest first), then experiment.md and the reproduce script and log, if present."""
    root = Path(checkpoint_dir)
    if not root.is_dir():
        return []
    logs: list[Path] = []
    for pattern in _LOG_GLOBS:
        for path in root.glob(pattern):
            if path.is_file() and path not in logs:
                logs.append(path)
    logs.sort(key=lambda p: (p.stat().st_mtime, p.name), reverse=True)
    fixed = [root / name for name in _FIXED if (root / name).is_file()]
    return logs + fixed
