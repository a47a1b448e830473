"""Site defaults for the wizard, set by admins through ordinary Jupyter config files.

A site admin drops ``ari_jupyter_config.py`` (``c.AriWizard.workspace_template = ...``) or
``ari_jupyter_config.json`` into any Jupyter config directory (``jupyter --paths``); later
directories in that list are system-wide, earlier ones (the user's) win. The environment
variable ``ARI_JUPYTER_DEMO_SITE`` wins over every file, so ``ari-jupyter lab`` can pick a demo
site for a laptop without touching config. Nothing here imports ipywidgets.
"""
from __future__ import annotations

import getpass
import os
import re
import string
from pathlib import Path
from typing import Iterable, Mapping

from traitlets import Dict, Float, List, Unicode, TraitError, validate
from traitlets.config import Config, Configurable
from traitlets.config.loader import JSONFileConfigLoader, PyFileConfigLoader, ConfigFileNotFound

CONFIG_BASENAME = "ari_jupyter_config"
DEMO_SITE_ENV = "ARI_JUPYTER_DEMO_SITE"
WORKSPACE_PLACEHOLDERS = ("user", "home", "cluster", "job_id")


class AriWizard(Configurable):
    """Defaults the wizard starts from; every value can still be changed in the UI."""

    workspace_template = Unicode(
        "/work/{user}/ari",
        help="Workspace root for new checkpoints. Placeholders: {user}, {home}, {cluster}, "
        "{job_id}. Must resolve to a shared filesystem visible from every node.",
    ).tag(config=True)

    default_partition = Unicode(
        "",
        help="Partition preselected when neither ARI_SLURM_PARTITION nor the allocation names one.",
    ).tag(config=True)

    default_preset = Unicode(
        "",
        help="Execution-profile preset preselected in the wizard (a key of ari.profile.PRESETS).",
    ).tag(config=True)

    probe_timeout = Float(
        10.0, help="Seconds each site probe may take before it reports 'unknown'."
    ).tag(config=True)

    probe_timeouts = Dict(
        value_trait=Float(),
        help="Per-probe timeout overrides in seconds, e.g. {'modules': 30} on slow Lmod sites.",
    ).tag(config=True)

    module_filter = Unicode(
        "",
        help="Regular expression; only modules whose name matches are offered for module_loads "
        "(empty = all modules the modules probe found).",
    ).tag(config=True)

    suggested_modules = List(
        Unicode(),
        help="Modules preselected when the modules probe finds them, e.g. ['openmpi/4.1'].",
    ).tag(config=True)

    demo_site = Unicode(
        "",
        help="Demo site used when the kernel is not inside a SLURM allocation "
        "(sx40, rccs-cloud, gres-cluster, laptop, or a path to a recorded site JSON). "
        f"The {DEMO_SITE_ENV} environment variable overrides it.",
    ).tag(config=True)

    language = Unicode(
        "", help="Wizard language (en, ja, zh); empty = from LC_ALL / LANG."
    ).tag(config=True)

    @validate("workspace_template")
    def _check_workspace_template(self, proposal):
        template = proposal["value"]
        unknown = sorted(
            {name for _, name, _, _ in string.Formatter().parse(template) if name}
            - set(WORKSPACE_PLACEHOLDERS)
        )
        if unknown:
            raise TraitError(
                f"workspace_template uses unknown placeholder(s) {unknown}; "
                f"allowed: {list(WORKSPACE_PLACEHOLDERS)}"
            )
        return template

    @validate("module_filter")
    def _check_module_filter(self, proposal):
        try:
            re.compile(proposal["value"])
        except re.error as exc:
            raise TraitError(f"module_filter is not a valid regular expression: {exc}") from exc
        return proposal["value"]

    @validate("probe_timeout")
    def _check_probe_timeout(self, proposal):
        if not 0 < proposal["value"] <= 600:
            raise TraitError("probe_timeout must be between 0 and 600 seconds")
        return proposal["value"]

    def workspace_for(self, env: Mapping[str, str] | None = None) -> str:
        """The workspace template filled in from ``env`` (the site's or the process's)."""
        env = os.environ if env is None else env
        user = env.get("USER") or env.get("LOGNAME") or _safe_user()
        values = {
            "user": user,
            "home": env.get("HOME") or str(Path.home()),
            "cluster": env.get("SLURM_CLUSTER_NAME", ""),
            "job_id": env.get("SLURM_JOB_ID", ""),
        }
        return self.workspace_template.format(**values)

    def filter_modules(self, names: Iterable[str]) -> list[str]:
        """Modules offered in the picker, in the probe's order."""
        if not self.module_filter:
            return list(names)
        pattern = re.compile(self.module_filter)
        return [name for name in names if pattern.search(name)]

    def timeout_for(self, probe_id: str) -> float:
        return float(self.probe_timeouts.get(probe_id, self.probe_timeout))

    def effective_demo_site(self, env: Mapping[str, str] | None = None) -> str:
        env = os.environ if env is None else env
        return env.get(DEMO_SITE_ENV, "").strip() or self.demo_site


