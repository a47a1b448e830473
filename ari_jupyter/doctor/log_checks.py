"""Log checks that need more than one line: where the run landed, where the ranks ran."""
from __future__ import annotations

import os
import re
from dataclasses import replace

from . import proposals
from ..base.verdict import Finding, translated as _translated
from ..i18n import message as nested, t
from .detect import RANK_ON_HOST, job_output_lines, is_job_output
from ..base.bounded_read import read_window
from ..slurm.cancel_record import CAP, RECORD, parse_cancels

_ARI_DEFAULT_CHECKPOINT = re.compile(
    r"(?P<path>(?:(?:^|(?<=[\s'\"]))(?:[^\s'\"]*/)?|(?<=[=(:]))"
    r"workspace/checkpoints/(?P<run>\d{8,14}_[\w.+-]+))")
"""A path starts where a word starts (after a blank or a quote: one scan of the word for its
last ``/``) or right after ``=``, ``(`` or ``:`` with no folder before it; a start after each
``=``/``(``/``:`` with folders before the checkpoint rescanned the rest of the word every time
(quadratic on a line of them)."""
_EMPTY_CHECKPOINT_ENV = re.compile(r"\bARI_CHECKPOINT_DIR=(?:''|\"\")?\s*$")
_RUN_ID = re.compile(r"^\d{8,14}_")


def _same_dir(a: str, b: str) -> bool:
    return os.path.normpath(a.rstrip("/")) == os.path.normpath(b.rstrip("/"))


def checkpoint_ignored(text: str, checkpoint_dir: str | None = None) -> list[Finding]:
    """A run that minted its own checkpoint under $PWD/workspace instead of using the wizard's.

    Without ARI_CHECKPOINT_DIR, ``ari run`` writes to ``./workspace/checkpoints/<new id>``
    relative to the terminal's working directory (spec §0 item 1). When the expected checkpoint
    is known, any other checkpoint path in the log is an error; otherwise a path in ARI's
    default layout is reported as a warning to verify.
    """
    expected_run = os.path.basename(checkpoint_dir.rstrip("/")) if checkpoint_dir else None
    landed: list[tuple[int, str]] = []
    unset_lines: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if _EMPTY_CHECKPOINT_ENV.search(line):
            unset_lines.append(number)
        for match in _ARI_DEFAULT_CHECKPOINT.finditer(line):
            path = match.group("path")
            if checkpoint_dir and (match.group("run") == expected_run
                                   or (path.startswith("/") and _same_dir(path, checkpoint_dir))):
                continue
            landed.append((number, path))
            break
    fix = ("export ARI_CHECKPOINT_DIR=<absolute wizard checkpoint> in the terminal before `ari run` "
           "(run the wizard's hand-off script, which does it), then start again; move or delete the "
           "stray workspace/checkpoints/<id> directory")
    fix_id = "doctor.checkpoint-dir-ignored.fix"
    if checkpoint_dir:
        fix_id = "doctor.checkpoint-dir-ignored.fix_known"
        fix = (f"export ARI_CHECKPOINT_DIR={checkpoint_dir} before `ari run` (the hand-off script does "
               "it), then start again; remove the stray run directory")
    findings = []
    if landed:
        lines = tuple(n for n, _ in landed)
        where = landed[0][1]
        if checkpoint_dir:
            message = (f"the run wrote to {where!r} (line {lines[0]}), not to the wizard's checkpoint "
                       f"{checkpoint_dir!r}. Cause: ARI_CHECKPOINT_DIR was not exported in the terminal, "
                       "so `ari run` minted a new run under $PWD/workspace/checkpoints.")
            severity, message_id = "error", "doctor.checkpoint-dir-ignored.elsewhere"
        else:
            message = (f"the run used ARI's default location {where!r} (line {lines[0]}). If the wizard "
                       "wrote a checkpoint elsewhere, ARI_CHECKPOINT_DIR was not exported and the run "
                       "ignored it.")
            severity, message_id = "warning", "doctor.checkpoint-dir-ignored.default"
        findings.append(_translated(
            Finding("checkpoint-dir-ignored", severity, lines[0], message, fix, lines=lines,
                    cause="ARI_CHECKPOINT_DIR not exported"),
            message_id, fix_id, where=repr(where), line=lines[0], checkpoint_repr=repr(checkpoint_dir),
            checkpoint=checkpoint_dir or ""))
    if unset_lines:
        findings.append(_translated(Finding(
            "checkpoint-dir-ignored", "error", unset_lines[0],
            f"ARI_CHECKPOINT_DIR is empty in the run's environment (line {unset_lines[0]}); `ari run` "
            "then writes to $PWD/workspace/checkpoints/<new id> and ignores the wizard's checkpoint.",
            fix, lines=tuple(unset_lines), cause="ARI_CHECKPOINT_DIR not exported"),
            "doctor.checkpoint-dir-ignored.empty", fix_id, line=unset_lines[0],
            checkpoint=checkpoint_dir or ""))
    return findings


