"""ARI's run settings (LLM, search scope, stages, paper, BFTS jobs) as ARI reads them.

Every name, default and choice list below is ARI's own (ari-core ``ari/config``,
``ari/cli/run.py``, ``ari/viz/api_experiment.py`` ``_api_launch`` and the "New Experiment"
wizard components ``StepScope.tsx``/``StepResources.tsx``/``StepLaunch.tsx``):

* ``.env`` carries what ``ari run`` applies (``env_values``): ``ari`` loads the checkpoint
  ``.env`` at import, then ``_apply_llm_env_overrides``, the ``--profile`` overrides and
  ``apply_bfts_env_overrides``/``apply_evaluator_env_overrides`` let these variables win;
* ``launch_config.json`` gets ARI's writer keys with ARI's writer types (``launch_config_keys``);
* ``workflow.yaml`` gets the stage toggles the way ARI's GUI rewrites it (``apply_stage_toggles``).

API keys are never a setting: ``api_key_status`` says whether the variable the chosen backend
needs is set, never its value.
"""
from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple

from .dotenv import read_dotenv
from ..i18n import LANGUAGE_NAMES, message
from ..base.verdict import Finding

# -- ARI's choices -----------------------------------------------------------------------------

ARI_DEFAULT_BACKEND = "ollama"      # LLMConfig.backend, when no workflow.yaml names one
ARI_DEFAULT_MODEL = "qwen3:8b"      # LLMConfig.model
# With no backend chosen nothing is written: `ari run` then takes the ``llm:`` section of its
# packaged workflow.yaml (``package_llm``), and only without one LLMConfig's defaults above.

BACKENDS = ("openai", "anthropic", "ollama", "cli-shim", "custom")
"""The providers ARI's wizard offers (StepResources.tsx)."""

BACKEND_MODELS: dict[str, tuple[str, ...]] = {
    "openai": ("gpt-5.2", "gpt-5.4", "gpt-5.4-mini", "gpt-4o", "gpt-4o-2024-08-06", "gpt-4o-mini",
               "o3", "o1-mini"),
    "anthropic": ("claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-3-5"),
    "ollama": ("qwen3:8b", "qwen3:32b", "llama3.3", "gemma3:27b", "mistral"),
    "cli-shim": ("claude-cli", "claude-cli-agent", "codex-cli", "codex-cli-agent"),
    "custom": (),
}
"""ARI's wizard model lists (PROVIDER_MODELS); ollama and custom also take free entry."""

FREE_ENTRY_BACKENDS = ("ollama", "custom")

BACKEND_DEFAULT_MODEL = {"openai": "gpt-4o", "anthropic": "claude-sonnet-4-5",
                         "ollama": "qwen3:8b", "cli-shim": "claude-cli"}
"""What ARI's launcher sets when a provider is chosen without a model (_api_launch)."""

BACKEND_API_BASE = {"ollama": "http://localhost:11434", "cli-shim": "http://localhost:8900/v1"}
"""ARI's wizard base URL defaults (PROVIDER_BASE_URL)."""

PACKAGED_LLM = ("openai", "gpt-5.2")
"""The ``llm:`` section of ARI's packaged ``ari-core/config/workflow.yaml`` (snapshot e41c806),
which ``ari run`` takes when nothing is chosen; used when that file is not found here
(LLMConfig's own ollama / qwen3:8b applies only to an ARI without its workflow.yaml)."""

BACKEND_KEY = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
"""The key variable litellm reads for the backend (ARI's llm.api_key defaults to None)."""

PHASES = ("idea", "bfts", "coding", "eval", "paper", "review")
"""Per-phase model keys of ARI's wizard (phase_models -> ARI_MODEL_<PHASE>)."""


class ScopePreset(NamedTuple):
    """A row of ARI's scope-preset table (a NamedTuple, like the other table rows here)."""

    max_depth: int
    max_nodes: int
    max_react: int
    parallel: int
    node_timeout_min: int
    estimate: str


