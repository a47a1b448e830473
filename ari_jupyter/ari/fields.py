"""The rules for each wizard field, on plain values: what blocks Write, what is worth a warning.

The wizard's state (``wizard.state``), ``emit`` and the experiment.md linter all ask these
functions, so a title or a walltime is judged the same way wherever it was typed. Each check
returns ``Finding`` s whose message ids are ``field.<rule>`` and fixes ``field.<rule>.<fix>``.
"""
from __future__ import annotations

import os
import re
from typing import Any, Iterable

from ..base.verdict import Finding
from ..i18n import LANGUAGES, message
from . import render
from .arguments import slurm_log_dir_of
from .choices import PARTITION_NAME, env_value_problem
from .dashboard import goal_cut
from .expressions import VIRSCI_MARKER
from .followup import MAX_FOLLOWUPS, Envelope, envelope_problem
from .naming import (WorkspaceError, check_workspace, is_short_name, slug_for_title, slug_is_hashed,
                     slug_names_nothing)

RUN_ID = r"[0-9]{14}_[A-Za-z0-9_-]+"


class _Findings(list):
    """A list that ``add`` s findings in the catalog's ``field.*`` vocabulary."""

    def add(self, rule: str, field: str, severity: str, fix: str | None = "fix", **params: Any) -> None:
        self.append(Finding.of(rule, severity, f"field.{rule}", field=field,
                               fix_id=f"field.{rule}.{fix}" if fix else "", **params))


def partition_problems(partition: str) -> list[Finding]:
    # Empty or unlisted partitions are the validator's (ARI's own precedence decides).
    out = _Findings()
    if partition and not PARTITION_NAME.match(partition):
        out.add("partition_bad_chars", "partition", "error", partition=partition)
    return out


def resource_problems(*, max_cpus: int | None, walltime: str, nodes: int | None, mem_gb: int | None,
                      allow_no_gres: bool, requests_gpus: bool, has_gres: bool | None) -> list[Finding]:
    out = _Findings()
    if max_cpus is None:
        out.add("max_cpus_unset", "max_cpus", "error")
    elif max_cpus < 1:
        out.add("max_cpus_low", "max_cpus", "error", value=max_cpus)
    if walltime and env_value_problem(walltime):
        out.add("walltime_unwritable", "walltime", "error", walltime=walltime,
                detail=env_value_problem(walltime))
    elif walltime and not walltime.isascii():
        out.add("walltime_non_ascii", "walltime", "error", walltime=walltime)
    if nodes is not None and nodes < 0:  # 0: the profile decides (ARI's "not given")
        out.add("nodes_low", "nodes", "error", fix=None, value=nodes)
    if mem_gb is not None and mem_gb < 1:
        out.add("mem_low", "mem_gb", "error", value=mem_gb)
    if allow_no_gres:
        if not requests_gpus:
            out.add("allow_no_gres_useless", "allow_no_gres", "warning", fix=None)
        elif has_gres is True:
            out.add("allow_no_gres_with_gres", "allow_no_gres", "warning")
    return out


def followup_problems(followups: int, partition: str, walltime: str, nodes: int | None) -> list[Finding]:
    """Follow-ups: at most ``followup.MAX_FOLLOWUPS``, and only with an envelope sbatch takes
    (a partition, a time limit: what each follow-up asks, exactly)."""
    out = _Findings()
    if followups < 0 or followups > MAX_FOLLOWUPS:
        out.add("followups_range", "followups", "error", value=followups, most=MAX_FOLLOWUPS)
    elif followups:
        problem = envelope_problem(Envelope(partition, nodes if nodes and nodes > 0 else 1, walltime))
        if problem:
            out.add("followups_envelope", "followups", "error", detail=problem)
    return out


def module_problems(module_loads: Iterable[str]) -> list[Finding]:
    # Whether a module exists is the validator's (it gets these names as site modules).
    out = _Findings()
    for name in module_loads:
        problem = render.module_name_problem(name)
        if problem:
            out.add("module_bad_name", "module_loads", "error", fix=None, module=name, detail=problem)
    return out


