"""The environment of a command a test runs as a user would: no allocation, no ARI settings."""
from __future__ import annotations

import os

KEPT = ("ARI_JUPYTER_WORKSPACES_FILE",)
"""Kept although it starts with ARI_: without it a command records its workspace in the
user's own list (conftest gives the tests a list of their own)."""


def env_without(*prefixes: str) -> dict[str, str]:
    """``os.environ`` without the variables starting with one of ``prefixes`` (except KEPT)."""
    return {name: value for name, value in os.environ.items()
            if name in KEPT or not name.startswith(prefixes)}