def checkpoint_from_log_path(path: str) -> str | None:
    """The checkpoint a log was written into (the hand-off script tees into the checkpoint)."""
    parent = os.path.dirname(os.path.abspath(path))
    return parent if _RUN_ID.match(os.path.basename(parent)) else None


_RANK_ON_HOST = (
    RANK_ON_HOST,
    re.compile(r"^\s*(?P<rank>\d+):\s+(?P<host>[A-Za-z][\w-]*(?:\.[\w-]+)*)\s*$"),  # srun -l hostname
)
_NODE_COUNT = re.compile(r"\bSLURM_(?:JOB_NUM_NODES|NNODES)=(\d+)\b")


def ranks_on_one_node(text: str, nodes: int | None = None, fanout_fix: str = "") -> list[Finding]:
    """The seed's "all ranks landed on node 1": several ranks, one host, a multi-node job."""
    expected = nodes
    ranks: dict[int, str] = {}
    first_line = None
    for number, line in enumerate(text.splitlines(), start=1):
        count = _NODE_COUNT.search(line)
        if count and expected is None:
            expected = int(count.group(1))
        for pattern in _RANK_ON_HOST:
            match = pattern.search(line)
            if match:
                ranks.setdefault(int(match.group("rank")), match.group("host"))
                first_line = first_line or number
                break
    hosts = set(ranks.values())
    if not expected or expected < 2 or len(ranks) < 2 or len(hosts) != 1:
        return []
    host = hosts.pop()
    fix = fanout_fix or f"launch the program with `{proposals.fanout_line('<command>')}`"
    fix_id, fix_params = "doctor.ranks-on-one-node.fix", {"fanout": proposals.fanout_line("<command>")}
    if fanout_fix.startswith(_ADD_FANOUT):
        fix_id, fix_params = "doctor.ranks-on-one-node.fix_reproduce", {"fanout": fanout_fix[len(_ADD_FANOUT):]}
    elif fanout_fix:
        fix_id, fix_params = "", {}
    return [_translated(Finding(
        "ranks-on-one-node", "error", first_line,
        f"all {len(ranks)} ranks ran on {host} although the job has {expected} nodes (from line "
        f"{first_line}). Cause: reproduce.sh has no srun fan-out, so everything ran as one task on the "
        "first node.",
        fix, cause="reproduce.sh lacks the srun fan-out"),
        "doctor.ranks-on-one-node", fix_id, count=len(ranks), host=host, nodes=expected,
        line=first_line, **fix_params)]


_ADD_FANOUT = "add the fan-out to reproduce.sh: "


_ARI_COMMAND = re.compile(r"^\s*(?:[A-Za-z_]\w*=\S*\s+)*(?:exec\s+|nohup\s+)?ari\s+(?P<sub>run|resume|paper)\b")
_EXPORTS_CHECKPOINT = re.compile(r"^\s*(?:export\s+ARI_CHECKPOINT_DIR=(?P<value>\S+)|"
                                 r"ARI_CHECKPOINT_DIR=(?P<inline>\S+)\s+(?:exec\s+)?ari\s)")


def handoff_without_checkpoint(text: str) -> list[Finding]:
    """A script that starts ``ari run`` without exporting ARI_CHECKPOINT_DIR first: the run will
    ignore the wizard's checkpoint and mint ./workspace/checkpoints/<new id> (spec §0 item 1)."""
    exported = False
    for number, line in enumerate(text.splitlines(), start=1):
        match = _EXPORTS_CHECKPOINT.match(line)
        if match and (match.group("value") or match.group("inline")) not in ("''", '""'):
            exported = True
            if match.group("inline"):
                continue
        command = _ARI_COMMAND.match(line)
        if command and not exported:
            return [_translated(Finding(
                "checkpoint-dir-ignored", "error", number,
                f"line {number} starts `ari {command.group('sub')}` without ARI_CHECKPOINT_DIR exported: "
                "ARI will ignore the wizard's checkpoint and write to $PWD/workspace/checkpoints/<new id>",
                f"add before line {number}: export ARI_CHECKPOINT_DIR=<absolute checkpoint dir>",
                lines=(number,), cause="ARI_CHECKPOINT_DIR not exported",
                suggestion="export ARI_CHECKPOINT_DIR=<absolute checkpoint dir>"),
                "doctor.handoff-without-checkpoint", "doctor.handoff-without-checkpoint.fix",
                line=number, command=command.group("sub"))]
    return []


