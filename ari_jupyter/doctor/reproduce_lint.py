"""reproduce.sh lint: ARI's compute-node conventions (spec §5) with line numbers and the fix line.

The script runs as ``bash reproduce.sh`` through ARI's wrapper, inside ``sbatch --export ALL``,
as ONE task on the first node of the job. Severity follows the spec's table; L1 and L6 are
errors only when the job spans more than one node. The module and fan-out lines proposed come
from ``ari_jupyter.ari.prelude`` (the same text the wizard and emit use).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..base.bounded_read import NotARegularFile, TooLarge, read_window
from ..ari.errors import NO_GRES_WAY
from ..ari.profile import GPU_KINDS, MPI_KINDS, ExecutionProfile
from ..i18n import message, t
from . import proposals
from ..base.verdict import Finding, translated as _translated
from .script import LAUNCHERS, Command, commands, comment_lines, raw_words


_NODE_LOCAL_PATH = re.compile(r"(?:^|[\s'\"=:(>])(/(?:var/tmp|tmp|local)(?=/|[\s'\";)]|$)\S*)")
_TMPDIR = re.compile(r"\$\{?TMPDIR\b")
_MKTEMP = re.compile(r"\bmktemp\b(?P<args>[^;|&)]*)")
_MKTEMP_DEFAULT = message("doctor.L1.mktemp")
_FANOUT_N = re.compile(r"(?:^|\s)(?:-N\s*\S+|--nodes(?:=|\s+)\S+)")
_FANOUT_n = re.compile(r"(?:^|\s)(?:-n\s*\S+|--ntasks(?:=|\s+)\S+)")
_COUNT_FLAG = re.compile(r"(?:^|\s)(?P<flag>-np?|-N|--ntasks|--nodes|--np)(?:=|\s*)(?P<value>\d+)\b")
_MPI_CHECK = re.compile(r"\b(?:which|command\s+-v|type|hash)\s+(?:-\S+\s+)*(?:mpirun|mpiexec)\b")
_MPI_MODULE = re.compile(r"mpi|hpcx|mvapich|impi", re.IGNORECASE)
_MODULE_INIT = re.compile(r"init/(?:bash|sh)\b|modules\.sh\b|lmod\.sh\b|MODULESHOME|command\s+-v\s+module\b")
_CONDA_ACTIVATE = re.compile(r"\bconda\s+activate\b")
_CONDA_INIT = re.compile(r"(?:(?:^|\s)(?:source|\.)\s+\S*(?:etc/profile\.d/conda\.sh|\.bashrc)\b)|"
                         r"conda\s+shell\.bash\s+hook")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_CUDA_EVIDENCE = re.compile(r"\bnvcc\b|\.cu\b|torch\.cuda|\bcupy\b", re.IGNORECASE)
_RESULTS_CSV = re.compile(r"results/[\w.${}*-]*\.csv")
_CSV_HEADER = re.compile(r"""\b(?:echo|printf)\s+(?:-e\s+)?['"](?P<header>[^'"\n]*,[^'"\n]*)['"].*?results/""")


def profile_dict(profile: Any) -> dict[str, Any]:
    """Accept an ExecutionProfile, a dict (validated with ARI's schema) or None."""
    if profile is None:
        return {}
    if hasattr(profile, "to_json"):
        return dict(profile.to_json())
    if isinstance(profile, Mapping):
        return ExecutionProfile.from_json(dict(profile)).to_json()
    raise TypeError(f"profile must be an ExecutionProfile, a dict or None, not {type(profile).__name__}")


def node_count(nodes: Any, profile: Mapping[str, Any]) -> int | None:
    """Nodes the reproduce job spans: the larger of the allocation's and the profile's request."""
    if nodes is not None and not isinstance(nodes, int):
        nodes = getattr(nodes, "num_nodes", None)
    values = [v for v in (nodes, profile.get("requested_nodes")) if isinstance(v, int) and v > 0]
    return max(values) if values else None


def _launcher_args(cmd: Command) -> str:
    words = list(cmd.words)
    prog = cmd.program
    return " " + " ".join(words[words.index(prog) + 1:]) if prog in words else ""


def _first(cmds: Iterable[Command], predicate) -> Command | None:
    return next((c for c in cmds if predicate(c)), None)


def _l1_shared_fs(cmds: Sequence[Command], multi_node: bool) -> list[Finding]:
    hits: list[tuple[int, str]] = []
    for cmd in cmds:
        match = _NODE_LOCAL_PATH.search(cmd.text)
        if match:
            hits.append((cmd.line, match.group(1)))
            continue
        if _TMPDIR.search(cmd.text):
            hits.append((cmd.line, "$TMPDIR"))
            continue
        mk = _MKTEMP.search(cmd.text)
        if mk and not re.search(r"(?:^|\s)(?:-p\s*\S+|--tmpdir=\S+)", mk.group("args")):
            hits.append((cmd.line, _MKTEMP_DEFAULT))
    if not hits:
        return []
    lines = tuple(n for n, _ in hits)
    where = [message("doctor.L1.where", line=n, what=what) for n, what in hits[:5]]
    return [_translated(Finding(
        "L1", "error" if multi_node else "warning", lines[0],
        t("doctor.L1", "en", where=where),
        t("doctor.L1.fix", "en"),
        lines=lines, cause="node-local path"), "doctor.L1", "doctor.L1.fix", where=where)]


def _l2_mpi_launcher(cmds: Sequence[Command], kind: str | None, modules: Sequence[str]) -> list[Finding]:
    findings = []
    launchers = [c for c in cmds if c.program in ("srun", "mpirun", "mpiexec", "orterun")]
    if kind in MPI_KINDS and not launchers:
        target = _first(cmds, lambda c: c.is_run)
        suggestion = _fanout_for(target) if target else proposals.fanout_line("<program>")
        findings.append(_translated(Finding(
            "L2", "error", target.line if target else None,
            f"L2 MPI launcher: kind={kind} but no line launches through srun or mpirun"
            + (f" (line {target.line} runs {target.program!r} directly)" if target else ""),
            f"launch the program with: {suggestion}", cause="no MPI launcher", suggestion=suggestion,
            lines=(target.line,) if target else ()),
            "doctor.L2.none_direct" if target else "doctor.L2.none", "doctor.L2.none.fix", kind=kind,
            line=target.line if target else "", program=repr(target.program) if target else "",
            suggestion=suggestion))
    for cmd in launchers:
        if cmd.program not in ("mpirun", "mpiexec", "orterun"):
            continue
        before = [c for c in cmds if c.line < cmd.line]
        checked = any(_MPI_CHECK.search(c.text) for c in before)
        loaded = any(c.program in ("module", "ml") and _MPI_MODULE.search(" ".join(c.words[1:]))
                     for c in before)
        if checked or loaded:
            continue
        mpi_modules = [m for m in modules if _MPI_MODULE.search(m)]
        suggestion = (proposals.module_line(mpi_modules) if mpi_modules
                      else 'command -v mpirun >/dev/null || { echo "mpirun not found: load the MPI module" >&2; exit 127; }')
        findings.append(_translated(Finding(
            "L2", "error" if kind in MPI_KINDS else "warning", cmd.line,
            f"L2 MPI launcher: line {cmd.line} calls {cmd.program} without loading an MPI module or "
            "testing `command -v mpirun` first; on compute nodes this is `mpirun: command not found`",
            f"add before line {cmd.line}: {suggestion}", cause="mpirun not guaranteed on PATH",
            suggestion=suggestion,
            lines=(cmd.line,)), "doctor.L2.no_module", "doctor.L2.no_module.fix", line=cmd.line,
            program=cmd.program, suggestion=suggestion))
        break
    return findings


def _l2b_rank_count(cmds: Sequence[Command]) -> list[Finding]:
    hits = []
    for cmd in cmds:
        if cmd.program not in ("srun", "mpirun", "mpiexec", "orterun"):
            continue
        match = _COUNT_FLAG.search(_launcher_args(cmd))
        if match:
            hits.append((cmd, match))
    if not hits:
        return []
    cmd, match = hits[0]
    var = "$SLURM_JOB_NUM_NODES" if match.group("flag") in ("-N", "--nodes") else "$SLURM_NTASKS"
    return [_translated(Finding(
        "L2b", "warning", cmd.line,
        f"L2b rank count: line {cmd.line} hard-codes {match.group('flag')} {match.group('value')}; the "
        "job's shape comes from the profile and may differ",
        f"use {var} instead of {match.group('value')} (e.g. {proposals.fanout_line('<program>')})",
        lines=tuple(c.line for c, _ in hits), cause="hard-coded rank count"),
        "doctor.L2b.hard_coded", "doctor.L2b.hard_coded.fix", line=cmd.line, flag=match.group("flag"),
        value=match.group("value"), var=var, fanout=proposals.fanout_line("<program>"))]


def _l3_gres(profile: Mapping[str, Any], has_gres: bool | None, allow_no_gres: bool) -> list[Finding]:
    wants = profile.get("gpu_type") or profile.get("requested_gpus_per_task") or profile.get("requested_gpus_per_node")
    if not wants or has_gres is True:
        return []
    if has_gres is None:
        return [_translated(Finding(
            "L3", "info", None,
            "L3 GRES: the profile requests GPUs; ARI refuses to submit when `sinfo -h -o %G` shows no GRES",
            "check `sinfo -h -o %G` on this cluster (the wizard's gres probe does it)", cause="GRES unknown"),
            "doctor.L3.unknown", "doctor.L3.unknown.fix")]
    if allow_no_gres:
        return [_translated(Finding(
            "L3", "info", None,
            "L3 GRES: no GRES on this cluster and ARI_SLURM_ALLOW_NO_GRES=1: ARI drops every GPU flag "
            "(the job still sees the node's GPUs when the site does not confine them)",
            "nothing to do if that is intended", cause="GPU flags dropped"),
            "doctor.L3.dropped", "doctor.L3.dropped.fix")]
    return [_translated(Finding(
        "L3", "error", None,
        "L3 GRES: the profile requests GPUs (gpu_type / requested_gpus_*) but this cluster has no GRES; "
        "ARI will raise \"GPU resources requested ... no GRES configured\" before submitting",
        t(NO_GRES_WAY, "en"), cause="GPUs requested without GRES"),
        "doctor.L3.no_gres", NO_GRES_WAY)]


def _l4_conda(cmds: Sequence[Command]) -> list[Finding]:
    for cmd in cmds:
        if not _CONDA_ACTIVATE.search(cmd.text):
            continue
        if any(_CONDA_INIT.search(c.text) for c in cmds if c.line <= cmd.line):
            continue
        line = 'eval "$(conda shell.bash hook)"'
        return [_translated(Finding(
            "L4", "error", cmd.line,
            f"L4 Python env: line {cmd.line} runs `conda activate` but conda is not initialised; a "
            "bash script does not read ~/.bashrc, so this fails with CommandNotFoundError",
            f"add before line {cmd.line}: {line}", lines=(cmd.line,), cause="conda not initialised",
            suggestion=line), "doctor.L4.conda", "doctor.L4.conda.fix", line=cmd.line, suggestion=line)]
    return []


def _contains_in_order(words: Sequence[str], wanted: Sequence[str]) -> bool:
    it = iter(words)
    return all(any(w == item for w in it) for item in wanted)


def _l5_modules(cmds: Sequence[Command], modules: Sequence[str]) -> list[Finding]:
    findings = []
    module_cmds = [c for c in cmds if c.program in ("module", "ml")]
    first_work = _first(cmds, lambda c: c.is_build or c.is_run)
    if modules:
        suggestion = proposals.module_line(modules)
        loads = [c for c in module_cmds if c.program == "ml" or (len(c.words) > 1 and c.words[1] in ("load", "add"))]
        complete = [c for c in loads if _contains_in_order(c.words[2 if c.program == "module" else 1:], modules)]
        if not complete:
            where = first_work.line if first_work else None
            findings.append(_translated(Finding(
                "L5", "error", where,
                "L5 module loads: no `module load` line loads " + " ".join(modules)
                + " (the profile's module_loads, in order)",
                f"add at the top{f' (before line {where})' if where else ''}: {suggestion}",
                lines=(where,) if where else (), cause="module_loads not loaded", suggestion=suggestion),
                "doctor.L5.missing", "doctor.L5.missing.fix_before" if where else "doctor.L5.missing.fix",
                modules=" ".join(modules), line=where or "", suggestion=suggestion))
        elif first_work and complete[0].line > first_work.line:
            findings.append(_translated(Finding(
                "L5", "error", complete[0].line,
                f"L5 module loads: the module line {complete[0].line} comes after line {first_work.line}, "
                "which already builds or runs",
                f"move it before line {first_work.line}: {suggestion}",
                lines=(complete[0].line, first_work.line), cause="module load too late",
                suggestion=suggestion), "doctor.L5.late", "doctor.L5.late.fix",
                line=complete[0].line, work_line=first_work.line, suggestion=suggestion))
    if module_cmds:
        first_module = module_cmds[0]
        if not any(_MODULE_INIT.search(c.text) for c in cmds if c.line < first_module.line):
            init = proposals.module_init_block()
            findings.append(_translated(Finding(
                "L5", "warning", first_module.line,
                f"L5 module command: line {first_module.line} uses `module`, which a non-login bash may "
                "not define",
                f"add before line {first_module.line}:\n{init}", lines=(first_module.line,),
                cause="module not initialised", suggestion=init),
                "doctor.L5.init", "doctor.L5.init.fix", line=first_module.line, init=init))
    return findings


def _l6_fanout(cmds: Sequence[Command], nodes: int | None, script_dir: str | None = None) -> list[Finding]:
    if not nodes or nodes < 2:
        return []
    sruns = [c for c in cmds if c.program == "srun"]
    good = [c for c in sruns if _FANOUT_N.search(_launcher_args(c)) and _FANOUT_n.search(_launcher_args(c))]
    if good:
        return []
    mpiruns = [c for c in cmds if c.program in ("mpirun", "mpiexec", "orterun")]
    if sruns:
        bad = sruns[0]
        nested = _follow(bad, _called_script(raw_words(_rest_after(bad, "srun")), as_program=True),
                         _working_dirs(cmds, script_dir).get(bad.line))
        if nested is not None and nested.launcher is not None:
            return [_nested_srun(bad, nested)]
        fixed = proposals.fanout_line(_rest_after(bad, "srun"))
        return [_translated(Finding(
            "L6", "error", bad.line,
            f"L6 multi-node fan-out: the job has {nodes} nodes but the srun on line {bad.line} does not "
            f"start it as `{proposals.launcher_prefix()} ...`",
            f"replace line {bad.line} with: {fixed}", lines=(bad.line,), cause="srun without -N/-n",
            suggestion=fixed), "doctor.L6.srun", "doctor.L6.replace.fix", nodes=nodes, line=bad.line,
            prefix=proposals.launcher_prefix(), fixed=fixed)]
    if mpiruns:
        cmd = mpiruns[0]
        fixed = proposals.fanout_line(_rest_after(cmd, cmd.program))
        return [_translated(Finding(
            "L6", "warning", cmd.line,
            f"L6 multi-node fan-out: the job has {nodes} nodes and line {cmd.line} relies on mpirun to "
            "spread ranks; that works only when the MPI library is built with SLURM support",
            f"prefer srun: replace line {cmd.line} with: {fixed}",
            lines=(cmd.line,), cause="fan-out through mpirun"),
            "doctor.L6.mpirun", "doctor.L6.mpirun.fix", nodes=nodes, line=cmd.line, fixed=fixed)]
    followed = _followed_scripts(cmds, script_dir)
    inner = next((f for f in followed if f.launcher is not None), None)
    if inner is not None:
        return [_fanout_inside(inner, nodes)]
    unread = next((f for f in followed if f.reason), None)
    if unread is not None:
        return [_unread_script(unread, nodes)]
    target = _first(cmds, lambda c: c.is_run)
    if target is None:
        return [_translated(Finding(
            "L6", "error", None,
            f"L6 multi-node fan-out: the job has {nodes} nodes but no line starts tasks with srun; "
            "everything runs as one task on the first node",
            f"launch the program with: {proposals.fanout_line('<program>')}", cause="no srun fan-out"),
            "doctor.L6.none", "doctor.L6.none.fix", nodes=nodes, fixed=proposals.fanout_line("<program>"))]
    fixed = _fanout_for(target)
    guard = ""
    fix_id = "doctor.L6.replace.fix"
    if not any("SLURM_NTASKS:=" in c.text or "SLURM_NTASKS=" in c.text for c in cmds):
        guard = f" (and, if the job may be submitted without --ntasks, before it: {proposals.ntasks_default_line()})"
        fix_id = "doctor.L6.replace_guard.fix"
    return [_translated(Finding(
        "L6", "error", target.line,
        f"L6 multi-node fan-out: the job has {nodes} nodes but line {target.line} runs "
        f"{target.text.strip()!r} as one task on the first node (no srun fan-out)",
        f"replace line {target.line} with: {fixed}{guard}", lines=(target.line,), cause="no srun fan-out",
        suggestion=fixed), "doctor.L6.one_task", fix_id, nodes=nodes, line=target.line,
        command=repr(target.text.strip()), fixed=fixed, ntasks_line=proposals.ntasks_default_line())]


SCRIPT_CAP = 256 * 1024
"""The most of a called script the linter reads; a larger one is reported as not read."""
_SHELLS = ("bash", "sh", "dash", "zsh", "ksh")
_SOURCING = ("source", ".")
_DIRNAME_OF_SCRIPT = re.compile(r"^\$\(\s*dirname\s+[\"']?\$(?:0|\{0\}|\{?BASH_SOURCE(?:\[0\])?\}?)[\"']?\s*\)")
_LITERAL_PATH = re.compile(r"^[\w.+@,/-]+$")


@dataclass(frozen=True)
class _Followed:
    """A script a reproduce.sh line runs, read one level down (never further)."""

    cmd: Command
    script: str
    """As the line names it."""
    launcher: Command | None = None
    """The called script's first srun/mpirun line, when it has one."""
    reason: str = ""
    """Why the script could not be read (empty when it was)."""


def _called_script(words: Sequence[str], *, as_program: bool = False) -> str | None:
    """The script a command's words run: ``bash x.sh``, ``sh x.sh``, ``./x.sh``, ``source x.sh``,
    ``. x.sh`` (``bash -c ...`` runs no script file); ``as_program``: what srun starts (``x.sh``)."""
    words = list(words)
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    if not words:
        return None
    head, rest = words[0], words[1:]
    if head in _SHELLS or head in _SOURCING:
        while rest and rest[0].startswith("-"):
            if rest[0] in ("-c", "-s", "--"):
                return None if rest[0] != "--" else (rest[1] if len(rest) > 1 else None)
            rest = rest[1:]
        return rest[0] if rest else None
    if head.endswith((".sh", ".bash")) and (as_program or head.startswith(("./", "../"))):
        return head  # ./app (a program, not a script) is not read
    return None


def _working_dirs(cmds: Sequence[Command], script_dir: str | None) -> dict[int, str | None]:
    """The directory each line runs in, following ``cd`` lines from the reproduce.sh's folder
    (``cd "$(dirname "$0")/code"`` included); None once a ``cd`` goes somewhere not literal."""
    here: str | None = script_dir
    out: dict[int, str | None] = {}
    for cmd in cmds:
        out[cmd.line] = here
        if cmd.program != "cd" or len(cmd.words) != 2 or cmd.words[0] != "cd":
            continue
        target = cmd.words[1]
        match = _DIRNAME_OF_SCRIPT.match(target)
        if match:
            target = (script_dir or "") + target[match.end():] if script_dir else ""
        if here is None or not target or not _LITERAL_PATH.match(target):
            here = None
            continue
        here = os.path.normpath(os.path.join(here, target))
    return out


def _read_script(path: str) -> tuple[str | None, str | dict]:
    """A called script's text, or why not: a regular file of at most SCRIPT_CAP bytes."""
    try:
        return read_window(path, cap=SCRIPT_CAP, head=SCRIPT_CAP, tail=0).text, ""
    except NotARegularFile:
        return None, message("doctor.L6.script.not_regular")
    except TooLarge as exc:
        return None, message("doctor.L6.script.too_large", size=exc.params.get("size", ""),
                             cap=exc.params.get("cap", ""))
    except OSError as exc:
        return None, exc.strerror or str(exc)


def _follow(cmd: Command, script: str | None, here: str | None) -> _Followed | None:
    """Read the script ``cmd`` runs (relative to the directory the line runs in) and find its
    first srun/mpirun line; no script that script runs is followed."""
    if not script:
        return None
    if not _LITERAL_PATH.match(script):
        return _Followed(cmd, script, reason=message("doctor.L6.script.not_literal"))
    if here is None and not os.path.isabs(script):
        return _Followed(cmd, script, reason=message("doctor.L6.script.no_folder"))
    text, reason = _read_script(os.path.join(here or "", script))
    if text is None:
        return _Followed(cmd, script, reason=reason)
    launcher = next((c for c in commands(text) if c.program in LAUNCHERS), None)
    return _Followed(cmd, script, launcher=launcher)


def _followed_scripts(cmds: Sequence[Command], script_dir: str | None) -> list[_Followed]:
    dirs = _working_dirs(cmds, script_dir)
    out = []
    for cmd in cmds:
        followed = _follow(cmd, _called_script(cmd.words[cmd.words.index(cmd.program):]
                                               if cmd.program in cmd.words else ()), dirs.get(cmd.line))
        if followed is not None:
            out.append(followed)
    return out


def _fanout_inside(inner: _Followed, nodes: int) -> Finding:
    """The fan-out is in the script the line calls: said, not an error (checked one level down)."""
    launcher = inner.launcher
    assert launcher is not None
    command = repr(inner.cmd.text.strip())
    return _translated(Finding(
        "L6", "info", inner.cmd.line,
        t("doctor.L6.inside", "en", nodes=nodes, line=inner.cmd.line, command=command, script=inner.script,
          inner_line=launcher.line, launcher=launcher.program),
        t("doctor.L6.inside.fix", "en", script=inner.script, launcher=launcher.program),
        lines=(inner.cmd.line,), cause="fan-out in the called script"),
        "doctor.L6.inside", "doctor.L6.inside.fix", nodes=nodes, line=inner.cmd.line, command=command,
        script=inner.script, inner_line=launcher.line, launcher=launcher.program)


def _unread_script(unread: _Followed, nodes: int) -> Finding:
    """The line calls a script the linter could not read: whether it fans out is unknown."""
    command = repr(unread.cmd.text.strip())
    fanout = proposals.fanout_line("<program>")
    return _translated(Finding(
        "L6", "warning", unread.cmd.line,
        t("doctor.L6.unread", "en", nodes=nodes, line=unread.cmd.line, command=command,
          script=unread.script, reason=unread.reason),
        t("doctor.L6.unread.fix", "en", script=unread.script, line=unread.cmd.line, fanout=fanout),
        lines=(unread.cmd.line,), cause="called script not read"),
        "doctor.L6.unread", "doctor.L6.unread.fix", nodes=nodes, line=unread.cmd.line, command=command,
        script=unread.script, reason=unread.reason, fanout=fanout)


def _nested_srun(bad: Command, nested: _Followed) -> Finding:
    """``srun ... x.sh`` where x.sh calls srun itself: every task would start its own srun."""
    launcher = nested.launcher
    assert launcher is not None
    return _translated(Finding(
        "L6", "error", bad.line,
        t("doctor.L6.nested", "en", line=bad.line, script=nested.script, inner_line=launcher.line,
          launcher=launcher.program),
        t("doctor.L6.nested.fix", "en", line=bad.line, script=nested.script, launcher=launcher.program),
        lines=(bad.line,), cause="srun around a script that fans out"),
        "doctor.L6.nested", "doctor.L6.nested.fix", line=bad.line, script=nested.script,
        inner_line=launcher.line, launcher=launcher.program)


def _fanout_for(cmd: Command) -> str:
    """The command as written with srun in front; leading ``VAR=x`` assignments stay in front
    of srun (srun cannot execute an assignment)."""
    words = raw_words(cmd.text)
    env = []
    while words and _ASSIGNMENT.match(words[0]):
        env.append(words.pop(0))
    return " ".join(env + [proposals.fanout_line(" ".join(words))])


_VALUE_FLAGS = frozenset({"-N", "-n", "-np", "-c", "-p", "-H", "-x", "--nodes", "--ntasks", "--cpus-per-task",
                          "--mpi", "--partition", "--ntasks-per-node", "--npernode", "--host", "--hostfile",
                          "--map-by", "--bind-to"})


def _rest_after(cmd: Command, program: str) -> str:
    """The command an srun/mpirun line launches, as written, without the launcher and its options."""
    words = raw_words(cmd.text)
    i = words.index(program) + 1 if program in words else 1
    while i < len(words) and words[i].startswith("-"):
        flag = words[i]
        i += 1
        if "=" not in flag and flag in _VALUE_FLAGS and i < len(words):
            i += 1
    rest = words[i:]
    return " ".join(rest) if rest else "<program>"


def _l7_timeout(cmds: Sequence[Command]) -> list[Finding]:
    runs = [c for c in cmds if c.is_run]
    if not runs or any(re.search(r"(?:^|[\s;&|])timeout\s", " " + c.text) for c in cmds):
        return []
    first = runs[0]
    return [_translated(Finding(
        "L7", "info", first.line,
        f"L7 timeout wrapping: no stage is wrapped in `timeout`; a hang on line {first.line} uses the "
        "whole walltime and leaves no partial results",
        f"wrap long stages, e.g. line {first.line}: timeout <seconds below max_runtime_sec> {first.text.strip()}",
        lines=(first.line,), cause="no timeout"),
        "doctor.L7.timeout", "doctor.L7.timeout.fix", line=first.line, command=first.text.strip())]


def _g1_cuda(text: str, kind: str | None) -> list[Finding]:
    if kind not in GPU_KINDS or _CUDA_EVIDENCE.search(text):
        return []
    if kind == "mpi":  # a CPU-sounding kind: say that ARI's prompt puts it with the GPU kinds
        said, message_id = ("G1 GPU kind: ARI's replicator prompt asks for CUDA for kind=mpi too "
                            "(it lists mpi with the GPU kinds), but reproduce.sh shows no CUDA use "
                            "(nvcc, .cu, torch.cuda, cupy)"), "doctor.G1.cuda_mpi"
    else:
        said, message_id = (f"G1 GPU kind: kind={kind} but reproduce.sh shows no CUDA use (nvcc, "
                            ".cu, torch.cuda, cupy); ARI's prompt forbids a NumPy/CPU fallback"
                            ), "doctor.G1.cuda"
    return [_translated(Finding(
        "G1", "warning", None, said,
        "build or run the CUDA code path (e.g. `nvcc -O3 -o app app.cu`, or python with torch.cuda)",
        cause="no CUDA evidence"), message_id, "doctor.G1.cuda.fix", kind=kind)]


def _g2_csv(text: str, profile: Mapping[str, Any]) -> list[Finding]:
    if profile.get("kind") not in MPI_KINDS:
        return []
    columns = list(profile.get("metric_columns") or [])
    if profile.get("accepts_reduced_scale") is True and columns:
        columns.append("paper_paper_scale_point")
    if not _RESULTS_CSV.search(text):
        return [_translated(Finding(
            "G2", "warning", None,
            "G2 CSV contract: reproduce.sh does not mention submission/results/*.csv; rank 0 must write it"
            + (f" with header {','.join(columns)}" if columns else ""),
            "have rank 0 write submission/results/<name>.csv (submission/mpi_aggregate.py does it)",
            cause="no results CSV"),
            "doctor.G2.no_csv_header" if columns else "doctor.G2.no_csv", "doctor.G2.no_csv.fix",
            columns=",".join(columns))]
    for number, raw in enumerate(text.splitlines(), start=1):
        match = _CSV_HEADER.search(raw)
        if match and columns:
            header = [h.strip() for h in match.group("header").replace("\\n", "").split(",")]
            if header != columns:
                return [_translated(Finding(
                    "G2", "warning", number,
                    f"G2 CSV contract: line {number} writes header {','.join(header)} but the profile's "
                    f"metric_columns require {','.join(columns)}",
                    f"write exactly: {','.join(columns)}", lines=(number,), cause="CSV header mismatch"),
                    "doctor.G2.header", "doctor.G2.header.fix", line=number, header=",".join(header),
                    columns=",".join(columns))]
    return []


def _g3_artifacts(text: str, expected: Sequence[str]) -> list[Finding]:
    findings = []
    absolute = [p for p in expected if p.startswith("/")]
    missing = [p for p in expected if not p.startswith("/") and p not in text]
    if absolute:
        paths = ", ".join(absolute)
        findings.append(_translated(Finding(
            "G3", "warning", None, t("doctor.G3.absolute", "en", paths=paths),
            t("doctor.G3.absolute.fix", "en"), cause="absolute artifact"),
            "doctor.G3.absolute", "doctor.G3.absolute.fix", paths=paths))
    if missing:
        paths = ", ".join(missing)
        findings.append(_translated(Finding(
            "G3", "warning", None, t("doctor.G3.missing", "en", paths=paths),
            t("doctor.G3.missing.fix", "en"), cause="artifact not produced"),
            "doctor.G3.missing", "doctor.G3.missing.fix", paths=paths))
    return findings


def _s2_sbatch_lines(text: str) -> list[Finding]:
    lines = tuple(comment_lines(text, "#SBATCH"))
    if not lines:
        return []
    return [_translated(Finding(
        "S2", "info", lines[0],
        f"S2 #SBATCH lines are ignored (line{'s' if len(lines) > 1 else ''} "
        f"{', '.join(map(str, lines))}): ARI submits its own wrapper with the resources from the profile",
        "set nodes, tasks, GPUs, memory and time in the execution profile / wizard instead",
        lines=lines, cause="#SBATCH in reproduce.sh"),
        "doctor.S2.sbatch.one" if len(lines) == 1 else "doctor.S2.sbatch.many", "doctor.S2.sbatch.fix",
        lines=", ".join(map(str, lines)))]


def lint_reproduce(text: str, *, profile: Any = None, nodes: Any = None, has_gres: bool | None = None,
                   allow_no_gres: bool = False, expected_artifacts: Sequence[str] = (),
                   script_dir: str | None = None) -> list[Finding]:
    """All §5 rules (L1-L7, G1-G3, S2) for one reproduce.sh text. ``script_dir``: the folder the
    reproduce.sh is in, where L6 reads a script a line runs (``bash x.sh``), one level down."""
    prof = profile_dict(profile)
    count = node_count(nodes, prof)
    cmds = commands(text)
    kind = prof.get("kind")
    modules = list(prof.get("module_loads") or [])
    findings: list[Finding] = []
    findings += _l1_shared_fs(cmds, bool(count and count > 1))
    findings += _l2_mpi_launcher(cmds, kind, modules)
    findings += _l2b_rank_count(cmds)
    findings += _l3_gres(prof, has_gres, allow_no_gres)
    findings += _l4_conda(cmds)
    findings += _l5_modules(cmds, modules)
    findings += _l6_fanout(cmds, count, script_dir)
    findings += _l7_timeout(cmds)
    findings += _g1_cuda(text, kind)
    findings += _g2_csv(text, prof)
    findings += _g3_artifacts(text, list(expected_artifacts))
    findings += _s2_sbatch_lines(text)
    return findings
