"""What every panel shares: the context (state, config, host, language) and the probe runner.

Panels hold no logic of their own: they link widgets to ``WizardState`` traits, call core
functions, and render. Two things still need a home on the widget side:

* translated labels that change when the user switches language (``Panel.label``), and
* running probes on the kernel's event loop without ever blocking a callback
  (``ProbeRunner``): results are applied by trait assignment only, never by ``print`` or an
  ``Output`` context, which ipykernel 7 drops when they come from elsewhere than the cell.
"""
from __future__ import annotations

import asyncio
import html
import re
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable

import ipywidgets as widgets
from traitlets import Any as AnyTrait, HasTraits, List, Unicode, observe

from ..i18n import LANGUAGES, listed, normalize_lang, sentence_gap, t
if TYPE_CHECKING:
    from ..probes.result import ProbeResult

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


def pre(text: str, tall: bool = False) -> str:
    """A code box (wizard.css ``pre.ari-pre``: theme colours, wrapped lines, scrolls when long;
    focusable, so a long one scrolls from the keyboard too)."""
    size = "ari-pre-tall" if tall else "ari-pre-short"
    return f'<pre class="ari-pre {size}" tabindex="0">{esc(text)}</pre>'


def pre_args(groups) -> str:
    """A command line in a code box that wraps only between its pieces (``SlurmPlan.
    shell_groups``: each ``--flag value`` whole, each path whole); a piece wider than the box
    wraps after a "/" of its path. Copied, it is one line."""
    import re

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

SEVERITY_ICON = {"error": "✖", "warning": "⚠", "info": "ℹ"}


