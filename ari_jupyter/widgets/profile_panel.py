"""Step 3: simple first. What a person decides (kind, partition, nodes, ranks, GPUs, memory,
walltime, modules) is shown; every other execution_profile key waits under "Advanced".

Each profile key gets the widget its schema type calls for, labelled with a translated word
(the ARI key is its tooltip and caption); what the user types is parsed here only as far as a
widget needs (text -> int), and everything the core validator says about a field appears right
under it. The previews are the core's own output, live: the exact sbatch argv ARI's dispatcher
would build and the reproduce.sh prelude the profile asks for.
"""
from __future__ import annotations

import re

import ipywidgets as widgets
from traitlets import Bool, Enum, Int, List as ListTrait, TraitError, Unicode

from ..ari.contracts import contract_of, preview_note
from ..ari.profile import PRESETS, PROFILE_KEYS
from ..ari.render import rubric_nodes
from ..ari.sbatch import DEFAULT_MAX_RUNTIME_SEC, walltime_str
from ..i18n import catalog, listed, render, sentence_gap
from ..ari.module_choice import choose_module, software_modules
from ..wizard.site_defaults import SITE_PRESET, modules_left_out, named_preset, presets_matching
from ._base import Panel, esc, pre, pre_args, rich, seed_note_html
from ..wizard.session import probe_results
from ..wizard.state import resource_value

CUSTOM = "custom"
# The execution_profile keys a person decides; the rest is under "Advanced".
SIMPLE_KEYS = ("min_ranks", "ntasks_per_node", "requested_gpus_per_node", "gpu_type")
SHOWN_ABOVE = ("module_loads",)
"""Findings on these fields are said under the Modules box, outside Advanced."""
RESOURCE_FIELDS = ("nodes", "max_cpus", "mem_gb", "walltime", "followups")
"""The job resources of the state (not of the profile): their findings sit under their box."""
BOXES_WITH_FINDINGS = (*RESOURCE_FIELDS, "kind", "partition")
"""The boxes of the simple part whose findings sit right under them: the job resources, the
partition, and the kind (said under the preset row that decides it)."""
LABEL_WIDTH = "13em"
LABEL_STYLE = {"description_width": LABEL_WIDTH}
FIELD_WIDTH = "27em"
PRESET_WIDTH = "46em"


