"""The text of every checkpoint file, rendered from the user's choices without touching disk.

Each renderer is a pure function of a ``Choices`` (``choices.py``) and returns exactly the
bytes ``emit`` writes, which is what the
wizard previews and what the golden files pin. Values that reach ARI's parsers or a shell are
checked here too, independently of the model's own validation, so a renderer can never
produce a file that ARI would misread or a shell would execute.
"""
from __future__ import annotations

import json
import re
import shlex
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..base.redact import is_secret_name as secret_name
from ..base.version import __version__
from . import contracts
from .expressions import R2_SECTION, R8_SECTION, VIRSCI_MARKER
from .prelude import module_init_lines, module_name_problem
from .run_settings import BACKEND_KEY, PACKAGED_LLM, apply_stage_toggles, launch_config_keys
from ..i18n import Text, t, text
from .arguments import env_values, reproduce_args
from .choices import PARTITION_NAME, Choices
from .followup import envelope_of, envelope_problem
from .resume_rule import RESUME_CONFIG, resume_command

if TYPE_CHECKING:
    from .decided import Decided
from .naming import WORKSPACE_FOLDERS

HANDOFF_ARI_PROFILE = "hpc"
"""``ari run --profile hpc``: HPC parsing on, hpc-skill loaded (spec §9 item 30)."""
HANDOFF_PID_FILE = ".ari_handoff_pid"
"""The hand-off script's own PID, written into the checkpoint just before ``ari run``."""

WALLTIME = re.compile(r"^(?:\d+-)?\d{1,3}:\d{2}:\d{2}$")
"""SLURM ``--time`` forms the wizard writes: ``HH:MM:SS`` or ``D-HH:MM:SS``."""

METRIC_TOKEN = re.compile(r"^[^\s,;/.#][^\s,;#]*(?<![/.])\Z")
"""A metric both parsers return unchanged: no separators, nothing they strip at the ends."""

ENV_KEY = re.compile(r"^[A-Z_][A-Z0-9_]*$")

MAGIC_KEYS = ("min_expected_metric:", "metric_keyword:")
"""Comments ARI reads anywhere in experiment.md (R2, R3, R12); only the wizard writes them."""

LAUNCH_CONFIG_KEY = "ari_jupyter"
"""Namespaced key in launch_config.json holding the wizard state (ignored by ARI's readers)."""
DECIDED_KEY = "decided"
"""The key in that section of what was decided per job kind (``ari.decided``)."""


class RenderError(ValueError):
    """A value cannot be written safely into a checkpoint file."""


# -- shared checks ---------------------------------------------------------------------------

def has_control_chars(text: str) -> bool:
    return any(ord(ch) < 32 or ord(ch) == 127 for ch in text)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise RenderError(message)


# -- experiment.md -------------------------------------------------------------------------------

def neutralize_goal(goal: str) -> tuple[str, list[str]]:
    """The goal text with lines ARI would parse as structure turned into plain bold text.

    ARI's metric and provided-files parsers look for ``## Success Metrics`` and
    ``## Files``-like headings anywhere in the file (not anchored, first match wins); a goal
    containing one would override the sections the wizard writes. Such heading lines become
    ``**heading text**`` (same words for the LLM, no longer a heading). Everything else,
    including prose with "partition" or "Metrics:", is kept verbatim: the wizard's own lines
    precede the goal, and ARI's first-match rules then ignore the goal's occurrences.
    Returns the text and one note per changed line.
    """
    lines = goal.replace("\r\n", "\n").replace("\r", "\n").strip("\n").split("\n")
    notes: list[str] = []
    out: list[str] = []
    for number, line in enumerate(lines, start=1):
        if _parsed_as_section(line + "\n"):
            words = line.replace("#", "").strip()
            out.append(f"**{words}**" if words else "")
            notes.append(f"goal line {number} {line.strip()!r} looked like a section ARI parses; "
                         f"written as **{words}**")
        else:
            out.append(line.rstrip())
    # ARI's dashboard shows the goal section up to its first '#' line: a goal opening with one
    # would show nothing of the user's (the file's first line instead), so it opens in bold
    first = next((i for i, line in enumerate(out) if line.strip()), None)
    while first is not None and out[first].lstrip().startswith("#"):
        words = out[first].strip().lstrip("#").strip()
        notes.append(f"goal line {first + 1} {out[first].strip()!r} opens the goal as a heading, "
                     f"which ARI's dashboard would not show; written as **{words}**" if words else
                     f"goal line {first + 1} {out[first].strip()!r} left out (an empty heading)")
        if words:
            out[first] = f"**{words}**"
            break
        del out[first]
        first = next((i for i, line in enumerate(out) if line.strip()), None)
    text = "\n".join(out)
    if _parsed_as_section(text + "\n"):  # a heading split over lines ("##" then "Files")
        text = re.sub(r"#{2,}", "#", text)
        notes.append("'##' in the goal shortened to '#' so no line pair reads as a section")
    return text, notes


