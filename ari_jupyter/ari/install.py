"""Where ARI is installed, as ``ari run`` itself would find it: its package and workflow.yaml.

ARI lives in its own environment, not the kernel's, so the ``ari`` command on PATH is asked
first; then an ``ari`` importable here; then ``$ARI_ROOT``.
"""
from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Mapping

from ..i18n import text

NO_ARI = "ARI is not importable in this Python and ARI_ROOT is not set"


def ari_package_of_command(search_path: str) -> tuple[str, Path] | None:
    """(the ``ari`` program on ``search_path``, the ``ari`` package its Python imports), or None.

    Read, not run: the console script's first line names ARI's Python; that environment's
    ``ari-core`` distribution says where its package lives (its ``direct_url.json``, PEP 610,
    for ARI's own editable install; else the package beside the metadata). Running ARI's Python
    to ask would hold up the wizard for as long as an interpreter takes to start.
    """
    import importlib.metadata
    import shutil
    from urllib.parse import unquote, urlparse

    program = shutil.which("ari", path=search_path) if search_path else None
    if program is None:
        return None
    prefix = environment_of(program)
    if prefix is None:
        return None
    for site in sorted(prefix.glob("lib/python3*/site-packages")):
        for dist in importlib.metadata.distributions(name="ari-core", path=[str(site)]):
            try:
                direct = json.loads(dist.read_text("direct_url.json") or "{}")
            except ValueError:
                direct = {}
            url = urlparse(direct.get("url", "") if isinstance(direct, dict) else "")
            if url.scheme == "file" and (direct.get("dir_info") or {}).get("editable"):
                return program, Path(unquote(url.path)) / "ari"
            return program, Path(str(dist.locate_file("ari")))
    return None


def environment_of(program: str | Path) -> Path | None:
    """The environment (``<prefix>``) of a console script whose first line names its Python
    (``#!<prefix>/bin/python``); None for anything else (``#!/usr/bin/env``, not a script)."""
    try:
        with open(program, "rb") as handle:
            first = handle.readline(4096)
    except OSError:
        return None
    words = first[2:].split() if first.startswith(b"#!") else []
    if not words or Path(os.fsdecode(words[0])).name == "env":
        return None  # not a console script naming its interpreter
    return Path(os.fsdecode(words[0])).parent.parent


def find_ari_workflow(env: Mapping[str, str] | None = None) -> tuple[Path | None, str]:
    """ARI's packaged ``workflow.yaml`` and how it was found, or (None, why not).

    Looks where ``ari run`` itself does (``ari-core/config/workflow.yaml`` next to the ``ari``
    package): first in the ARI of the ``ari`` command on PATH, the one the hand-off runs (ARI
    has its own environment, not the kernel's); then in an ``ari`` importable here; then under
    ``$ARI_ROOT``.
    """
    env = os.environ if env is None else env
    looked: list[str] = []
    packages = []
    command = ari_package_of_command(env.get("PATH", ""))
    if command is not None:
        packages.append((command[1], text("emit.how.command", program=command[0],
                                          package=str(command[1]))))
    try:
        spec = importlib.util.find_spec("ari")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        package = Path(spec.origin).resolve().parent
        packages.append((package, text("emit.how.package", package=str(package))))
    for package, how in packages:
        for candidate in (package.parent / "config" / "workflow.yaml", package / "config" / "workflow.yaml"):
            if candidate.is_file():
                return candidate, how
            looked.append(str(candidate))
    root = env.get("ARI_ROOT", "").strip()
    if root:
        candidate = Path(root) / "ari-core" / "config" / "workflow.yaml"
        if candidate.is_file():
            return candidate, text("emit.how.ari_root", root=root)
        looked.append(str(candidate))
    if looked:
        return None, text("emit.why.not_found", looked=", ".join(looked))
    return None, NO_ARI