class ProfileField:
    """One execution_profile key: a widget, a converter both ways, and its message line."""

    def __init__(self, panel: "ProfilePanel", key: str):
        self.panel = panel
        self.key = key
        trait = panel.state.profile.traits()[key]
        self.trait = trait
        self.kind = _kind_of(trait)
        self.widget = self._make_widget(trait)
        self.message = _message()  # under the box, from its left edge (wizard.css)
        self.refusal = None  # why what was typed was refused: a () -> text in the wizard's language
        # the ARI key and what ARI does with it: a caption beside the field (and its tooltip)
        # (it narrows rather than leave the box's line: the message alone goes under the box;
        # in a narrow notebook, below 12em, it goes under the box too instead of a column of
        # one word a line)
        self.help = widgets.HTML(layout=widgets.Layout(flex="1 1 0", min_width="12em",
                                                       max_width="24em"))
        if self.kind == "list":
            self.name = widgets.HTML(layout=widgets.Layout(width=LABEL_WIDTH,
                                                           flex=f"0 0 {LABEL_WIDTH}"))
            self.name.add_class("ari-list-name")  # lined up with the labelled fields (wizard.css)
            parts = [self.name, self.widget, self.help, self.message]
        else:
            self.name = None
            parts = [self.widget, self.help, self.message]
        self.row = widgets.HBox(parts, layout=widgets.Layout(align_items="center"))
        self.row.add_class(f"ari-field-{key}")
        self.row.add_class("ari-box-row")
        self._syncing = False
        self.widget.observe(self._from_widget, names="value")

    def _make_widget(self, trait):
        layout = widgets.Layout(width=FIELD_WIDTH, flex=f"0 0 {FIELD_WIDTH}")
        if self.kind == "enum":
            options = [("—", None)] + [(v, v) for v in trait.values]
            return widgets.Dropdown(options=options, value=None, layout=layout, style=LABEL_STYLE)
        if self.kind == "optional_bool":
            return widgets.Dropdown(options=[("—", None), ("true", True), ("false", False)],
                                    value=None, layout=layout, style=LABEL_STYLE)
        if self.kind == "bool":
            return widgets.Checkbox(value=False, indent=True, layout=layout, style=LABEL_STYLE)
        if self.kind == "list":
            return widgets.TagsInput(value=[], allow_duplicates=False,
                                     layout=widgets.Layout(width="14em", flex="0 0 14em"))
        return widgets.Text(value="", continuous_update=False, layout=layout, style=LABEL_STYLE)

    def relabel(self) -> None:
        """Translated label, the ARI key as caption and tooltip (after every language switch)."""
        tr = self.panel.tr
        label = tr("label_" + self.key)
        caption = tr("profile_field_caption", name=self.key, help=tr("field_" + self.key))
        if self.name is not None:
            self.name.value = f'<label class="ari-field-label" title="{esc(caption)}">{esc(label)}</label>'
            self.widget.placeholder = tr("profile_list_placeholder")
        else:
            self.widget.description = label
        self.widget.tooltip = caption
        self.help.value = (f'<span class="ari-help ari-small ari-field-caption"><code class="ari-field-key">'
                           f'{esc(self.key)}</code> {_flags_unbroken(rich(tr("field_" + self.key)))}</span>')

    # widget -> profile
    def _from_widget(self, change) -> None:
        if self._syncing:
            return
        raw = change["new"]
        try:
            value = self._parse(raw)
        except ValueError:
            self.refusal = lambda: self.panel.tr("profile_not_integer", value=raw)
            self.panel.refresh_messages()
            self.panel.refresh_previews()  # its "not ready" line counts this box too
            return
        had_refusal = self.refusal is not None
        self.refusal = None
        try:
            setattr(self.panel.state.profile, self.key, value)
        except TraitError as exc:
            self.refusal = self._refusal(value, exc)
        self.panel.show_preset_of_profile()
        self.panel.refresh_messages()
        if had_refusal or self.refusal is not None:
            self.panel.refresh_previews()

    def _refusal(self, value, exc: TraitError):
        """Why the profile refused ``value``, in the wizard's words (traitlets' own text names
        the class and the trait: English, and not what a person typed into)."""
        low = getattr(self.trait, "min", None)
        if isinstance(value, int) and low is not None and value < low:
            return lambda: self.panel.tr("profile_too_small", value=value, low=low,
                                         label=self.panel.tr("label_" + self.key))
        text = str(exc).split("\n")[0]
        return lambda: text

    def _parse(self, raw):
        if self.kind in ("int", "optional_int"):
            text = str(raw).strip()
            if text == "":
                return None if self.kind == "optional_int" else 0
            return int(text)
        if self.kind == "optional_str":
            return raw if raw != "" else None
        if self.kind == "list":
            return list(raw)
        return raw

    # profile -> widget
    def show(self, value) -> None:
        """Show the profile's value; a refusal of what was typed before goes with it."""
        self.refusal = None
        self._syncing = True
        try:
            if self.kind in ("int", "optional_int"):
                self.widget.value = "" if value in (None, 0) and self.kind == "optional_int" \
                    else ("" if value is None else str(value))
            elif self.kind == "optional_str":
                self.widget.value = value or ""
            elif self.kind == "list":
                set_tags(self.widget, value)
            else:
                self.widget.value = value
        finally:
            self._syncing = False


def set_tags(widget, values) -> None:
    """Show ``values`` in a TagsInput even when they are not among the offered tags (a preset
    or a restored checkpoint may name modules this site lacks; the validator says so)."""
    values = list(values or [])
    if widget.allowed_tags:
        missing = [v for v in values if v not in widget.allowed_tags]
        if missing:
            widget.allowed_tags = list(widget.allowed_tags) + missing
    widget.value = values