SCOPE_PRESETS: dict[str, ScopePreset] = {
    "quick": ScopePreset(3, 10, 20, 2, 30, "~30 min"),
    "standard": ScopePreset(5, 30, 80, 4, 120, "~1-2 h"),
    "thorough": ScopePreset(9, 60, 150, 8, 300, "~3-5 h"),
    "deep": ScopePreset(12, 100, 300, 12, 480, "~5-8 h"),
    "exhaustive": ScopePreset(15, 120, 500, 16, 720, "~8-12 h"),
}
"""ARI's wizard scope presets Quick ... Exhaustive (StepScope.tsx SCOPE_PRESETS)."""

DEFAULT_PRESET = "standard"  # ARI's wizard applies Standard on first mount

SCOPE_RANGES = {"max_depth": (2, 20), "max_nodes": (5, 500), "parallel": (1, 64),
                "max_react": (10, 500), "node_timeout_min": (10, 1440)}
"""The ranges ARI's wizard offers (HTML min/max in StepScope.tsx)."""

FRONTIER_SCORES = ("scientific_plus_diversity", "scientific_only", "depth_penalized", "ucb_like")
COMPOSITES = ("harmonic_mean", "arithmetic_mean", "weighted_min", "geometric_mean")
AXIS_MODES = ("dynamic", "legacy", "custom")  # apply_evaluator_env_overrides' whitelist
PAPER_LANGUAGES = ("en", "ja", "zh")
PAPER_FORMATS = ("arxiv", "neurips", "icml", "iclr", "acl", "custom")

STAGE_GROUPS: dict[str, frozenset[str]] = {
    "ear": frozenset({"generate_ear", "ear_curate", "ear_publish", "ors_seed_sandbox"}),
    "review": frozenset({"review_paper", "merge_reviews"}),
    "reproduce": frozenset({"ors_generate_rubric", "ors_seed_sandbox", "ors_build_reproduce",
                            "ors_run_reproduce", "ors_grade"}),
}
"""The stages ARI's GUI disables for include_ear/include_review/include_reproduce = false."""

_SAFE_VALUE = re.compile(r"^[A-Za-z0-9_.:/@+=,-]+\Z")
_PARTITION = re.compile(r"^[A-Za-z0-9_-]+\Z")
_API_BASE = re.compile(r"^https?://[A-Za-z0-9.:_-]+(/[A-Za-z0-9._~/-]*)?\Z")
"""What the .env can carry unquoted (``choices.env_value_problem``): an IPv6 literal's brackets
cannot, so the form refuses ``http://[::1]:8080/v1`` as Write does (a host name works)."""


# -- the settings ------------------------------------------------------------------------------

