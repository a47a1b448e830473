"""ipywidgets views over the core: one module per wizard step plus ``wizard.Wizard``.

This is the only package (with ``server/``) that imports ipywidgets; every decision it shows
comes from the core (allocation, probes, ari/, model, emit).
"""
from .wizard import Wizard

__all__ = ["Wizard"]
