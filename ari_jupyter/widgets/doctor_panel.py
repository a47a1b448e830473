"""Step 5: the doctor. Paste a log, a reproduce.sh or an experiment.md, or pick a file from the
written checkpoint, and see each finding with its rule, severity, line and fix.

The diagnosis is ``ari_jupyter.doctor`` (the same call as ``ari-jupyter doctor``), given what
the wizard already knows: the execution profile, the nodes of the run, the GRES answer of the
site checks and the checkpoint.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

import ipywidgets as widgets

from ._base import Panel, code_block, esc, rich
from ..doctor import checkpoint_files, detect_kind, diagnose_file, diagnose_text, options_from_choices
from ..doctor.detect import unrecognized
from ..base.bounded_read import read_window

KIND_CHOICES = ("auto", "log", "reproduce", "experiment", "handoff")
SHOWN_CHARS = 500_000
PASTE = ""  # the file list's "(paste text below)": a Dropdown shows a None value as blank
"""A longer file shows its tail in the text box (the browser stays usable); Diagnose still
reads the whole file as long as the box is not edited."""


class DoctorPanel(Panel, widgets.VBox):
    def __init__(self, ctx, **kwargs):
        super().__init__(ctx, **kwargs)
        labelled = {"description_width": "150px"}
        self.intro = widgets.HTML()
        self.source = widgets.Dropdown(style=labelled, layout=widgets.Layout(width="560px"))
        self.source.add_class("ari-doctor-source")
        self.label(self.source, "description", "doctor_file")
        self.refresh_files = widgets.Button(icon="refresh", layout=widgets.Layout(width="auto"))
        self.label(self.refresh_files, "description", "doctor_refresh_files")
        self.refresh_files.on_click(lambda _: self.list_files())
        self.text = widgets.Textarea(style=labelled,
                                     layout=widgets.Layout(width="760px", height="220px"))
        self.text.add_class("ari-doctor-text")
        self.label(self.text, "description", "doctor_text")
        self.label(self.text, "placeholder", "doctor_text_placeholder")
        self.kind = widgets.Dropdown(style=labelled, layout=widgets.Layout(width="360px"), value=None)
        self.label(self.kind, "description", "doctor_kind")
        self.diagnose_button = widgets.Button(button_style="primary", icon="stethoscope")
        self.label(self.diagnose_button, "description", "doctor_diagnose")
        self.diagnose_button.on_click(lambda _: self.diagnose_soon())
        self.context_note = widgets.HTML()
        self.findings_view = widgets.HTML()
        self.findings = []
        self.detected_kind = ""
        self.error = ""
        self.note = ""  # about the text box, e.g. that it shows only a long file's tail
        self._loaded: tuple[Path, str] | None = None  # (file, text as loaded) while unedited
        self._relisting = False
        self.source.observe(self._load_source, names="value")
        self.children = [
            self.intro,
            widgets.HBox([self.source, self.refresh_files], layout=widgets.Layout(align_items="center")),
            self.text,
            widgets.HBox([self.kind, self.diagnose_button], layout=widgets.Layout(align_items="center")),
            self.context_note, self.findings_view,
        ]
        ctx.observe_plan(self._render_context)
        self.list_files()
        self.refresh()

    # -- the checkpoint's files ------------------------------------------------------------------
    def list_files(self) -> None:
        """Offer the checkpoint's logs, experiment.md and reproduce script (once written)."""
        checkpoint = self.state.checkpoint_dir
        files = checkpoint_files(checkpoint) if checkpoint else []
        options = [(self.tr("doctor_file_paste"), PASTE)] + [
            (str(path.relative_to(checkpoint)), str(path)) for path in files]
        if list(self.source.options) == options:
            return
        current = self.source.value
        self._relisting = True
        try:
            self.source.options = options
            self.source.value = current if current in {value for _, value in options} else PASTE
        finally:
            self._relisting = False
        if self.source.value != current:
            self._load_source({"new": self.source.value})

    def _load_source(self, change) -> None:
        path = change["new"]
        if self._relisting:
            return
        if not path:  # pasting (or nothing chosen yet)
            self._loaded = None
            self.note = ""
            return
        try:
            text = read_window(path).text  # bounded: never /dev/zero, a FIFO or a whole 1 GB log
        except OSError as exc:
            self.error = self.tr("doctor_read_failed", path=path, error=exc)
            self._loaded = None
            self.refresh()
            return
        shown = text if len(text) <= SHOWN_CHARS else text[-SHOWN_CHARS:]
        self.note = self.tr("doctor_file_tail", shown=SHOWN_CHARS, total=len(text)) \
            if shown is not text else ""
        self._loaded = (Path(path), shown)
        self.text.value = shown
        self._render_findings()

    # -- the diagnosis ---------------------------------------------------------------------------
    def diagnose(self) -> list:
        """Run the doctor on the picked file (unedited) or on the text in the box, now."""
        self._apply(self._diagnosis()())
        return self.findings

    def diagnose_soon(self) -> None:
        """The Diagnose button: the diagnosis runs in a worker thread and its findings are shown
        on the kernel's loop when it ends, so the kernel keeps answering meanwhile (the doctor
        reads a long log's 256 KB window in about 0.3 s). Without a running loop, at once."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.diagnose()
            return
        self.diagnose_button.disabled = True
        self.diagnosing = loop.run_in_executor(None, self._diagnosis())
        self.diagnosing.add_done_callback(self._diagnosed)

    def _diagnosed(self, done) -> None:
        self.diagnose_button.disabled = False
        if not done.cancelled():
            self._apply(done.result())

    def _diagnosis(self):
        """What to diagnose, read from the widgets now; the returned call does the work (in any
        thread: it reads no widget) and returns (findings, detected kind, error)."""
        text, loaded = self.text.value, self._loaded
        kind = self.kind.value if self.kind.value != "auto" else None
        options = self._options()
        checkpoint_dir = self.state.checkpoint_dir or None
        nothing = self.tr("doctor_nothing")

        def work() -> tuple[list, str, str]:
            try:
                if loaded is not None and loaded[1] == text:
                    path = loaded[0]
                    detected = kind or detect_kind(text, path.name)
                    findings = diagnose_file(str(path), kind=kind, **options)
                elif text.strip():
                    filename = loaded[0].name if loaded is not None else None
                    detected = kind or detect_kind(text, filename)
                    findings = diagnose_text(text, kind=kind, filename=filename,
                                             checkpoint_dir=checkpoint_dir, **options)
                else:
                    return [], "", nothing
                if not findings and unrecognized(text, kind, detected):
                    detected = "unrecognized"
                return findings, detected, ""
            except (OSError, TypeError, ValueError) as exc:
                return [], "", exc

        return work

    def _apply(self, result) -> None:
        findings, detected, error = result
        self.findings, self.detected_kind = findings, detected
        self.error = self.tr("doctor_failed", error=error) if isinstance(error, Exception) else error
        self.refresh()

    def _options(self) -> dict:
        """What the wizard knows that changes a verdict (the core's options_from_choices)."""
        return options_from_choices(self.state.choices(), self.ctx.host.env)

    # -- rendering -------------------------------------------------------------------------------
    def refresh(self) -> None:
        self.intro.value = f'<div class="ari-help">{esc(self.tr("doctor_intro"))}</div>'
        current = self.kind.value or "auto"
        self.kind.options = [(self.tr("doctor_kind_" + name), name) for name in KIND_CHOICES]
        self.kind.value = current
        self.list_files()
        self._render_context()
        self._render_findings()

    def _render_context(self) -> None:
        state = self.state
        nodes = state.job_nodes()
        nodes = getattr(nodes, "num_nodes", nodes)  # an allocation: its node count
        kind = state.profile.kind
        if not kind:
            said = self.tr("doctor_context_no_profile")
        elif nodes:
            said = self.tr("doctor_context", kind=kind, nodes=nodes)
        else:
            said = self.tr("doctor_context_kind", kind=kind)
        self.context_note.value = (f'<div class="ari-doctor-context ari-help ari-indented">'
                                   f'{rich(said)}</div>')

    def _render_findings(self) -> None:
        note = (f'<div class="ari-doctor-note ari-help">'
                f'{esc(self.note)}</div>') if self.note else ""
        self.findings_view.value = note + self._findings_html()

    def _findings_html(self) -> str:
        if self.error:
            return (f'<div class="ari-doctor-error ari-text ari-sev-error">'
                    f'{esc(self.error)}</div>')
        if not self.detected_kind:
            return ""
        if self.detected_kind == "unrecognized":
            return (f'<div class="ari-doctor-unrecognized ari-text ari-muted">'
                    f'{esc(self.tr("doctor_unrecognized"))}</div>')
        head = self.tr("doctor_kind_detected", kind=self.tr("doctor_kind_" + self.detected_kind))
        if not self.findings:
            return (
                f'<div class="ari-doctor-clean ari-text ari-sev-ok">'
                f'{esc(head)} {esc(self.tr("doctor_no_findings"))}</div>')
        counts: dict[str, int] = {}
        for finding in self.findings:
            counts[finding.severity] = counts.get(finding.severity, 0) + 1
        summary = " ".join(self.tr("doctor_count_" + sev, count=counts[sev])
                           for sev in ("error", "warning", "info") if counts.get(sev))
        header = "".join(f'<th scope="col">{esc(self.tr(key))}</th>'
                         for key in ("doctor_col_rule", "doctor_col_severity", "doctor_col_line",
                                     "doctor_col_message"))
        rows = "".join(self._row(finding) for finding in self.findings)
        return (
            f'<div class="ari-text">{esc(head)} '
            f'<b class="ari-doctor-summary">{esc(summary)}</b></div>'
            f'<table class="ari-doctor-findings ari-table ari-findings ari-text">'
            f'<thead><tr>{header}</tr></thead><tbody>{rows}</tbody></table>')

    def _row(self, finding) -> str:
        badge = (f'<span class="ari-badge ari-badge-{esc(finding.severity)} ari-doctor-badge '
                 f'ari-doctor-badge-{esc(finding.severity)}">'
                 f'{esc(self.tr("doctor_severity_" + finding.severity))}</span>')
        line = "" if finding.line is None else str(finding.line)
        lang = self.ctx.lang
        details = f'<div>{rich(finding.text(lang))}</div>'
        copy = self.tr("exp_copy")
        fix = finding.fix_text(lang)
        suggestion = finding.suggestion or ""
        if fix and "\n" in suggestion and suggestion in fix:
            # a multi-line fix names the lines to paste: shown once, as the fix's code block
            lead = fix.replace(suggestion, "").strip()
            details += (f'<div class="ari-doctor-fix"><b>{esc(self.tr("doctor_fix"))}</b> '
                        f'{rich(lead)}{code_block(suggestion, copy)}</div>')
            suggestion = ""
        elif fix:
            details += f'<div class="ari-doctor-fix"><b>{esc(self.tr("doctor_fix"))}</b> '
            details += _fix_html(fix, copy) + "</div>"
        if suggestion:
            details += (f'<div class="ari-doctor-suggestion"><b>{esc(self.tr("doctor_suggested_line"))}</b>'
                        f'{code_block(suggestion, copy)}</div>')
        return (f'<tr class="ari-doctor-finding ari-doctor-rule-{esc(finding.rule)}" '
                f'data-rule="{esc(finding.rule)}" data-line="{esc(line)}">'
                f'<td><b>{esc(finding.rule)}</b></td><td>{badge}</td>'
                f'<td class="ari-doctor-line">{esc(line)}</td><td>{details}</td></tr>')


def _fix_html(fix: str, copy: str) -> str:
    """A fix whose tail is commands to paste (a module prelude) keeps them as a code block."""
    if "\n" not in fix.strip():
        return rich(fix)
    lead, _, block = fix.partition("\n")
    return rich(lead) + code_block(block, copy)