@dataclass(frozen=True)
class RunSettings:
    """The user's choices; ``None``/"" means "not chosen" (the preset or ARI's default applies)."""

    llm_backend: str = ""
    llm_model: str = ""
    llm_api_base: str = ""
    phase_models: dict = field(default_factory=dict)
    scope_preset: str = DEFAULT_PRESET
    max_nodes: int | None = None
    max_depth: int | None = None
    max_react: int | None = None
    node_timeout_min: int | None = None
    parallel: int | None = None
    frontier_score: str = FRONTIER_SCORES[0]
    composite: str = COMPOSITES[0]
    axis_mode: str = AXIS_MODES[0]
    allow_web: bool = False
    include_ear: bool = True
    include_review: bool = True
    include_reproduce: bool = True
    paper_language: str = "en"
    paper_format: str = "arxiv"
    gpus_per_job: int | None = None
    valid_partitions: tuple = ()

    # -- resolved values ---------------------------------------------------------------------
    def scope(self) -> dict[str, int]:
        """max_nodes, max_depth, max_react, parallel, node_timeout_min: explicit, else preset."""
        preset = SCOPE_PRESETS.get(self.scope_preset, SCOPE_PRESETS[DEFAULT_PRESET])
        return {name: (getattr(self, name) if getattr(self, name) is not None else getattr(preset, name))
                for name in ("max_nodes", "max_depth", "max_react", "parallel", "node_timeout_min")}

    def model(self) -> str:
        """The model ``ari`` will use: chosen, else the backend's launcher default, else ''."""
        return self.llm_model or BACKEND_DEFAULT_MODEL.get(self.llm_backend, "")

    def api_base(self) -> str:
        if self.llm_api_base:
            return self.llm_api_base
        return BACKEND_API_BASE["cli-shim"] if self.llm_backend == "cli-shim" else ""

    def disabled_stages(self) -> frozenset[str]:
        out: set[str] = set()
        for group, on in (("ear", self.include_ear), ("review", self.include_review),
                          ("reproduce", self.include_reproduce)):
            if not on:
                out |= STAGE_GROUPS[group]
        return frozenset(out)

    # -- serialisation -------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["phase_models"] = dict(sorted(self.phase_models.items()))
        data["valid_partitions"] = list(self.valid_partitions)
        return data

    @classmethod
    def from_json(cls, data: Any) -> "RunSettings":
        """Rebuild from ``to_json``; raise ValueError naming each bad key."""
        if not isinstance(data, Mapping):
            raise ValueError(f"run_settings must be an object, got {type(data).__name__}")
        known = {f for f in cls.__dataclass_fields__}
        messages = [f"run_settings.{k}: not a run setting" for k in data if k not in known]
        values: dict[str, Any] = {}
        for name, spec in cls.__dataclass_fields__.items():
            if name not in data:
                continue
            value, kind = data[name], spec.type
            ok = True
            if kind == "str":
                ok = isinstance(value, str)
            elif kind == "bool":
                ok = isinstance(value, bool)
            elif kind == "int | None":
                ok = value is None or (isinstance(value, int) and not isinstance(value, bool))
            elif kind == "dict":
                ok = isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str)
                                                        for k, v in value.items())
                value = dict(value) if ok else value
            elif kind == "tuple":
                ok = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
                value = tuple(value) if ok else value
            if not ok:
                messages.append(f"run_settings.{name}: wrong type {type(value).__name__} ({kind})")
            else:
                values[name] = value
        if messages:
            raise ValueError("; ".join(messages))
        return cls(**values)

    def with_preset(self, name: str) -> "RunSettings":
        """The preset's budget, as ARI's wizard applies it (algorithm choices kept)."""
        return replace(self, scope_preset=name, max_nodes=None, max_depth=None, max_react=None,
                       node_timeout_min=None, parallel=None)


class Setting(NamedTuple):
    """One run setting: where ARI reads it, ARI's default and what it changes (from ARI's code).
    A row of a table, so a NamedTuple: defined at a fraction of a frozen dataclass's cost,
    which every cold start pays."""
    name: str
    ari_name: str
    default: str
    effect: str