def findings_html(findings: Iterable[Any], lang: str) -> str:
    """A list of findings in ``lang``: severity, sentence, and the fix when there is one."""
    items = []
    for f in findings:
        short = f.rule.removeprefix("placement_")
        fix, said = f.fix_text(lang), f.text(lang)
        items.append(f'<li class="ari-finding ari-finding-{esc(short)} ari-msg-{esc(f.severity)} '
                     f'ari-sev-{esc(f.severity)}" '
                     f'data-rule="{esc(f.rule)}" data-severity="{esc(f.severity)}">'
                     f'{SEVERITY_ICON.get(f.severity, "")} {rich(said)}'
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


class WizardContext(HasTraits):
    """Shared by all panels: the state, the site config, the machine looked at, the language.

    ``host`` and ``site_name`` change when the user picks a demo site. The few actions that
    touch several panels (switch site, choose partition, apply preset) live here so that each
    is one call into the core, whichever panel triggers it.
    """

    lang = Unicode("en")
    host = AnyTrait()
    fan_out = AnyTrait(None, allow_none=True)
    """Whether reproduce.sh starts its ranks through srun (None: what the kind implies)."""
    site_name = Unicode("")
    site_reason = Unicode("")
    switching_to = Unicode("")
    """The site a switch is on its way to ('' when none): the header says so at once."""

    def __init__(self, state, config, host, site_name: str, site_reason: str = "", bridge=None,
                 lang: str = "en", local_env=None, looks: SharedLooks | None = None):
        super().__init__(host=host, site_name=site_name, site_reason=site_reason,
                         lang=normalize_lang(lang) or "en")
        self.state = state
        self.config = config
        self.local_env = local_env  # this machine's environment (demo workspaces live here)
        self.bridge = bridge
        self.looks = looks or SharedLooks()
        self.runner = ProbeRunner(self)
        self._plan_listeners: list[Callable[[], None]] = []
        self._workflow_found: bool | None = None  # see workflow_found
        self._watched_profile = None
        self._unseeded = False  # seed_soon's defaults wait for the loop (settle_defaults)
        self.touched: set[str] = set()  # the required fields the user has edited
        self.write_attempted = False  # Write was pressed: every field's error is shown
        state.observe(self._on_state_change)
        if state.trait_has_value("profile"):
            self._watch_profile()
        else:  # a new run's profile is made when first needed (its defaults, or a look at it)
            state.observe(lambda _: self._watch_profile(), names="profile", type="default")
        self.observe(lambda _: self._notify(), names="fan_out")

    @observe("lang")
    def _check_lang(self, change):
        normalized = normalize_lang(change["new"])
        if normalized != change["new"]:
            self.lang = normalized or "en"

    def tr(self, key: str, **params) -> str:
        return t(key, self.lang, **params)

    # -- change notification for everything derived from the whole state --------------------
    def observe_plan(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` whenever a value that shapes the sbatch line or problems changes."""
        self._plan_listeners.append(callback)

    def _watch_profile(self) -> None:
        if self._watched_profile is not None:
            self._watched_profile.unobserve(self._on_profile_change)
        self._watched_profile = self.state.profile
        self._watched_profile.observe(self._on_profile_change)

    def _on_state_change(self, change) -> None:
        if change["name"] == "profile":
            self._watch_profile()
        if change["name"] in ("lang", "site_name"):
            return
        self._notify()

    def _on_profile_change(self, change) -> None:
        if change["name"] == "ntasks_per_node":
            # an untouched Max CPUs fits the tasks now on each node, as after a preset
            # (emit --tasks-per-node does the same)
            from ..config import seed_defaults

            seed_defaults(self.state, self.config, self.host, self.local_env, keep_profile=True)
        self._notify()

    def _notify(self) -> None:
        for callback in list(self._plan_listeners):
            callback()

    # -- derived views, all computed by the core --------------------------------------------
    def probe_data(self, probe_id: str) -> dict:
        result = self.state.probe_results.get(probe_id)
        return dict(result.data or {}) if result is not None else {}

    def slurm_plan(self):
        """(SlurmPlan, "") as ARI's reproduce dispatcher would decide it, or (None, why not)."""
        from ..judge import slurm_plan

        sbatch = self.state.probe_results.get("sbatch")
        has_sbatch = None if sbatch is not None else self.host.which("sbatch") is not None
        # ARI judges the path on the machine itself; a demo site's paths are only judged by
        # its shared_fs probe (through the site's recorded mounts/symlinks).
        home = None if getattr(self.host, "is_demo", False) else self.host.home
        return slurm_plan(self.state, self.host.env, has_sbatch=has_sbatch, home=home)

    def placement(self):
        """Where the reproduce job's ranks land (None outside an allocation)."""
        from ..judge import placement

        return placement(self.state, self.host.env, self.fan_out, self._has_sbatch())

    def _has_sbatch(self) -> bool | None:
        if self.state.probe_results.get("sbatch") is not None:
            return None
        return self.host.which("sbatch") is not None

    def prelude_text(self) -> str:
        """The reproduce.sh prelude for the profile, with srun where the site has it."""
        from ..ari import prelude

        mpi = self.probe_data("mpi")
        launcher = "mpirun" if mpi and not mpi.get("srun") and mpi.get("mpirun") else "srun"
        try:
            return prelude.render_prelude(self.state.profile, modules=self.state.module_loads,
                                          nodes=self.state.nodes, launcher=launcher)
        except prelude.PreludeError as exc:
            return str(exc)

    def problems(self) -> list:
        """The one verdict (``judge.judge``) every step filters."""
        from ..judge import judge

        stages_off = bool(self.state.run_settings.disabled_stages())
        return judge(self.state, env=self.host.env, fan_out=self.fan_out,
                     has_sbatch=self._has_sbatch(),
                     workflow_found=self.workflow_found if stages_off else None)

    @property
    def workflow_found(self) -> bool:
        """Whether ARI's workflow.yaml can be written where `ari run` will run: this
        JupyterLab's machine (looked at once: ARI is not installed while the wizard runs)."""
        if self._workflow_found is None:
            from ..emit import find_ari_workflow

            self._workflow_found = find_ari_workflow(self.local_env)[0] is not None
        return self._workflow_found

    @workflow_found.setter
    def workflow_found(self, found: bool) -> None:
        self._workflow_found = found

    def step_problems(self, step: str) -> list:
        from ..judge import for_step

        return for_step(self.problems(), step)

    def awaiting(self, findings) -> list:
        """Of ``findings``, the ones a form holds back for now (``judge.awaiting_input``): an
        untouched required field still empty, before Write was pressed."""
        from ..judge import awaiting_input

        return awaiting_input(findings, self.touched, self.write_attempted)

    def touch(self, field: str) -> None:
        """The user edited required field ``field``: its errors show from now on."""
        self.touched.add(field)

    profile_problems = problems

    # -- a new run's defaults ---------------------------------------------------------------
    def seed_soon(self) -> None:
        """Give a new run its defaults (``seed_defaults``, as ``ari-jupyter emit`` derives
        them); untouched fields then follow the probes' answers.

        Outside an allocation step 1 shows none of them (only the allocation and the site,
        given at once), so on a kernel's loop they wait until it turns, as the probes do: the
        cell that makes the wizard returns sooner, and they are in place before the probes,
        which read them, start. Whatever reads them earlier settles them first
        (``settle_defaults``). Inside an allocation step 1 shows the placement, which needs
        them, and without a running loop nothing would turn: then they are given at once.
        """
        from ..config import seed_site

        seed_site(self.state, self.host)
        self._follow_site_defaults()
        self._unseeded = True
        if not self.state.allocation.inside_allocation:
            try:
                asyncio.get_running_loop().call_soon(self.settle_defaults)
                return
            except RuntimeError:
                pass
        self.settle_defaults()

    def settle_defaults(self) -> None:
        """The defaults ``seed_soon`` put off, now (once; later calls do nothing)."""
        if self._unseeded:
            from ..config import seed_defaults

            self._unseeded = False
            seed_defaults(self.state, self.config, self.host, self.local_env)

    # -- actions ----------------------------------------------------------------------------
    def switch_site(self, name: str | None) -> None:
        """Look at another site (a demo site's name, None: this machine) through the core's
        ``site_defaults.use_site``: new host and allocation, fresh probes, site-derived values
        as a fresh wizard there has them, the user's text kept."""
        # said first: the header's message leaves before the work below
        self.switching_to = name or ""
        try:
            self._switch_site(name)
        finally:
            self.switching_to = ""

    def _switch_site(self, name: str | None) -> None:
        from ..config import open_host
        from ..site_defaults import use_site

        self.settle_defaults()  # the site switched from had its defaults, as in a new wizard
        host = open_host(name or None, self.config, self.local_env)
        self._follow_site_defaults()
        self.runner.cancel_all()
        self.host = host  # first: defaults that follow the probes read the new host
        use_site(self.state, self.config, host, self.local_env)
        self.fan_out = None
        if name:
            reason = "site_reason_given"
        else:
            inside = self.state.allocation is not None and self.state.allocation.inside_allocation
            reason = "site_reason_allocation" if inside else "site_reason_outside"
        with self.hold_trait_notifications():  # the header reads both: never one without the other
            self.site_reason = reason
            self.site_name = host.name
        self.runner.start_soon()

    def _follow_site_defaults(self) -> None:
        """Untouched fields follow the probes' answers: a new run's from the start, a reopened
        checkpoint's from a site switch on (until then it keeps its values)."""
        if getattr(self.state, "_follows_site", False):
            return

        def follow(change) -> None:
            from ..config import seed_defaults

            if change["new"]:
                seed_defaults(self.state, self.config, self.host, self.local_env)

        self.state.observe(follow, names="probe_results")
        self.state._follows_site = True

    def choose_partition(self, partition: str) -> None:
        """The user picked a partition: record it and ask the site again about it."""
        self.state.partition = partition
        self.state.partition_source = "explicit" if partition else "none"
        self.runner.start(only=("sbatch", "partitions", "gres"))

    def apply_preset(self, name: str) -> None:
        """The preset's profile (``SITE_PRESET``: the site's own default, as a new run starts
        with); untouched fields that depend on it (Max CPUs with its tasks per node) follow,
        as ``emit --preset`` derives them."""
        from ..ari.profile import PRESETS
        from ..config import seed_defaults
        from ..site_defaults import SITE_PRESET

        self.state.profile = self.site_profile() if name == SITE_PRESET else PRESETS[name]()
        seed_defaults(self.state, self.config, self.host, self.local_env, keep_profile=True)

    def site_profile(self):
        """The execution profile this site suggests from what is known so far."""
        from ..site_defaults import site_profile

        return site_profile(self.config, self.host, self.local_env, self.state)


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
            from ..probes.slurm import time_left_until

            text += time_left_until(result, answered, self.ctx.lang)
        return text

    def refresh(self) -> None:  # pragma: no cover - overridden
        pass


def status_badge(results: Iterable[ProbeResult], running: int, tr) -> str:
    """The summary badge: counts per status, worst first, plus probes still running."""
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    parts = []
    for status in ("fail", "warn", "unknown", "ok", "skip"):
        if counts.get(status):
            parts.append(f'<span class="ari-badge ari-badge-{status}">'
                         f'{esc(tr("status_count_" + status, count=counts[status]))}</span>')
    if running:
        parts.append(f'<span class="ari-badge ari-badge-running">'
                     f'{esc(tr("checks_running", count=running))}</span>')
    return f'<div class="ari-text">{"".join(parts) or esc(tr("checks_none_yet"))}</div>'


class ProbeRunner(HasTraits):
    """Runs probes as asyncio tasks on the running loop (the kernel's) and stores each result
    in the state as soon as it finishes. ``running`` lists the probe ids still in flight.

    Runs overlap (a full run, then the workspace's shared_fs check while it is still going):
    each run has a generation, and a result is kept only from the newest run that asked that
    probe, so a slow answer about an old workspace never replaces a newer verdict.
    """

    running = List(Unicode())

    def __init__(self, ctx: WizardContext):
        super().__init__()
        self.ctx = ctx
        self.tasks: dict[tuple[str, ...], asyncio.Task] = {}
        self._generation = 0
        self._newest: dict[str, int] = {}  # probe id -> generation of the newest run asking it
        self.deferred: tuple[str, ...] = ()  # asked by start_soon() while no loop was running
        self.answered_at: dict[str, float] = {}  # probe id -> when its shown answer arrived

    def context(self, only: Iterable[str] | None = None):
        """The ProbeContext the CLI would build from the same inputs."""
        from ..config import probe_context

        self.ctx.settle_defaults()  # the partition and workspace the probes ask about
        return probe_context(self.ctx.state, self.ctx.config, only=only)

    def start(self, only: Iterable[str] | None = None) -> asyncio.Task | None:
        """Start (or restart) a probe run; returns its task. Never waits for a subprocess.

        Without a running event loop (a plain script) there is nothing to schedule on, so the
        run happens synchronously, exactly as the CLI does it.
        """
        from ..probes import PROBE_IDS

        self.run_deferred()  # a run asked earlier starts first, as it would have
        ids = tuple(only) if only is not None else tuple(PROBE_IDS)
        key = tuple(sorted(ids))
        previous = self.tasks.get(key)
        if previous is not None and not previous.done():
            previous.cancel()
        self._generation += 1
        generation = self._generation
        self._newest.update({probe_id: generation for probe_id in ids})
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._run_blocking(ids)
            return None
        self.running = sorted(set(self.running) | set(ids))
        task = loop.create_task(self._run(ids, generation))
        self.tasks[key] = task
        return task

    def start_soon(self, only: Iterable[str] | None = None) -> asyncio.Task | None:
        """``start()`` on a running loop (a kernel); without one, remember the run for the first
        look at its results (``run_deferred``) instead of blocking the caller: a plain script's
        ``Wizard()`` then returns at once, and ``Wizard(run_probes=False)`` pays nothing."""
        from ..probes import PROBE_IDS

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            ids = tuple(only) if only is not None else tuple(PROBE_IDS)
            self.deferred += tuple(pid for pid in ids if pid not in self.deferred)
            return None
        return self.start(only)

    def run_deferred(self) -> asyncio.Task | None:
        """Start the run ``start_soon`` put off: scheduled on the running loop if there is one
        (never blocking a kernel callback), else synchronously as the CLI runs it."""
        if not self.deferred:
            return None
        ids, self.deferred = self.deferred, ()
        return self.start(ids)

    def _is_newest(self, probe_id: str, generation: int) -> bool:
        return self._newest.get(probe_id) == generation

    async def _run(self, ids: tuple[str, ...], generation: int) -> None:
        from ..probes import run_probes

        host = self.ctx.host
        try:
            async for result in run_probes(host, self.context(ids)):
                if self.ctx.host is not host:
                    return  # the user switched sites meanwhile; drop stale results
                if not self._is_newest(result.id, generation):
                    continue  # a newer run asks this probe again; its answer will count
                self._store(result)
                self.running = [pid for pid in self.running if pid != result.id]
        finally:
            # Ids a newer run took over stay "running" until that run answers.
            self.running = [pid for pid in self.running
                            if pid not in ids or not self._is_newest(pid, generation)]

    def _run_blocking(self, ids: tuple[str, ...]) -> None:
        from ..probes import run_probes_sync

        for result in run_probes_sync(self.ctx.host, self.context(ids)):
            self._store(result)

    def _store(self, result: ProbeResult) -> None:
        self.answered_at[result.id] = time.time()
        store_result(self.ctx.state, result)

    async def wait(self) -> None:
        """Await every task started so far (tests, notebooks), and a deferred run first."""
        self.run_deferred()
        while True:
            pending = [task for task in self.tasks.values() if not task.done()]
            if not pending:
                return
            await asyncio.gather(*pending, return_exceptions=True)

    def cancel_all(self) -> None:
        self.deferred = ()
        for task in self.tasks.values():
            if not task.done():
                task.cancel()
        self._newest.clear()
        self.running = []


def _bind_flags(sbatch_data: dict):
    """What the sbatch check learnt from ``sbatch --help``; unknown = assume supported, as
    the validator does not flag it either."""
    flags = sbatch_data.get("bind_flags")
    return True if flags is None else flags


def store_result(state, result: ProbeResult) -> None:
    """Put one probe result into the state (replacing the previous verdict of that probe)."""
    state.set_probe_result(result)


def probe_results(state) -> dict[str, ProbeResult]:
    """The state's latest verdict per probe id."""
    return dict(state.probe_results)


def language_options() -> list[tuple[str, str]]:
    from ..i18n import LANGUAGE_NAMES

    return [(LANGUAGE_NAMES[code], code) for code in LANGUAGES]
