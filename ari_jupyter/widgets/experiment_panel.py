"""Step 4: the experiment, the workspace, ARI's run settings, previews of every file, Write, and the hand-off."""
from __future__ import annotations

import json
import os

import ipywidgets as widgets

from ..i18n import error_text, listed, render, sentence_gap
from ..ari.judge import EXPERIMENT_FIELDS, REQUIRED_FIELDS, for_step
from ..wizard.state import min_expected_metric_of
from ._base import Panel, STATUS_STYLE, esc, pre, rich, seed_note_html, shared_fs_fix
from .run_settings_part import RunSettingsPart
from ..hosts.host import list_sites
from ..checkpoint.emit import (CheckpointExists, EmitBlocked, EmitError, NodeLocalWorkspace,
                               ari_jupyter_command, emit_checkpoint)
from ..wizard.run_settings_view import handoff_key_variable
from ..runs.service import default_workspace, same_workspace
from ..checkpoint import emit, handoff
from ..ari import render as ari_render
from ..wizard.site_defaults import checklist_title_key
from ..wizard.seed_notes import SPOTS as SEED_SPOTS

PANEL_FIELDS = EXPERIMENT_FIELDS


class ExperimentPanel(Panel, widgets.VBox):
    def __init__(self, ctx, **kwargs):
        super().__init__(ctx, **kwargs)
        s = self.state
        self._runs_workspace: str | None = None  # where the Runs panel looks, asked when needed
        wide = widgets.Layout(width="660px")
        labelled = {"description_width": "150px"}
        self.title = widgets.Text(style=labelled, value=s.title, layout=wide,
                                  _dom_classes=("ari-required",))
        self.label(self.title, "description", "exp_title")
        self.goal = widgets.Textarea(style=labelled, value=s.goal, _dom_classes=("ari-required",),
                                     layout=widgets.Layout(width="660px", height="110px"))
        self.label(self.goal, "description", "exp_goal")
        self.metrics = widgets.TagsInput(value=list(s.metrics), allow_duplicates=False)
        self.label(self.metrics, "placeholder", "exp_metrics_placeholder")
        self.metrics_label = widgets.HTML()
        self.metrics_label.add_class("ari-field-label")
        self.metrics_row = widgets.HBox([self.metrics_label, self.metrics])
        self.metrics_row.add_class("ari-field-row")  # lined up with the labelled inputs
        self.metrics_row.add_class("ari-wide-row")  # as wide as Title (wizard.css)
        self.min_metric = widgets.Text(
            style=labelled, continuous_update=False, layout=widgets.Layout(width="320px"),
            value="" if s.min_expected_metric is None else str(s.min_expected_metric))
        self._min_metric_error = None  # the core's refusal of what was typed (rendered per language)
        self.label(self.min_metric, "description", "exp_min_metric")
        self.files = widgets.Textarea(style=labelled, value="\n".join(s.provided_files),
                                      continuous_update=False,
                                      layout=widgets.Layout(width="660px", height="70px"))
        self.label(self.files, "description", "exp_files")
        self.label(self.files, "placeholder", "exp_files_placeholder")
        self.workspace = widgets.Text(style=labelled, value=s.workspace, continuous_update=False,
                                      layout=wide)
        self.label(self.workspace, "description", "exp_workspace")
        self.shared_fs = widgets.HTML()
        self.run_id = widgets.Text(style=labelled, value=s.run_id, continuous_update=False, layout=wide)
        self.label(self.run_id, "description", "exp_run_id")
        self.label(self.run_id, "placeholder", "exp_run_id_auto")
        self.run_id_note = widgets.HTML()
        self.run_id_note.add_class("ari-indented")
        for widget in (self.title, self.goal, self.metrics, self.min_metric, self.files,
                       self.workspace, self.run_id):
            widget.observe(self._to_state, names="value")
        self.problems = widgets.HTML()
        self.previews = widgets.Tab(children=[widgets.HTML(), widgets.HTML(), widgets.HTML(),
                                              widgets.HTML()])
        self.write = widgets.Button(button_style="primary", icon="save",
                                    layout=widgets.Layout(width="auto", flex="0 0 auto"))
        self.label(self.write, "description", "exp_write")
        self.write.on_click(lambda _: self.do_write(force=False))
        self.write_reason = widgets.HTML()
        self.confirm_text = widgets.HTML()
        self.overwrite = widgets.Button(button_style="danger")
        self.label(self.overwrite, "description", "exp_overwrite")
        self.overwrite.on_click(lambda _: self.do_write(force=True))
        self.cancel = widgets.Button()
        self.label(self.cancel, "description", "exp_cancel")
        self.cancel.on_click(lambda _: (self._hide_confirm(), self.refresh()))
        self.confirm = widgets.HBox([self.confirm_text, self.overwrite, self.cancel],
                                    layout=widgets.Layout(display="none", align_items="center"))
        self.result = widgets.HTML()
        # as wide as the row allows (a demo workspace's path is long): the buttons wrap below
        self.handoff_command = widgets.Text(value="", layout=widgets.Layout(flex="1 1 40em",
                                                                          min_width="20em"))
        self.copy = widgets.HTML()
        self.open_terminal = widgets.Button(icon="terminal", layout=widgets.Layout(display="none"))
        self.label(self.open_terminal, "description", "exp_open_terminal")
        self.open_terminal.on_click(lambda _: self._open_terminal())
        self.terminal_status = widgets.HTML()
        self.handoff_box = widgets.VBox([
            widgets.HBox([self.handoff_command, self.copy, self.open_terminal],
                         layout=widgets.Layout(align_items="center", flex_flow="row wrap")),
            self.terminal_status], layout=widgets.Layout(display="none"))

        self.run_settings = RunSettingsPart(ctx)  # ARI's LLM, scope and stages, before Write
        self.checklist = widgets.HTML()
        self.check_handoff = widgets.Button(icon="check-square-o",
                                            layout=widgets.Layout(display="none"))
        self.label(self.check_handoff, "description", "exp_check_handoff")
        self.check_handoff.on_click(lambda _: self.start_handoff_check())
        self.handoff_checks = widgets.HTML()
        self.last_emit = None
        self._written_as = None  # the state as it was written (one status after Write)
        self._typed = None  # the hand-off command the terminal was last given
        self._write_error = None  # the latest Write's failure, shown until a Write succeeds
        self.handoff_task = None
        self.handoff_results = []
        self._checklist = None
        self.children = [
            self.title, self.goal, self.metrics_row, self.min_metric,
            self.files, self.workspace, self.shared_fs, self.run_id, self.run_id_note, self.run_settings,
            self.problems, self.previews,
            widgets.HBox([self.write, self.write_reason], layout=widgets.Layout(align_items="center")),
            self.confirm, self.result, self.handoff_box, self.checklist, self.check_handoff,
            self.handoff_checks,
        ]
        s.observe(self._from_state, names=["title", "goal", "metrics", "min_expected_metric",
                                           "provided_files", "workspace", "run_id"])
        ctx.observe_plan(self.refresh)
        ctx.observe(self._on_site, names="host")
        ctx.runner.observe(lambda _: self._render_shared_fs(), names="running")
        bridge = ctx.bridge
        if bridge is not None:
            bridge.observe(lambda _: self._render_handoff(), names=["available", "last_result"])
        self.refresh()

    # -- widgets <-> state ----------------------------------------------------------------------
    def _to_state(self, change) -> None:
        s, w = self.state, change["owner"]
        if w is self.title:
            self.ctx.touch("title")  # before the state changes: the refresh it causes shows it
            s.title = w.value
        elif w is self.goal:
            self.ctx.touch("goal")
            s.goal = w.value
        elif w is self.metrics:
            self.ctx.touch("metrics")
            s.metrics = list(w.value)
        elif w is self.min_metric:
            try:
                s.min_expected_metric = min_expected_metric_of(w.value)
            except ValueError as refused:  # as emit --min-expected-metric refuses it
                self._min_metric_error = refused.args[0]
                self.refresh()
            else:
                if self._min_metric_error is not None:
                    self._min_metric_error = None
                    self.refresh()
        elif w is self.files:
            s.provided_files = [line.strip() for line in w.value.splitlines() if line.strip()]
        elif w is self.workspace:
            s.workspace = w.value.strip()
            self.ctx.runner.start(only=("shared_fs",))  # the live verdict for the new path
        elif w is self.run_id:
            s.run_id = w.value.strip()

    def _from_state(self, change) -> None:
        name, value = change["name"], change["new"]
        target = {"title": self.title, "goal": self.goal, "workspace": self.workspace,
                  "run_id": self.run_id}.get(name)
        if target is not None and target.value != value:
            target.value = value
        elif name == "metrics" and list(self.metrics.value) != list(value):
            self.metrics.value = list(value)
        elif name == "provided_files":
            text = "\n".join(value)
            shown = [line.strip() for line in self.files.value.splitlines() if line.strip()]
            if shown != list(value):
                self.files.value = text
        elif name == "min_expected_metric":
            text = "" if value is None else str(value)
            if self.min_metric.value.strip() != text:
                self.min_metric.value = text

    # -- rendering ------------------------------------------------------------------------------
    def refresh(self) -> None:
        self.metrics_label.value = (f'<label class="ari-text ari-right-label ari-required-label">'
                                    f'{esc(self.tr("exp_metrics"))}</label>')
        lang = self.ctx.lang
        if self.handoff_results:  # the verdicts follow a language switch
            self.handoff_checks.value = _render_verdicts(self.handoff_results, self.tr, lang)
        problems = self.ctx.step_problems("experiment")
        # An untouched required field's "empty" waits (the core's list): one neutral line by
        # Write says what is still to fill in; the field's error shows once it is touched.
        awaiting = self.ctx.awaiting(problems)
        held = {id(p) for p in awaiting}
        shown = [p for p in problems if id(p) not in held]
        # The shared-filesystem verdict has its own line, with its fix, under the Workspace field.
        mine = [p for p in shown if p.field in PANEL_FIELDS and not _is_shared_fs_problem(p)]
        extra = render(self._min_metric_error, lang) if self._min_metric_error else ""
        rows = ([("error", "min_expected_metric", extra, "")] if extra else []) + \
            [(p.severity, p.field, p.text(lang), p.fix_text(lang)) for p in mine]
        def listed(rows) -> str:
            return "".join(
                f'<div class="ari-problem ari-text ari-msg-{sev}">'
                f'{rich(message)}' + (f'{sentence_gap(message, " — ")}<span class="ari-problem-fix">{rich(fix)}</span>'
                                       if fix else "")
                + "</div>"
                for sev, field, message, fix in rows)

        # what the run id will be (or why it is refused) right under its box, the rest below
        self.run_id_note.value = listed([row for row in rows if row[1] == "run_id"])
        self.problems.value = listed([row for row in rows if row[1] != "run_id"])
        self._render_previews()
        # A node-local workspace is not a reason to disable Write: emit refuses it and the
        # user is asked whether to write anyway (emit's force), as on the command line.
        blocking = [p for p in problems if p.severity == "error" and not _is_shared_fs_problem(p)]
        # A refused threshold is not in the state (which keeps the last good one): Write waits
        # for it too, or it would write a number the user no longer sees.
        refused = self._min_metric_error is not None
        self.write.disabled = bool(blocking) or refused
        blocking_shown = [p for p in blocking if id(p) not in held]
        if self._asking() or (self.last_emit is not None and self._written_as == self._fingerprint()):
            # A question below, or just written (the result below is the one status): "ready"
            # returns on an answer or an edit.
            self.write_reason.value = ""
        elif blocking_shown or refused:
            self.write_reason.value = (self._blocked_html(blocking_shown, lang, above=refused)
                                       + self._awaiting_html(awaiting))
        elif awaiting:
            self.write_reason.value = self._awaiting_html(awaiting)
        elif any(p.severity == "error" and _is_shared_fs_problem(p) for p in problems):
            # Write works but asks first (emit refuses a node-local workspace): not "ready"
            self.write_reason.value = (f'<span class="ari-write-reason ari-text ari-sev-warning">'
                                       f'{esc(self.tr("exp_write_asks", path=self._target_dir()))}</span>')
        else:
            self.write_reason.value = (f'<span class="ari-write-reason ari-text ari-sev-ok">'
                                       f'{esc(self.tr("exp_write_ready", path=self._target_dir()))}</span>')
        self._render_shared_fs()
        self._render_result()
        self._render_handoff()

    def _blocked_html(self, blocking, lang: str, above: bool = False) -> str:
        """Why Write is disabled, without repeating what this page already lists (its fields'
        problems with their fixes above, the run settings' in their part): a pointer to those,
        and the others (step 3's) one per line, named by their step."""
        elsewhere = for_step(blocking, "profile")  # the core's rule of which step shows what
        if len(elsewhere) == len(blocking) and not above:
            key = "exp_write_blocked"
        else:
            key = "exp_write_blocked_both" if elsewhere else "exp_write_blocked_above"
        step = self.tr("exp_write_blocked_step", step=self.tr("step_profile"))
        # One reason per line: the messages end in their own punctuation ("…空です。").
        reasons = "".join(f"<li>{esc(step)}{sentence_gap(step)}{rich(p.text(lang))}</li>"
                          for p in elsewhere[:3])
        if len(elsewhere) > 3:
            reasons += (f'<li class="ari-muted">'
                        f'{esc(self.tr("exp_write_more", count=len(elsewhere) - 3))}</li>')
        return (f'<div class="ari-write-reason ari-text ari-sev-error">{esc(self.tr(key))}'
                + (f'<ul class="ari-list ari-write-reasons">{reasons}</ul>' if reasons else "")
                + self._demo_way_out(blocking) + '</div>')

    def _awaiting_html(self, awaiting) -> str:
        """One neutral line: the required fields still to fill in (marked *), step 3's named."""
        if not awaiting:
            return ""
        labels = {"title": "exp_title", "goal": "exp_goal", "metrics": "exp_metrics",
                  "partition": "profile_partition"}
        names = []
        for field in dict.fromkeys(p.field for p in awaiting):
            name = self.tr(labels.get(field, field)) if field in labels else field
            if field in REQUIRED_FIELDS["profile"]:
                name = self.tr("exp_required_in_step", field=name, step=self.tr("step_profile"))
            names.append(name)
        return (f'<div class="ari-write-reason ari-write-awaiting ari-text ari-muted">'
                f'{esc(self.tr("exp_write_awaiting", fields=listed(names, self.ctx.lang)))}</div>')

    def _demo_way_out(self, blocking) -> str:
        """On a demo site without SLURM (a laptop, for teaching) Write can never be enabled
        there: say so, and where a checkpoint can be written instead."""
        if not getattr(self.ctx.host, "is_demo", False) or \
                not any(p.rule == "sbatch_missing" for p in blocking):
            return ""

        others = listed((name for name in list_sites() if name != self.ctx.site_name), self.ctx.lang)
        return (f'<div class="ari-help ari-demo-way-out">'
                f'{esc(self.tr("exp_write_demo_no_slurm", site=self.ctx.site_name, sites=others))}</div>')

    def _fingerprint(self):
        """What Write wrote from: the state without probe results."""
        data = self.state.to_json()
        data.pop("probe_results", None)
        data.pop("lang", None)
        return json.dumps(data, sort_keys=True, default=str)

    def _target_dir(self) -> str:
        return self.state.checkpoint_dir or f"{self.state.workspace.rstrip('/')}/checkpoints/<run_id>"

    def _render_previews(self) -> None:
        titles = ["experiment.md", ".env", "launch_config.json", self.tr("exp_preview_handoff")]
        for index, title in enumerate(titles):
            self.previews.set_title(index, title)
        s = self.state.choices()
        renderers = (
            lambda: ari_render.render_experiment_md(s),
            lambda: ari_render.render_env(s),
            lambda: ari_render.render_launch_config(s),
            lambda: ari_render.render_handoff_script(
                s, self._target_dir(), f"{s.workspace.rstrip('/')}/launch/{s.run_id or '<run_id>'}.sh",
                api_key=handoff_key_variable(s, self.run_settings.default_llm[0]),
                ari_jupyter=ari_jupyter_command()),
        )
        errors = [p for p in self.ctx.step_problems("experiment") if p.severity == "error"]

        def reason(exc) -> str:
            # The judge names the cause in the user's language; the renderer's text is English.
            if not s.partition:
                return self.tr("exp_preview_no_partition")
            return errors[0].text(self.ctx.lang) if errors else str(exc)

        notes = (self.tr("exp_preview_first_line"), "", "", "")  # why "Partition: ..." leads
        for child, make, note in zip(self.previews.children, renderers, notes):
            try:
                child.value = (f'<div class="ari-help">{rich(note)}</div>' if note else "") \
                    + pre(make(), tall=True)
            except (ari_render.RenderError, ValueError, TypeError) as exc:
                # not yet: a state on its way, not a failure (the reason is the core's finding)
                child.value = (f'<div class="ari-text ari-muted ari-preview-unavailable">'
                               f'{esc(self.tr("exp_preview_unavailable", reason=reason(exc)))}</div>')

    def _render_shared_fs(self) -> None:
        fix = ""
        if "shared_fs" in self.ctx.runner.running:
            text, look = self.tr("exp_shared_fs_checking"), "ari-muted"
        else:
            result = self.state.probe_results.get("shared_fs")
            if result is None:
                text, look = self.tr("exp_shared_fs_none"), "ari-muted"
            else:
                look = {"ok": "ari-sev-ok", "warn": "ari-sev-warning",
                        "fail": "ari-sev-error"}.get(result.status, "ari-muted")
                text = self.tr("exp_shared_fs_verdict", status=self.tr("status_" + result.status),
                               summary=result.text(self.ctx.lang))
                if result.status in ("fail", "warn"):
                    fix = shared_fs_fix(result, self.tr, self.ctx.lang)
        elsewhere = self._runs_elsewhere()
        self.shared_fs.value = (f'<div class="ari-shared-fs ari-text ari-indented {look}">'
                                f'{rich(text)}'
                                + (f'<div class="ari-shared-fs-fix">{rich(fix)}</div>' if fix else "")
                                + '</div>'
                                + (f'<div class="ari-text ari-indented ari-muted">{esc(elsewhere[0])}'
                                   f'<div><code class="ari-mono">{esc(elsewhere[1])}</code></div></div>'
                                   if elsewhere else ""))

    def _runs_elsewhere(self) -> tuple[str, str] | None:
        """When the workspace is not the default one the Runs panel (and ``ari-jupyter runs``)
        lists: the note that Write adds it to the list, and the command that lists this one
        alone (shown on its own line, copyable)."""
        import shlex


        chosen = self.state.workspace.strip()
        if not chosen:
            return None
        if self._runs_workspace is None:  # the server's choice, from the same config and env
            self._runs_workspace = default_workspace(self.ctx.local_env)
        if same_workspace(chosen, self._runs_workspace):
            return None
        if not os.path.isdir(self._runs_workspace):  # a teaching machine: no such default
            return (self.tr("exp_runs_listed_once_written"),
                    f"ari-jupyter runs --workspace {shlex.quote(chosen)}")
        return (self.tr("exp_runs_elsewhere", runs_workspace=self._runs_workspace),
                f"ari-jupyter runs --workspace {shlex.quote(chosen)}")

    def _render_handoff(self) -> None:
        emitted = self.last_emit
        self.handoff_box.layout.display = "" if emitted else "none"
        self.check_handoff.layout.display = "" if emitted else "none"
        if not emitted:
            self.checklist.value = ""
            return
        self.handoff_command.value = emitted.handoff_command
        self.copy.value = _copy_button(emitted.handoff_command, self.tr("exp_copy"), self.tr("exp_copied"))
        bridge = self.ctx.bridge
        available = bool(bridge is not None and bridge.available)
        self.open_terminal.layout.display = "" if available else "none"
        if bridge is not None and bridge.last_result and self._typed != emitted.handoff_command:
            # what the terminal holds is an earlier Write's command: saying "typed, press
            # Enter" now would run the wrong script
            self.terminal_status.value = ""
        elif bridge is not None and bridge.last_result:
            res = bridge.last_result
            text = (self.tr("exp_terminal_opened", terminal=res.get("terminal", "")) if res.get("ok")
                    else self.tr("exp_terminal_unavailable") if res.get("unavailable")
                    else self.tr("exp_terminal_failed", error=res.get("error", "")))
            self.terminal_status.value = f'<span class="ari-text">{esc(text)}</span>'
        self.checklist.value = self._checklist_html()

    def _on_site(self, change) -> None:
        """Another site: the previous write result and its checklist belong to the old one."""
        if self.handoff_task is not None and not self.handoff_task.done():
            self.handoff_task.cancel()
        self.last_emit, self._checklist, self.handoff_results = None, None, []
        self._write_error = None
        self.result.value = self.handoff_checks.value = self.terminal_status.value = ""
        self._hide_confirm()
        self.refresh()

    # -- actions ----------------------------------------------------------------------------------
    def do_write(self, force: bool = False):
        """Write the checkpoint through the core. An existing checkpoint, or a workspace the
        shared-filesystem check calls node-local, is only written after the user confirms."""
        self._hide_confirm()
        if not self.ctx.write_attempted:
            self.ctx.write_attempted = True  # every field's error shows from now on
            self.refresh()
        try:
            result = emit_checkpoint(self.state, force=force, host=self.ctx.host)
        except CheckpointExists as exc:
            return self._ask(self.tr("exp_exists", files=", ".join(exc.files)), "exp_overwrite")
        except NodeLocalWorkspace as exc:
            # The wizard's own question: the verdict, then what to do here (not emit's refusal,
            # which speaks of the command line's --force).
            detail = exc.verdict.text(self.ctx.lang) if exc.verdict is not None else error_text(exc, self.ctx.lang)
            return self._ask(self.tr("exp_node_local", detail=detail.rstrip(".。")), "exp_write_anyway")
        except (EmitError, OSError, ValueError) as exc:
            self._write_error = exc
            if isinstance(exc, EmitBlocked):  # a list, as the disabled-Write reasons
                items = "".join(f"<li>{rich(p.text(self.ctx.lang))}</li>" for p in exc.problems)
                self.result.value = (
                    f'<div class="ari-write-error ari-text ari-sev-error">'
                    f'{esc(self.tr("exp_write_failed_list"))}'
                    f'<ul class="ari-list">{items}</ul></div>')
                return None
            self.result.value = (f'<div class="ari-write-error ari-text ari-sev-error">'
                                 f'{rich(self.tr("exp_write_failed", error=error_text(exc, self.ctx.lang)))}</div>')
            return None
        self._write_error = None
        self.last_emit = result
        self._written_as = self._fingerprint()
        self.refresh()
        return result

    def _render_result(self) -> None:
        """What Write wrote (again after a language switch)."""
        result = self.last_emit
        if result is None or self._write_error is not None:
            return  # nothing written yet, or the latest Write failed: its message stays
        files = "".join(f"<li><code>{esc(path)}</code></li>" for path in result.files)

        notes = "".join(f"<li>{rich(render(note, self.ctx.lang))}</li>" for note in result.notes)
        # edited since: the files below (and the hand-off checks) are the written ones, not
        # what the page shows now
        changed = ("" if self._written_as == self._fingerprint() else
                   f'<div class="ari-write-changed ari-text ari-sev-warning">'
                   f'{esc(self.tr("exp_changed_since_written"))}</div>')
        self.result.value = (f'<div class="ari-write-ok ari-text ari-sev-ok">'
                             f'{esc(self.tr("exp_written", path=result.checkpoint_dir))}</div>{changed}'
                             f'<ul class="ari-list ari-text">{files}</ul>'
                             + (f'<div class="ari-text">{esc(self.tr("exp_notes"))}</div>'
                                f'<ul class="ari-list ari-text">{notes}</ul>' if notes else ""))

    def _ask(self, question: str, confirm_key: str) -> None:
        self.confirm_text.value = (f'<div class="ari-confirm ari-text ari-sev-warning">'
                                   f'{rich(question)}</div>')
        self.overwrite.description = self.tr(confirm_key)
        self.confirm.layout.display = ""
        self.write_reason.value = ""  # not "ready to write" beside a question about writing
        return None

    def _asking(self) -> bool:
        return self.confirm.layout.display != "none"

    def _hide_confirm(self) -> None:
        self.confirm.layout.display = "none"

    def _open_terminal(self) -> None:
        emitted = self.last_emit
        if emitted is None or self.ctx.bridge is None:
            return
        try:
            self._typed = emitted.handoff_command
            self.ctx.bridge.open_terminal(emitted.handoff_command, cwd=self.state.workspace, run=False)
        except RuntimeError:  # the extension went away since the button was drawn
            text = self.tr("exp_terminal_unavailable")
            self.terminal_status.value = f'<span class="ari-text ari-sev-error">{esc(text)}</span>'
        except ValueError as exc:
            self.terminal_status.value = f'<span class="ari-text ari-sev-error">{esc(exc)}</span>'

    # -- issue 10: the R-CCS Cloud checklist and "Check hand-off" ----------------------------
    def _checklist_html(self) -> str:
        emitted = self.last_emit
        if emitted is None:
            return ""
        if self._checklist is None or self._checklist[0] is not emitted:
            # computed once per Write: it picks a free dashboard port on this host
            items = handoff.handoff_checklist(self.state.choices(), emitted.checkpoint_dir, notes=emitted.notes,
                                              files=emitted.files, env=self.ctx.host.env)
            self._checklist = (emitted, items)
        # a step whose command needs a failed check is not ready: step 2's verdict until the
        # hand-off check of the same id answers
        items = handoff.with_checks(self._checklist[1], self.handoff_results,
                                    self.state.probe_list())
        return _render_checklist(items, self.tr, self.ctx.site_name, self.ctx.lang, self.ctx.local_env)

    def start_handoff_check(self):
        """Run the hand-off checks as a task on the kernel's loop; results render as they come."""
        import asyncio

        if self.last_emit is None:
            return None
        self.handoff_checks.value = f'<i>{esc(self.tr("checks_row_running"))}</i>'

        async def run():
            results = await handoff.check_handoff_async(self.last_emit.checkpoint_dir,
                                                        host=self.ctx.host,
                                                        timeout=self.ctx.config.probe_timeout * 2)
            self.handoff_results = results
            self.handoff_checks.value = _render_verdicts(results, self.tr, self.ctx.lang)
            self.checklist.value = self._checklist_html()

        self.handoff_task = asyncio.get_running_loop().create_task(run())
        return self.handoff_task


