"""``ari-jupyter emit``: write a checkpoint and its hand-off script from flags or a JSON state.

The same core as the wizard: ``WizardState`` (fields, validation), the site's Jupyter config
(``c.AriWizard.*``: workspace, default partition and preset, probe timeouts, suggested
modules, through ``site_defaults.seed_defaults``), the site probes, and ``emit_checkpoint``.
``--from-json`` accepts a state JSON (``WizardState.to_json``) or a ``launch_config.json``
written earlier; flags given on the command line override it, and the config fills only what
is still empty. On a demo site (``--site``) the default workspace is the local demo workspace
(``c.AriWizard.demo_workspace_template``), judged by the site's recorded mounts.
Exit 0 written, 1 refused (bad input, blocking problems, existing or locked checkpoint).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any
from ..base.bounded_read import OPTION_FILE_CAP, read_json_bounded, read_text_bounded
from ._run_settings_flags import FlagError, add_run_settings_flags, apply_run_settings_flags
from ..i18n import Text, error_text, listed, render, t
from . import output_lang
from .probe import check_name
from ._columns import hang, terminal_width
from ._localized import error_line
from ..ari.profile import PRESETS, ExecutionProfile
from ..ari.render import LAUNCH_CONFIG_KEY
from ..ari.run_settings import DEFAULT_PRESET
from ..checkpoint.emit import EmitBlocked, EmitError, _is_shared_fs_problem, emit_checkpoint
from ..hosts.host import SiteError, list_sites
from ..wizard.config import open_host
from ..wizard.session import settle_for_write
from ..wizard.state import StateError, WizardState, min_expected_metric_of, resource_value
from ._config import command_config
from ._errors import cannot_read
from ._flags import speak
from ._progress import LiveChecks, wants_live_line


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "emit", help="write a checkpoint (experiment.md, .env, launch_config.json) and hand-off script",
        description="Write <workspace>/checkpoints/<run_id>/ and <workspace>/launch/<run_id>.sh.")
    p.add_argument("--from-json", metavar="FILE", help="wizard state JSON or an earlier launch_config.json")
    p.add_argument("--title", help="one-line experiment title (also the run id slug)")
    goal = p.add_mutually_exclusive_group()
    goal.add_argument("--goal", help="research goal text")
    goal.add_argument("--goal-file", metavar="FILE", help="read the research goal from FILE ('-': stdin)")
    p.add_argument("--metric", action="append", metavar="NAME",
                   help="metric, primary first; repeat or separate with commas")
    p.add_argument("--min-expected-metric", metavar="N", help="integer threshold (0 disables)")
    p.add_argument("--provided-file", action="append", metavar="PATH", help="absolute path; repeatable")
    p.add_argument("--partition", help="partition for ARI's jobs (default: ARI's precedence, then the allocation's)")
    p.add_argument("--max-cpus", type=int, metavar="N", help="CPUs per job (Max CPUs, ARI_SLURM_CPUS)")
    p.add_argument("--walltime", metavar="HH:MM:SS", help="job time limit")
    p.add_argument("--nodes", type=int, metavar="N", help="nodes for the reproduce job (default: the allocation's; 0: the "
                   "profile's requested_nodes decide, as in the wizard)")
    p.add_argument("--followups", type=int, metavar="N",
                   help="follow-up allocations to approve (default 0: none): when the run's allocation "
                   "ends, the next one (same partition, nodes and walltime) resumes it; at most 10")
    p.add_argument("--mem-gb", type=int, metavar="N",
                   help="memory per BFTS job in GB (0: the partition's default, as in the wizard)")
    p.add_argument("--module", action="append", metavar="NAME", help="module to load before `ari run`; repeatable")
    profile = p.add_mutually_exclusive_group()
    profile.add_argument("--profile", metavar="FILE", help="execution_profile JSON file")
    profile.add_argument("--preset", metavar="NAME", help="execution_profile preset (cpu_single, mpi, ...)")
    for flag, key, metavar, text in PROFILE_FLAGS:
        p.add_argument(flag, dest=key, type=str if metavar == "TYPE" else int, metavar=metavar,
                       help=text)
    p.add_argument("--allow-no-gres", action="store_true", help="write ARI_SLURM_ALLOW_NO_GRES=1")
    add_run_settings_flags(p)
    p.add_argument("--workspace", metavar="DIR",
                   help="workspace root on shared storage (default: /work/$USER/ari, or the site's "
                   "c.AriWizard.workspace_template; on a demo site ~/ari-demo/<site>)")
    p.add_argument("--run-id", help="YYYYmmddHHMMSS_<name>, or a short name such as heat-scaling that "
                   "gets the time stamp (default: minted from the title)")
    p.add_argument("--lang", choices=("en", "ja", "zh"), help="language of the printed messages, also stored with the state for the wizard")
    p.add_argument("--site", metavar="NAME|FILE", help="probe a demo site instead of this machine")
    p.add_argument("--no-probes", action="store_true",
                   help="skip the site probes (the shared-filesystem check still runs)")
    p.add_argument("--probe-timeout", type=float, default=None, metavar="SECONDS",
                   help="seconds each probe may take (default: c.AriWizard.probe_timeout and "
                   "probe_timeouts, else 10)")
    p.add_argument("--force", action="store_true",
                   help="overwrite an existing checkpoint (backup kept) and accept a node-local workspace")
    p.add_argument("--json", action="store_true",
                   help='print {"checkpoint_dir", "files", "handoff_command"}')
    p.set_defaults(handler=run)
    _EMIT_FLAGS.update(option for action in p._actions for option in action.option_strings)


PROFILE_FLAGS = (
    ("--ranks", "min_ranks", "N", "ranks of the reproduce job (sbatch --ntasks)"),
    ("--tasks-per-node", "ntasks_per_node", "N", "ranks per node (sbatch --ntasks-per-node; 0: not set)"),
    ("--gpus-per-node", "requested_gpus_per_node", "N",
     "GPUs per node (--gpus-per-node; with --gpu-type the GRES count)"),
    ("--gpu-type", "gpu_type", "TYPE", "GPU type: ARI then asks --gres=gpu:TYPE:N"),
)
"""(flag, execution_profile key, metavar, help): the keys step 3 of the wizard shows outside
"Advanced", set on top of --preset, --profile or the site's default profile."""

