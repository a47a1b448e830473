"""The site's config for a command, with one warning line per value that was left out."""
from __future__ import annotations

import sys
from typing import Optional, TextIO
from ..wizard.config import site_config


def command_config(command: str, stderr: Optional[TextIO] = None):
    """``AriWizard`` from the Jupyter config files; each bad key is named on stderr and
    dropped on its own (the rest of its file still applies)."""
    stderr = stderr or sys.stderr
    config, problems = site_config()
    for problem in problems:
        stderr.write(f"ari-jupyter {command}: warning: {problem}\n")
    return config
