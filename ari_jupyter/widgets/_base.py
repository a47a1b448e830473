"""What every panel shares: escaping and rich text, the shared layouts, the panel mixin.

Panels hold no logic of their own: they link widgets to ``WizardState`` traits and to the
session (``wizard/session.py``: host, defaults, the probe runner), call core functions, and
render. The one thing that needs a home on the widget side is translated labels that change
when the user switches language (``Panel.label``).
"""
from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable

import ipywidgets as widgets

from ..base.running import running_loop  # noqa: F401  (the panels ask it here)
from ..i18n import LANGUAGES, LANGUAGE_NAMES, listed, say, sentence_gap, t
from ..wizard.seed_notes import seed_note, seed_note_url

if TYPE_CHECKING:
    from ..base.verdict import ProbeResult
    from ..wizard.session import WizardContext

STATUS_STYLE = {
    # status -> (button_style, FontAwesome icon, CSS class of its text in wizard.css)
    "ok": ("success", "check", "ari-status-ok"),
    "warn": ("warning", "exclamation-triangle", "ari-status-warn"),
    "fail": ("danger", "times", "ari-status-fail"),
    "skip": ("", "minus", "ari-status-skip"),
    "unknown": ("info", "question", "ari-status-unknown"),
    "running": ("", "spinner spin", "ari-status-running"),
    "pending": ("", "circle-o", "ari-status-pending"),
}


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def rich(text: Any) -> str:
    """A message as HTML: escaped, with its `backticked` commands and paths as code.

    Messages mark commands the way the CLI prints them (between backticks); in the wizard the
    marks would show as stray characters, so they become monospace spans instead."""
    return _CODE_SPAN.sub(r'<code class="ari-mono">\1</code>', esc(text))


def fix_html(label: str, fix: str) -> str:
    """A fix or note under a verdict: its label in bold, then the advice (upright, not italic:
    it often holds a command to type, and slanted code is hard to read)."""
    return f'<div class="ari-fix"><b>{esc(label)}</b>{sentence_gap(label)}{rich(fix)}</div>'


def seed_note_html(spot: str, lang: str, env=None) -> str:
    """The one line on where the wizard differs from ARI's setup guide at ``spot``
    (``wizard.seed_notes``), with its link to the guide's section."""
    said = say(seed_note(spot), lang)
    return (f'<div class="ari-seed-note ari-help" data-spot="{esc(spot)}">{rich(said)}{sentence_gap(said)}'
            f'<a href="{esc(seed_note_url(spot, lang, env))}" target="_blank" rel="noopener">'
            f'{esc(t("seed_note_link", lang))} ↗</a></div>')


def pre(text: str, tall: bool = False) -> str:
    """A code box (wizard.css ``pre.ari-pre``: theme colours, wrapped lines, scrolls when long;
    focusable, so a long one scrolls from the keyboard too)."""
    size = "ari-pre-tall" if tall else "ari-pre-short"
    return f'<pre class="ari-pre {size}" tabindex="0">{esc(text)}</pre>'


def pre_args(groups) -> str:
    """A command line in a code box that wraps only between its pieces (``SlurmPlan.
    shell_groups``: each ``--flag value`` whole, each path whole); a piece wider than the box
    wraps after a "/" of its path. Copied, it is one line."""

    def piece(group: str) -> str:  # unbreakable runs, a break opportunity after each "/"
        runs = [part for part in re.split(r"(?<=/)", group) if part]
        return "<wbr>".join(f'<span class="ari-seg">{esc(run)}</span>' for run in runs)

    pieces = " ".join(f'<span class="ari-arg">{piece(group)}</span>' for group in groups)
    return f'<pre class="ari-pre ari-pre-short ari-args" tabindex="0">{pieces}</pre>'


def code_block(text: str, copy_label: str) -> str:
    """A code box with its lines kept and a button copying them (e.g. a module prelude)."""
    return (f'<div class="ari-codeblock"><button type="button" class="ari-copy-code" '
            f'aria-label="{esc(copy_label)}" onclick="navigator.clipboard &amp;&amp; '
            f'navigator.clipboard.writeText(this.nextElementSibling.textContent)">'
            f'{esc(copy_label)}</button>{pre(text)}</div>')


