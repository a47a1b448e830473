"""The host a command or the wizard works on: this machine, or a recorded demo site by name."""
from __future__ import annotations

from .host import Host, LocalHost
from .recorded_site import RecordedSite


def open_host(site: str | None = None) -> Host:
    """The real machine, or a demo site when ``site`` names one."""
    if not site:
        return LocalHost()

    return RecordedSite.load(site)
