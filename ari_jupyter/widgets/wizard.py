"""The wizard: five steps with Back/Next, a step indicator and a language switch (one shown).

``Wizard()`` looks at the machine the kernel runs on when it is inside a SLURM allocation, and
at a demo site otherwise (``c.AriWizard.demo_site`` / ``ARI_JUPYTER_DEMO_SITE``), then starts
every probe on the kernel's event loop. In a kernel where a wizard was made before, a plain
``Wizard()`` (the notebook's cell run again) goes on from what that wizard holds: the site,
language and everything typed are kept; ``Wizard(state=WizardState())`` starts afresh. ``Wizard(state=...)`` and
``Wizard.from_checkpoint(path)`` reopen a previous run exactly as it was written.

Starting is kept cheap: the panels of steps 2-5 are built when first shown or asked for; in a
kernel the run's defaults (outside an allocation, where step 1 shows none), the probes and the
lab extension's hello wait until the cell is done; outside a kernel (no running event loop)
the probes run at the first look at their results (``wizard.state``, a panel, display,
``await wizard.wait()``) rather than inside ``Wizard()``.
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path

import ipywidgets as widgets
import traitlets

from ..base.guides import guide_url
from ..wizard.config import AriWizard, select_host, wizard_config
from ..i18n import default_lang, normalize_lang
from ._base import STEP_BUTTONS_STYLE, SharedLooks, esc, language_options, show
from ..wizard.session import WizardContext, kept_in_this_kernel, remember_in_this_kernel
from .allocation_panel import AllocationPanel
from .style import css
from .terminal_bridge import TerminalBridge
from ..wizard.state import WizardState
from ..hosts.host import list_sites

STEP_KEYS = ("step_allocation", "step_checks", "step_profile", "step_experiment", "step_doctor")


PANELS = (None, ("checks_panel", "ChecksPanel"), ("profile_panel", "ProfilePanel"),
          ("experiment_panel", "ExperimentPanel"), ("doctor_panel", "DoctorPanel"))
"""The module and class of each step's panel after step 1 (built when first shown)."""


def _step_classes(index: int) -> tuple[str, ...]:
    """A step panel's classes. By them wizard.css shows the panel of the step button marked
    active as soon as the page marks it, before the kernel hears of the click; the kernel's
    own show and hide (the HIDDEN class) follow a round trip later and agree."""
    return ("ari-step-panel", f"ari-step-{index}")


def _panel_class(index: int):
    """The panel of a step, imported when first built (steps 2-5 cost nothing until shown)."""
    if index == 0:
        return AllocationPanel
    module, name = PANELS[index]
    # cold start: a step's panel loads when that step is first shown
    return getattr(importlib.import_module(f".{module}", __package__), name)