def _safe_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "user"


def config_dirs() -> list[str]:
    """Jupyter's config search path, highest priority first (as ``jupyter --paths`` prints it)."""
    from jupyter_core.paths import jupyter_config_path

    return list(jupyter_config_path())


def load_config(dirs: Iterable[str | os.PathLike] | None = None) -> Config:
    """Merge ``ari_jupyter_config.{json,py}`` from ``dirs`` (default: Jupyter's config path).

    Lowest priority first so that the user's directory overrides the system's, and within one
    directory the .py file overrides the .json file, as jupyter_server does.
    """
    dirs = config_dirs() if dirs is None else [str(d) for d in dirs]
    merged = Config()
    for directory in reversed(dirs):
        for loader_cls, suffix in ((JSONFileConfigLoader, ".json"), (PyFileConfigLoader, ".py")):
            filename = CONFIG_BASENAME + suffix
            if not (Path(directory) / filename).is_file():
                continue
            try:
                merged.merge(loader_cls(filename, path=str(directory)).load_config())
            except ConfigFileNotFound:
                continue
    return merged


def wizard_config(config: Config | AriWizard | None = None, dirs=None) -> AriWizard:
    """An ``AriWizard`` from an explicit object, a Config, or the Jupyter config files."""
    if isinstance(config, AriWizard):
        return config
    if config is None:
        config = load_config(dirs)
    return AriWizard(config=config)


def select_host(site=None, config: AriWizard | None = None,
                env: Mapping[str, str] | None = None):
    """Which machine the wizard looks at, and why: ``(host, site_name, reason_key)``.

    An explicit ``site`` (name, path or Host) wins. Otherwise the real machine when the
    process is inside a SLURM allocation; outside one, the configured demo site (the
    ``ARI_JUPYTER_DEMO_SITE`` environment variable first) so a laptop shows something real;
    with no demo site configured, the real machine, which the wizard then reports as
    "not inside an allocation".
    """
    from .allocation import Allocation
    from .host import Host, LocalHost, RecordedSite

    env = dict(os.environ if env is None else env)
    config = config or AriWizard()
    if isinstance(site, Host):
        return site, site.name, "site_reason_given"
    if site:
        host = RecordedSite.load(site)
        return host, host.name, "site_reason_given"
    if Allocation.from_env(env).inside_allocation:
        host = LocalHost(env)
        return host, host.name, "site_reason_allocation"
    demo = config.effective_demo_site(env)
    if demo:
        host = RecordedSite.load(demo)
        return host, host.name, "site_reason_demo"
    host = LocalHost(env)
    return host, host.name, "site_reason_outside"


def default_partition_choice(config: AriWizard, env: Mapping[str, str],
                             sinfo_default: str | None = None):
    """The partition the wizard preselects and its source (a ``PartitionChoice``).

    ARI's own sources come first (a partition ARI would use anyway must not be second-guessed),
    then the site admin's ``c.AriWizard.default_partition``, then the allocation's partition
    and sinfo's default.
    """
    from .ari.partition import PartitionChoice, resolve_partition

    choice = resolve_partition(None, env, None)
    if choice.partition:
        return choice
    if config.default_partition:
        return PartitionChoice(config.default_partition, "c.AriWizard.default_partition")
    return resolve_partition(None, env, None, for_wizard=True, sinfo_default=sinfo_default)
