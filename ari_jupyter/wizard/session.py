"""One wizard session: which host it works on, the defaults it settles, the probes it runs.

Everything a wizard decides that is not drawing: the host (this machine or a demo site) and a
site switch, the new run's defaults (settled once the kernel's loop turns, or at once when
something reads them), the concurrent probe runner with its generations (a newer run of a probe
wins) and the plan listeners that redraw step 3. The widgets link to these traits and call
these methods; nothing here imports ipywidgets, so a test drives a session without a browser.
"""
from __future__ import annotations

import sys
import time
import weakref
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from traitlets import Any as AnyTrait, HasTraits, List, Unicode, observe

from ..ari.profile import PRESETS
from ..base.running import running_loop
from ..i18n import normalize_lang, t
from ..probes import PROBE_IDS
from .config import open_host, probe_context, seed_site
from .site_choice import tell_server
from .site_defaults import SITE_PRESET, seed_defaults, site_profile, use_site

if TYPE_CHECKING:
    import asyncio

    from ..base.verdict import ProbeResult


def _rules():
    """ARI's rules (``ari.judge``, with everything they read): loaded when a step first asks."""
    from ..ari import judge  # cold start: ARI's rules wait until a step asks, after the first draw

    return judge


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
                 lang: str = "en", local_env=None, looks: Any = None):
        super().__init__(host=host, site_name=site_name, site_reason=site_reason,
                         lang=normalize_lang(lang) or "en")
        self.state = state
        self.config = config
        self.local_env = local_env  # this machine's environment (demo workspaces live here)
        self.bridge = bridge
        self.looks = looks  # the front end's widget factory (widgets/_base.SharedLooks)
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
        self._tell_server()
        self.observe(lambda _: self._tell_server(), names="host")

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

    def _tell_server(self) -> None:
        """Tell the Jupyter server this kernel runs under which site the wizard looks at, so its
        status bar and Runs panel follow it (``site_choice``)."""
        told = tell_server(self.host.name if getattr(self.host, "is_demo", False) else "", self.local_env)
        if told and callable(getattr(self.bridge, "site_changed", None)):
            self.bridge.site_changed()

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
        sbatch = self.state.probe_results.get("sbatch")
        has_sbatch = None if sbatch is not None else self.host.which("sbatch") is not None
        # ARI judges the path on the machine itself; a demo site's paths are only judged by
        # its shared_fs probe (through the site's recorded mounts/symlinks).
        home = None if getattr(self.host, "is_demo", False) else self.host.home
        return _rules().slurm_plan(self.state.choices(), self.host.env, has_sbatch=has_sbatch, home=home)

    def placement(self):
        """Where the reproduce job's ranks land (None outside an allocation)."""
        return _rules().placement(self.state.choices(), self.host.env, self.fan_out, self._has_sbatch())

    def placement_verdict(self):
        """Step 1's picture and findings, and what they mean (``judge.placement_verdict``,
        the function the lessons' check asks too)."""
        return _rules().placement_verdict(self.state.choices(), self.host.env, self.fan_out, self._has_sbatch(),
                                 findings=self.problems())

    def _has_sbatch(self) -> bool | None:
        if self.state.probe_results.get("sbatch") is not None:
            return None
        return self.host.which("sbatch") is not None

    def prelude_text(self) -> str:
        """The reproduce.sh prelude for the profile, with srun where the site has it."""
        from ..ari import prelude  # cold start: the prelude loads when step 3 first shows it

        mpi = self.probe_data("mpi")
        launcher = "mpirun" if mpi and not mpi.get("srun") and mpi.get("mpirun") else "srun"
        try:
            return prelude.render_prelude(self.state.profile, modules=self.state.module_loads,
                                          nodes=self.state.nodes, launcher=launcher)
        except prelude.PreludeError as exc:
            return str(exc)

    def problems(self) -> list:
        """The one verdict (``judge.judge``) every step filters."""
        stages_off = bool(self.state.run_settings.disabled_stages())
        return _rules().judge(self.state.choices(), env=self.host.env, fan_out=self.fan_out,
                     has_sbatch=self._has_sbatch(),
                     workflow_found=self.workflow_found if stages_off else None)

    @property
    def workflow_found(self) -> bool:
        """Whether ARI's workflow.yaml can be written where `ari run` will run: this
        JupyterLab's machine (looked at once: ARI is not installed while the wizard runs)."""
        if self._workflow_found is None:
            # cold start: ARI's install lookup loads when step 4 first asks for workflow.yaml
            from ..ari.install import find_ari_workflow

            self._workflow_found = find_ari_workflow(self.local_env)[0] is not None
        return self._workflow_found

    @workflow_found.setter
    def workflow_found(self, found: bool) -> None:
        self._workflow_found = found

    def step_problems(self, step: str) -> list:
        return _rules().for_step(self.problems(), step)

    def awaiting(self, findings) -> list:
        """Of ``findings``, the ones a form holds back for now (``judge.awaiting_input``): an
        untouched required field still empty, before Write was pressed."""
        return _rules().awaiting_input(findings, self.touched, self.write_attempted)

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
        seed_site(self.state, self.host)
        self._follow_site_defaults()
        self._unseeded = True
        loop = running_loop()
        if not self.state.allocation.inside_allocation and loop is not None:
            loop.call_soon(self.settle_defaults)
            return
        self.settle_defaults()

    def settle_defaults(self) -> None:
        """The defaults ``seed_soon`` put off, now (once; later calls do nothing)."""
        if self._unseeded:
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
        self.state.profile = self.site_profile() if name == SITE_PRESET else PRESETS[name]()
        seed_defaults(self.state, self.config, self.host, self.local_env, keep_profile=True)

    def site_profile(self):
        """The execution profile this site suggests from what is known so far."""
        return site_profile(self.config, self.host, self.local_env, self.state)


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
        self.ctx.settle_defaults()  # the partition and workspace the probes ask about
        return probe_context(self.ctx.state, self.ctx.config, only=only)

    def start(self, only: Iterable[str] | None = None) -> asyncio.Task | None:
        """Start (or restart) a probe run; returns its task. Never waits for a subprocess.

        Without a running event loop (a plain script) there is nothing to schedule on, so the
        run happens synchronously, exactly as the CLI does it.
        """
        self.run_deferred()  # a run asked earlier starts first, as it would have
        ids = tuple(only) if only is not None else tuple(PROBE_IDS)
        key = tuple(sorted(ids))
        previous = self.tasks.get(key)
        if previous is not None and not previous.done():
            previous.cancel()
        self._generation += 1
        generation = self._generation
        self._newest.update({probe_id: generation for probe_id in ids})
        loop = running_loop()
        if loop is None:
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
        if running_loop() is None:
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
        host = self.ctx.host
        try:
            from ..probes import run_probes  # cold start: the probes load once the loop turns

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
        from ..probes import run_probes_sync  # cold start: the probes load once asked for

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
            await sys.modules["asyncio"].gather(*pending, return_exceptions=True)  # a loop runs

    def cancel_all(self) -> None:
        self.deferred = ()
        for task in self.tasks.values():
            if not task.done():
                task.cancel()
        self._newest.clear()
        self.running = []


