"""What the wizard's "Run settings" part shows and how a form edit becomes a ``RunSettings``.

The widgets only link inputs to these functions: the choices (with their label keys), the
default ARI would use when no backend is chosen, the key status (set / not set, never the
value) and ``edit``, which turns one form value into new settings the way ``emit``'s flags do.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from ..ari.run_settings import (ARI_DEFAULT_BACKEND, ARI_DEFAULT_MODEL, AXIS_MODES, BACKENDS,
                                BACKEND_DEFAULT_MODEL, BACKEND_KEY, BACKEND_MODELS, COMPOSITES,
                                FRONTIER_SCORES, PACKAGED_LLM, PAPER_FORMATS, PAPER_LANGUAGES,
                                PHASES, RunSettings, SCOPE_PRESETS, api_key_status, package_llm)
from ..ari.time_fit import search_time
from ..i18n import Text, text
from ..ari.install import find_ari_workflow


BUDGETS = ("max_nodes", "max_depth", "max_react", "node_timeout_min", "parallel")
CHOICES = {"frontier_score": FRONTIER_SCORES, "composite": COMPOSITES, "axis_mode": AXIS_MODES,
           "paper_language": PAPER_LANGUAGES, "paper_format": PAPER_FORMATS}
STAGES = ("include_ear", "include_review", "include_reproduce")


def ari_default_llm(env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(backend, model) ``ari run`` uses when none is chosen: its packaged workflow.yaml's."""
    workflow, _ = find_ari_workflow(env)
    if workflow is not None:
        try:
            return package_llm(workflow.read_text(encoding="utf-8"))
        except Exception:  # unreadable or not YAML: ARI's LLMConfig defaults would apply
            return ARI_DEFAULT_BACKEND, ARI_DEFAULT_MODEL
    return PACKAGED_LLM


def handoff_key_variable(state: Any, default_backend: str = "",
                         env: Mapping[str, str] | None = None) -> str:
    """The API key variable the run's LLM backend needs ("" for none): the chosen backend's,
    else that of the backend ``ari run`` takes by default here (``default_backend`` when the
    caller already looked it up, as the wizard's run settings do). The hand-off checks it."""
    settings = getattr(state, "run_settings", None) or RunSettings()
    backend = settings.llm_backend or default_backend or ari_default_llm(env)[0]
    return BACKEND_KEY.get(backend, "")


def backend_options(default: tuple[str, str]) -> list[tuple[Any, str]]:
    """(label, value) pairs; a label is a ``Text`` to translate or a provider name."""
    return [(text("rs_backend_default", backend=default[0], model=default[1]), "")] + \
        [(name, name) for name in BACKENDS]


def model_options(backend: str, default: tuple[str, str]) -> tuple[str, ...]:
    return BACKEND_MODELS.get(backend or default[0], ())


def model_placeholder(settings: RunSettings, default: tuple[str, str]) -> Text:
    model = BACKEND_DEFAULT_MODEL.get(settings.llm_backend, "") if settings.llm_backend else default[1]
    return text("rs_model_default", model=model) if model else text("rs_model_default_ari")


def preset_options() -> list[tuple[Text, str]]:
    """ARI's presets, each with the longest its search may take (``time_fit.search_time``, the
    figure the time-fit warning says), in the user's language."""
    return [(text("rs_preset_option", name=text(f"rs_preset_{name}"),
                  most=search_time(preset._asdict())), name)
            for name, preset in SCOPE_PRESETS.items()]


def preset_budget(settings: RunSettings) -> Text:
    return text("rs_preset_budget", **settings.scope())


def key_status(settings: RunSettings, env: Mapping[str, str], default: tuple[str, str],
               checkpoint_dir: str = "") -> tuple[bool, Text]:
    """(is set, sentence) for the key the backend needs, in the terminal's environment."""
    status = api_key_status(settings, env, checkpoint_dir=checkpoint_dir, default_backend=default[0])
    if not status.variable:
        return True, text("rs_key_none", backend=settings.llm_backend or default[0])
    if status.is_set:
        source = text("rs_key_source_env") if status.source == "environment" else status.source
        return True, text("rs_key_set", variable=status.variable, source=source)
    return False, text("rs_key_not_set", variable=status.variable)


def partitions_from_text(value: str) -> tuple[str, ...]:
    """The allow-list as ARI splits SLURM_VALID_PARTITIONS: on ',' only, nothing trimmed."""
    return tuple(value.split(",")) if value else ()


def integer_or_none(value: str) -> int | None:
    """A typed whole number; '' is "not chosen". Raises ValueError for anything else."""
    value = value.strip()
    return int(value) if value else None


def edit(settings: RunSettings, name: str, value: Any) -> RunSettings:
    """``settings`` with form field ``name`` set to ``value`` (as ``emit``'s flags set it).

    A budget equal to what the preset already gives stays "not chosen", so switching the preset
    later moves it; GPUs per job 0 means none; a phase model '' means "the main model".
    """
    if name == "scope_preset":
        return settings.with_preset(value) if value != settings.scope_preset else settings
    if name in BUDGETS:
        if value is not None and value == settings.scope()[name] and getattr(settings, name) is None:
            return settings
        return replace(settings, **{name: value})
    if name == "gpus_per_job":
        return replace(settings, gpus_per_job=None if value == 0 else value)
    if name == "valid_partitions":
        return replace(settings, valid_partitions=partitions_from_text(value))
    if name.startswith("phase:"):
        phase = name.split(":", 1)[1]
        phases = dict(settings.phase_models)
        if value.strip():
            phases[phase] = value.strip()
        else:
            phases.pop(phase, None)
        return replace(settings, phase_models=phases)
    if name in ("llm_backend", "llm_model", "llm_api_base"):
        return replace(settings, **{name: value.strip()})
    return replace(settings, **{name: value})


__all__ = ["BUDGETS", "CHOICES", "PACKAGED_LLM", "PHASES", "STAGES", "ari_default_llm",
           "handoff_key_variable",
           "backend_options", "edit", "integer_or_none", "key_status", "model_options",
           "model_placeholder", "partitions_from_text", "preset_budget", "preset_options"]


def stages_switchable(settings: RunSettings, workflow_found: bool, *, demo: bool = False) -> bool:
    """Whether the stage boxes can be changed. Not on a demo site without ARI: switching one off
    would be refused at Write, and a class cannot install ARI to lift that. A stage already off
    (a reopened run) stays changeable, so it can be switched back on."""
    return workflow_found or not demo or bool(settings.disabled_stages())


def stages_note(settings: RunSettings, workflow_found: bool, *, demo: bool = False
                ) -> tuple[str, Text] | None:
    """(severity, sentence) beside the stage boxes when ARI's workflow.yaml cannot be written
    here (ARI not installed, no ARI_ROOT): switching a stage off is refused at Write, and with
    every stage on ARI runs them all, its default. None when ARI is found. On a demo site the
    sentence says that the site's ARI (step 2) is only in its recording."""
    if workflow_found:
        return None
    if settings.disabled_stages():
        return "error", text("rs_stages_need_ari")
    return "info", text("rs_stages_default_demo" if demo else "rs_stages_default")


def cost_before(state: Any) -> dict | None:
    """The worst case in node-hours of what step 4 approves (``ari.cost``, the sentence
    ``check-handoff`` shows too); None while the choices cannot be written yet."""
    from ..ari.cost import cost_bound  # cold start: ARI's decided record loads when step 4 first shows the bound
    try:
        return cost_bound(state.choices()).said()
    except Exception:  # half-typed input (Max CPUs empty, ...): no bound until it can be written
        return None