_FIELD_FLAGS = {"metrics": "--metric", "module_loads": "--module", "provided_files": "--provided-file",
                "requested_nodes": "--nodes", "run_settings.phase_models": "--phase-model"}
"""Fields whose emit flag is not the field's name with dashes."""


_SCOPE_FLAGS = ("--scope-preset", "--max-nodes", "--max-depth", "--parallel", "--node-timeout-min")
"""The flags that change how long the search may take (``ari.time_fit``)."""


def _flag_of(problem: Any, args: argparse.Namespace, lang: str | None = None) -> str:
    """What a person at the command line changes for ``problem``: the emit flag that sets its
    field, else the profile key with where the profile came from (``--preset mpi
    (min_ranks)``): emit has no flag for it, the preset or the --profile file sets it."""
    field = problem.field
    source = (f"--preset {args.preset}" if args.preset else
              f"--profile {args.profile}" if args.profile else "")
    if field == "module_loads" and source and problem.params.get("module") \
            and problem.params["module"] not in (args.module or ()):
        return f"{source} ({field})"  # a module the preset or profile loads, not a --module
    if field in _FIELD_FLAGS:
        return _FIELD_FLAGS[field]
    if field == "run_settings.scope_preset":  # the scope flags given here, else where it came from
        given = [flag for flag in _SCOPE_FLAGS if getattr(args, flag[2:].replace("-", "_"), None) is not None]
        if given:
            return "/".join(given)
        return (f"--from-json {args.from_json} (scope)" if args.from_json
                else t("cli.emit.scope_default", lang, flag="--scope-preset", preset=DEFAULT_PRESET))
    if field == "run_settings.stages":  # the stages switched off here, else by --from-json
        given_off = [flag for flag in ("--no-ear", "--no-review", "--no-reproduce")
                     if getattr(args, flag[2:].replace("-", "_"), False)]
        if given_off:
            return "/".join(given_off)
        return f"--from-json {args.from_json} (stages)" if args.from_json else field
    given = _profile_overrides(args)
    for flag, key, _, _ in PROFILE_FLAGS:
        if field == key:
            return flag if key in given or not source else f"{source} ({field})"
    flag = "--" + field.removeprefix("run_settings.").replace("_", "-")
    if flag in _EMIT_FLAGS:
        return flag

    if source and ExecutionProfile.class_traits().get(field) is not None:
        return f"{source} ({field})"
    return field