def text_problems(title: str, goal: str) -> list[Finding]:
    out = _Findings()
    stripped = title.strip()
    if not stripped:
        out.add("title_empty", "title", "error")
    elif render.has_control_chars(stripped):
        out.add("title_control", "title", "error", fix=None)
    elif "##" in stripped:
        out.add("title_hashes", "title", "error", fix=None)
    if not goal.strip():
        out.add("goal_empty", "goal", "error")
    for field, text in (("title", title), ("goal", goal)):
        if VIRSCI_MARKER in text:
            out.add("virsci_marker", field, "error", marker=VIRSCI_MARKER)
        for key in render.MAGIC_KEYS:
            if key in text:
                out.add("magic_key", field, "error",
                        fix="fix_field" if key.startswith("min_") else "fix_metrics", key=key)
    written, notes = render.neutralize_goal(goal)
    if goal.strip() and not written.strip():
        out.add("goal_headings_only", "goal", "error")
    for note in notes:
        out.add("goal_note", "goal", "info", fix=None, note=note)
    cut = goal_cut(written)
    if cut is not None:  # the goal as written: a first '#' line is already in bold
        out.add("goal_cut_heading" if cut.heading else "goal_cut_hash", "goal", "warning",
                number=cut.line, line_text=cut.text, dropped=cut.dropped,
                words=cut.text.lstrip("#").strip())
    return out


def metric_problems(metrics: Iterable[str], min_expected_metric: int | None) -> list[Finding]:
    out = _Findings()
    metrics = list(metrics)
    if not metrics:
        out.add("metrics_empty", "metrics", "error")
    for metric in metrics:
        if not render.METRIC_TOKEN.match(metric):
            out.add("metric_bad", "metrics", "error", metric=metric)
    if min_expected_metric is not None and min_expected_metric < 0:
        out.add("min_metric_negative", "min_expected_metric", "error", fix=None)
    return out


def file_problems(provided_files: Iterable[str]) -> list[Finding]:
    out = _Findings()
    seen: dict[str, str] = {}
    for path in provided_files:
        if not path.startswith("/") or path != path.strip() or render.has_control_chars(path):
            out.add("file_not_absolute", "provided_files", "error", path=path)
            continue
        if "#" in path:
            out.add("file_hash", "provided_files", "error", path=path)
            continue
        if os.path.isdir(path):
            out.add("file_is_dir", "provided_files", "error", path=path)
        elif not os.path.isfile(path):
            out.add("file_missing", "provided_files", "error", path=path)
        base = os.path.basename(path)
        if base in seen:
            out.add("file_same_name", "provided_files", "error", path=path, other=seen[base], name=base)
        seen.setdefault(base, path)
    return out


def workspace_problems(workspace: str, shared_fs: Any = None) -> list[Finding]:
    """``shared_fs``: the shared-filesystem probe's verdict for this workspace, if there is one."""
    out = _Findings()
    if not workspace:
        out.add("workspace_missing", "workspace", "error")
        return out
    if not workspace.startswith("/") or render.has_control_chars(workspace):
        out.add("workspace_not_absolute", "workspace", "error", fix=None, workspace=workspace)
        return out
    try:
        check_workspace(workspace)
    except WorkspaceError as exc:
        out.add("workspace_checkpoints", "workspace", "error", detail=str(exc))
    if not slurm_log_dir_of(workspace):
        out.add("workspace_no_log_dir", "workspace", "info", fix=None)
    if shared_fs is not None and shared_fs.severity in ("error", "warning"):
        summary = (message(shared_fs.message_id, **shared_fs.params) if shared_fs.message_id
                   else shared_fs.summary)
        fix = message(shared_fs.fix_id, **shared_fs.params) if shared_fs.fix_id else shared_fs.fix
        out.add("shared_fs", "workspace", shared_fs.severity, summary=summary, probe_fix=fix)
    return out


def run_id_problems(run_id: str, title: str) -> list[Finding]:
    out = _Findings()
    if run_id and not re.fullmatch(RUN_ID, run_id) and not is_short_name(run_id):
        out.add("run_id_bad", "run_id", "error", run_id=run_id)
    elif not run_id:
        if slug_is_hashed(title):
            out.add("run_id_hashed", "run_id", "info", slug=slug_for_title(title))
        elif slug_names_nothing(title):
            out.add("run_id_partial", "run_id", "info", slug=slug_for_title(title))
    return out


def lang_problems(lang: str) -> list[Finding]:
    out = _Findings()
    if lang not in LANGUAGES:
        out.add("lang_bad", "lang", "warning", lang=lang)
    return out