def _kind_of(trait) -> str:
    if isinstance(trait, Enum):
        return "enum"
    if isinstance(trait, Bool):
        return "optional_bool" if trait.allow_none else "bool"
    if isinstance(trait, Int):
        return "optional_int" if trait.allow_none else "int"
    if isinstance(trait, ListTrait):
        return "list"
    if isinstance(trait, Unicode):
        return "optional_str" if trait.allow_none else "str"
    raise TypeError(f"no widget for trait {trait!r}")


class ProfilePanel(Panel, widgets.VBox):
    def __init__(self, ctx, **kwargs):
        super().__init__(ctx, **kwargs)
        s = self.state
        # partition
        wide = widgets.Layout(width=FIELD_WIDTH, flex=f"0 0 {FIELD_WIDTH}")
        self.partition = widgets.Combobox(value=s.partition or "", options=[], ensure_option=False,
                                          continuous_update=False, style=LABEL_STYLE, layout=wide,
                                          _dom_classes=("ari-required",))
        self.label(self.partition, "description", "profile_partition")
        self.partition_source = widgets.HTML()
        self.partition.observe(self._on_partition, names="value")
        # job resources (ARI_SLURM_* in .env; --cpus-per-task / --time of the reproduce job)
        # 0 is "not set" (as in Nodes): a state without Max CPUs does not show a made-up 1.
        # IntText, not a bounded one: a browser clamps -2 to 0 without a word, and the state's
        # check should say "must be at least 1", as the command line does.
        self.max_cpus = widgets.IntText(value=s.max_cpus or 0, style=LABEL_STYLE, layout=wide)
        self.label(self.max_cpus, "description", "profile_max_cpus")
        self.walltime = widgets.Text(value=s.walltime or "", continuous_update=False,
                                     style=LABEL_STYLE, layout=wide)
        self.label(self.walltime, "description", "profile_walltime")
        # empty is not "no limit": the preview's --time is ARI's default then, and the box says so
        self.label(self.walltime, "placeholder", "profile_walltime_placeholder",
                   lambda: {"default": walltime_str(DEFAULT_MAX_RUNTIME_SEC)})
        self.nodes = widgets.IntText(value=s.nodes or 0, style=LABEL_STYLE, layout=wide)
        self.label(self.nodes, "description", "profile_nodes")
        self.mem_gb = widgets.IntText(value=s.mem_gb or 0, style=LABEL_STYLE, layout=wide)
        self.label(self.mem_gb, "description", "profile_mem_gb")
        # follow-up allocations: the run resumed in the next one, same partition, nodes, walltime
        self.followups = widgets.IntText(value=s.followups or 0, style=LABEL_STYLE, layout=wide)
        self.label(self.followups, "description", "profile_followups")
        self.followups_help = widgets.HTML()
        self.allow_no_gres = widgets.Checkbox(value=s.allow_no_gres, indent=False,
                                              style={"description_width": "initial"},
                                              layout=widgets.Layout(width="auto"))
        self.label(self.allow_no_gres, "description", "profile_allow_no_gres")
        self.resources_help = widgets.HTML()
        # where the wizard does otherwise than ARI's setup guide: one line there, with its link
        self.seed_notes = {spot: widgets.HTML() for spot in ("nodes", "modules", "gpus")}
        # the findings on a box of the simple part, under it (not under Modules, far from it):
        # the job resources, the partition, and the kind (the preset row above decides it;
        # its own box is in Advanced, closed, where a warning would be out of sight)
        self.box_messages = {name: _message() for name in BOXES_WITH_FINDINGS}
        for widget, trait, convert in ((self.max_cpus, "max_cpus", _count("max_cpus")),
                                       (self.walltime, "walltime", str),
                                       (self.nodes, "nodes", _count("nodes")),
                                       (self.mem_gb, "mem_gb", _count("mem_gb")),
                                       (self.followups, "followups", int),
                                       (self.allow_no_gres, "allow_no_gres", bool)):
            widget.observe(self._setter(trait, convert), names="value")
        # preset + profile fields
        # wider than a field: each preset reads as its kind and what it is for
        self.preset = widgets.Dropdown(options=self._preset_options(), value=CUSTOM,
                                       style=LABEL_STYLE,
                                       layout=widgets.Layout(width=PRESET_WIDTH, max_width="100%",
                                                             flex=f"0 1 {PRESET_WIDTH}"))
        self.label(self.preset, "description", "profile_preset")
        self.preset_doc = widgets.HTML()
        self.preset.observe(self._on_preset, names="value")
        self.fields = {key: ProfileField(self, key) for key in PROFILE_KEYS}
        # module loads come from the modules probe (the site's `module avail` is authoritative)
        # No allowed_tags on the widget: it would drop an unknown entry without a word. Every
        # entry is judged by the core (choose_module) and a refused one is said out loud.
        self.modules = widgets.TagsInput(value=list(s.module_loads), allowed_tags=[],
                                         allow_duplicates=False,
                                         layout=widgets.Layout(width="auto", min_width="27em"))
        self.offered_modules: list[str] = []
        self._pruning = False  # taking refused entries out of the widget
        self.modules_help = widgets.HTML()
        self.modules_message = widgets.HTML()
        self.modules_message.add_class("ari-tags-message")
        self.modules.observe(self._on_modules, names="value")
        # previews
        self.sbatch_title = widgets.HTML()
        self.sbatch_preview = widgets.HTML()
        self.prelude_title = widgets.HTML()
        self.prelude_preview = widgets.HTML()
        self.problems = widgets.HTML()

        self.simple_title = widgets.HTML()
        self.simple_box = widgets.VBox(
            [self._box_row("kind", self.preset, self.preset_doc),
             self._box_row("partition", self.partition, self.partition_source),
             self._box_row("nodes"), self.seed_notes["nodes"], self.fields["min_ranks"].row,
             self.fields["ntasks_per_node"].row, self._box_row("max_cpus"),
             self.fields["requested_gpus_per_node"].row, self.fields["gpu_type"].row,
             self._box_row("mem_gb"), self._box_row("walltime"),
             self.resources_help, self._box_row("followups"), self.followups_help])
        self.fields_box = widgets.VBox([self.allow_no_gres, self.seed_notes["gpus"]] + [
            f.row for key, f in self.fields.items() if key not in SIMPLE_KEYS])
        self.fields_title = widgets.HTML()
        self.advanced = widgets.Accordion(children=[widgets.VBox([self.fields_title, self.fields_box])],
                                          selected_index=None)
        self.advanced.add_class("ari-advanced")
        # What concerns no single box (no sbatch here, ranks that do not fit a node) comes
        # first, under its own heading: below the module chips it read as theirs.
        self.children = [
            self.problems,
            self.simple_title, self.simple_box,
            self.modules_help, self.seed_notes["modules"], self.modules, self.modules_message,
            self.advanced,
            self.sbatch_title, self.sbatch_preview,
            self.prelude_title, self.prelude_preview,
        ]
        self._watched_profile = None
        self._watch_profile()
        s.observe(self._on_state, names=["profile", "partition", "partition_source", "max_cpus",
                                         "walltime", "nodes", "mem_gb", "followups", "allow_no_gres",
                                         "module_loads", "probe_results"])
        ctx.observe_plan(self.refresh_previews)
        self.refresh()

    # -- state -> widgets -----------------------------------------------------------------------
    def _watch_profile(self) -> None:
        if self._watched_profile is not None:
            self._watched_profile.unobserve(self._on_profile_trait)
        self._watched_profile = self.state.profile
        self._watched_profile.observe(self._on_profile_trait)
        for key, field in self.fields.items():
            field.show(getattr(self.state.profile, key))

    def _on_profile_trait(self, change) -> None:
        field = self.fields.get(change["name"])
        if field is not None:
            field.show(change["new"])

    def _on_state(self, change) -> None:
        name = change["name"]
        if name == "profile":
            self._watch_profile()
            self.show_preset_of_profile()
        elif name == "partition" and self.partition.value != (change["new"] or ""):
            self.partition.value = change["new"] or ""
        elif name == "max_cpus":
            self.max_cpus.value = change["new"] or 0
        elif name == "walltime":
            self.walltime.value = change["new"] or ""
        elif name == "nodes":
            self.nodes.value = change["new"] or 0
        elif name == "mem_gb":
            self.mem_gb.value = change["new"] or 0
        elif name == "followups":
            self.followups.value = change["new"] or 0
        elif name == "allow_no_gres":
            self.allow_no_gres.value = bool(change["new"])
        elif name == "module_loads" and list(self.modules.value) != list(change["new"]):
            set_tags(self.modules, change["new"])
        self.refresh()

    # -- widgets -> state -----------------------------------------------------------------------
    def _setter(self, trait, convert):
        def set_value(change):
            if trait in RESOURCE_FIELDS and trait != "walltime" and \
                    change["new"] == (getattr(self.state, trait) or 0):
                return  # the box showing the state's value (None shows as 0): no one typed
            value = convert(change["new"])
            if getattr(self.state, trait) != value:
                try:
                    setattr(self.state, trait, value)
                except TraitError as exc:
                    self.problems.value = f'<div class="ari-text ari-sev-error">{esc(exc)}</div>'
        return set_value

    def _on_partition(self, change) -> None:
        value = (change["new"] or "").strip()
        self.ctx.touch("partition")
        if value == (self.state.partition or ""):
            return
        self.ctx.choose_partition(value)

    def _on_preset(self, change) -> None:
        name = change["new"]
        if name == CUSTOM:
            self.preset_doc.value = ""
            return
        self.ctx.apply_preset(name)
        self._render_preset_doc()

    def _render_preset_doc(self) -> None:
        """The chosen preset's note, in the wizard's language (again after a language switch)."""
        name = self.preset.value
        if name == CUSTOM:
            self.preset_doc.value = ""
            return
        key, params = "preset_" + name, {}
        if name == SITE_PRESET:
            kind = self.state.profile.kind
            # no kind: no profile at all, a single process, as ARI runs without one
            key, params = ("preset_site", {"kind": kind}) if kind else ("preset_site_none", {})
            named = named_preset(self.ctx.site_profile())
            if named and kind:  # the named preset's words fit the site (sx40: GPUs without GRES)
                self.preset_doc.value = (f'<div class="ari-help ari-preset-site-named">'
                                         f'{rich(self.tr("preset_" + named))}</div>'
                                         f'<div class="ari-help">{rich(self.tr(key, **params))}</div>')
                return
        self.preset_doc.value = f'<div class="ari-help">{rich(self.tr(key, **params))}</div>'

    def show_preset_of_profile(self) -> None:
        """The entry the profile equals: the one shown while it still does, else the site's
        default, else a named preset, else custom. After a field edited by hand, a site switch
        or a reopened run, never the name of a preset the profile no longer is."""
        names = presets_matching(self.state.profile, self.ctx.site_profile())
        name = self.preset.value if self.preset.value in names else (names or [CUSTOM])[0]
        if name != self.preset.value:
            self.preset.unobserve(self._on_preset, names="value")
            self.preset.value = name
            self._render_preset_doc()
            self.preset.observe(self._on_preset, names="value")

    def _on_modules(self, change) -> None:
        """Keep the entries the site offers; refuse the others with a message naming what it
        does offer (a partial name such as "openmpi" lists the versions it could mean)."""
        if self._pruning:
            return
        old = list(self.state.module_loads)
        kept, refused = [], []
        for typed in change["new"]:
            if typed in old:
                kept.append(typed)  # chosen before (a preset or a checkpoint): the validator judges
                continue
            choice = choose_module(typed, self.offered_modules)
            (kept if choice.accepted else refused).append(choice.name if choice.accepted else choice)
        self.modules_message.value = "".join(self._refusal(choice) for choice in refused)
        if refused:
            self._pruning = True
            try:
                set_tags(self.modules, kept)
            finally:
                self._pruning = False
        if kept != old:
            self.state.module_loads = kept

    def _refusal(self, choice) -> str:
        name = choice.typed.strip() or repr(choice.typed)
        if choice.reason == "invalid":
            text = self.tr("profile_module_invalid", name=name, problem=choice.problem)
        elif choice.candidates:
            text = self.tr("profile_module_unknown", name=name, candidates=listed(choice.candidates, self.ctx.lang))
        else:
            text = self.tr("profile_module_unknown_none", name=name, count=len(self.offered_modules))
        # data-typed: the lab extension puts the entry back into the box to be corrected
        return (f'<div class="ari-text ari-sev-error ari-module-refused" role="alert" '
                f'data-typed="{esc(choice.typed)}">{rich(text)}</div>')

    # -- rendering ------------------------------------------------------------------------------
    def refresh(self) -> None:
        results = probe_results(self.state)
        partitions = self.ctx.probe_data("partitions").get("partitions") or []
        names = [p["name"] for p in partitions]
        self.partition.options = names
        self.partition_source.value = (
            f'<span class="ari-partition-source ari-help">'
            f'{esc(self.tr("profile_partition_source", source=self._source_text()))}</span>')
        self.resources_help.value = f'<div class="ari-help">{_flags_unbroken(esc(self.tr("profile_resources_help")))}</div>'
        self.followups_help.value = f'<div class="ari-help">{esc(self.tr("profile_followups_help"))}</div>'
        self._relabel_presets()
        self.show_preset_of_profile()  # the site's default may have changed with the probes
        self._render_preset_doc()
        self.fields_title.value = f'<div class="ari-help">{esc(self.tr("profile_fields_title"))}</div>'
        self.simple_title.value = f'<h4 class="ari-heading">{esc(self.tr("profile_simple_title"))}</h4>'
        self.advanced.set_title(0, self.tr("profile_advanced"))
        for spot, note in self.seed_notes.items():
            note.value = seed_note_html(spot, self.ctx.lang, self.ctx.local_env)
        for field in self.fields.values():
            field.relabel()
        # A GPU type is a GRES word: only where the site has GRES.
        has_gres = self.ctx.probe_data("gres").get("has_gres")
        self.fields["gpu_type"].row.layout.display = "" if has_gres or self.state.profile.gpu_type \
            else "none"
        self.seed_notes["gpus"].layout.display = "" if has_gres is False else "none"  # no GRES only
        self._refresh_modules(results)
        self.refresh_messages()
        self.refresh_previews()

    def _relabel_presets(self) -> None:
        """Translate "custom" without losing the selected preset (a Dropdown resets its value
        when its options are replaced)."""
        options = self._preset_options()
        if list(self.preset.options) == options:
            return
        value = self.preset.value
        self.preset.unobserve(self._on_preset, names="value")
        self.preset.options = options
        self.preset.value = value
        self.preset.observe(self._on_preset, names="value")

    def _preset_options(self) -> list[tuple[str, str]]:
        """Each preset by its ARI kind and what it is for (a CPU MPI user must not take "mpi",
        which ARI reads as GPU code)."""
        named = named_preset(self.ctx.site_profile())
        site = (self.tr("profile_preset_site_named", kind=PRESETS[named]().kind,
                        what=self.tr(f"preset_label_{named}")) if named and PRESETS[named]().kind
                else self.tr("profile_preset_site"))
        return ([(site, SITE_PRESET), (self.tr("profile_preset_custom"), CUSTOM)]
                + [(f"{name} — {self.tr(f'preset_label_{name}')}", name) for name in PRESETS])

    def _source_text(self) -> str:
        source = self.state.partition_source or "none"
        key = "source_" + source.replace(".", "_")
        return self.tr(key) if key in catalog("en") else source

    def _refresh_modules(self, results) -> None:
        modules_result = results.get("modules")
        available = list((modules_result.data.get("modules") or []) if modules_result else [])
        offered = self.ctx.config.filter_modules(available)
        self.offered_modules = list(offered)
        self.modules.placeholder = self.tr("profile_modules_placeholder")
        software = software_modules(offered)  # not Lmod's own lmod/settarg and the like
        if offered:
            own = [name for name in offered if name not in software]
            # step 2 counts every modulefile; here Lmod's own are named, not silently dropped
            if not own:
                text = self.tr("profile_modules_help", count=len(software))
            elif software:
                text = self.tr("profile_modules_help_own", count=len(software), own=listed(own, self.ctx.lang))
            else:  # "0 software modules" would read as a count to act on
                text = self.tr("profile_modules_help_only_own", own=listed(own, self.ctx.lang))
            shown = listed(software[:12], self.ctx.lang) + (" …" if len(software) > 12 else "")
            suggest = (f'<div class="ari-help ari-module-suggest">'
                       f'{esc(self.tr("profile_modules_suggest", names=shown))}</div>' if software else "")
        elif modules_result is not None and modules_result.status == "skip":
            text = self.tr("profile_modules_none")  # as the validator reads a skipped check
            suggest = ""
        else:
            text = self.tr("profile_modules_unknown")
            suggest = ""
        left_out = modules_left_out(self.state)
        note = (f'<div class="ari-text ari-muted ari-modules-left-out">'
                f'{rich(render(left_out, self.ctx.lang))}</div>' if left_out else "")
        self.modules_help.value = (f'<h4 class="ari-heading">{esc(self.tr("profile_modules_title"))}</h4>'
                                   f'<div class="ari-help">{rich(text)}</div>{suggest}{note}')

    def _box_row(self, name: str, *widgets_in_row) -> widgets.HBox:
        row = _row(*(widgets_in_row or (getattr(self, name),)), self.box_messages[name])
        row.add_class("ari-box-row")
        return row

    def refresh_messages(self) -> None:
        by_field: dict[str, list] = {}
        by_box: dict[str, list] = {}
        general = []
        lang = self.ctx.lang
        problems = self.ctx.step_problems("profile")
        held = {id(p) for p in self.ctx.awaiting(problems)}  # an untouched empty Partition
        for problem in (p for p in problems if id(p) not in held):
            # "module_loads" names the modules of the hand-off (the box above) and the
            # profile's own list alike: the finding goes where the user sees it, not into the
            # Advanced field of the same name
            if problem.field in self.box_messages:
                by_box.setdefault(problem.field, []).append(problem)
            elif problem.field in self.fields and problem.field not in SHOWN_ABOVE:
                by_field.setdefault(problem.field, []).append(problem)
            else:
                general.append(problem)
        for name, message in self.box_messages.items():
            message.value = "".join(
                f'<div class="ari-msg-{p.severity} ari-small">{_flags_unbroken(rich(p.text(lang)))}'
                + (f'{sentence_gap(p.text(lang))}<span class="ari-problem-fix">{_flags_unbroken(rich(p.fix_text(lang)))}</span>'
                   if p.fix_text(lang) else "") + "</div>"
                for p in by_box.get(name, []))
        if self.advanced.selected_index is None and any(
                p.severity == "error" for key, found in by_field.items() if key not in SIMPLE_KEYS
                for p in found):
            self.advanced.selected_index = 0  # an error that blocks Write is never out of sight
        for key, field in self.fields.items():
            lines = []
            if field.refusal is not None:
                lines.append(("error", field.refusal()))
            lines += [(p.severity, p.text(lang)) for p in by_field.get(key, [])]
            if key == "requested_gpus_per_node" and (per_task := self.state.profile.gpus_per_task_only):
                lines.append(("info", self.tr("profile_gpus_per_task_instead", n=per_task)))
            field.message.value = "".join(
                f'<div class="ari-msg-{sev} ari-small">{_flags_unbroken(rich(msg))}</div>'
                for sev, msg in lines)
        listed_here = "".join(
            f'<div class="ari-msg-{p.severity} ari-text">{rich(p.text(lang))}'
            + (f'{sentence_gap(p.text(lang))}<span class="ari-problem-fix">{rich(p.fix_text(lang))}</span>'
               if p.fix_text(lang) else "") + "</div>"
            for p in general)
        self.problems.value = (f'<h4 class="ari-heading">{esc(self.tr("profile_general_problems"))}</h4>'
                               + listed_here) if listed_here else ""

    def refresh_previews(self) -> None:
        # Without ARI here no workflow.yaml carries the caller's nodes and flags: ARI then takes
        # them from the paper's rubric, and this line is what it runs once ARI is installed
        demo = bool(getattr(self.ctx.host, "is_demo", False))  # expected there: not a warning
        unwritten = ("" if self.ctx.workflow_found else
                     f'<div class="ari-text {"ari-sev-info" if demo else "ari-sev-warning"} '
                     f'ari-no-workflow">'
                     f'{rich(self.tr("preview_no_workflow_demo" if demo else "preview_no_workflow", rubric=rubric_nodes(self.state.choices())))}</div>')
        shows = preview_note(contract_of(self.state.choices()))  # which ARI's reproduce: a newer one's differs
        unwritten += (f'<div class="ari-text ari-sev-warning ari-preview-contract">'
                      f'{rich(render(shows, self.ctx.lang))}</div>' if shows is not None else "")
        self.sbatch_title.value = (f'<h4 class="ari-heading">{esc(self.tr("preview_sbatch"))}</h4>'
                                   f'<div class="ari-help">'
                                   f'{esc(self.tr("preview_sbatch_help"))}</div>{unwritten}')

        lang = self.ctx.lang
        plan, error = self.ctx.slurm_plan()
        if plan is None:
            self.sbatch_preview.value = (f'<div class="ari-sbatch-error ari-text ari-sev-error">'
                                         f'{esc(self.tr("preview_ari_refuses"))}</div>'
                                         + pre(error))
        elif not plan.argv:
            self.sbatch_preview.value = pre(render(plan.local_fallback, lang))
        else:
            notes = "".join(f'<div class="ari-text ari-sev-warning">⚠ {esc(render(w, lang))}</div>'
                            for w in plan.warnings)
            # a line built from values step 3 refuses is not one to copy: said above it
            errors = [p for p in self.ctx.step_problems("profile") if p.severity == "error"]
            # and the boxes whose text is no value at all ('abc'), refused before the core
            refused = [key for key, field in self.fields.items() if field.refusal is not None
                       and key not in {p.field for p in errors}]
            count = len(errors) + len(refused)
            not_ready = (f'<div class="ari-text ari-sev-error ari-preview-not-ready">'
                         f'{esc(self.tr("preview_not_ready", count=count))}</div>'
                         if count else "")
            self.sbatch_preview.value = (not_ready
                                         + f'<div class="ari-sbatch-line">{pre_args(plan.shell_groups())}</div>'
                                         + notes)
        self.prelude_title.value = (f'<h4 class="ari-heading">{esc(self.tr("preview_prelude"))}</h4>'
                                    f'<div class="ari-help">'
                                    f'{esc(self.tr("preview_prelude_help"))}</div>')
        self.prelude_preview.value = pre(self.ctx.prelude_text())