class Wizard(widgets.VBox):
    """One wizard; every value lives in ``self.state`` (a ``WizardState``)."""

    def __init__(self, state=None, lang: str | None = None, site=None,
                 config: AriWizard | None = None, *, run_probes: bool = True,
                 bridge: TerminalBridge | None = None, env=None, **kwargs):
        self.config = wizard_config(config)
        env = dict(os.environ if env is None else env)
        kept = kept_in_this_kernel() if state is None and site is None and lang is None else None
        if kept is not None:  # the cell run again: what was typed stays
            state = kept.state.copy()
        if state is not None and site is None and state.site_name:
            site = _known_site(state.site_name)  # a restored demo run reopens on its demo site
        host, site_name, reason = select_host(site, self.config, env)
        fresh = state is None
        state = state if state is not None else WizardState()
        # A reopened run's language is where it starts, not a choice: the interface language is
        # the user's (JupyterLab's), so a run written in English reopens in a Japanese lab in
        # Japanese, as a new wizard would.
        given = normalize_lang(lang) or normalize_lang(self.config.language)
        lang = given or (None if fresh else normalize_lang(state.lang)) or default_lang(env)
        state.lang = lang
        if bridge is None:
            bridge = TerminalBridge()
            bridge.connect_soon()
        looks = SharedLooks()
        self.ctx = WizardContext(state, self.config, host, site_name, reason, bridge=bridge, lang=lang,
                                 local_env=env, looks=looks)
        traitlets.link((state, "lang"), (self.ctx, "lang"))
        if fresh:
            self.ctx.seed_soon()
        if not given:
            # No language named: speak JupyterLab's (Settings > Language, or the extension's
            # "Wizard language" setting), which the extension sends when it answers.
            bridge.observe(self._follow_frontend_lang, names="frontend_lang")
            self._follow_frontend_lang({"new": bridge.frontend_lang})

        # Each widget is made with its final text and classes, and the wizard's own box last,
        # with its children: in a kernel every widget model opens a comm and every later
        # change is one more message, so starting costs one message per model. The wizard is
        # one box laid out as a grid by wizard.css (title and language, the steps, the step's
        # panel, Back and Next), with no row boxes and no Stack. A step's panel joins it when
        # first shown and stays: a step change shows one panel and hides the other by a class
        # (two small messages), where replacing the child made the page build the panel's
        # whole view again (most of a step change's wait, measured in benchmarks/browser.py).
        tr = self.ctx.tr
        self.header = looks(widgets.HTML, self._header_html(), _dom_classes=("ari-header",))
        self.guide = looks(widgets.HTML, self._guide_html(), _dom_classes=("ari-guide",))
        # The language list shares the step buttons' style (a ToggleButtonsStyle is a
        # DescriptionStyle with the same "initial" label width): one style model fewer.
        self.language = widgets.Dropdown(options=language_options(), value=self.ctx.lang,
                                         description=tr("language"), layout=looks.layout(),
                                         style=looks.style(widgets.ToggleButtons, **STEP_BUTTONS_STYLE),
                                         _dom_classes=("ari-language",))
        traitlets.link((self.language, "value"), (self.ctx, "lang"))
        self.steps = looks(widgets.ToggleButtons, options=self._step_options(), value=0,
                           style=STEP_BUTTONS_STYLE, _dom_classes=("ari-steps",))
        # Step 1 is shown at once; the others are built when first shown (_built).
        self._panels: list = [AllocationPanel(self.ctx, _dom_classes=_step_classes(0))]
        self._panels += [None] * (len(STEP_KEYS) - 1)
        self._relabelling = False
        self.steps.observe(self._entering_step, names="value")
        self._back = None  # step 1 has nothing to go back to: Back is built when leaving it
        self.next = looks(widgets.Button, icon="arrow-right", button_style="primary",
                          description=tr("nav_next"), _dom_classes=("ari-next",))
        self.next.on_click(lambda _: self.go(self.step + 1))
        self.ctx.observe(lambda _: self._relabel(), names=["lang", "site_name", "site_reason"])
        self.ctx.observe(lambda _: setattr(self.header, "value", self._header_html()),
                         names="switching_to")
        kwargs.setdefault("layout", looks.layout())
        kwargs["_dom_classes"] = (*kwargs.get("_dom_classes", ()), "ari-wizard")
        # Every widget above was made with its final text: no relabelling pass here.
        super().__init__(children=self._children(), **kwargs)
        if kept is not None:
            self.ctx.touched.update(kept.touched)
        remember_in_this_kernel(self.ctx)
        if run_probes:
            self.ctx.runner.start_soon()

    def _follow_frontend_lang(self, change) -> None:
        lang = normalize_lang(change["new"])
        if lang:
            self.ctx.lang = lang

    # -- what users and tests look at: each first look runs a probe run put off by Wizard() --
    @property
    def state(self):
        """The wizard's ``WizardState`` (defaults, and probes put off outside a kernel, now)."""
        self.ctx.settle_defaults()
        self._run_deferred()
        return self.ctx.state

    @property
    def allocation_panel(self):
        return self._looked_at(0)

    @property
    def checks_panel(self):
        return self._looked_at(1)

    @property
    def profile_panel(self):
        return self._looked_at(2)

    @property
    def experiment_panel(self):
        return self._looked_at(3)

    @property
    def doctor_panel(self):
        return self._looked_at(4)

    def _looked_at(self, index: int):
        self._run_deferred()
        return self._built(index)

    def _run_deferred(self) -> None:
        """What ``Wizard()`` put off outside a kernel, at the first look: the probes, and
        step 1's placement when the allocation panel drew none yet."""
        self.ctx.runner.run_deferred()  # on a kernel's loop this only schedules the probes
        self._panels[0].draw_placement()

    def _built(self, index: int):
        """The panel of step ``index``, built on first use from the current state and language
        (a panel reads both when built and follows them afterwards)."""
        panel = self._panels[index]
        if panel is None:
            self.ctx.settle_defaults()  # steps 2-5 show them
            panel = self._panels[index] = _panel_class(index)(self.ctx, _dom_classes=_step_classes(index))
        return panel

    def _children(self) -> tuple:
        """The wizard's children: every panel built so far, in step order, the one of the step
        shown visible and the others hidden (the sheet rides in the header: one model fewer);
        Back once a step after the first was shown (hidden on the first step)."""
        panels = [panel for panel in self._panels if panel is not None]
        back = (self.back,) if self._back is not None or self.step else ()
        return (self.header, self.language, self.guide, self.steps, *panels, *back, self.next)

    @property
    def back(self) -> widgets.Button:
        """The Back button, built when first needed (step 1 shows none)."""
        if self._back is None:
            self._back = self.ctx.looks(
                widgets.Button, icon="arrow-left", description=self.ctx.tr("nav_back"),
                disabled=self.step == 0, _dom_classes=("ari-back",))
            self._back.on_click(lambda _: self.go(self.step - 1))
        return self._back

    @property
    def step(self) -> int:
        """The index of the step shown (0-4)."""
        return self.steps.value or 0

    @property
    def panel(self):
        """The panel of the step shown."""
        return self._built(self.step)

    def _repr_mimebundle_(self, **kwargs):
        self._run_deferred()
        return super()._repr_mimebundle_(**kwargs)

    # -- sites --------------------------------------------------------------------------------
    def use_site(self, name: str | None = None) -> None:
        """Look at demo site ``name`` (None: this machine), as the demo-site buttons do.

        Afterwards every site-derived value equals a fresh ``Wizard(site=name)``'s; what the
        user typed (title, goal, metrics, files) is kept, and the modules they added where the
        new site offers them (step 3 names the others); a previous write result is cleared. The
        probes run again.
        """
        self.ctx.switch_site(name)

    # -- navigation ---------------------------------------------------------------------------
    def go(self, index: int) -> None:
        self.steps.value = max(0, min(index, len(STEP_KEYS) - 1))

    def _entering_step(self, change) -> None:
        """Build the step's panel when first shown. The checkpoint's files exist once Write ran
        (and grow while ARI runs): entering the last step lists them anew."""
        if self._relabelling:
            return
        index = change["new"] or 0
        panel = self._built(index)
        show(panel, True)  # first: what the user asked for shows before anything else moves
        for other in self._panels:
            if other is not None and other is not panel:
                show(other, False)
        children = self._children()
        if children != tuple(self.children):  # a panel built now, or Back first needed
            self.children = children
        self._relabel()
        if index == len(STEP_KEYS) - 1:
            panel.list_files()

    def _relabel(self) -> None:
        tr = self.ctx.tr
        index = self.step
        options = self._step_options()
        if self.steps.options != tuple(options):
            # New options select step 1 on their way (ipywidgets): that is not a step change.
            self._relabelling = True
            try:
                self.steps.options = options
                self.steps.value = index
            finally:
                self._relabelling = False
        if self._back is not None:
            self._back.description = tr("nav_back")
            self._back.disabled = index == 0
            show(self._back, index != 0)  # step 1 shows no Back
        self.next.description = tr("nav_next")
        self.next.disabled = index == len(STEP_KEYS) - 1
        self.language.description = tr("language")
        self.header.value = self._header_html()
        self.guide.value = self._guide_html()

    def _step_options(self) -> list[tuple[str, int]]:
        return [(f"{i + 1}. {self.ctx.tr(key)}", i) for i, key in enumerate(STEP_KEYS)]

    def _header_html(self) -> str:
        tr = self.ctx.tr
        reason = tr(self.ctx.site_reason) if self.ctx.site_reason else ""
        site = tr("wizard_site", site=self.ctx.site_name, reason=reason)
        if self.ctx.switching_to:  # a site switch on its way: pending, said at once
            site = tr("wizard_site_switching", site=self.ctx.switching_to)
        return (f'<style>{css()}</style><div class="ari-title">{esc(tr("wizard_title"))}</div>'
                f'<div class="ari-site ari-muted">{esc(site)}</div>')

    def _guide_html(self) -> str:
        """The link to this step's section of the guide shipped with the package (the server
        shows it). Its own widget, not the header's: the header carries the style sheet, which
        a step change would otherwise send and the page parse again."""
        step = self.step if hasattr(self, "steps") else 0
        guide = guide_url("wizard", self.ctx.lang, f"step-{step + 1}", env=self.ctx.local_env)
        return (f'<a class="ari-guide-link" href="{esc(guide)}" target="_blank" rel="noopener">'
                f'{esc(self.ctx.tr("wizard_guide_link"))} ↗</a>')

    # -- restoring ----------------------------------------------------------------------------
    @classmethod
    def from_checkpoint(cls, path, **kwargs) -> "Wizard":
        """Reopen a checkpoint written by the wizard or ``ari-jupyter emit``."""
        # cold start: the checkpoint reader loads only to reopen a checkpoint
        from ..runs.reopen import reopen_state

        state = reopen_state(path)
        kwargs.setdefault("run_probes", True)
        return cls(state=state, **kwargs)

    async def wait(self) -> None:
        """Wait for every probe started so far (notebooks: ``await wizard.wait()``)."""
        await self.ctx.runner.wait()


def _known_site(name: str):
    """The demo site's name when it is still bundled, else None (the default choice applies)."""
    return name if name in list_sites() else None
