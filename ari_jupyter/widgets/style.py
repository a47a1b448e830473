"""The wizard's one stylesheet (wizard.css), shown once per wizard as a ``<style>`` element.

The wizard's header (an HTML widget) carries it, so the sheet reaches the wizard wherever
ipywidgets render: JupyterLab, Notebook 7 and Voilà, with or without the lab extension. Every
rule is scoped under ``.ari-wizard`` and built on JupyterLab's ``--jp-*`` theme variables, so the
wizard follows Light and Dark.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

STYLESHEET = Path(__file__).with_name("wizard.css")


@lru_cache(maxsize=None)
def css() -> str:
    return STYLESHEET.read_text(encoding="utf-8")
