"""The doctor: from a run log, a reproduce.sh or an experiment.md to the cause and the fix.

``diagnose_text`` is the one entry point for the CLI (``ari-jupyter doctor``) and the wizard's
Doctor step: the kind of text is detected unless given, and each kind goes to its checker -
the failure catalog (plus multi-line checks) for logs, the §5 linter for reproduce.sh, the
experiment.md lint rules (``ari_jupyter.ari.lint_experiment``) for experiment files, and the
checkpoint checks for a script that starts ``ari`` itself (the hand-off script).
``checkpoint_files`` lists what in a checkpoint is worth diagnosing.
"""
from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from .catalog import CATALOG, RULES, Signature, scan
from .detect import KINDS, detect_kind
from .files import checkpoint_files
from ..base.verdict import SEVERITIES, Finding, sort_findings
from ..ari.arguments import env_values
from ..ari.choices import Choices
from .reproduce_lint import lint_reproduce, node_count, profile_dict
from .log_checks import (cancel_cause, cancel_record_dirs, checkpoint_from_log_path, checkpoint_ignored,
                         handoff_without_checkpoint, job_output, ranks_on_one_node, skill_import_failed)
from .experiment import lint_experiment_text
from ..base.redact import redact
from . import proposals
from ..base.bounded_read import read_window

__all__ = ["CATALOG", "KINDS", "RULES", "SEVERITIES", "Finding", "Signature", "checkpoint_files",
           "detect_kind", "diagnose_file", "diagnose_text", "has_errors", "options_from_choices"]

_SCRIPT_RULES = ("viz-host-flag",)
"""Catalog entries that also make sense inside a script (a command the user will run)."""


def options_from_choices(choices: Choices, env: Mapping[str, str]) -> dict[str, Any]:
    """What a run's choices change in a verdict - its profile, nodes, the gres probe's answer,
    ARI_SLURM_ALLOW_NO_GRES and the .env values over ``env`` - as keyword arguments of
    ``diagnose_text``. The wizard's Doctor step passes its choices; ``ari-jupyter doctor
    --checkpoint`` the checkpoint's: the same file gets the same findings from both."""
    gres = choices.probe("gres")
    gres_data = (gres.data or {}) if gres is not None else {}
    return {"profile": choices.profile, "nodes": choices.job_nodes(),
            "has_gres": gres_data.get("has_gres") if "has_gres" in gres_data else None,
            "allow_no_gres": choices.allow_no_gres,
            "env": {**env, **env_values(choices).values}}


def diagnose_text(text: str, *, kind: str | None = None, profile: Any = None, nodes: Any = None,
                  has_gres: bool | None = None, allow_no_gres: bool = False,
                  checkpoint_dir: str | None = None, expected_artifacts: Sequence[str] = (),
                  filename: str | None = None, env: Mapping[str, str] | None = None,
                  script_dir: str | None = None, log_path: str | None = None) -> list[Finding]:
    """Findings for one text, errors first.

    ``profile``: ExecutionProfile or its JSON dict; ``nodes``: the allocation's node count (or an
    Allocation); ``has_gres``: the gres probe's answer when known; ``checkpoint_dir``: the
    checkpoint the run should have used (makes a stray run an error, not a warning); ``env``: the
    environment ``ari run`` will see (experiment.md checks compare with ARI_SLURM_PARTITION/CPUS;
    a log's paths are judged shared or node-local with its $HOME); ``script_dir``: the folder a
    reproduce.sh is in (L6 reads a script one of its lines runs there, one level down);
    ``log_path``: where a log is (a cancelled job's cause is looked up in the cancel records
    near it and in ``checkpoint_dir``).
    """
    kind = kind or detect_kind(text, filename)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "reproduce":
        findings = lint_reproduce(text, profile=profile, nodes=nodes, has_gres=has_gres,
                                  allow_no_gres=allow_no_gres, expected_artifacts=expected_artifacts,
                                  script_dir=script_dir)
        findings += [f for f in scan(text) if f.rule in _SCRIPT_RULES]
    elif kind == "handoff":
        findings = handoff_without_checkpoint(text) + [f for f in scan(text) if f.rule in _SCRIPT_RULES]
    elif kind == "experiment":
        findings = lint_experiment_text(text, env)
    else:
        findings = _diagnose_log(text, profile=profile, nodes=nodes, checkpoint_dir=checkpoint_dir,
                                 env=env, log_path=log_path)
    return sort_findings(_redacted(f, env) for f in findings)


def _redacted(finding: Finding, env: Mapping[str, str] | None) -> Finding:
    """Findings quote log lines: the CLI's --json and the wizard show them through the redactor."""
    from dataclasses import replace


    params = {key: redact(value, env) if isinstance(value, str) else value
              for key, value in finding.params.items()}
    return replace(finding, message=redact(finding.message, env), fix=redact(finding.fix, env),
                   cause=redact(finding.cause, env), suggestion=redact(finding.suggestion, env),
                   params=params)


def _diagnose_log(text: str, *, profile: Any, nodes: Any, checkpoint_dir: str | None,
                  env: Mapping[str, str] | None = None, log_path: str | None = None) -> list[Finding]:
    count = node_count(nodes, profile_dict(profile))
    findings = cancel_cause(scan(text, env), text, cancel_record_dirs(log_path, checkpoint_dir))
    findings += checkpoint_ignored(text, checkpoint_dir)
    findings += skill_import_failed(text)
    fanout = proposals.fanout_line("<program>")
    findings += ranks_on_one_node(text, count, f"add the fan-out to reproduce.sh: {fanout}")
    if not findings:  # a clean job's output: what was read and checked, not a bare "no problems"
        findings = job_output(text, count)
    return findings


def diagnose_file(path: str, *, kind: str | None = None, **options: Any) -> list[Finding]:
    """Read a file (undecodable bytes replaced) and diagnose it; a log written into a checkpoint
    directory is checked against that checkpoint."""
    text = read_window(path).text  # a log's head and tail; a regular file only (else OSError)
    kind = kind or detect_kind(text, os.path.basename(path))
    if kind == "log" and not options.get("checkpoint_dir"):
        options["checkpoint_dir"] = checkpoint_from_log_path(path)
    options.setdefault("script_dir", os.path.dirname(os.path.abspath(path)))
    options.setdefault("log_path", path)
    return diagnose_text(text, kind=kind, filename=os.path.basename(path), **options)


def has_errors(findings: Sequence[Finding]) -> bool:
    return any(f.is_error for f in findings)