def _parsed_as_section(text: str) -> bool:
    return bool(R2_SECTION.search(text) or R8_SECTION.search(text))


def render_experiment_md(choices: Choices) -> str:
    """experiment.md following spec §1.3, ordered so ARI's first-match parsers read the wizard's lines.

    The ``Partition: <p>, Max CPUs: <n>`` line comes first (before the title, so no word in
    the title can be taken for the partition), then the metric and provided-files sections,
    then the title and the user's goal: whatever the goal says, every parser has already
    matched, and the dashboard's goal extractor finds the goal right under the title.
    """
    partition = choices.partition
    _require(bool(PARTITION_NAME.match(partition or "")),
             f"partition {partition!r} must be letters, digits, '_' or '-' (ARI's partition hint "
             "stops at any other character)")
    _require(isinstance(choices.max_cpus, int) and choices.max_cpus > 0,
             f"Max CPUs must be a positive integer, got {choices.max_cpus!r}")
    title = (choices.title or "").strip()
    _require(bool(title) and not has_control_chars(title) and "##" not in title,
             "the title must be one non-empty line without '##'")
    metrics = list(choices.metrics)
    _require(bool(metrics), "at least one metric is required for the 'Metrics:' line")
    for metric in metrics:
        _require(bool(METRIC_TOKEN.match(metric)),
                 f"metric {metric!r} would not be read back unchanged (no spaces, ',', ';', '#', "
                 "and no '.' or '/' at either end)")
    minimum = choices.min_expected_metric
    _require(minimum is None or (isinstance(minimum, int) and not isinstance(minimum, bool)
                                 and minimum >= 0),
             f"min_expected_metric must be a non-negative integer, got {minimum!r}")
    files = list(choices.provided_files)
    for path in files:
        _require(path.startswith("/") and "#" not in path and not has_control_chars(path)
                 and path == path.strip(),
                 f"provided file {path!r} must be an absolute path without '#' or control characters")
    for text in (choices.goal or "", title):
        _require(VIRSCI_MARKER not in text, f"the text must not contain {VIRSCI_MARKER!r}")
        for key in MAGIC_KEYS:
            _require(key not in text, f"the title and goal must not contain '{key}' (ARI reads "
                     "it anywhere in the file)")
    goal, _notes = neutralize_goal(choices.goal or "")
    _require(bool(goal.strip()), "the research goal is empty")

    parts = [f"Partition: {partition}, Max CPUs: {choices.max_cpus}", "",
             "## Evaluation Metric", f"Metrics: {', '.join(metrics)}"]
    if minimum is not None:
        parts.append(f"<!-- min_expected_metric: {minimum} -->")
    parts.append("")
    if files:
        parts += ["## Provided Files", *[f"- {path}" for path in files], ""]
    # The title directly above the goal: ARI's dashboard starts its goal at any heading naming
    # "goal" (a title "Research goal: ..." too) and stops at the next heading line.
    parts += [f"# {title}", "", "## Research Goal", goal, ""]
    limits = _hardware_limits(choices)
    if limits:
        parts += ["## Hardware Limits", *limits, ""]
    return "\n".join(parts)


def _hardware_limits(choices: Choices) -> list[str]:
    """Prose for the LLM only (no parser reads it); avoids the words ARI's parsers look for."""
    out = []
    if choices.nodes:
        out.append(f"- Nodes for multi-node jobs: {choices.nodes}")
    out.append(f"- CPUs per task: {choices.max_cpus}")
    if choices.walltime:
        out.append(f"- Walltime per job: {choices.walltime}")
    if choices.mem_gb:
        out.append(f"- Memory per job: {choices.mem_gb} GB")
    if choices.module_loads:
        out.append(contracts.module_limit_line(choices)  # the newer ARI: only the agent loads them
                   or f"- Modules loaded before ARI starts: {', '.join(choices.module_loads)}")
    return out


# -- .env --------------------------------------------------------------------------------------

def written_env_values(choices: Choices) -> Mapping[str, str]:
    """``env_values`` as a file gets them: refused while a value cannot be written, or while
    Max CPUs (which ARI would otherwise take as 8) is not chosen."""
    told = env_values(choices)
    for key, (value, problem) in told.refused.items():
        raise RenderError(f"{key}={value!r} {problem}")
    _require("ARI_SLURM_CPUS" in told.values,
             f"Max CPUs must be a positive integer, got {choices.max_cpus!r}")
    return told.values


