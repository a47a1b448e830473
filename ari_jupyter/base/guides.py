"""The user guides shipped with the package (``ari_jupyter/guides/*.md``, the same files as
``docs/``): which file answers a guide name in a language, and the address under which the
server extension shows it (``<base_url>ari-jupyter/guides/<file>``).

A message that sends the reader to a guide names it through :func:`guide_hint`, never as a
path of the source tree: ``docs/`` exists only in a clone.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

GUIDES_DIR = Path(__file__).resolve().parent.parent / "guides"
"""Where the guides are installed (package data)."""

GUIDES = ("wizard", "runs", "teaching", "admin", "cli", "configuration", "compat")
"""Every shipped guide, by name; ``<name>.md`` is English, ``<name>.<lang>.md`` a translation."""

ROUTE = "ari-jupyter/guides"
"""The server extension's route for the guides, under the server's base URL."""


def guide_file(name: str, lang: str = "en") -> str:
    """The file name of guide ``name`` in ``lang``, the English one when there is no
    translation. ValueError for a name that is not a shipped guide."""
    if name not in GUIDES:
        raise ValueError(f"no guide {name!r}; the guides are {', '.join(GUIDES)}")
    translated = f"{name}.{lang}.md"
    if lang != "en" and (GUIDES_DIR / translated).is_file():
        return translated
    return f"{name}.md"


def guide_path(name: str, lang: str = "en") -> Path:
    """The installed file of guide ``name`` in ``lang`` (see :func:`guide_file`)."""
    return GUIDES_DIR / guide_file(name, lang)


def base_url(env: Mapping[str, str] | None = None) -> str:
    """The Jupyter server's base URL as a kernel sees it: JupyterHub's per-user prefix
    (``JUPYTERHUB_SERVICE_PREFIX``, which the single-user server passes to its kernels), else
    ``/``; always with a trailing slash."""
    env = os.environ if env is None else env
    prefix = env.get("JUPYTERHUB_SERVICE_PREFIX") or "/"
    return prefix if prefix.endswith("/") else prefix + "/"


def guide_url(name: str, lang: str = "en", anchor: str = "",
              env: Mapping[str, str] | None = None) -> str:
    """The address of guide ``name`` in ``lang`` on this Jupyter server, at ``#anchor``."""
    url = f"{base_url(env)}{ROUTE}/{guide_file(name, lang)}"
    return f"{url}#{anchor}" if anchor else url


def guide_hint(name: str) -> str:
    """How a message names guide ``name`` wherever it is read (a terminal, a log): the command
    that shows where the installed copy is."""
    guide_file(name)  # a name that is not a guide fails here, not in front of a user
    return f"ari-jupyter guide {name}"