def _problem_line(problem: Any, args: argparse.Namespace, lang: str) -> str:
    """``<flag>: <what is wrong> (<fix>)`` in ``lang``."""
    fix = problem.fix_text(lang)
    said = t("cli.emit.problem_fix", lang, text=problem.text(lang), fix=fix) if fix \
        else problem.text(lang)
    return f"{_flag_of(problem, args, lang)}: {said}"


_EMIT_FLAGS: set[str] = set()
"""Every option of ``emit``, filled in by ``register``."""


class _BadInput(Exception):
    pass


def _load_state(path: str):

    try:
        data = read_json_bounded(path, OPTION_FILE_CAP)
    except (OSError, ValueError) as exc:

        raise _BadInput(cannot_read(path, exc)) from None
    if isinstance(data, dict) and isinstance(data.get(LAUNCH_CONFIG_KEY), dict):
        data = data[LAUNCH_CONFIG_KEY].get("state")
    return WizardState.from_json(data)


def _apply_flags(state: Any, args: argparse.Namespace) -> None:

    _check_profile_flags(args)
    if args.probe_timeout is not None and not 0 < args.probe_timeout <= 600:
        raise _BadInput(Text("cli.timeout_range", {"flag": "--probe-timeout", "max": "600",
                                                   "value": f"{args.probe_timeout:g}"}))

    if args.min_expected_metric is not None:

        try:  # the wizard's own reading: 12.5 is refused with what ARI would make of it
            args.min_expected_metric = min_expected_metric_of(args.min_expected_metric)
        except ValueError as refused:
            raise _BadInput(refused.args[0]) from None
    simple = {"title": args.title, "goal": args.goal, "min_expected_metric": args.min_expected_metric,
              "partition": args.partition, "max_cpus": args.max_cpus, "walltime": args.walltime,
              "nodes": args.nodes, "mem_gb": args.mem_gb, "followups": args.followups,
              "workspace": args.workspace,
              "run_id": args.run_id, "lang": getattr(args, "lang", None)}
    for name, value in simple.items():
        if value is not None:
            setattr(state, name, value)

    for name in ("nodes", "max_cpus", "mem_gb"):  # read as step 3 reads its boxes
        if getattr(args, name) is not None:
            setattr(state, name, resource_value(name, getattr(args, name)))
    if args.partition is not None:
        state.partition_source = "explicit"
    if args.goal_file is not None:
        try:
            state.goal = (sys.stdin.read(OPTION_FILE_CAP) if args.goal_file == "-" else
                          read_text_bounded(args.goal_file, OPTION_FILE_CAP, errors="strict"))
        except (OSError, UnicodeDecodeError) as exc:

            raise _BadInput(cannot_read(args.goal_file, exc)) from None
    if args.metric:
        state.metrics = [m.strip() for item in args.metric for m in item.split(",") if m.strip()]
    if args.provided_file:
        state.provided_files = list(args.provided_file)
    if args.module:
        state.module_loads = list(args.module)
    if args.allow_no_gres:
        state.allow_no_gres = True
    try:
        state.run_settings = apply_run_settings_flags(state.run_settings, args)
    except FlagError as exc:
        raise _BadInput(str(exc)) from None
    if args.preset is not None:
        if args.preset not in PRESETS:
            raise _BadInput(Text("cli.emit.unknown_preset",
                                 {"preset": repr(args.preset), "presets": ", ".join(PRESETS)}))
        state.profile = PRESETS[args.preset]()
    if args.profile is not None:
        try:
            state.profile = ExecutionProfile.from_json(read_json_bounded(args.profile, OPTION_FILE_CAP))
        except OSError as exc:

            raise _BadInput(cannot_read(args.profile, exc)) from None
        except ValueError as exc:  # ProfileError is a ValueError
            raise _BadInput(f"--profile {args.profile}: {exc}") from None


def _profile_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """{execution_profile key: value} of the profile flags given."""
    return {key: getattr(args, key) for _, key, _, _ in PROFILE_FLAGS
            if getattr(args, key, None) is not None}


