"""The host a command or the wizard works on: this machine, or a recorded demo site by name."""
from __future__ import annotations

from .host import Host, LocalHost


def open_host(site: str | None = None) -> Host:
    """The real machine, or a demo site when ``site`` names one."""
    if not site:
        return LocalHost()
    from .recorded_site import RecordedSite  # cold start: a demo site's reader loads for a demo site only

    return RecordedSite.load(site)