def div(css_class: str, content_html: str) -> str:
    """A block of already escaped HTML in the wizard's text style plus ``css_class``."""
    return f'<div class="ari-text {css_class}">{content_html}</div>'


HIDDEN = "ari-hidden"
"""The class that hides a widget (wizard.css): unlike ``layout.display`` it leaves the Layout
shareable (``SharedLooks``)."""


def hidden_unless(shown: bool) -> tuple[str, ...]:
    """The classes that show (none) or hide a widget, for a widget's ``_dom_classes``."""
    return () if shown else (HIDDEN,)


def show(widget, shown: bool) -> None:
    """Show or hide ``widget`` by the HIDDEN class."""
    if shown:
        widget.remove_class(HIDDEN)
    else:
        widget.add_class(HIDDEN)


def is_shown(widget) -> bool:
    return HIDDEN not in widget._dom_classes


STEP_BUTTONS_STYLE = {"button_width": "auto", "description_width": "initial"}
"""The step buttons' and step 1's demo-site buttons' style: one style model for both."""


def findings_html(findings: Iterable[Any], lang: str) -> str:
    """A list of findings in ``lang``: severity, sentence, and the fix when there is one."""
    from ..base.verdict import MARKS  # cold start: base.verdict loads with the first finding shown

    items = []
    for f in findings:
        short = f.rule.removeprefix("placement_")
        fix, said = f.fix_text(lang), f.text(lang)
        items.append(f'<li class="ari-finding ari-finding-{esc(short)} ari-msg-{esc(f.severity)} '
                     f'ari-sev-{esc(f.severity)}" '
                     f'data-rule="{esc(f.rule)}" data-severity="{esc(f.severity)}">'
                     f'{MARKS.get(f.severity, "")} {rich(said)}'
                     + (f'{sentence_gap(said)}<span class="ari-finding-fix">{rich(fix)}</span>'
                        if fix else "")
                     + '</li>')
    if not items:
        return ""
    return f'<ul class="ari-findings ari-list ari-text">{"".join(items)}</ul>'


def shared_fs_fix(result, tr, lang: str) -> str:
    """The shared-filesystem verdict's fix in the wizard's words: a node-local workspace is
    changed in step 4's Workspace field (the probe's own fix names the command line's
    --checkpoint-dir), towards the network filesystems this node really mounts."""
    if not result.fix_id.startswith("probe.shared_fs.node_local.fix"):
        return result.fix_text(lang)
    mounts = (result.data or {}).get("network_mounts") or []
    where = (tr("exp_shared_fs_mounts", mounts=listed(mounts, lang)) if mounts
             else tr("exp_shared_fs_no_mounts"))
    return tr("exp_shared_fs_fix_where", fix=tr("exp_shared_fs_fix"), where=where)


def _refuse_change(change) -> None:
    """Observer of a shared Layout or style's synced traits: changing one would change every
    widget showing it, so the old value is put back and the assignment raises."""
    owner, name = change["owner"], change["name"]
    owner.unobserve(_refuse_change, names=name)
    try:
        owner.set_trait(name, change["old"])
    finally:
        owner.observe(_refuse_change, names=name)
    raise AttributeError(f"a shared {type(owner).__name__} cannot change "
                         f"({name}): give the widget one of its own")


def _shared(model):
    # An observer, not a subclass: a new class costs a cold start ms. Only what is synced to
    # the browser: closing the model (its comm going) stays possible.
    model.observe(_refuse_change, names=list(model.keys))
    return model


class SharedLooks:
    """One Layout, and one style per style class and settings, for every widget of a wizard
    that never changes them. Each Layout and style is a widget model of its own (one more
    comm opened at start), and wizard.css does the styling, so most would carry nothing."""

    def __init__(self):
        self._layouts: dict[tuple, widgets.Layout] = {}
        self._styles: dict[tuple, widgets.Widget] = {}

    def layout(self, **traits) -> widgets.Layout:
        key = tuple(sorted(traits.items()))
        if key not in self._layouts:
            self._layouts[key] = _shared(widgets.Layout(**traits))
        return self._layouts[key]

    def style(self, widget_class, **traits):
        style_class = _style_class(widget_class)
        key = (style_class, tuple(sorted(traits.items())))
        if key not in self._styles:
            self._styles[key] = _shared(style_class(**traits))
        return self._styles[key]

    def __call__(self, widget_class, *args, layout: dict | None = None,
                 style: dict | None = None, **kwargs):
        """``widget_class(*args, **kwargs)`` with a shared layout and style (``layout``,
        ``style``: their settings). A widget whose layout changes later needs its own."""
        kwargs["layout"] = self.layout(**(layout or {}))
        if _style_class(widget_class) is not None:
            kwargs["style"] = self.style(widget_class, **(style or {}))
        return widget_class(*args, **kwargs)