def _check_profile_flags(args: argparse.Namespace) -> None:
    for flag, key, metavar, _ in PROFILE_FLAGS:
        value = getattr(args, key, None)
        if metavar == "N" and value is not None and value < (1 if key == "min_ranks" else 0):
            message = "cli.at_least_one" if key == "min_ranks" else "cli.not_negative"
            raise _BadInput(Text(message, {"flag": flag, "value": str(value)}))


def _config():
    """The wizard's site config (Jupyter config path); a bad value is named and left out."""

    return command_config("emit")


def _host(args: argparse.Namespace, config):

    try:
        return open_host(args.site or None, config)
    except SiteError as exc:
        raise _BadInput(*exc.args) from None


def _demo_way_out(host: Any, lang: str) -> str:
    """On a demo site without SLURM (the laptop) no checkpoint can be written, whatever is
    fixed: the wizard's way out (another demo site), said for the command line."""
    if host is None or not getattr(host, "is_demo", False) or host.which("sbatch"):
        return ""

    name = getattr(host, "name", "")
    others = listed((site for site in list_sites() if site != name), lang)
    return "\n" + t("cli.emit.demo_no_slurm", lang, site=name, sites=others)


def run(args: argparse.Namespace) -> int:

    host = None
    try:
        state = _load_state(args.from_json) if args.from_json else WizardState()
        _apply_flags(state, args)
        if not args.from_json and getattr(args, "lang", None) is None:
            state.lang = output_lang(args)  # the hand-off script speaks as this command does
        config = _config()
        host = _host(args, config)
        if args.site:
            state.site_name = getattr(host, "name", args.site)
        lang = output_lang(args)
        live = (lambda ids: LiveChecks(ids, enabled=wants_live_line(sys.stderr, args.json),
                                       label=t("cli.live.probing_for_emit", lang),
                                       name_of=lambda pid: check_name(pid, lang)))
        settle_for_write(state, config, host,
                         profile_given=bool(args.from_json or args.preset or args.profile),
                         profile_edits=_profile_overrides(args), probes=not args.no_probes,
                         force=args.force, probe_timeout=args.probe_timeout, progress=live)
        result = emit_checkpoint(state, force=args.force, host=host)
    except EmitBlocked as exc:
        lang = output_lang(args)
        width = terminal_width(sys.stderr)
        lines = [hang("- ", _problem_line(p, args, lang), width) for p in exc.problems]
        print(f"ari-jupyter emit: {t('cli.emit.blocked', lang)}\n" + "\n".join(lines)
              + _demo_way_out(host, lang), file=sys.stderr)
        return 1
    except _BadInput as exc:  # a usage error (README: exit 2), said as argparse says one

        lang = output_lang(args)
        print(error_line("emit", speak("emit", error_text(exc, lang)), lang), file=sys.stderr)
        return 2
    except (StateError, EmitError) as exc:
        lang = output_lang(args)
        print(f"ari-jupyter emit: {speak('emit', error_text(exc, lang))}{_demo_way_out(host, lang)}",
              file=sys.stderr)
        return 1

    lang = output_lang(args)

    # What the wizard shows as warnings beside its fields (Write goes ahead, as here); the
    # shared-filesystem verdict is emit's own note below.
    width = terminal_width(sys.stderr if args.json else sys.stdout)
    notes = [t("cli.warning_line", lang, warning=_problem_line(p, args, lang))
             for p in state.problems() if p.severity == "warning" and not _is_shared_fs_problem(p)]
    notes += [t("cli.note", lang, note=speak("emit", render(note, lang))) for note in result.notes]
    notes = [hang("", note, width, indent=2) for note in notes]
    if args.json:
        print(json.dumps({"checkpoint_dir": result.checkpoint_dir, "files": list(result.files),
                          "handoff_command": result.handoff_command}, indent=2, ensure_ascii=False))
        for note in notes:
            print(note, file=sys.stderr)
    else:
        print(t("cli.emit.checkpoint", lang, path=result.checkpoint_dir))
        for path in result.files:
            print(t("cli.emit.wrote", lang, path=path))
        for note in notes:
            print(note)
        print("\n" + t("cli.emit.handoff", lang))
        print(f"  {result.handoff_command}")
    return 0