def render_bfts_env(choices: Choices, *, is_secret_name=None) -> str:
    """What every BFTS job sees of this run: the checkpoint's settings and its modules.

    ARI's hpc skill submits BFTS jobs with ``sbatch --export=NONE``, resets PATH to
    /usr/bin:/bin:/usr/local/bin and sources ``$ARI_ENV_FILE`` inside ``set -a``/``set +a``
    (ari-skill-hpc ``slurm.py``). ``.env`` points ARI_ENV_FILE here, so the job gets the same
    variables as ``ari`` and loads the run's modules (the MODULEPATH the modules probe saw
    comes first, so the modules chosen from it are found). ``SLURM_EXPORT_ENV=ALL`` undoes what
    ``--export=NONE`` would otherwise pass on to every ``srun`` inside the job (steps with no
    environment). Every value is shell-quoted; secrets are never written.
    """
    if is_secret_name is None:
        is_secret_name = secret_name
    q = shlex.quote
    lines = [
        "# Sourced by every BFTS job ARI's hpc skill submits (sbatch --export=NONE; ARI_ENV_FILE in .env).",
        f"# ari-jupyter {__version__}, run {choices.run_id}. The job exports what this file sets (set -a).",
    ]
    checkpoint = choices.checkpoint_dir
    if checkpoint:
        lines.append(f"ARI_CHECKPOINT_DIR={q(checkpoint)}")
    lines += [
        "# --export=NONE leaves SLURM_EXPORT_ENV=NONE in the job, and every srun in it reads that:",
        "# its tasks would start with no PATH at all (\"execve(): sh: No such file or directory\").",
        "# The job's own environment (this file, the modules below) goes to its steps instead.",
        "SLURM_EXPORT_ENV=ALL",
    ]
    for key, value in written_env_values(choices).items():
        _require(bool(ENV_KEY.match(key)), f"variable {key!r} is not a shell variable name")
        _require(not is_secret_name(key), f"{key} looks like a secret; secrets never go into the checkpoint")
        lines.append(f"{key}={q(value)}")
    modules = list(choices.module_loads)
    for name in modules:
        problem = module_name_problem(name)
        _require(not problem, f"module {name!r} {problem}")
    if modules:
        modulepath = _probed_modulepath(choices)
        lines += ["", "# The run's modules (step 3 / --module), loaded in the job as in the hand-off."]
        if modulepath:
            # first, and kept: a job may start with the site's own MODULEPATH or none at all
            lines.append(f"MODULEPATH={q(modulepath)}${{MODULEPATH:+:$MODULEPATH}}")
        lines += [
            *module_init_lines(),
            "module load " + " ".join(q(name) for name in modules)
            + " || echo \"ari-jupyter: module load failed in this BFTS job\" >&2",
        ]
    return "\n".join(lines) + "\n"


def _probed_modulepath(choices: Choices) -> str:
    probes = choices.probe_results or {}
    result = probes.get("modules")
    value = ((result.data or {}).get("modulepath") if result is not None else None) or ""
    return value if isinstance(value, str) and not has_control_chars(value) else ""


def render_env(choices: Choices, *, is_secret_name=None) -> str:
    """``KEY=value`` lines: no quotes, no ``export``, no inline comments, never a secret."""
    if is_secret_name is None:
        is_secret_name = secret_name
    lines = ["# ARI settings for this checkpoint (loaded by ari because ARI_CHECKPOINT_DIR is exported)."]
    for key, value in written_env_values(choices).items():
        _require(bool(ENV_KEY.match(key)), f".env key {key!r} is not a shell variable name")
        _require(not is_secret_name(key), f"{key} looks like a secret; secrets never go into the checkpoint")
        lines.append(f"{key}={value}")
    return "\n".join(lines) + "\n"


# -- launch_config.json ----------------------------------------------------------------------

