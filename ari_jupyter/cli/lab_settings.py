"""The language JupyterLab is set to, read from its user settings.

``ari-jupyter lab`` places the wizard notebook in the language the lab will show (as the
launcher card does), not in the terminal's locale: a terminal with ``LANG=C`` would otherwise
place an English notebook into a lab the user set to Japanese. Our own setting (Settings >
ARI Jupyter > Wizard language) comes first, then JupyterLab's Settings > Language.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping
from ..i18n import normalize_lang

OUR_SETTINGS = Path("ari-jupyter-labextension", "plugin.jupyterlab-settings")
LAB_LANGUAGE_SETTINGS = Path("@jupyterlab", "translation-extension", "plugin.jupyterlab-settings")


def settings_dir(env: Mapping[str, str]) -> Path:
    """Where JupyterLab keeps the user's settings: JUPYTERLAB_SETTINGS_DIR, else
    ``<Jupyter config dir>/lab/user-settings`` (jupyterlab.commands.get_user_settings_dir's
    rule, read from ``env`` rather than this process's environment)."""
    explicit = env.get("JUPYTERLAB_SETTINGS_DIR")
    if explicit:
        return Path(explicit)
    config_dir = env.get("JUPYTER_CONFIG_DIR")
    if not config_dir:
        from jupyter_core.paths import jupyter_config_dir

        config_dir = jupyter_config_dir()
    return Path(config_dir, "lab", "user-settings")


def read_settings(path: Path) -> dict:
    """A settings file's values; empty when it is missing or not readable as settings. The
    files are JSON5 (a "// title" header, comments), read as JupyterLab's server reads them."""
    import json5  # JupyterLab's own settings parser (a dependency of jupyterlab_server)

    try:
        values = json5.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return values if isinstance(values, dict) else {}


def lab_language(env: Mapping[str, str]) -> str | None:
    """The wizard language the lab will use: our setting, else JupyterLab's locale ("ja_JP"
    is "ja"); None when neither names a language the wizard speaks."""
    folder = settings_dir(env)
    for path, key in ((OUR_SETTINGS, "wizardLanguage"), (LAB_LANGUAGE_SETTINGS, "locale")):
        value = read_settings(folder / path).get(key)
        lang = normalize_lang(value) if isinstance(value, str) else None
        if lang:
            return lang
    return None