_STYLE_CLASSES: dict[type, type | None] = {}


def _style_class(widget_class: type) -> type | None:
    """The class of ``widget_class``'s ``style`` trait (None: it has none), looked up once."""
    if widget_class not in _STYLE_CLASSES:
        trait = widget_class.class_traits().get("style")
        _STYLE_CLASSES[widget_class] = getattr(trait, "klass", None) if trait is not None else None
    return _STYLE_CLASSES[widget_class]


class Panel:
    """A step of the wizard. Subclasses call ``label()`` for every translated string and put
    their HTML rendering in ``refresh()``, which runs again after a language switch.

    A mixin: each panel is ``class X(Panel, widgets.VBox)``. Deriving a widget class costs
    traitlets a pass over all of VBox's members, about 0.5 ms of a kernel's cold start, and
    step 1 needs only its own panel's.
    """

    def __init__(self, ctx: WizardContext, **kwargs):
        self.ctx = ctx  # set first: a subclass may render its children before calling this
        kwargs.setdefault("layout", ctx.looks.layout())
        super().__init__(**kwargs)
        self._labels: list[tuple[Any, str, str, Callable[[], dict]]] = []
        ctx.observe(self._on_lang, names="lang")

    @property
    def state(self):
        return self.ctx.state

    def tr(self, key: str, **params) -> str:
        return self.ctx.tr(key, **params)

    def label(self, widget, attr: str, key: str, params: Callable[[], dict] | None = None):
        """Set ``widget.attr`` to the translation of ``key`` now and after every language switch."""
        getter = params or dict
        self._labels.append((widget, attr, key, getter))
        setattr(widget, attr, self.tr(key, **getter()))
        return widget

    def _on_lang(self, change=None) -> None:
        for widget, attr, key, getter in self._labels:
            setattr(widget, attr, self.tr(key, **getter()))
        self.refresh()

    def result_text(self, result) -> str:
        """A probe's verdict in the wizard's language; a time left also says until when, as
        the wizard keeps it on screen long after squeue answered."""
        text = result.text(self.ctx.lang)
        answered = self.ctx.runner.answered_at.get(result.id)
        if answered is not None and result.id == "time_left":
            if getattr(self.ctx.host, "is_demo", False):
                # a recording's time left does not run down: an end on this machine's clock
                # would move with every look while the time left stays as it was
                return text + self.tr("time_left_recorded")
            # cold start: probes.slurm loads with the first time-left answer
            from ..probes.slurm import time_left_until

            text += time_left_until(result, answered, self.ctx.lang)
        return text

    def refresh(self) -> None:  # pragma: no cover - overridden
        pass


def status_badge(results: Iterable[ProbeResult], running: int, tr) -> str:
    """The summary badge: counts per status, worst first, plus probes still running."""
    # cold start: base.verdict loads with the checks' first badge (step 2)
    from ..base.verdict import SEVERITY_OF_STATUS, rank

    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    parts = []
    for status in sorted(counts, key=lambda status: rank(SEVERITY_OF_STATUS[status])):
        if counts.get(status):
            parts.append(f'<span class="ari-badge ari-badge-{status}">'
                         f'{esc(tr("status_count_" + status, count=counts[status]))}</span>')
    if running:
        parts.append(f'<span class="ari-badge ari-badge-running">'
                     f'{esc(tr("checks_running", count=running))}</span>')
    return f'<div class="ari-text">{"".join(parts) or esc(tr("checks_none_yet"))}</div>'


def language_options() -> list[tuple[str, str]]:
    return [(LANGUAGE_NAMES[code], code) for code in LANGUAGES]
