"""Step 2: site checks, one row per probe, each turning from a spinner into its verdict."""
from __future__ import annotations

import ipywidgets as widgets

from ..probes.evidence_words import evidence_in
from ._base import (STATUS_STYLE, Panel, esc, fix_html, pre, rich, shared_fs_fix,
                    status_badge)
from ..probes import PROBE_IDS
from ..ari.judge import probe_verdicts


class ProbeRow(widgets.VBox):
    """Icon, name, summary and a Details toggle revealing command, evidence and fix."""

    def __init__(self, probe_id: str, panel: "ChecksPanel"):
        self.probe_id = probe_id
        self.panel = panel
        self.icon = widgets.Button(disabled=True, layout=widgets.Layout(
            width="40px", height="28px", padding="0", flex="0 0 40px"))
        self.name = widgets.HTML(layout=widgets.Layout(width="190px", flex="0 0 190px"))
        self.summary = widgets.HTML(layout=widgets.Layout(flex="1 1 auto"))
        self.details_toggle = widgets.ToggleButton(value=False, layout=widgets.Layout(
            width="90px", flex="0 0 90px"))
        panel.label(self.details_toggle, "description", "checks_details")
        self.details = widgets.HTML(layout=widgets.Layout(display="none", margin="0 0 0 40px"))
        self.details_toggle.observe(self._toggle, names="value")
        super().__init__([widgets.HBox([self.icon, self.name, self.summary, self.details_toggle],
                                       layout=widgets.Layout(align_items="center")),
                          self.details])
        self.add_class("ari-probe-row")
        self.add_class(f"ari-probe-{probe_id}")

    def _toggle(self, change) -> None:
        self.details.layout.display = "" if change["new"] else "none"

    def show(self, result, running: bool) -> None:
        tr = self.panel.tr
        status = "running" if running else (result.status if result else "pending")
        style, icon, text_class = STATUS_STYLE[status]
        self.icon.button_style = style
        self.icon.icon = icon
        self.icon.tooltip = tr(f"status_{status}")
        self.name.value = (f'<div class="ari-text ari-probe-name">'
                           f'{esc(tr("probe_" + self.probe_id))}</div>')
        if running:
            text = tr("checks_row_running")
        elif result is None:
            text = tr("checks_row_pending")
        else:
            text = self.panel.result_text(result)
        self.summary.value = (f'<div class="ari-text ari-probe-summary {text_class}">'
                              f'{rich(text)}</div>')
        self.details_toggle.disabled = result is None
        if result is None:
            self.details.value = ""
            return
        parts = []
        if result.command:
            parts.append(f'<div><b>{esc(tr("checks_command"))}</b> <code>{esc(result.command)}</code></div>')
        if result.evidence:
            parts.append(f'<div><b>{esc(tr("checks_evidence"))}</b></div>' + pre(evidence_in(result, self.panel.ctx.lang)))
        if result.fix:
            fix = shared_fs_fix(result, tr, self.panel.ctx.lang)
            # an ok verdict's advice is not a repair to make: it reads as a note
            label = tr("checks_note" if result.status == "ok" else "checks_fix")
            parts.append(fix_html(label, fix))
        self.details.value = f'<div class="ari-text ari-probe-details">{"".join(parts)}</div>'


class ChecksPanel(Panel, widgets.VBox):
    def __init__(self, ctx, **kwargs):
        super().__init__(ctx, **kwargs)
        self.intro = widgets.HTML()
        self.badge = widgets.HTML()
        self.rerun = widgets.Button(icon="refresh", button_style="primary")
        self.label(self.rerun, "description", "checks_rerun")
        self.rerun.on_click(lambda _: self.run())
        self.rows = {probe_id: ProbeRow(probe_id, self) for probe_id in PROBE_IDS}
        self.children = [self.intro, widgets.HBox([self.badge, self.rerun],
                                                  layout=widgets.Layout(align_items="center",
                                                                        justify_content="space-between")),
                         *self.rows.values()]
        self.state.observe(lambda _: self.refresh(), names="probe_results")
        ctx.runner.observe(lambda _: self.refresh(), names="running")
        ctx.observe(lambda _: self.refresh(), names="site_name")
        ctx.observe_plan(self.refresh)  # a GPU request changes the gres row's verdict
        self.refresh()

    @property
    def task(self):
        """The task of the latest full run (tests and notebooks await it)."""
        return self.ctx.runner.tasks.get(tuple(sorted(PROBE_IDS)))

    def run(self):
        """Start every probe concurrently; rows update one by one as each finishes."""
        return self.ctx.runner.start()

    def refresh(self) -> None:
        results = probe_verdicts(self.state.choices(), self.ctx.problems)
        running = set(self.ctx.runner.running)
        self.intro.value = (f'<div class="ari-help">'
                            f'{esc(self.tr("checks_intro", site=self.ctx.site_name))}</div>')
        shown = [r for pid, r in results.items() if pid in self.rows and pid not in running]
        self.badge.value = status_badge(shown, len(running & set(self.rows)), self.tr)
        for probe_id, row in self.rows.items():
            row.show(results.get(probe_id), probe_id in running)