def launch_config(choices: Choices, *, files: Mapping[str, str] | None = None,
                  written_at: str = "", handoff_sha256: str = "",
                  decided: Decided | None = None) -> dict[str, Any]:
    """ARI's keys with ARI's types (spec §2.7) plus the whole wizard state under ``ari_jupyter``
    (and ``decided``, what was decided per job kind, ``ari.decided``, when emit gives it).

    Only keys whose value the wizard knows are written (ARI's readers treat a missing key like
    its default); ``partition`` is the reproduce step's third-priority source.
    """
    _require(isinstance(choices.max_cpus, int) and choices.max_cpus > 0,
             f"Max CPUs must be a positive integer, got {choices.max_cpus!r}")
    config: dict[str, Any] = {"profile": HANDOFF_ARI_PROFILE, "partition": choices.partition,
                              "hpc_cpus": choices.max_cpus}
    if choices.mem_gb:
        config["hpc_memory_gb"] = int(choices.mem_gb)
    if choices.walltime:
        config["hpc_walltime"] = choices.walltime
    config.update(launch_config_keys(choices.run_settings))
    section: dict[str, Any] = {"version": __version__}
    if written_at:
        section["written_at"] = written_at
    if files:
        section["files_sha256"] = dict(files)
    if handoff_sha256:  # the hand-off script's, so that a swapped script can be told
        section["handoff_sha256"] = handoff_sha256
    if decided is not None:
        section[DECIDED_KEY] = decided.to_json()
    section["state"] = choices.to_json()
    config[LAUNCH_CONFIG_KEY] = section
    return config


def render_launch_config(choices: Choices, **kwargs: Any) -> str:
    return json.dumps(launch_config(choices, **kwargs), indent=2, ensure_ascii=False) + "\n"


# -- hand-off script -------------------------------------------------------------------------

STEP_OVERLAP_LINES = (
    'if [ -n "${SLURM_STEP_ID:-}" ]; then export SLURM_OVERLAP=1; fi',
)
"""In a job step (the single-user server under batchspawner's ``srun``), every srun ARI starts
is a step inside that step: since SLURM 20.11 it waits until the server's step frees its CPUs
(never) unless it overlaps. ``SLURM_OVERLAP`` is srun's own variable for ``--overlap``; an srun
older than 20.11 ignores it, where an unknown ``--overlap`` flag would be an error. In the batch
script (``req_srun=''``) no step holds the job's resources and nothing is exported."""

def render_handoff_script(choices: Choices, checkpoint_dir: str, script_path: str,
                          api_key: str | None = None, ari_jupyter: str = "ari-jupyter",
                          files_sha256: Mapping[str, str] | None = None) -> str:
    """The one command for the second terminal: export, load modules, cd, ``ari run`` | tee.

    Every value is passed through ``shlex.quote``; the log name is built at run time
    (``ari_run_<timestamp>.log``, the pattern ARI's dashboard streams). ``api_key``: the
    variable the run's LLM backend needs ("" for none; ``run_settings_view.handoff_key_variable``
    knows this site's ARI default; None takes ARI's packaged default for an unchosen backend).
    The script stops before ``ari run`` when neither the shell nor a .env ``ari`` reads sets
    it, since every node would fail on it (``ARI_HANDOFF_WITHOUT_KEY=1`` runs anyway).
    ``ari_jupyter``: the absolute path of the ari-jupyter the messages name when ``ari-jupyter``
    is not found by name in the terminal (``emit.ari_jupyter_command``). ``files_sha256``: the
    checkpoint files written with the script (name -> sha256), given by emit; then before it
    runs anything the script stops unless each still has its hash, and unless the workspace, the folders above
    it, the run's folders at its root (``naming.WORKSPACE_FOLDERS``), the checkpoint and its files are the user's and no other
    user can write them (``checkpoint/ownership.py``'s rules).
    """
    api_key = _key_variable(choices, api_key)
    ari_line = f'ari run "$ARI_CHECKPOINT_DIR/experiment.md" --profile {HANDOFF_ARI_PROFILE} 2>&1 | tee "$log"'
    lines, said_as = _script_head(
        choices, [_comment(choices, "handoff.comment.title", run=choices.run_id, version=__version__),
                  _comment(choices, "handoff.comment.run_it"),
                  f"#   bash {shlex.quote(script_path)}",
                  _comment(choices, "handoff.comment.env"),
                  # the script is long (checks, modules); what it comes to is said first
                  _comment(choices, "handoff.comment.what_it_runs"),
                  f"#   {ari_line}"],
        checkpoint_dir, ari_jupyter, [(script_path, "script path")])
    if files_sha256 is not None:  # the script emit writes (a preview shows the rest)
        lines += _verify_lines(choices, checkpoint_dir, files_sha256, said_as)
    lines += _environment_lines(choices, said_as)
    lines += [
        *_key_check_lines(choices, api_key),
        *_followup_lines(choices, said_as, "handoff.comment.followup"),
        'log="$ARI_CHECKPOINT_DIR/ari_run_$(date +%Y%m%d%H%M%S).log"',
        f"echo {_said(choices, 'handoff.script.log', log='$log')}",
        _comment(choices, "handoff.comment.pid"),
        # written whole then renamed: the Runs panel never reads a half-written PID
        f'echo $$ > "$ARI_CHECKPOINT_DIR/{HANDOFF_PID_FILE}.tmp"',
        f'mv -f "$ARI_CHECKPOINT_DIR/{HANDOFF_PID_FILE}.tmp" "$ARI_CHECKPOINT_DIR/{HANDOFF_PID_FILE}"',
        ari_line,
        "",
    ]
    return "\n".join(lines)


