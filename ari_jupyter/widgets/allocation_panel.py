"""Step 1: the allocation the kernel runs in, and where the reproduce job's ranks will land."""
from __future__ import annotations

import itertools

import ipywidgets as widgets

from ..i18n import labels, render, sentence_gap
from ._base import (STEP_BUTTONS_STYLE, Panel, esc, findings_html, hidden_unless, rich, running_loop,
                    show)
from ..wizard.session import probe_results
from ..hosts.host import list_sites
from ..wizard.site_defaults import site_description
from ..ari.profile import fans_out

NODE_NAMES_SHOWN = 500


class AllocationPanel(Panel, widgets.VBox):
    """Few widgets on purpose: step 1 is built inside ``Wizard()``, and in a kernel every widget
    model (each Layout and style too) opens a comm and every later change is one more message.
    So each widget is made with its final content; text that only changes as a whole is one
    HTML widget, the node list is an HTML ``<details>``, and widgets whose layout never changes
    share one (``ctx.looks``)."""

    def __init__(self, ctx, **kwargs):
        self.ctx = ctx  # the texts are rendered before the widgets that show them are made
        looks = ctx.looks
        self._kind = None  # the profile's kind the fan-out box was set for (inside an allocation)
        options = self._demo_options()
        self.banner = looks(widgets.HTML, self._banner_html())
        self.demo_picker = widgets.ToggleButtons(
            options=options, value=self._demo_value(options), description=self.tr("alloc_demo_sites"),
            style=looks.style(widgets.ToggleButtons, **STEP_BUTTONS_STYLE),
            layout=looks.layout(), _dom_classes=("ari-demo-picker", *hidden_unless(self._demo_shown())))
        # Inside an allocation: its facts (with the node names and the placement's heading),
        # whether reproduce.sh starts its ranks through srun, and where they land (with the
        # findings). Built when an allocation is first shown: outside one, step 1 is the banner
        # and the demo sites, three models fewer to open.
        self.facts = self.fan_out = self.placement = None
        self._placement_due = False
        if self._inside():
            self._new_allocation_rows()
        super().__init__(ctx, children=self._rows(), **kwargs)
        self.label(self.demo_picker, "description", "alloc_demo_sites")
        self.demo_picker.observe(self._on_demo_pick, names="value")
        if self.fan_out is not None:
            self._follow_fan_out()
        ctx.observe(lambda _: self.refresh(), names=["host", "site_name"])
        ctx.runner.observe(lambda _: self._render_facts(), names="running")
        self.state.observe(lambda _: self.refresh(), names=["allocation", "probe_results",
                                                           "partition"])
        ctx.observe_plan(lambda: self._render_placement())

    # -- rendering ----------------------------------------------------------------------------
    def _demo_options(self):
        return list_sites()

    def refresh(self) -> None:
        self.banner.value = self._banner_html()
        show(self.demo_picker, self._demo_shown())
        with self.demo_picker.hold_trait_notifications():
            self.demo_picker.value = self._demo_value(self.demo_picker.options)
        self._render_facts()
        self._render_placement()

    def _inside(self) -> bool:
        allocation = self.state.allocation
        return bool(allocation is not None and allocation.inside_allocation)

    def _demo(self) -> bool:
        return bool(getattr(self.ctx.host, "is_demo", False))

    def _banner_html(self) -> str:
        allocation, inside = self.state.allocation, self._inside()
        if self._demo():
            text = self.tr("alloc_banner_demo", site=self.ctx.site_name,
                           description=site_description(self.ctx.host, self.ctx.lang))
            if not inside:
                text += sentence_gap(text) + self.tr("alloc_demo_no_allocation")
            look = "ari-sev-info"
        elif inside:
            text = self.tr("alloc_banner_inside", job=allocation.job_id, host=self.ctx.site_name)
            look = "ari-sev-ok"
        else:
            text = self.tr("alloc_banner_outside")
            look = "ari-sev-warning"
        hints = "" if inside or self._demo() else self._demo_hints()
        return f'<div class="ari-alloc-banner ari-banner ari-text {look}">{rich(text)}{hints}</div>'

    def _demo_hints(self) -> str:
        """What each bundled demo site is, so a first look can pick one (a site recorded
        elsewhere has no line: its name is all there is)."""
        known = labels("en")
        items = "".join(f"<li><b>{esc(name)}</b> — {esc(self.tr(key))}</li>"
                        for name in self._demo_options()
                        if (key := f"alloc_demo_hint_{name}") in known)
        return f'<ul class="ari-demo-hints">{items}</ul>' if items else ""

    def _demo_shown(self) -> bool:
        """Demo sites are offered outside an allocation and while one is shown (to switch back
        and forth)."""
        return self._demo() or not self._inside()

    def _demo_value(self, options) -> str | None:
        return self.ctx.site_name if self._demo() and self.ctx.site_name in options else None

    def _gpus_not_allocated(self) -> str:
        """SLURM gave the job no GPU; the GPUs check may still see some on the node (a site
        without GRES): say both, so step 1 and step 2 do not seem to disagree."""
        seen = self.ctx.probe_data("gpus").get("count")
        text = self.tr("alloc_gpus_none")
        if isinstance(seen, int) and seen:
            return f"{text} · {self.tr('alloc_gpus_seen', count=seen)}"
        return text

    def _render_facts(self) -> None:
        if self.facts is not None:
            self.facts.value = self._facts_html()

    def _facts_html(self) -> str:
        a = self.state.allocation
        if a is None or not a.inside_allocation:
            return ""  # hidden: the banner says there is no allocation
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
            ("alloc_gpus", gpus or self._gpus_not_allocated()),
            ("alloc_memory", _memory(a, self.tr) or dash),
            ("alloc_time_left", self._time_left()),
        ]
        # Values as SLURM prints them, in a fixed-width font; the time left is a sentence (with
        # `code` marks), written as the checks step writes it.
        body = "".join(f'<tr><th scope="row">{esc(self.tr(key))}</th>'
                       + (f'<td>{rich(value)}</td>' if key == "alloc_time_left"
                          else f'<td class="ari-mono">{esc(value)}</td>') + '</tr>'
                       for key, value in rows)

        problems = "".join(f'<li class="ari-sev-warning">{rich(render(p, self.ctx.lang))}</li>'
                           for p in a.problems)
        return (f'<table class="ari-alloc-facts ari-table ari-text">{body}</table>'
                + (f'<ul class="ari-list ari-text">{problems}</ul>' if problems else "")
                + self._node_names_html() + self._placement_heading_html())

    def _time_left(self) -> str:
        if "time_left" in self.ctx.runner.running:
            return self.tr("alloc_time_left_checking")
        result = probe_results(self.state).get("time_left")
        if result is None:
            return "—"
        return self.result_text(result)

    def _node_names_html(self) -> str:
        """The first NODE_NAMES_SHOWN node names, folded until opened."""
        a = self.state.allocation
        if a is None or not a.num_nodes:
            return ""
        names = list(itertools.islice(a.nodes(), NODE_NAMES_SHOWN))
        more = (a.num_nodes or 0) - len(names)
        text = " ".join(names) + (f" … {self.tr('alloc_more_nodes', count=f'{more:,}')}" if more > 0 else "")
        return (f'<details class="ari-node-names-box ari-text"><summary>{esc(self.tr("alloc_show_nodes"))}'
                f'</summary><div class="ari-node-names ari-mono ari-scroll">{esc(text)}</div></details>')

    def _placement_heading_html(self) -> str:
        kind = self.state.profile.kind or ""
        return (f'<h4 class="ari-heading">{esc(self.tr("placement_title"))}</h4>'
                f'<div class="ari-help">{esc(self.tr("placement_explain", kind=kind or "—"))}</div>')

    def _rows(self) -> list:
        rows = [self.banner, self.demo_picker]
        return rows if self.facts is None else [*rows, self.facts, self.fan_out, self.placement]

    def _new_allocation_rows(self) -> None:
        looks = self.ctx.looks
        self._kind = self.state.profile.kind
        self.facts = looks(widgets.HTML, self._facts_html())
        self.fan_out = widgets.Checkbox(  # defaults to what the kind implies
            value=fans_out(self._kind or ""), indent=False, description=self.tr("placement_fan_out"),
            style=looks.style(widgets.Checkbox, description_width="initial"),
            layout=looks.layout(), _dom_classes=("ari-fan-out",))
        # Where the ranks land needs ARI's rules (judge, render, validate: most of a cold
        # start): drawn once a kernel's loop turns, or at the first look outside a kernel
        # (``draw_placement``), as the probes are.
        self.placement = looks(widgets.HTML, "")
        self._placement_due = True
        loop = running_loop()
        if loop is not None:
            loop.call_soon(self.draw_placement)

    def draw_placement(self) -> None:
        """The placement put off by ``_new_allocation_rows``, now (later calls do nothing)."""
        if self._placement_due:
            self._render_placement()

    def _follow_fan_out(self) -> None:
        self.label(self.fan_out, "description", "placement_fan_out")
        self.fan_out.observe(self._on_fan_out, names="value")

    def _ask_allocation_rows(self) -> None:
        """Build the allocation's rows the first time one is shown (e.g. a demo site picked)."""
        if self.facts is None and self._inside():
            self._new_allocation_rows()
            self._follow_fan_out()
            self.children = self._rows()

    def _render_placement(self) -> None:
        self._ask_allocation_rows()
        kind_changed = self.state.profile.kind != self._kind
        self._kind = self.state.profile.kind
        if self.facts is None:
            return
        if kind_changed:  # a new kind resets the launcher guess

            self.fan_out.value = fans_out(self._kind or "")
            self._render_facts()  # the placement's heading names the kind
        for row in (self.facts, self.fan_out, self.placement):
            show(row, self._inside())
        self._placement_due = False
        self.placement.value = self._placement_html()

    def _placement_html(self) -> str:
        """Where the ranks land, then the findings about it ('' outside an allocation)."""
        if not self._inside():
            return ""
        told = self.ctx.placement_verdict()
        model = told.placement
        if model is None:
            error = told.error
            # ARI's own refusal is quoted tool output: shown verbatim, as code, in every language
            quoted = f' <code class="ari-tool-output">{esc(error)}</code>' if error else ""
            placement = (f'<div class="ari-text ari-sev-error">'
                         f'{esc(self.tr("placement_no_plan", error="").strip())}{quoted}</div>')
        else:
            # cold start: the picture's drawing loads after Wizard() returns (draw_placement)
            from .placement_view import render_placement

            placement = render_placement(model, self.tr)
        return placement + findings_html(list(told.findings), self.ctx.lang)

    # -- events -------------------------------------------------------------------------------
    def _on_demo_pick(self, change) -> None:
        if change["new"] and change["new"] != self.ctx.site_name:
            self.ctx.switch_site(change["new"])

    def _on_fan_out(self, change) -> None:
        kind_default = fans_out(self.state.profile.kind or "")
        self.ctx.fan_out = None if change["new"] == kind_default else bool(change["new"])


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