def store_result(state, result: ProbeResult) -> None:
    """Put one probe result into the state (replacing the previous verdict of that probe)."""
    state.set_probe_result(result)


def probe_results(state) -> dict[str, ProbeResult]:
    """The state's latest verdict per probe id."""
    return dict(state.probe_results)


_LATEST: dict = {"context": None}
"""The session of the last wizard made in this kernel, to go on from when its cell runs again."""


def in_a_kernel() -> bool:
    """Whether this process is an IPython kernel (a plain script makes every wizard afresh)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def remember_in_this_kernel(ctx: WizardContext) -> None:
    """``ctx`` is the session a plain ``Wizard()`` in this kernel goes on from next (held
    weakly: a wizard nobody shows any more is not kept alive for it)."""
    if in_a_kernel():
        _LATEST["context"] = weakref.ref(ctx)


def kept_in_this_kernel() -> WizardContext | None:
    """The session of the last wizard made in this kernel, while it lives; None outside a kernel."""
    ref = _LATEST["context"]
    return ref() if ref is not None and in_a_kernel() else None


class _Quiet:
    """A progress line that says nothing (``settle_for_write`` without one)."""

    def __enter__(self) -> "_Quiet":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def done(self, probe_id: str) -> None:
        return None


def settle_for_write(state, config, host, *, profile_given: bool,
                     profile_edits: Mapping[str, Any] | None = None, probes: bool = True,
                     force: bool = False, probe_timeout: float | None = None,
                     progress: Callable[[Iterable[str]], Any] | None = None) -> None:
    """The steps a wizard takes from its first look to Write, for a caller without a kernel
    loop (``ari-jupyter emit``): the site's defaults (``seed_site``, ``seed_defaults``, as
    ``WizardContext.seed_soon`` gives a new run), the profile's edits as step 3 makes them (Max
    CPUs then fits, as after a preset), the workspace judged first from the mount table (a
    node-local one is refused by Write at once, without waiting for a controller that may not
    answer), every probe under the config's timeouts (``probe_timeout`` overrides them), and
    the defaults the probes' answers settle (``WizardContext._follow_site_defaults``).
    ``progress(ids)`` gives a context with ``done(probe_id)``: a live line of the probes."""
    from ..probes import ProbeContext, run_probes_sync, selected_ids  # cold start: the probes load when emit runs them

    seed_defaults(state, config, host, keep_profile=profile_given)
    if profile_edits:  # on the profile given, else on the site's default, as edited in step 3
        changed = state.profile.copy()
        for key, value in profile_edits.items():
            setattr(changed, key, value)
        state.profile, profile_given = changed, True
        seed_defaults(state, config, host, keep_profile=True)
    if not force and state.workspace:
        judged = ProbeContext(allocation=state.allocation, workspace=state.workspace,
                              only=["shared_fs"])
        for result in run_probes_sync(host, judged):
            state.set_probe_result(result)
            if result.status == "fail":
                return  # node-local: Write refuses it with its own message
    if not probes:
        return
    ctx = probe_context(state, config, timeout=probe_timeout)
    with (progress or (lambda ids: _Quiet()))(selected_ids(ctx.only)) as live:
        for result in run_probes_sync(host, ctx, on_result=lambda r: live.done(r.id)):
            state.set_probe_result(result)
    seed_defaults(state, config, host, keep_profile=profile_given)  # what the probes told