_SKILL_FILE = re.compile(r'^\s*File "(?P<path>[^"]*/ari-skill-(?P<skill>[\w-]+)/[^"]*)", line \d+')
_IMPORT_FAILURE = re.compile(
    r"^(?P<error>ModuleNotFoundError|ImportError|AttributeError): (?P<detail>.*)$")
_MISSING_MODULE = re.compile(r"No module named '(?P<module>[\w.]+)'")
_MCP_2 = re.compile(r"This is mcp 2\.x|'Server' object has no attribute '(?:list_tools|call_tool)'")


def skill_import_failed(text: str) -> list[Finding]:
    """A skill server that died while importing: ``ari run`` goes on without its tools.

    ARI starts each skill (``ari-skill-<name>/src/server.py``) as its own process and logs its
    traceback; the last traceback line names the error, a ``File`` line above it the skill.
    """
    lines = text.splitlines()
    failures: list[tuple[int, str, str]] = []  # (line, skill, error line)
    skill = None
    for number, line in enumerate(lines, start=1):
        if line.startswith("Traceback (most recent call last):"):
            skill = None
            continue
        if (match := _SKILL_FILE.match(line)) and skill is None:
            skill = match.group("skill")
            continue
        if skill is not None and (match := _IMPORT_FAILURE.match(line)):
            failures.append((number, skill, line.strip()))
            skill = None
    if not failures:
        return []
    skills = list(dict.fromkeys(skill for _, skill, _ in failures))
    modules = list(dict.fromkeys(m.group("module") for _, _, error in failures
                                 if (m := _MISSING_MODULE.search(error)) and not _MCP_2.search(error)))
    first_line, _, first_error = failures[0]
    example = first_error if len(first_error) <= 120 else first_error[:117] + "..."
    if any(_MCP_2.search(error) for _, _, error in failures):
        cause = ("mcp 2.x is installed in ARI's environment; ARI's skills are written for mcp 1.x "
                 "(`mcp.server.fastmcp`, `Server.list_tools`)")
        fix = "pin it in the environment that runs `ari`: `pip install 'mcp>=1.28.1,<2'`"
    else:
        cause = ("a package the skill imports is not installed in the environment that runs `ari` "
                 "(ari-core does not depend on every skill's packages)")
        fix = ("install it into the environment that runs `ari`: "
               + (f"`pip install {' '.join(modules)}`" if modules else "`pip install <module>`")
               + " (the skill's own `pip install -e ari-skill-<name>` brings its dependencies)")
    names = ", ".join(f"ari-skill-{s}" for s in skills)
    word = "skill" if len(skills) == 1 else "skills"
    message = (f"{word} {names} failed to start ({example!r}, line {first_line}); `ari run` goes on "
               f"without {'its' if len(skills) == 1 else 'their'} tools. Cause: {cause}.")

    kind = "mcp2" if any(_MCP_2.search(error) for _, _, error in failures) else "missing"
    plural = "one" if len(skills) == 1 else "many"
    return [_translated(
        Finding("skill-import-failed", "error", first_line, message,
                fix + "; then start the run again", lines=tuple(n for n, _, _ in failures),
                cause=cause),
        f"doctor.skill-import-failed.{plural}", f"doctor.skill-import-failed.fix_{kind}",
        names=names, example=repr(example), line=first_line,
        cause=nested(f"doctor.skill-import-failed.cause_{kind}"),
        pip=(f"`pip install {' '.join(modules)}`" if modules else "`pip install <module>`"))]