def _key_variable(choices: Choices, api_key: str | None) -> str:
    """The variable the run's LLM backend needs: as given, else ARI's packaged default's."""
    if api_key is None:
        return BACKEND_KEY.get(choices.run_settings.llm_backend or PACKAGED_LLM[0], "")
    return api_key


def _script_head(choices: Choices, comments: list[str], checkpoint_dir: str, ari_jupyter: str,
                 paths: Iterable[tuple[str, str]] = ()) -> tuple[list[str], str]:
    """A script's first lines (its comments, ``set -eo pipefail``, ARI_CHECKPOINT_DIR and, when
    ``ari_jupyter`` is a path, the line that finds ari-jupyter), every path and module name
    checked first; and how the script names ari-jupyter."""
    located = ari_jupyter != "ari-jupyter"
    for value, what in ((checkpoint_dir, "checkpoint directory"), (choices.workspace, "workspace"),
                        *paths, *([(ari_jupyter, "ari-jupyter")] * located)):
        _require(value.startswith("/") and not has_control_chars(value),
                 f"{what} {value!r} must be an absolute path without control characters")
    for name in choices.module_loads:
        problem = module_name_problem(name)
        _require(not problem, f"module {name!r} {problem}")
    q = shlex.quote
    lines = ["#!/usr/bin/env bash", *comments, "set -eo pipefail", "",
             f"export ARI_CHECKPOINT_DIR={q(checkpoint_dir)}", ""]
    if located:
        lines += [
            _comment(choices, "handoff.comment.ari_jupyter"),
            f"ari_jupyter=$(command -v ari-jupyter || echo {q(ari_jupyter)})",
            "",
        ]
    return lines, "$ari_jupyter" if located else "ari-jupyter"


def _followup_lines(choices: Choices, said_as: str, comment_id: str) -> list[str]:
    """Inside an allocation, with follow-ups approved: submit the next link of the chain
    (``ari-jupyter follow-up``: the approved count, the envelope and the atomic record are
    its). A refusal is said and the run goes on in this allocation."""
    if not choices.followups:
        return []
    runner = f'"{said_as}"' if said_as.startswith("$") else said_as
    return [
        _comment(choices, comment_id, count=str(choices.followups)),
        'if [ -n "${SLURM_JOB_ID:-}" ]; then',
        f'  {runner} follow-up "$ARI_CHECKPOINT_DIR" --after "$SLURM_JOB_ID" \\',
        f"    || echo {_said(choices, 'handoff.script.followup_failed')} >&2",
        "fi",
    ]


