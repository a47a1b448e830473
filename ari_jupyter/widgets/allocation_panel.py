"""Step 1: the allocation the kernel runs in, and where the reproduce job's ranks will land."""
from __future__ import annotations

import itertools

import ipywidgets as widgets

from ..placement import fans_out
from ._base import Panel, esc, findings_html, probe_results
from .placement_view import render_placement

NODE_NAMES_SHOWN = 500


class AllocationPanel(Panel):
    def __init__(self, ctx, **kwargs):
        super().__init__(ctx, **kwargs)
        self.banner = widgets.HTML()
        self.demo_picker = widgets.ToggleButtons(options=self._demo_options(), value=None,
                                                 style={"button_width": "auto",
                                                        "description_width": "initial"})
        self.label(self.demo_picker, "description", "alloc_demo_sites")
        self.demo_picker.add_class("ari-demo-picker")
        self.demo_picker.observe(self._on_demo_pick, names="value")
        self.facts = widgets.HTML()
        self.show_nodes = widgets.ToggleButton(value=False, icon="list", layout=widgets.Layout(width="auto"))
        self.label(self.show_nodes, "description", "alloc_show_nodes")
        self.node_names = widgets.HTML(layout=widgets.Layout(display="none"))
        self.show_nodes.observe(self._on_show_nodes, names="value")
        self.placement_title = widgets.HTML()
        # Whether reproduce.sh starts its ranks through srun; defaults to what the kind implies.
        self.fan_out = widgets.Checkbox(value=fans_out(self.state.profile.kind or ""), indent=False,
                                        style={"description_width": "initial"},
                                        layout=widgets.Layout(width="auto"))
        self.label(self.fan_out, "description", "placement_fan_out")
        self.fan_out.observe(self._on_fan_out, names="value")
        self._kind = self.state.profile.kind
        self.placement = widgets.HTML()
        self.findings = widgets.HTML()
        self.children = [self.banner, self.demo_picker, self.facts,
                         widgets.HBox([self.show_nodes]), self.node_names,
                         self.placement_title, self.fan_out, self.placement, self.findings]
        ctx.observe(lambda _: self.refresh(), names=["host", "site_name"])
        ctx.runner.observe(lambda _: self._render_facts(), names="running")
        self.state.observe(lambda _: self.refresh(), names=["allocation", "probe_results",
                                                           "partition"])
        ctx.observe_plan(lambda: self._render_placement())
        self.refresh()

    # -- rendering ----------------------------------------------------------------------------
    def _demo_options(self):
        from ..host import list_sites

        return list_sites()

    def refresh(self) -> None:
        allocation = self.state.allocation
        inside = bool(allocation is not None and allocation.inside_allocation)
        demo = bool(getattr(self.ctx.host, "is_demo", False))
        if demo:
            from ..site_defaults import site_description

            text = self.tr("alloc_banner_demo", site=self.ctx.site_name,
                           description=site_description(self.ctx.host, self.ctx.lang))
            if not inside:
                text += " " + self.tr("alloc_demo_no_allocation")
            look = "ari-sev-info"
        elif inside:
            text = self.tr("alloc_banner_inside", job=allocation.job_id, host=self.ctx.site_name)
            look = "ari-sev-ok"
        else:
            text = self.tr("alloc_banner_outside")
            look = "ari-sev-warning"
        self.banner.value = f'<div class="ari-alloc-banner ari-banner ari-text {look}">{esc(text)}</div>'
        # Demo sites are offered outside an allocation and while one is shown (to switch back and forth).
        self.demo_picker.layout.display = "" if (demo or not inside) else "none"
        with self.demo_picker.hold_trait_notifications():
            self.demo_picker.value = self.ctx.site_name if demo and self.ctx.site_name in \
                self.demo_picker.options else None
        self._render_facts()
        self._render_node_names()
        self._render_placement()

    def _render_facts(self) -> None:
        a = self.state.allocation
        if a is None or not a.inside_allocation:
            self.facts.value = f'<p class="ari-text">{esc(self.tr("alloc_no_facts"))}</p>'
            return
        dash = "—"
        tasks = _compress_counts(a.tasks_per_node) or dash
        cpus = _compress_counts(a.cpus_per_node) or (str(a.cpus_on_node) if a.cpus_on_node else dash)
        gpus = a.job_gpus or a.cuda_visible_devices or (str(a.gpus_on_node) if a.gpus_on_node else "")
        rows = [
            ("alloc_job", f"{a.job_id} ({a.job_name})" if a.job_name else str(a.job_id)),
            ("alloc_cluster", a.cluster or dash),
            ("alloc_partition", a.partition or dash),
            ("alloc_account", " / ".join(x for x in (a.account, a.qos) if x) or dash),
            ("alloc_nodes", self.tr("alloc_nodes_value", count=f"{a.num_nodes or 0:,}",
                                    nodelist=a.nodelist or dash)),
            ("alloc_tasks_per_node", tasks),
            ("alloc_cpus", cpus + (f" · {self.tr('alloc_cpus_per_task', n=a.cpus_per_task)}"
                                   if a.cpus_per_task else "")),
            ("alloc_gpus", gpus or self.tr("alloc_gpus_none")),
            ("alloc_memory", _memory(a, self.tr) or dash),
            ("alloc_time_left", self._time_left()),
        ]
        body = "".join(f'<tr><th scope="row">'
                       f'{esc(self.tr(key))}</th><td class="ari-mono">{esc(value)}</td></tr>'
                       for key, value in rows)
        from ..i18n import render

        problems = "".join(f'<li class="ari-sev-warning">{esc(render(p, self.ctx.lang))}</li>'
                           for p in a.problems)
        self.facts.value = (f'<table class="ari-alloc-facts ari-table ari-text">{body}</table>'
                            + (f'<ul class="ari-list ari-text">{problems}</ul>' if problems else ""))

    def _time_left(self) -> str:
        if "time_left" in self.ctx.runner.running:
            return self.tr("alloc_time_left_checking")
        result = probe_results(self.state).get("time_left")
        if result is None:
            return "—"
        return result.text(self.ctx.lang)

    def _render_node_names(self) -> None:
        a = self.state.allocation
        self.show_nodes.layout.display = "" if (a is not None and a.num_nodes) else "none"
        if not self.show_nodes.value or a is None:
            self.node_names.layout.display = "none"
            return
        names = list(itertools.islice(a.nodes(), NODE_NAMES_SHOWN))
        more = (a.num_nodes or 0) - len(names)
        text = " ".join(names) + (f" … {self.tr('alloc_more_nodes', count=f'{more:,}')}" if more > 0 else "")
        self.node_names.value = f'<div class="ari-node-names ari-mono ari-scroll">{esc(text)}</div>'
        self.node_names.layout.display = ""

    def _render_placement(self) -> None:
        a = self.state.allocation
        kind = self.state.profile.kind or ""
        if self.state.profile.kind != self._kind:  # a new kind resets the launcher guess
            self._kind = self.state.profile.kind
            self.fan_out.value = fans_out(kind)
        self.placement_title.value = (f'<h4 class="ari-heading">{esc(self.tr("placement_title"))}</h4>'
                                      f'<div class="ari-help">'
                                      f'{esc(self.tr("placement_explain", kind=kind or "—"))}</div>')
        inside = a is not None and a.inside_allocation
        for widget in (self.placement_title, self.fan_out):
            widget.layout.display = "" if inside else "none"
        if not inside:
            self.placement.value = ""
            self.findings.value = ""
            return
        model = self.ctx.placement()
        if model is None:
            _, error = self.ctx.slurm_plan()
            # ARI's own refusal is quoted tool output: shown verbatim, as code, in every language
            quoted = f' <code class="ari-tool-output">{esc(error)}</code>' if error else ""
            self.placement.value = (f'<div class="ari-text ari-sev-error">'
                                    f'{esc(self.tr("placement_no_plan", error="").strip())}{quoted}</div>')
        else:
            self.placement.value = render_placement(model, self.tr)
        self.findings.value = findings_html(self.ctx.step_problems("allocation"), self.ctx.lang)

    # -- events -------------------------------------------------------------------------------
    def _on_demo_pick(self, change) -> None:
        if change["new"] and change["new"] != self.ctx.site_name:
            self.ctx.switch_site(change["new"])

    def _on_fan_out(self, change) -> None:
        kind_default = fans_out(self.state.profile.kind or "")
        self.ctx.fan_out = None if change["new"] == kind_default else bool(change["new"])

    def _on_show_nodes(self, change) -> None:
        self._render_node_names()


def _compress_counts(values) -> str:
    """(4, 4, 4, 2) -> '4(x3),2' — SLURM's own notation for per-node counts."""
    values = tuple(values or ())
    if not values:
        return ""
    parts = []
    for value, group in itertools.groupby(values):
        n = len(list(group))
        parts.append(f"{value}(x{n})" if n > 1 else str(value))
    return ",".join(parts)


def _memory(a, tr) -> str:
    if a.mem_per_node_mb:
        return tr("alloc_mem_per_node", gb=f"{a.mem_per_node_mb / 1024:.0f}")
    if a.mem_per_cpu_mb:
        return tr("alloc_mem_per_cpu", gb=f"{a.mem_per_cpu_mb / 1024:.1f}")
    return ""