SETTINGS: tuple[Setting, ...] = (
    Setting("llm_backend", "ARI_BACKEND", "workflow.yaml llm.backend (LLMConfig: ollama)",
            "cfg.llm.backend; sets litellm's provider prefix (anthropic/, ollama_chat/, openai/ for cli-shim)"),
    Setting("llm_model", "ARI_MODEL, ARI_LLM_MODEL", "the backend's launcher default, else workflow.yaml llm.model",
            "cfg.llm.model for every phase without its own model; skills read ARI_LLM_MODEL"),
    Setting("llm_api_base", "ARI_LLM_API_BASE", "none (cli-shim: http://localhost:8900/v1)",
            "cfg.llm.base_url: the endpoint litellm calls"),
    Setting("phase_models", "ARI_MODEL_<PHASE>", "none",
            "a separate model for idea, bfts, coding, eval, paper or review"),
    Setting("scope_preset", "-", DEFAULT_PRESET, "sets the five budgets below at once (ARI's wizard presets)"),
    Setting("max_nodes", "ARI_MAX_NODES", "the preset's", "bfts.max_total_nodes: nodes in the search tree"),
    Setting("max_depth", "ARI_MAX_DEPTH", "the preset's", "bfts.max_depth: depth of the search tree"),
    Setting("max_react", "ARI_MAX_REACT", "the preset's", "bfts.max_react_steps: ReAct steps per node"),
    Setting("node_timeout_min", "ARI_TIMEOUT_NODE (seconds)", "the preset's",
            "bfts.timeout_per_node: wall time of one node"),
    Setting("parallel", "ARI_PARALLEL", "the preset's", "bfts.max_parallel_nodes: nodes run at once"),
    Setting("frontier_score", "ARI_FRONTIER_SCORE", FRONTIER_SCORES[0],
            "bfts.frontier_score: fallback node choice when the LLM selector cannot pick"),
    Setting("composite", "ARI_COMPOSITE", COMPOSITES[0], "evaluator.composite: how axis scores combine"),
    Setting("axis_mode", "ARI_AXIS_MODE", AXIS_MODES[0], "evaluator.axis_mode: where the judge's axes come from"),
    Setting("allow_web", "ARI_BFTS_ALLOW_WEB", "off",
            "bfts.allow_web: the web skill's tools in the tree search (marks the run non-reproducible)"),
    Setting("include_ear", "workflow.yaml", "on", "the EAR stages (" + ", ".join(sorted(STAGE_GROUPS["ear"])) + ")"),
    Setting("include_review", "workflow.yaml", "on", "the review stages (" + ", ".join(sorted(STAGE_GROUPS["review"])) + ")"),
    Setting("include_reproduce", "workflow.yaml", "on",
            "the reproduce stages (" + ", ".join(sorted(STAGE_GROUPS["reproduce"])) + ")"),
    Setting("paper_language", "ARI_PAPER_LANGUAGE", "en", "the language the paper is written in"),
    Setting("paper_format", "-", "arxiv", "stored with the checkpoint; ARI's launcher does not use it"),
    Setting("gpus_per_job", "ARI_SLURM_GPUS", "none", "--gres=gpu:N on every BFTS job the hpc skill submits"),
    Setting("valid_partitions", "SLURM_VALID_PARTITIONS", "none",
            "partitions BFTS jobs may ask for; any other falls back to the run's partition"),
)
"""Every RunSettings field, described (the wizard's captions and tooltips, docs)."""


# -- validation --------------------------------------------------------------------------------

LABEL_KEYS = {
    "llm_backend": "rs_backend", "llm_model": "rs_model", "llm_api_base": "rs_api_base",
    "phase_models": "rs_phase_models", "scope_preset": "rs_preset", "max_nodes": "rs_max_nodes",
    "max_depth": "rs_max_depth", "max_react": "rs_max_react", "node_timeout_min": "rs_node_timeout",
    "parallel": "rs_parallel", "frontier_score": "rs_frontier_score", "composite": "rs_composite",
    "axis_mode": "rs_axis_mode", "paper_language": "rs_paper_language",
    "paper_format": "rs_paper_format", "gpus_per_job": "rs_gpus_per_job",
    "valid_partitions": "rs_valid_partitions", "stages": "rs_stages",
}
"""The wizard's label of each setting: a fix names the form field in the user's language."""


def _collector(out: list) -> Callable[..., None]:
    """``add(setting, rule, severity, fix=True, **params)``: one ``Finding`` into ``out``."""

    def add(setting: str, rule: str, severity: str, fix: bool = True, **params: Any) -> None:
        label = message(LABEL_KEYS.get(setting, "rs_title"))
        out.append(Finding.of(f"run_settings_{rule}", severity, f"run_settings.{rule}",
                              field=f"run_settings.{setting}",
                              fix_id=f"run_settings.{rule}.fix" if fix else "",
                              label=label, **params))
    return add