def render_followup_script(choices: Choices, checkpoint_dir: str, ari_jupyter: str = "ari-jupyter",
                           api_key: str | None = None) -> str:
    """The follow-up job's script (``followup.FOLLOWUP_SCRIPT``), submitted by
    ``ari-jupyter follow-up`` with ``--dependency=afterany:<the allocation before>``.

    It refuses to run outside the run's envelope (its partition and node count; sbatch was
    given its time limit), ends at once when the search is finished, makes the cut run
    resumable (``ari-jupyter requeue --force``: the allocation before has ended, afterany says
    so; it waits while a job of the run is still in the queue), submits the next link while the
    approved count allows, and runs the same ``ari resume`` line ``status`` prints."""
    envelope = envelope_of(choices)
    problem = envelope_problem(envelope)
    _require(not problem, f"follow-up envelope: {problem}")
    api_key = _key_variable(choices, api_key)
    q = shlex.quote
    lines, said_as = _script_head(
        choices, [_comment(choices, "followup.comment.title", run=choices.run_id, version=__version__),
                  _comment(choices, "followup.comment.envelope", partition=envelope.partition,
                           nodes=str(envelope.nodes), time=envelope.time)],
        checkpoint_dir, ari_jupyter)
    runner = f'"{said_as}"' if said_as.startswith("$") else said_as
    config = checkpoint_dir.rstrip("/") + "/" + RESUME_CONFIG
    lines += [
        _comment(choices, "followup.comment.outside"),
        f'if [ "${{SLURM_JOB_PARTITION:-}}" != {q(envelope.partition)} ] '
        f'|| [ "${{SLURM_JOB_NUM_NODES:-}}" != {q(str(envelope.nodes))} ]; then',
        f"  echo {_said(choices, 'followup.script.outside', partition=envelope.partition, nodes=str(envelope.nodes))} >&2",
        "  exit 3",
        "fi",
        "",
    ]
    lines += _environment_lines(choices, said_as)
    lines += [
        *_key_check_lines(choices, api_key),
        _comment(choices, "followup.comment.finished"),
        f'if {runner} follow-up "$ARI_CHECKPOINT_DIR" --finished; then',
        "  exit 0",
        "fi",
        _comment(choices, "followup.comment.requeue"),
        "tries=0",
        f'until {runner} requeue --force "$ARI_CHECKPOINT_DIR"; do',
        "  tries=$((tries + 1))",
        '  [ "$tries" -lt 60 ] || exit 1',
        "  sleep 10",
        "done",
        *_followup_lines(choices, said_as, "followup.comment.next"),
        'log="$ARI_CHECKPOINT_DIR/ari_run_$(date +%Y%m%d%H%M%S).log"',
        f"echo {_said(choices, 'handoff.script.log', log='$log')}",
        _comment(choices, "handoff.comment.pid"),
        f'echo $$ > "$ARI_CHECKPOINT_DIR/{HANDOFF_PID_FILE}.tmp"',
        f'mv -f "$ARI_CHECKPOINT_DIR/{HANDOFF_PID_FILE}.tmp" "$ARI_CHECKPOINT_DIR/{HANDOFF_PID_FILE}"',
        _comment(choices, "followup.comment.resume"),
        f'if [ -f "$ARI_CHECKPOINT_DIR/{RESUME_CONFIG}" ]; then',
        f'  {resume_command(checkpoint_dir, config)} 2>&1 | tee "$log"',
        "else",
        f'  {resume_command(checkpoint_dir)} 2>&1 | tee "$log"',
        "fi",
        "",
    ]
    return "\n".join(lines)


def _environment_lines(choices: Choices, said_as: str) -> list[str]:
    """What the hand-off and a follow-up job both do before ARI: load the run's modules,
    drop the allocation's memory request and a step's exclusivity, cd to the workspace, and
    stop when ``ari`` is not found."""
    q = shlex.quote
    lines: list[str] = []
    if choices.module_loads:
        lines += [
            _comment(choices, "handoff.comment.modules"),
            # module_init_lines' own comment is English: it also goes into ARI's reproduce.sh
            _comment(choices, "handoff.comment.module_init"),
            *module_init_lines()[1:],
            "module load " + " ".join(q(name) for name in choices.module_loads) + " || {",
            f"  echo {_module_load_failed_said(choices, said_as)} >&2",
            "  exit 1",
            "}",
            "",
        ]
    lines += [
        _comment(choices, "handoff.comment.memory"),
        "unset SLURM_MEM_PER_CPU SLURM_MEM_PER_GPU SLURM_MEM_PER_NODE",
        "",
        _comment(choices, "handoff.comment.overlap"),
        *STEP_OVERLAP_LINES,
        "",
        f"cd {q(choices.workspace)}",
        "",
        "if ! command -v ari >/dev/null 2>&1; then",
        f"  echo {_no_ari_said(choices, said_as)} >&2",
        "  exit 127",
        "fi",
    ]
    return lines


_SITE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_KEY_VARIABLE = re.compile(r"[A-Z_][A-Z0-9_]*")


_SHA256 = re.compile(r"[0-9a-f]{64}")
_CHECKPOINT_FILE = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]*")