def _message() -> widgets.HTML:
    """A box's findings: a line of their own under the box, starting where its input starts
    (the row wraps, wizard.css ``.ari-box-row``), not a column far to the right of it."""
    # the input's left edge: the box's 2 px margin, the label's width, its 8 px gap
    message = widgets.HTML(layout=widgets.Layout(padding=f"0 0 0 calc({LABEL_WIDTH} + 10px)"))
    message.add_class("ari-field-message")
    return message


def _row(widget, *beside) -> widgets.HBox:
    return widgets.HBox([widget, *beside], layout=widgets.Layout(align_items="center"))


def _count(name: str):
    """The box's number as the core reads it (``emit`` reads its flag the same way)."""
    return lambda value: resource_value(name, int(value))


_FLAG = re.compile(r"--[A-Za-z][\w-]*=?(?:&lt;\w+&gt;\w*)?")
_UNBROKEN = re.compile(_FLAG.pattern + r"|「[^「」<>]{1,24}」|“[^“”<>]{1,24}”")


def _flags_unbroken(escaped: str) -> str:
    """Each sbatch flag of an escaped help line or message in a span that does not wrap: a
    browser breaks after a hyphen, and "--ntasks-per-" / "node" reads as two things. So does a
    box's name quoted in Japanese or Chinese (「最大 CPU」 broke at its space)."""
    return _UNBROKEN.sub(lambda m: f'<span class="ari-nowrap">{m.group(0)}</span>', escaped)