def problems(settings: RunSettings, *, partition: str = "", has_gres: bool | None = None,
             ui_lang: str = "en") -> list[Finding]:
    """What ARI would do wrong or surprisingly with these settings (errors block Write).

    Each is a ``Finding`` with a message id (``messages/run_settings.json``); ``field`` is
    ``run_settings.<name>`` and ``params["label"]`` the form field the fix names.
    """
    out: list[Finding] = []
    add = _collector(out)
    _check_llm(settings, add)
    _check_scope(settings, add)
    _check_choices(settings, add)
    if ui_lang in PAPER_LANGUAGES and ui_lang != "en" and settings.paper_language == "en":
        # ARI's default is English: a user reading the wizard in Japanese may expect otherwise

        add("paper_language", "paper_in_english", "info", language=LANGUAGE_NAMES[ui_lang])
    _check_jobs(settings, add, partition=partition, has_gres=has_gres)
    return out


def stage_problems(settings: RunSettings, workflow_found: bool) -> list[Finding]:
    """A stage switched off where ARI's workflow.yaml cannot be written (ARI is not found on
    the machine that writes the checkpoint): only that file carries it, so Write refuses."""
    out: list[Finding] = []
    if settings.disabled_stages() and not workflow_found:
        _collector(out)("stages", "stages_need_ari", "error")
    return out


def _check_llm(s: RunSettings, add: Callable[..., None]) -> None:
    backend = s.llm_backend
    if backend and backend not in BACKENDS:
        add("llm_backend", "backend_unknown", "warning", backend=backend, choices=", ".join(BACKENDS))
    for name, value in (("llm_backend", backend), ("llm_model", s.llm_model)):
        if value and not _SAFE_VALUE.match(value):
            add(name, "value_unwritable", "error", value=value)
    known = BACKEND_MODELS.get(backend or ARI_DEFAULT_BACKEND, ())
    model = s.llm_model
    if model and backend not in FREE_ENTRY_BACKENDS and backend in BACKENDS and backend \
            and model not in known and "/" not in model and _SAFE_VALUE.match(model):
        add("llm_model", "model_unknown", "warning", model=model, backend=backend,
            choices=", ".join(known))
    if s.llm_api_base and not _API_BASE.match(s.llm_api_base):
        add("llm_api_base", "api_base_ipv6" if "[" in s.llm_api_base else "api_base_bad", "error",
            value=s.llm_api_base)
    if backend == "custom" and not s.llm_model:
        add("llm_model", "custom_needs_model", "error")
    for phase, model in s.phase_models.items():
        if phase not in PHASES:
            add("phase_models", "phase_unknown", "error", phase=phase, choices=", ".join(PHASES))
        if not model or not _SAFE_VALUE.match(model):
            add("phase_models", "phase_model_unwritable", "error", phase=phase, value=model)


def _check_scope(s: RunSettings, add: Callable[..., None]) -> None:
    if s.scope_preset not in SCOPE_PRESETS:
        add("scope_preset", "preset_unknown", "error", value=s.scope_preset,
            choices=", ".join(SCOPE_PRESETS))
    for name, value in s.scope().items():
        low, high = SCOPE_RANGES[name]
        if value < 1:
            add(name, "budget_low", "error", name=name, value=value, low=low, high=high)
        elif not low <= value <= high:
            add(name, "budget_outside", "warning", name=name, value=value, low=low, high=high)


def _check_choices(s: RunSettings, add: Callable[..., None]) -> None:
    for name, value, allowed in (("frontier_score", s.frontier_score, FRONTIER_SCORES),
                                 ("composite", s.composite, COMPOSITES),
                                 ("axis_mode", s.axis_mode, AXIS_MODES),
                                 ("paper_language", s.paper_language, PAPER_LANGUAGES),
                                 ("paper_format", s.paper_format, PAPER_FORMATS)):
        if value not in allowed:
            add(name, "choice_unknown", "error", name=name, value=value, choices=", ".join(allowed))
    if s.axis_mode == "custom":
        add("axis_mode", "axis_custom", "warning")
    if s.paper_format != "arxiv" and s.paper_format in PAPER_FORMATS:
        add("paper_format", "paper_format_unused", "info", fix=False)