def _verify_lines(choices: Choices, checkpoint_dir: str, files_sha256: Mapping[str, str],
                  said_as: str) -> list[str]:
    """Stop before anything runs when another user could have changed what runs: the
    workspace and the folders above it (as written and resolved) owned by the user or root and
    writable by no one else unless sticky; the run's folders at the workspace root
    (``checkpoints/``, ``launch/``, ``slurm_logs/``, ``experiments/``), the checkpoint, its
    files and this script the user's own and writable by no one else; each recorded file with
    its sha256. The same rules as ``checkpoint/ownership.py`` (``check-handoff``). Commands by
    ``command -p`` (the system's standard PATH), not whatever the terminal's PATH finds first."""
    q = shlex.quote
    workspace = choices.workspace.rstrip("/") or "/"
    for name, digest in files_sha256.items():
        _require(bool(_CHECKPOINT_FILE.fullmatch(name)) and bool(_SHA256.fullmatch(digest)),
                 f"checkpoint file {name!r} or its sha256 {digest!r} cannot go into the script")
    stop = {why: _said(choices, f"handoff.script.unsafe_{why}", path="$2", owner="$owner",
                       mode="$mode") for why in ("owner", "writable", "missing")}
    lines = [
        _comment(choices, "handoff.comment.verify"),
        "ari_uid=$(command -p id -u)",
        "ari_stop() {",
        '  echo "$1" >&2',
        f"  echo {_said(choices, 'handoff.script.unsafe_fix', ari_jupyter=said_as, checkpoint='$ARI_CHECKPOINT_DIR')} >&2",
        "  exit 3",
        "}",
        "ari_own_group() {",
        "  local members",
        '  [ "$1" = "$(command -p id -g)" ] && [ "$(command -p id -gn)" = "$(command -p id -un)" ] || return 1',
        '  members=$(command -p getent group "$1" 2>/dev/null | command -p cut -d: -f4) || return 1',
        '  [ -z "$members" ] || [ "$members" = "$(command -p id -un)" ]',
        "}",
        "ari_check() {",
        "  local info owner group mode",
        f'  if [ "$1" = ours ] && [ -L "$2" ]; then ari_stop {stop["missing"]}; fi',
        """  info=$(command -p stat -L -c '%u %g %a' -- "$2" 2>/dev/null || command -p stat -L -f '%u %g %Mp%Lp' -- "$2" 2>/dev/null) \\""",
        f"    || ari_stop {stop['missing']}",
        '  read -r owner group mode <<<"$info"',
        '  if [ "$owner" != "$ari_uid" ] && { [ "$1" = ours ] || [ "$owner" != 0 ]; }; then',
        f"    ari_stop {stop['owner']}",
        "  fi",
        "  mode=$((8#$mode))",
        '  if [ $((mode & 8#002)) != 0 ] || { [ $((mode & 8#020)) != 0 ] && { [ "$1" = ours ] || ! ari_own_group "$group"; }; }; then',
        '    if [ "$1" = ours ] || [ $((mode & 8#1000)) = 0 ]; then',
        '      mode=$(printf "%04o" "$mode")',
        f"      ari_stop {stop['writable']}",
        "    fi",
        "  fi",
        "}",
        "ari_way() {",
        '  local dir=$1',
        "  while :; do",
        '    ari_check way "$dir"',
        '    if [ "$dir" = / ]; then break; fi',
        '    dir=${dir%/*}',
        '    dir=${dir:-/}',
        "  done",
        "}",
        f"ari_way {q(workspace)}",
        f'ari_way "$(cd -P -- {q(workspace)} && pwd -P)"',
        "for ari_path in " + " ".join(q(f"{workspace}/{name}") for name in WORKSPACE_FOLDERS)
        + ' "$ARI_CHECKPOINT_DIR" "${BASH_SOURCE[0]}"; do',
        '  ari_check ours "$ari_path"',
        "done",
    ]
    if files_sha256:
        changed = _said(choices, "handoff.script.unsafe_changed", path="$ari_path")
        lines += [
            "while read -r ari_sum ari_name; do",
            '  ari_path=$ARI_CHECKPOINT_DIR/$ari_name',
            '  ari_check ours "$ari_path"',
            '  ari_got=$( (command -p sha256sum || command -p shasum -a 256) <"$ari_path" 2>/dev/null | command -p cut -d" " -f1)',
            f'  if [ "$ari_got" != "$ari_sum" ]; then ari_stop {changed}; fi',
            "done <<'ARI_JUPYTER_SHA256'",
            *(f"{digest} {name}" for name, digest in files_sha256.items()),
            "ARI_JUPYTER_SHA256",
        ]
    lines += ['ari_check ours "$ARI_CHECKPOINT_DIR/launch_config.json"', ""]
    return lines


def _key_check_lines(choices: Choices, variable: str) -> list[str]:
    """Stop before ``ari run`` when the backend's key is nowhere ``ari`` looks: the shell, then
    the .env files it loads (api_key_status's order). Only whether a line sets it non-empty
    is looked at; the value is never printed."""
    if not variable:
        return []
    _require(bool(_KEY_VARIABLE.fullmatch(variable)), f"key variable {variable!r} is not a name")
    return [
        _comment(choices, "handoff.comment.key"),
        f'if [ -z "${{{variable}:-}}" ] && ! grep -qsE '
        f"'^[[:space:]]*(export[[:space:]]+)?{variable}[[:space:]]*=[[:space:]]*[^[:space:]#]' \\",
        '    "$ARI_CHECKPOINT_DIR/.env" ${ARI_ROOT:+"$ARI_ROOT/.env" "$ARI_ROOT/ari-core/.env"} "$HOME/.env"; then',
        f"  echo {_said(choices, 'handoff.script.no_key', variable=variable)} >&2",
        '  if [ "${ARI_HANDOFF_WITHOUT_KEY:-}" != 1 ]; then exit 2; fi',
        "fi",
    ]