def _is_shared_fs_problem(problem) -> bool:
    return emit._is_shared_fs_problem(problem)


def _copy_button(text: str, label: str, done: str) -> str:
    """A Copy button that works without the lab extension: the browser's clipboard API, or
    (plain http, where that API is missing) a selected textarea and execCommand."""
    payload = json.dumps(text)
    script = (
        f"const t = {payload}; const b = this; const ok = () => {{ b.textContent = {json.dumps(done)}; }};"
        "if (navigator.clipboard && window.isSecureContext) { navigator.clipboard.writeText(t).then(ok); }"
        "else { const a = document.createElement('textarea'); a.value = t; document.body.appendChild(a);"
        " a.select(); if (document.execCommand('copy')) { ok(); } a.remove(); }"
    )
    return (f'<button class="ari-copy jupyter-button" title="{esc(label)}" '
            f'onclick="{esc(script)}">{esc(label)}</button>')


CHECKLIST_LOOK = {"ready": "ari-sev-info", "not ready": "ari-sev-error", "written": "ari-sev-ok",
                  "running": "ari-sev-ok",
                  "env only": "ari-sev-warning", "not written": "ari-sev-error",
                  "differs": "ari-sev-warning"}  # a newer ARI (checkpoint/contract_step)


def _render_checklist(items, tr, site_name: str = "", lang: str = "en", env=None) -> str:
    """The hand-off steps (handoff.ChecklistItem): translated title, state, detail and
    warning; the core's commands verbatim."""
    rows = []
    for item in items:
        look = CHECKLIST_LOOK.get(item.state, "ari-muted")
        state = tr("checklist_state_" + item.state.replace(" ", "_"))
        parts = [f'<b>{esc(tr("checklist_" + item.id))}</b> '
                 f'<span class="ari-checklist-state {look}">[{esc(state)}]</span>']
        if item.command:
            parts.append(pre(item.command))
        if item.detail:
            parts.append(f"<div>{rich(render(item.detail, lang))}</div>")
        if item.warning:
            parts.append(f'<div class="ari-dashboard-warning ari-sev-error">'
                         f'⚠ {rich(render(item.warning, lang))}</div>')
        for command in item.extra_commands:
            parts.append(pre(command) if not hasattr(command, "message_id")
                         else f"<div>{rich(render(command, lang))}</div>")
        if item.id in SEED_SPOTS:  # where the setup guide says otherwise: one line and its link
            parts.append(seed_note_html(item.id, lang, env))
        rows.append(f'<li class="ari-checklist-{esc(item.id)}">{"".join(parts)}</li>')
    return (f'<h4 class="ari-heading">{esc(tr(checklist_title_key(site_name)))}</h4>'
            f'<ol class="ari-checklist ari-list ari-text">{"".join(rows)}</ol>')


def _render_verdicts(results, tr, lang) -> str:
    rows = []
    for result in results:
        look = STATUS_STYLE.get(result.status, STATUS_STYLE["unknown"])[2]
        fix = result.fix_text(lang) if result.fix and result.status != "ok" else ""
        rows.append(f'<li class="ari-handoff-{esc(result.id)}"><b class="{look}">'
                    f'{esc(tr("status_" + result.status))}</b> '
                    f'{rich(result.text(lang))}'
                    + (f'<div class="ari-handoff-fix">{rich(fix)}</div>' if fix else "")
                    + "</li>")
    return f'<ul class="ari-handoff-checks ari-list ari-text">{"".join(rows)}</ul>'