def job_output(text: str, nodes: int | None = None) -> list[Finding]:
    """What the doctor read in a job's output (a reproduce job's log, a BFTS job's
    ``slurm_job_N.out``): its ranks and the nodes they ran on, its metric lines, SLURM's step
    lines - said, so that a clean verdict names what it checked."""
    if not is_job_output(text):
        return []
    found = job_output_lines(text)
    ranks: dict[int, str] = {}
    for _number, line in found["ranks"]:
        match = RANK_ON_HOST.search(line)
        if match:
            ranks.setdefault(int(match.group("rank")), match.group("host"))
    hosts = sorted(set(ranks.values()))
    names = []
    for _number, line in found["metrics"]:
        name = line.split(":", 1)[0].split("=", 1)[0].strip()
        if name not in names:
            names.append(name)
    parts = []
    if ranks:
        parts.append(nested("doctor.job-output.ranks", count=len(ranks), hosts=" ".join(hosts),
                            nodes=len(hosts)))
    if names:
        parts.append(nested("doctor.job-output.metrics", count=len(found["metrics"]),
                            names=", ".join(names[:6]) + (", ..." if len(names) > 6 else "")))
    if found["steps"]:
        parts.append(nested("doctor.job-output.steps", count=len(found["steps"])))
    spread = ""  # the ranks on one node of several: ranks_on_one_node's error says it
    if len(hosts) > 1 and nodes:
        spread = nested("doctor.job-output.spread", count=len(hosts), nodes=nodes)
    english = t("doctor.job-output", "en", parts=parts, spread=spread)
    lines = tuple(n for n, _ in (found["ranks"] + found["metrics"] + found["steps"]))
    return [_translated(Finding(
        "job-output", "info", None, english, t("doctor.job-output.fix", "en"),
        lines=tuple(sorted(lines))[:20], cause="a job's output"),
        "doctor.job-output", "doctor.job-output.fix", parts=parts, spread=spread)]


_CANCELLED_JOB = re.compile(r"\*\*\* JOB (?P<job>\d+(?:_\d+)?) ON \S+ CANCELLED AT", re.IGNORECASE)
_MAX_CHECKPOINTS = 200
"""The most checkpoints beside a workspace's slurm_logs/ whose cancel record is read."""


def cancel_record_dirs(log_path: str | None, checkpoint_dir: str | None = None) -> list[str]:
    """Where a cancel record for a log's job may be: the given checkpoint, the folders above
    the log (a checkpoint's repro_sandbox/ or the checkpoint itself), and for a workspace's
    ``slurm_logs/`` its ``checkpoints/*`` (bounded)."""
    dirs = [checkpoint_dir] if checkpoint_dir else []
    if log_path:
        here = os.path.dirname(os.path.abspath(log_path))
        for folder in (here, os.path.dirname(here)):
            dirs.append(folder)
            below = os.path.join(folder, "checkpoints")
            try:
                names = sorted(os.listdir(below))[:_MAX_CHECKPOINTS]
            except OSError:
                continue
            dirs += [os.path.join(below, name) for name in names if _RUN_ID.match(name)]
    return list(dict.fromkeys(dirs))


def read_cancels(checkpoint: str) -> dict:
    """A checkpoint's cancel record by job id (a regular file, capped); empty when none."""
    try:
        return parse_cancels(read_window(os.path.join(checkpoint, RECORD), cap=CAP, head=CAP, tail=0).text)
    except OSError:
        return {}


def cancel_cause(findings: list[Finding], text: str, record_dirs: list[str]) -> list[Finding]:
    """The catalog's ``job-cancelled`` with its cause: named when a checkpoint's cancel record
    (``slurm.cancel_record``) holds the job, else the guess with the ways to tell."""
    out = []
    for finding in findings:
        if finding.rule != "job-cancelled":
            out.append(finding)
            continue
        match = _CANCELLED_JOB.search(text.splitlines()[finding.line - 1] if finding.line else "")
        job = match.group("job") if match else "<id>"
        records = (read_cancels(d) for d in record_dirs)
        entry = next((record[job] for record in records if job in record), None)
        if entry is None:  # the catalog's guess, with the ways to tell in its fix
            out.append(finding)
            continue
        params = {**finding.params, "job": job,
                  "cause": nested("doctor.job-cancelled.by." + entry["by"], job=job, record=RECORD)}
        fix_id = "doctor.job-cancelled.recorded.fix"
        out.append(replace(finding, message=t("doctor.log_match", "en", **params), severity="info",
                           cause="cancelled through ari-jupyter", fix=t(fix_id, "en", job=job),
                           fix_id=fix_id, params=params))
    return out