def _module_load_failed_said(choices: Choices, ari_jupyter: str) -> str:
    """``module load`` failed: on a demo site that is expected (its modules are only in its
    recording, and a teacher's class met a red Lmod error with nothing saying so)."""
    site = choices.site_name
    if _SITE_NAME.fullmatch(site):
        return _said(choices, "handoff.script.module_load_failed_demo", site=site,
                     checkpoint="$ARI_CHECKPOINT_DIR", ari_jupyter=ari_jupyter)
    return _said(choices, "handoff.script.module_load_failed", checkpoint="$ARI_CHECKPOINT_DIR",
                 ari_jupyter=ari_jupyter)


def _no_ari_said(choices: Choices, ari_jupyter: str) -> str:
    """No ``ari`` in the terminal: on a demo site that is where the exercise ends (the site's
    ARI is only in its recording), and the sentence says so instead of reading as a fault."""
    site = choices.site_name
    if _SITE_NAME.fullmatch(site):
        return _said(choices, "handoff.script.no_ari_demo", site=site, checkpoint="$ARI_CHECKPOINT_DIR",
                     ari_jupyter=ari_jupyter)
    return _said(choices, "handoff.script.no_ari")


def _comment(choices: Choices, message_id: str, **variables: str) -> str:
    """A comment line of the script's in the run's language (a person reads the script before
    running it); one line, or bash would run the rest."""
    sentence = t(message_id, choices.lang or "en", **variables)
    _require(not has_control_chars(sentence), f"comment {message_id!r} must be one line: {sentence!r}")
    return f"# {sentence}"


def _said(choices: Choices, message_id: str, **variables: str) -> str:
    """A sentence of the script's in the run's language, inside double quotes so that its
    ``$name`` parameters expand. The catalogs' sentences hold nothing else bash would read
    inside double quotes (a test keeps them so); this refuses one that would."""
    sentence = t(message_id, choices.lang or "en", **variables)
    bare = sentence
    for variable in variables.values():
        bare = bare.replace(variable, "")
    _require(not any(ch in bare for ch in '"$`\\!'),
             f"catalog sentence {message_id!r} cannot go inside double quotes: {sentence!r}")
    return f'"{sentence}"'


def handoff_command(script_path: str) -> str:
    return f"bash {shlex.quote(script_path)}"


# -- workflow.yaml ---------------------------------------------------------------------------

REPRODUCE_STAGE = "ors_run_reproduce"

def reproduce_inputs(choices: Choices) -> dict[str, Any]:
    """Literal ``ors_run_reproduce`` inputs: caller arguments beat the rubric's profile.

    Only non-default values are set (ARI treats 0/""/[] as "take it from the rubric").
    """
    return {"sandbox_kind": "slurm", **reproduce_args(choices).to_json()}


def rubric_nodes(choices: Choices) -> Text:
    """What happens to step 3's node count when no workflow.yaml carries it (no ARI where the
    checkpoint is written): ARI takes the count from the paper's rubric. One sentence, said by
    step 3's preview (whose ``--nodes`` is the caller's) and by the checklist after Write."""
    nodes = reproduce_inputs(choices).get("nodes")
    return text("reproduce.nodes_rubric", nodes=nodes) if nodes else text("reproduce.nodes_rubric_none")


def render_workflow_yaml(package_yaml: str, choices: Choices) -> str:
    """ARI's packaged workflow with the reproduce stage's inputs set (spec §2.8, §3.4.2)."""
    import yaml  # ARI's own dependency; imported only when ARI is present

    document = yaml.safe_load(package_yaml)
    stages: Iterable[dict[str, Any]] = (document or {}).get("pipeline") or []
    stage = next((s for s in stages if isinstance(s, dict) and s.get("stage") == REPRODUCE_STAGE), None)
    _require(stage is not None, f"ARI's workflow.yaml has no {REPRODUCE_STAGE} stage")
    inputs = dict(stage.get("inputs") or {})
    inputs.update(reproduce_inputs(choices))
    stage["inputs"] = inputs
    apply_stage_toggles(document, choices.run_settings)
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
