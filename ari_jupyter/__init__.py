"""ari-jupyter: set up multi-node ARI runs from JupyterLab inside a SLURM allocation.

The core (allocation, probes, ARI rules, emit, doctor) imports no ipywidgets;
``Wizard`` is resolved lazily so ``import ari_jupyter`` stays cheap and works
where ipywidgets is not installed.
"""
from .base.version import __version__

__all__ = ["__version__", "Wizard"]


def _jupyter_labextension_paths():
    """Where JupyterLab finds the prebuilt extension (``jupyter labextension develop``)."""
    return [{"src": "labextension", "dest": "ari-jupyter-labextension"}]


def __getattr__(name):
    if name == "Wizard":
        # cold start: ipywidgets and the wizard load only when Wizard is asked for
        from .widgets.wizard import Wizard

        return Wizard
    raise AttributeError(f"module 'ari_jupyter' has no attribute {name!r}")