def _check_jobs(s: RunSettings, add: Callable[..., None], *, partition: str,
                has_gres: bool | None) -> None:
    gpus = s.gpus_per_job
    if gpus is not None and gpus < 0:
        add("gpus_per_job", "gpus_negative", "error", value=gpus)
    elif gpus and has_gres is False:
        add("gpus_per_job", "gpus_no_gres", "error", gpus=gpus)
    for name in s.valid_partitions:
        if not _PARTITION.match(name):
            add("valid_partitions", "partition_name_bad", "error", partition=name)
    if s.valid_partitions and partition and partition not in s.valid_partitions:
        add("valid_partitions", "partition_not_listed", "warning", partition=partition)


# -- how ARI reads them ------------------------------------------------------------------------

def env_values(s: RunSettings) -> dict[str, str]:
    """The variables ``ari run`` applies (ARI's launcher's names and encodings)."""
    values: dict[str, str] = {}
    if s.llm_backend:
        values["ARI_BACKEND"] = s.llm_backend
    model = s.model()
    if model:
        values["ARI_MODEL"] = model
        values["ARI_LLM_MODEL"] = model
    if s.api_base():
        values["ARI_LLM_API_BASE"] = s.api_base()
    for phase, phase_model in sorted(s.phase_models.items()):
        values[f"ARI_MODEL_{phase.upper()}"] = phase_model
    scope = s.scope()
    values["ARI_MAX_NODES"] = str(scope["max_nodes"])
    values["ARI_MAX_DEPTH"] = str(scope["max_depth"])
    values["ARI_MAX_REACT"] = str(scope["max_react"])
    values["ARI_TIMEOUT_NODE"] = str(scope["node_timeout_min"] * 60)
    values["ARI_PARALLEL"] = str(scope["parallel"])
    values["ARI_FRONTIER_SCORE"] = s.frontier_score
    values["ARI_COMPOSITE"] = s.composite
    values["ARI_AXIS_MODE"] = s.axis_mode
    values["ARI_BFTS_ALLOW_WEB"] = "1" if s.allow_web else "0"
    values["ARI_PAPER_LANGUAGE"] = s.paper_language
    if s.gpus_per_job:
        values["ARI_SLURM_GPUS"] = str(s.gpus_per_job)
    if s.valid_partitions:
        values["SLURM_VALID_PARTITIONS"] = ",".join(s.valid_partitions)
    return values


def launch_config_keys(s: RunSettings) -> dict[str, Any]:
    """ARI's launch_config.json keys for these settings, with ARI's writer types (spec §2.7)."""
    scope = s.scope()
    config: dict[str, Any] = {
        "llm_model": s.model(),        # ARI's writer records "" when nothing was set
        "llm_provider": s.llm_backend,
        "max_nodes": scope["max_nodes"], "max_depth": scope["max_depth"],
        "max_react": scope["max_react"], "timeout_node_s": scope["node_timeout_min"] * 60,
        "parallel": scope["parallel"], "frontier_score": s.frontier_score,
        "composite": s.composite, "axis_mode": s.axis_mode, "allow_web": bool(s.allow_web),
    }
    if s.gpus_per_job:
        config["hpc_gpus"] = int(s.gpus_per_job)
    if s.phase_models:
        config["phase_models"] = {k: v for k, v in sorted(s.phase_models.items()) if v}
    config.update({"include_ear": s.include_ear, "include_review": s.include_review,
                   "include_reproduce": s.include_reproduce, "language": s.paper_language})
    return config


