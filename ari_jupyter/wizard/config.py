"""Site defaults for the wizard, set by admins through ordinary Jupyter config files.

A site admin drops ``ari_jupyter_config.py`` (``c.AriWizard.workspace_template = ...``) or
``ari_jupyter_config.json`` into any Jupyter config directory (``jupyter --paths``); later
directories in that list are system-wide, earlier ones (the user's) win. The environment
variable ``ARI_JUPYTER_DEMO_SITE`` wins over every file, so ``ari-jupyter lab`` can pick a demo
site for a laptop without touching config. Nothing here imports ipywidgets.
"""
from __future__ import annotations

import dataclasses
import os
import re
import string
from pathlib import Path
from typing import Iterable, Mapping, NamedTuple

from traitlets import Dict, Float, List, Unicode, TraitError, validate
from traitlets.config import Config, Configurable
from traitlets.config.loader import JSONFileConfigLoader, PyFileConfigLoader, ConfigFileNotFound
from ..ari.profile import PRESETS
from ..slurm.allocation import Allocation
from ..hosts.host import Host, LocalHost
from ..ari.partition import PartitionChoice, resolve_partition
from ..probes import PROBE_IDS

CONFIG_BASENAME = "ari_jupyter_config"
DEMO_SITE_ENV = "ARI_JUPYTER_DEMO_SITE"
WORKSPACE_PLACEHOLDERS = ("user", "home", "cluster", "job_id")
DEMO_WORKSPACE_PLACEHOLDERS = ("site", "user", "home")
LANGUAGES = ("", "en", "ja", "zh")


