"""Step 4's "Run settings" part: ARI's LLM, search scope and stages first, the rest under
Advanced. Every edit goes through ``run_settings_view.edit`` into ``state.run_settings``; the
findings are the judge's (``for_step(..., "run_settings")``)."""
from __future__ import annotations

import ipywidgets as widgets

from ..wizard import run_settings_view as view
from ..i18n import render, say
from ._base import Panel, esc, findings_html, rich

_LABELLED = {"description_width": "150px"}


class RunSettingsPart(Panel, widgets.VBox):
    def __init__(self, ctx, **kwargs):
        super().__init__(ctx, **kwargs)
        self.add_class("ari-run-settings")
        self.default_llm = view.ari_default_llm(ctx.host.env)
        s = self.state.run_settings
        self.heading = widgets.HTML()
        self.backend = widgets.Dropdown(style=_LABELLED, layout=widgets.Layout(width="420px"))
        self.model = widgets.Combobox(style=_LABELLED, value=s.llm_model, ensure_option=False,
                                      continuous_update=False, layout=widgets.Layout(width="420px"))
        self.label(self.model, "description", "rs_model")
        self.preset = widgets.Dropdown(style=_LABELLED, layout=widgets.Layout(width="420px"))
        self.preset_budget = widgets.HTML()
        self.stages_label = widgets.HTML()
        self.stages = {name: self.label(widgets.Checkbox(value=getattr(s, name), indent=False,
                                                          layout=widgets.Layout(width="auto")),
                                        "description", "rs_" + name)
                       for name in view.STAGES}
        self.stages_note = widgets.HTML()
        self.key = widgets.HTML()
        self.findings = widgets.HTML()
        self.advanced = widgets.Accordion(children=[self._advanced_box(s)], selected_index=None)
        self.advanced.add_class("ari-run-settings-advanced")
        self.children = [
            self.heading, self.backend, self.model, self.key, self.preset, self.preset_budget,
            self._stages_row(), self.stages_note,
            self.findings, self.advanced,
        ]
        self._sync(s)
        for name, widget in self._inputs().items():
            widget.observe(lambda change, name=name: self._edited(name, change["new"]), names="value")
        self.state.observe(lambda change: self._sync(change["new"]), names="run_settings")
        ctx.observe_plan(self.refresh)
        self.refresh()

    def _stages_row(self):
        row = widgets.HBox([self.stages_label, *self.stages.values()],
                           layout=widgets.Layout(align_items="center", flex_flow="row wrap"))
        row.add_class("ari-rs-stages")
        return row

    def _advanced_box(self, s):
        wide = widgets.Layout(width="420px")
        self.api_base = self.label(widgets.Text(style=_LABELLED, value=s.llm_api_base, layout=wide,
                                                continuous_update=False), "description", "rs_api_base")
        self.label(self.api_base, "placeholder", "rs_api_base_placeholder")
        self.phase_help = widgets.HTML()
        self.phases = {phase: self.label(widgets.Combobox(style=_LABELLED, ensure_option=False, layout=wide,
                                                          continuous_update=False,
                                                          value=s.phase_models.get(phase, "")),
                                         "description", "rs_phase_" + phase)
                       for phase in view.PHASES}
        self.budget_title = widgets.HTML()
        keys = {"max_nodes": "rs_max_nodes", "max_depth": "rs_max_depth", "max_react": "rs_max_react",
                "node_timeout_min": "rs_node_timeout", "parallel": "rs_parallel"}
        self.budgets = {name: self.label(widgets.IntText(style=_LABELLED, continuous_update=False,
                                                         layout=widgets.Layout(width="260px")),
                                         "description", key) for name, key in keys.items()}
        self.choices = {name: self.label(widgets.Dropdown(style=_LABELLED, options=list(values),
                                                          layout=wide), "description", "rs_" + name)
                        for name, values in view.CHOICES.items()}
        self.allow_web = self.label(widgets.Checkbox(value=s.allow_web, indent=False), "description",
                                    "rs_allow_web")
        self.jobs_title = widgets.HTML()
        self.jobs_help = widgets.HTML()
        self.gpus = self.label(widgets.IntText(style=_LABELLED, continuous_update=False,
                                               layout=widgets.Layout(width="260px")),
                               "description", "rs_gpus_per_job")
        self.partitions = self.label(widgets.Text(style=_LABELLED, continuous_update=False, layout=wide),
                                     "description", "rs_valid_partitions")
        self.label(self.partitions, "placeholder", "rs_valid_partitions_placeholder")
        return widgets.VBox([self.api_base, self.phase_help, *self.phases.values(), self.budget_title,
                             *self.budgets.values(), *self.choices.values(), self.allow_web,
                             self.jobs_title, self.jobs_help, self.gpus, self.partitions])

    def _inputs(self) -> dict:
        inputs = {"llm_backend": self.backend, "llm_model": self.model, "scope_preset": self.preset,
                  "llm_api_base": self.api_base, "allow_web": self.allow_web,
                  "gpus_per_job": self.gpus, "valid_partitions": self.partitions}
        inputs.update(self.stages)
        inputs.update(self.budgets)
        inputs.update(self.choices)
        inputs.update({f"phase:{phase}": widget for phase, widget in self.phases.items()})
        return inputs

    # -- widgets <-> state ----------------------------------------------------------------------
    def _edited(self, name: str, value) -> None:
        if getattr(self, "_syncing", False):
            return
        self.state.run_settings = view.edit(self.state.run_settings, name, value)

    def _sync(self, s) -> None:
        """Show ``s`` (a restored checkpoint, a preset that moved the budgets)."""
        self._syncing = True
        try:
            self._set_options()
            values = {"llm_backend": s.llm_backend, "llm_model": s.llm_model,
                      "scope_preset": s.scope_preset, "llm_api_base": s.llm_api_base,
                      "allow_web": s.allow_web, "gpus_per_job": s.gpus_per_job or 0,
                      "valid_partitions": ",".join(s.valid_partitions)}
            values.update({name: getattr(s, name) for name in view.STAGES})
            values.update(s.scope())
            values.update({name: getattr(s, name) for name in view.CHOICES})
            values.update({f"phase:{p}": s.phase_models.get(p, "") for p in view.PHASES})
            for name, widget in self._inputs().items():
                value = values[name]
                options = getattr(widget, "options", None)
                if isinstance(widget, widgets.Dropdown) and value not in [o[1] if isinstance(o, tuple)
                                                                          else o for o in options]:
                    continue  # a value no choice shows: the finding tells; the form keeps its own
                if widget.value != value:
                    widget.value = value
        finally:
            self._syncing = False
        self.refresh()

    def _set_options(self) -> None:
        lang = self.ctx.lang
        s = self.state.run_settings
        backend = [(render(label, lang), value) for label, value in view.backend_options(self.default_llm)]
        if self.backend.options != tuple(backend):
            keep = self.backend.value if self.backend.options else s.llm_backend
            self.backend.options = backend
            self.backend.value = keep if keep in [v for _, v in backend] else ""
        self.model.options = view.model_options(s.llm_backend, self.default_llm)
        self.model.placeholder = render(view.model_placeholder(s, self.default_llm), lang)
        presets = [(render(label, lang), value) for label, value in view.preset_options()]
        if self.preset.options != tuple(presets):
            keep = self.preset.value if self.preset.options else s.scope_preset
            self.preset.options = presets
            if keep in [v for _, v in presets]:
                self.preset.value = keep
        for phase, widget in self.phases.items():
            widget.options = view.model_options(s.llm_backend, self.default_llm)

    # -- rendering ------------------------------------------------------------------------------
    def refresh(self) -> None:
        if not hasattr(self, "findings"):
            return
        lang, tr = self.ctx.lang, self.tr
        s = self.state.run_settings
        self._syncing = True
        try:
            self._set_options()
        finally:
            self._syncing = False
        self.backend.description = tr("rs_backend")
        self.preset.description = tr("rs_preset")
        self.advanced.set_title(0, tr("rs_advanced"))
        self.heading.value = (f'<h4 class="ari-heading">{esc(tr("rs_title"))}</h4>'
                              f'<div class="ari-text ari-muted">{esc(tr("rs_intro"))}</div>')
        cost = view.cost_before(self.state)  # the worst case in node-hours, beside the scope
        self.preset_budget.value = (f'<div class="ari-text ari-muted ari-indented">'
                                    f'{rich(render(view.preset_budget(s), lang))}</div>'
                                    + (f'<div class="ari-text ari-muted ari-indented ari-rs-cost">'
                                       f'{esc(say(cost, lang))}</div>' if cost else ""))
        self.stages_label.value = f'<label class="ari-text ari-rs-label">{esc(tr("rs_stages"))}</label>'
        demo = bool(getattr(self.ctx.host, "is_demo", False))
        switchable = view.stages_switchable(s, self.ctx.workflow_found, demo=demo)
        for box in self.stages.values():
            box.disabled = not switchable
        note = view.stages_note(s, self.ctx.workflow_found, demo=demo)
        self.stages_note.value = "" if note is None else (
            f'<div class="ari-text ari-indented ari-rs-stages-note '
            f'{"ari-sev-error" if note[0] == "error" else "ari-muted"}">{rich(render(note[1], lang))}</div>')
        # the key is looked for where the second terminal runs: this JupyterLab's machine
        is_set, sentence = view.key_status(s, self.ctx.local_env, self.default_llm)
        look = "ari-sev-ok" if is_set else "ari-sev-warning"
        self.key.value = (f'<div class="ari-rs-key ari-text ari-indented {look}">'
                          f'{rich(render(sentence, lang))}</div>')
        self.phase_help.value = (f'<div class="ari-text ari-rs-subtitle">{esc(tr("rs_phase_models"))}</div>'
                                 f'<div class="ari-text ari-muted">{esc(tr("rs_phase_models_help"))}</div>')
        self.budget_title.value = f'<div class="ari-text ari-rs-subtitle">{esc(tr("rs_budget"))}</div>'
        self.jobs_title.value = f'<div class="ari-text ari-rs-subtitle">{esc(tr("rs_jobs"))}</div>'
        state = self.state
        mem = f"{state.mem_gb} GB" if state.mem_gb else tr("rs_mem_unset")
        self.jobs_help.value = (f'<div class="ari-text ari-muted">'
                                f'{esc(tr("rs_jobs_help", cpus=state.max_cpus or "-", mem=mem))}</div>')
        # a stage refused is said beside the stage boxes (stages_note), not twice
        self.findings.value = findings_html([f for f in self.ctx.step_problems("run_settings")
                                             if f.field != "run_settings.stages"], lang)