def apply_stage_toggles(document: dict, s: RunSettings) -> dict:
    """Disable stages the way ARI's GUI does: ``enabled: false`` and out of every depends_on."""
    disabled = s.disabled_stages()
    if not disabled:
        return document
    for stage in (document or {}).get("pipeline") or []:
        if not isinstance(stage, dict):
            continue
        if stage.get("stage") in disabled:
            stage["enabled"] = False
        deps = stage.get("depends_on")
        if isinstance(deps, list):
            stage["depends_on"] = [d for d in deps if d not in disabled]
        elif isinstance(deps, str) and deps in disabled:
            stage["depends_on"] = []
    return document


# -- API keys: set / not set, never the value ----------------------------------------------------

class KeyStatus(NamedTuple):
    variable: str      # '' when the backend needs no key
    is_set: bool
    source: str        # "environment", a .env path, or ''
    message: str


def package_llm(workflow_yaml: str) -> tuple[str, str]:
    """(backend, model) of the ``llm:`` section of ARI's packaged workflow.yaml text."""
    import yaml  # ARI's own dependency; only called where ARI's workflow.yaml was found

    llm = (yaml.safe_load(workflow_yaml) or {}).get("llm") or {}
    return str(llm.get("backend") or ARI_DEFAULT_BACKEND), str(llm.get("model") or ARI_DEFAULT_MODEL)


def api_key_status(s: RunSettings, env: Mapping[str, str], *, checkpoint_dir: str = "",
                   ari_root: str | None = None, home: str | None = None,
                   default_backend: str = ARI_DEFAULT_BACKEND) -> KeyStatus:
    """Whether ``ari`` started from ``env`` would find the key the backend needs, and where.

    ``ari`` reads the shell first, then the first .env that has it, in its own order:
    ``$ARI_CHECKPOINT_DIR/.env``, ``$ARI_ROOT/.env``, ``$ARI_ROOT/ari-core/.env``, ``~/.env``.
    Only the name and whether it is non-empty are looked at; the value is never returned.
    ``default_backend``: what ARI uses when none is chosen (its workflow.yaml's, ``package_llm``).
    """
    backend = s.llm_backend or default_backend
    variable = BACKEND_KEY.get(backend, "")
    if not variable:
        why = {"ollama": "ollama needs no API key", "cli-shim": "ARI sets a placeholder key for the cli-shim"}
        return KeyStatus("", True, "", why.get(backend, f"{backend} names no key variable ARI knows"))
    if env.get(variable):
        return KeyStatus(variable, True, "environment", f"{variable} is set in the environment")
    for path in dotenv_candidates(env, checkpoint_dir=checkpoint_dir, ari_root=ari_root, home=home):
        if _dotenv_sets(path, variable):
            return KeyStatus(variable, True, str(path), f"{variable} is set in {path}")
    return KeyStatus(variable, False, "", f"{variable} is not set: {backend} calls will fail "
                     "(export it in the terminal that runs ari, or put it in ~/.env, chmod 600)")


def dotenv_candidates(env: Mapping[str, str], *, checkpoint_dir: str = "", ari_root: str | None = None,
                      home: str | None = None) -> list[Path]:
    """The .env files ``ari`` loads, in its order (ari-core ``cli/__init__._load_repo_dotenv``)."""
    out = []
    ckpt = checkpoint_dir or env.get("ARI_CHECKPOINT_DIR", "")
    if ckpt:
        out.append(Path(ckpt).expanduser() / ".env")
    root = ari_root or env.get("ARI_ROOT", "")
    if root:
        out += [Path(root) / ".env", Path(root) / "ari-core" / ".env"]
    home = home or env.get("HOME") or os.path.expanduser("~")
    out.append(Path(home) / ".env")
    return out


def _dotenv_sets(path: Path, variable: str) -> bool:
    return bool(read_dotenv(path).get(variable, "").strip("'\""))