class AriWizard(Configurable):
    """Defaults the wizard starts from; every value can still be changed in the UI."""

    workspace_template = Unicode(
        "/work/{user}/ari",
        help="Workspace root for new checkpoints. Placeholders: {user}, {home}, {cluster}, "
        "{job_id}. Must resolve to a shared filesystem visible from every node.",
    ).tag(config=True)

    demo_workspace_template = Unicode(
        "~/ari-demo/{site}",
        help="Workspace on THIS machine when the wizard shows a recorded demo site (teaching): "
        "Write must work here, while the shared-filesystem verdict is the demo site's own "
        "(the path is judged as the site's workspace_template path). Placeholders: {site}, "
        "{user}, {home} of this machine; a relative path is relative to $PWD (where Jupyter started).",
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
        "", help="Wizard language (en, ja, zh); empty = JupyterLab's (sent by the lab "
                 "extension), else from LC_ALL / LANG."
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

    @validate("demo_workspace_template")
    def _check_demo_workspace_template(self, proposal):
        template = proposal["value"]
        unknown = sorted(
            {name for _, name, _, _ in string.Formatter().parse(template) if name}
            - set(DEMO_WORKSPACE_PLACEHOLDERS)
        )
        if unknown or not template.strip():
            raise TraitError(
                f"demo_workspace_template uses unknown placeholder(s) {unknown}; "
                f"allowed: {list(DEMO_WORKSPACE_PLACEHOLDERS)}" if unknown
                else "demo_workspace_template must not be empty"
            )
        return template

    @validate("module_filter")
    def _check_module_filter(self, proposal):
        try:
            re.compile(proposal["value"])
        except re.error as exc:
            raise TraitError(f"module_filter is not a valid regular expression: {exc}") from exc
        return proposal["value"]

    @validate("default_preset")
    def _check_default_preset(self, proposal):
        if proposal["value"] and proposal["value"] not in PRESETS:
            raise TraitError(f"default_preset must be empty or one of: {', '.join(PRESETS)}")
        return proposal["value"]

    @validate("language")
    def _check_language(self, proposal):
        if proposal["value"] not in LANGUAGES:
            raise TraitError("language must be empty (from LC_ALL / LANG) or one of: "
                             + ", ".join(filter(None, LANGUAGES)))
        return proposal["value"]

    @validate("probe_timeouts")
    def _check_probe_timeouts(self, proposal):
        for probe_id, seconds in proposal["value"].items():
            if probe_id not in PROBE_IDS:
                raise TraitError(f"probe_timeouts has unknown probe id {probe_id!r}; "
                                 f"known: {', '.join(PROBE_IDS)}")
            if not 0 < seconds <= 600:
                raise TraitError(f"probe_timeouts[{probe_id!r}] must be more than 0 and at most 600 seconds")
        return proposal["value"]

    @validate("probe_timeout")
    def _check_probe_timeout(self, proposal):
        if not 0 < proposal["value"] <= 600:
            raise TraitError("probe_timeout must be more than 0 and at most 600 seconds")
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

    def demo_workspace_for(self, site_name: str, env: Mapping[str, str] | None = None) -> str:
        """The absolute local directory a demo site's checkpoints are written to."""
        env = os.environ if env is None else env
        home = env.get("HOME") or str(Path.home())
        user = env.get("USER") or env.get("LOGNAME") or _safe_user()
        site = re.sub(r"[^A-Za-z0-9._-]+", "_", site_name).strip("._") or "site"
        path = self.demo_workspace_template.format(site=site, user=user, home=home)
        if path == "~" or path.startswith("~/"):
            path = home + path[1:]
        if not os.path.isabs(path):
            path = os.path.join(env.get("PWD") or os.getcwd(), path)
        return os.path.normpath(path)

    def workspace_for_host(self, host, env: Mapping[str, str] | None = None) -> str:
        """The default workspace for ``host``: the site's template on a real machine, the
        local demo workspace on a recorded demo site (``env``: this machine's environment)."""
        if getattr(host, "is_demo", False):
            return self.demo_workspace_for(host.name, env)
        return self.workspace_for(host.env)

    def suggested_for(self, modules_result) -> list[str]:
        """The admin's suggested modules that the modules probe found on this site."""
        if modules_result is None or not self.suggested_modules:
            return []
        available = set((modules_result.data or {}).get("modules") or [])
        return [name for name in self.suggested_modules if name in available]

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
    """The user name when neither USER nor LOGNAME is set (getpass is loaded only then)."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "user"


def config_dirs() -> list[str]:
    """Jupyter's config search path, highest priority first (as ``jupyter --paths`` prints it)."""
    from jupyter_core.paths import jupyter_config_path

    return list(jupyter_config_path())


class ConfigProblem(NamedTuple):
    """A value in a config file that was not used, and why: one line for the user (a
    NamedTuple: cheap to define, and every cold start defines it)."""

    file: str
    key: str
    """``workspace_template``; a section name such as ``AriWizrd``; "" for the whole file."""
    reason: str

    def __str__(self) -> str:
        if not self.key:
            return f"{self.file}: ignored, it cannot be read: {self.reason}"
        return f"{self.file}: c.{self.key} ignored: {self.reason}"


def _config_files(dirs: Iterable[str]) -> list[tuple[type, Path]]:
    """Existing config files, lowest priority first (.py over .json within a directory)."""
    files = []
    for directory in reversed(list(dirs)):
        for loader_cls, suffix in ((JSONFileConfigLoader, ".json"), (PyFileConfigLoader, ".py")):
            path = Path(directory) / (CONFIG_BASENAME + suffix)
            if path.is_file():
                files.append((loader_cls, path))
    return files


def _config_keys() -> tuple[str, ...]:
    return tuple(sorted(AriWizard.class_trait_names(config=True)))


def value_problem(key: str, value) -> str | None:
    """Why ``c.AriWizard.<key> = value`` cannot be used (what is allowed), or None."""
    import difflib

    keys = _config_keys()
    if key not in keys:
        close = difflib.get_close_matches(key, keys, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        return f"unknown key; {hint}known keys: {', '.join(keys)}"
    try:
        AriWizard(config=Config({"AriWizard": {key: value}}))
    except TraitError as exc:
        text = str(exc)
        for prefix in (f"The '{key}' trait of an AriWizard instance ",
                       f"Values of the '{key}' trait of an AriWizard instance "):
            if text.startswith(prefix):
                text = ("values " if prefix.startswith("Values") else "") + text[len(prefix):]
        return text.rstrip(".")
    return None


def _checked_section(loaded: Config, file: str, problems: list[ConfigProblem]) -> Config:
    """The usable part of one file: each bad value dropped on its own, with its reason."""
    usable = Config()
    for section, values in loaded.items():
        if section != "AriWizard" or not isinstance(values, Mapping):
            what = "unknown section" if isinstance(values, Mapping) else "not inside c.AriWizard"
            problems.append(ConfigProblem(file, str(section),
                                          f"{what}; this file sets c.AriWizard.<key> only"))
            continue
        for key, value in values.items():
            why = value_problem(key, value)
            if why is None:
                usable.AriWizard[key] = value
            else:
                problems.append(ConfigProblem(file, f"AriWizard.{key}", f"{value!r}: {why}"
                                              if not why.startswith("unknown key") else why))
    return usable


def load_config_checked(dirs: Iterable[str | os.PathLike] | None = None
                        ) -> tuple[Config, list[ConfigProblem]]:
    """Merged ``ari_jupyter_config.{json,py}`` from ``dirs`` (default: Jupyter's config path)
    and every value that was left out. A bad value costs only its own key, never the file;
    a file that cannot be parsed at all is left out whole.

    Lowest priority first so that the user's directory overrides the system's, and within one
    directory the .py file overrides the .json file, as jupyter_server does.
    """
    dirs = config_dirs() if dirs is None else [str(d) for d in dirs]
    merged, problems = Config(), []
    for loader_cls, path in _config_files(dirs):
        try:
            loaded = loader_cls(path.name, path=str(path.parent)).load_config()
        except ConfigFileNotFound:
            continue
        except Exception as exc:  # a .py file may raise anything; JSON raises ValueError
            reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
            problems.append(ConfigProblem(str(path), "", reason))
            continue
        merged.merge(_checked_section(loaded, str(path), problems))
    return merged, problems


def load_config(dirs: Iterable[str | os.PathLike] | None = None) -> Config:
    """The usable values of the config files (see :func:`load_config_checked`)."""
    return load_config_checked(dirs)[0]


def wizard_config(config: Config | AriWizard | None = None, dirs=None) -> AriWizard:
    """An ``AriWizard`` from an explicit object, a Config, or the Jupyter config files."""
    if isinstance(config, AriWizard):
        return config
    if config is None:
        config = load_config(dirs)
    return AriWizard(config=config)


def site_config(dirs=None) -> tuple[AriWizard, list[ConfigProblem]]:
    """The wizard's config from the Jupyter config files and what in them was left out."""
    config, problems = load_config_checked(dirs)
    return AriWizard(config=config), problems


def select_host(site=None, config: AriWizard | None = None,
                env: Mapping[str, str] | None = None):
    """Which machine the wizard looks at, and why: ``(host, site_name, reason_key)``.

    An explicit ``site`` (name, path or Host) wins. Otherwise the real machine when the
    process is inside a SLURM allocation; outside one, the configured demo site (the
    ``ARI_JUPYTER_DEMO_SITE`` environment variable first) so a laptop shows something real;
    with no demo site configured, the real machine, which the wizard then reports as
    "not inside an allocation".
    """
    env = dict(os.environ if env is None else env)
    config = config or AriWizard()
    if site:
        host = open_host(site, config, env)
        return host, host.name, "site_reason_given"
    if Allocation.from_env(env).inside_allocation:
        host = LocalHost(env)
        return host, host.name, "site_reason_allocation"
    demo = config.effective_demo_site(env)
    if demo:
        host = open_host(demo, config, env)
        return host, host.name, "site_reason_demo"
    host = LocalHost(env)
    return host, host.name, "site_reason_outside"


def with_demo_workspace(host, config: AriWizard, env: Mapping[str, str] | None = None):
    """A demo site on which the local demo workspace resolves to the site's own workspace.

    Write happens on this machine, so a demo run writes to ``config.demo_workspace_for``; the
    recorded site judges where that path lives. Adding it as a recorded symlink into the path
    ``workspace_template`` gives on that site makes every check (shared_fs, emit, hand-off)
    answer exactly as the site would for its default workspace. Real hosts are returned as is.
    """
    if not getattr(host, "is_demo", False) or not dataclasses.is_dataclass(host):
        return host
    local = config.demo_workspace_for(host.name, env)
    on_site = host.realpath(config.workspace_for(host.env))
    if local == on_site or host.symlinks.get(local) == on_site:
        return host
    return dataclasses.replace(host, symlinks={**host.symlinks, local: on_site})


def open_host(site=None, config: AriWizard | None = None, env: Mapping[str, str] | None = None):
    """An explicitly named site (name, site file or Host) or this machine, with the demo
    workspace mapped on demo sites: what ``ari-jupyter emit --site`` and the wizard look at."""
    config = config or AriWizard()
    if isinstance(site, Host):
        host = site
    elif site:
        # cold start: hosts.recorded_site loads only when a demo site is named
        from ..hosts.recorded_site import RecordedSite

        host = RecordedSite.load(site)
    else:
        host = LocalHost(dict(os.environ if env is None else env))
    return with_demo_workspace(host, config, env)


def default_partition_choice(config: AriWizard, env: Mapping[str, str],
                             sinfo_default: str | None = None):
    """The partition the wizard preselects and its source (a ``PartitionChoice``).

    ARI's own sources come first (a partition ARI would use anyway must not be second-guessed),
    then the site admin's ``c.AriWizard.default_partition``, then the allocation's partition
    and sinfo's default.
    """
    choice = resolve_partition(None, env, None)
    if choice.partition:
        return choice
    if config.default_partition:
        return PartitionChoice(config.default_partition, "c.AriWizard.default_partition")
    return resolve_partition(None, env, None, for_wizard=True, sinfo_default=sinfo_default)


def seed_site(state, host) -> None:
    """What a new run knows of its site before any default: the allocation and, on a demo
    site, the site's name (all that step 1 shows outside an allocation)."""
    if state.allocation is None:
        state.allocation = Allocation.from_env(host.env)
    if getattr(host, "is_demo", False) and not state.site_name:
        state.site_name = host.name


PROBE_DERIVED_SOURCES = ("ARI_SLURM_PARTITION", "SLURM_JOB_PARTITION")
"""Partition sources the probes read from the environment on their own."""


def probe_context(state, config: AriWizard, *, only: Iterable[str] | None = None,
                  timeout: float | None = None):
    """The ProbeContext for ``state`` under ``config`` - the wizard's and ``emit``'s alike.

    A partition the probes find in the environment themselves is not passed as a choice, so
    their answers name its real source. ``timeout`` (a command-line override) replaces the
    config's timeout and per-probe timeouts.
    """
    partition = state.partition if state.partition_source not in PROBE_DERIVED_SOURCES else None

    # cold start: probes.context loads when the probes first run
    from ..probes import ProbeContext

    return ProbeContext(
        allocation=state.allocation,
        partition=partition or None,
        workspace=state.workspace or None,
        timeout=config.probe_timeout if timeout is None else timeout,
        only=tuple(only) if only is not None else None,
        timeouts=dict(config.probe_timeouts) if timeout is None else {},
    )
