"""``ari-jupyter preview sbatch``: the exact sbatch argv ARI's reproduce step will run.

Inputs are what ARI itself reads: an execution_profile JSON (``--profile``), the run_reproduce
caller arguments (``--args``), ``ARI_SLURM_*``/``SLURM_PARTITION`` from the environment and
``launch_config.json`` beside/inside ``--repo-dir``. The site facts ARI shells out for are
probed on this machine unless given: GRES (the ``gres`` probe, i.e. ``sinfo -h -o %G``), the
bind flags (``sbatch --help``), and ``which sbatch``. Exit 0 with the argv; exit 1 with
``{"error": ...}`` where ARI would raise (or the input files are invalid).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any
from ..ari.arguments import caller_args
from ..ari.contracts import REFERENCE, TYPED_HPC_V1, contract_of_written, preview_note
from ..base.bounded_read import OPTION_FILE_CAP, read_json_bounded
from ..i18n import error_text, render, t, text
from ..ari.dotenv import read_dotenv
from ..ari.errors import AriError
from ..ari.profile import ExecutionProfile, ProfileError, ari_dispatch_reading
from ..ari.sbatch import ArgsError, ReproduceArgs, plan_slurm_dispatch
from ..hosts.host import LocalHost
from ..probes import ProbeContext, run_probes_sync
from ..probes.slurm import SBATCH_HELP, advertised_bind_flags
from ..slurm.allocation import Allocation
from ..wizard.state import WizardState
from . import output_lang

HELP_TIMEOUT = 5.0
"""ARI gives ``sbatch --help`` and ``sinfo -h -o %G`` five seconds each."""


def _yes_no(text: str) -> bool:
    value = text.strip().lower()
    if value in ("yes", "y", "true", "1"):
        return True
    if value in ("no", "n", "false", "0"):
        return False

    raise argparse.ArgumentTypeError(f"expected yes or no, got {text!r}")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "preview", help="show what ARI will run (the reproduce sbatch line)",
        description="Preview commands ARI builds, without running them.")
    kinds = parser.add_subparsers(dest="preview_kind", metavar="KIND")
    sbatch = kinds.add_parser(
        "sbatch", help="the sbatch argv of ARI's reproduce dispatcher",
        description="Print the exact argv ARI's run_reproduce passes to sbatch for the given "
        "execution_profile and caller arguments, or the error ARI would raise.")
    sbatch.add_argument("--json", action="store_true",
                        help='print {"argv": [...], "partition_source": "..."} (or {"error"})')
    sbatch.add_argument("--repo-dir", required=True, metavar="DIR",
                        help="ARI's repo dir, normally <checkpoint>/repro_sandbox")
    sbatch.add_argument("--profile", metavar="FILE",
                        help="execution_profile JSON (the object itself, a rubric with "
                        "reproduce_contract.execution_profile, or a checkpoint's launch_config.json: "
                        "the wizard's choices, with the .env beside it)")
    sbatch.add_argument("--args", metavar="FILE", help="JSON object of run_reproduce arguments")
    sbatch.add_argument("--gres", type=_yes_no, metavar="yes|no",
                        help="does `sinfo -h -o %%G` show GRES (default: probe this machine)")
    sbatch.add_argument("--bind-flags", type=_yes_no, metavar="yes|no",
                        help="does `sbatch --help` advertise --cpu-bind/--mem-bind "
                        "(default: ask this machine's sbatch)")
    sbatch.add_argument("--sbatch", type=_yes_no, metavar="yes|no",
                        help="is sbatch on PATH (default: `which sbatch` here, as ARI checks)")
    sbatch.set_defaults(handler=run)
    parser.set_defaults(handler=lambda args: (parser.print_help(sys.stderr), 2)[1])


class _Unreadable(ValueError):
    """A flag's file that cannot be read or is not JSON: a usage error (exit 2), as in emit."""


def _load_json(path: str, what: str) -> Any:
    try:
        return read_json_bounded(path, OPTION_FILE_CAP)
    except OSError as exc:  # missing, not a regular file, too large or nested too deep
        raise _Unreadable(text("cli.preview.cannot_read", what=what, path=path,
                               error=exc.strerror or str(exc))) from None
    except json.JSONDecodeError as exc:
        raise _Unreadable(text("cli.preview.not_json", what=what, path=path, error=str(exc))) from None


def _profile_and_runtime(data: Any) -> tuple[Any, Any]:
    """Accept a bare execution_profile or a rubric envelope (ARI reads both from the rubric).
    ``max_runtime_sec`` is passed on as written: ARI ``int()``s it (3600.0, "7200")."""
    if isinstance(data, dict) and isinstance(data.get("reproduce_contract"), dict):
        contract = data["reproduce_contract"]
        return contract.get("execution_profile"), contract.get("max_runtime_sec")
    return data, None


def _written_state(data: Any) -> dict | None:
    """The wizard's choices inside a launch_config.json that ari-jupyter wrote, else None."""
    meta = data.get("ari_jupyter") if isinstance(data, dict) else None
    state = meta.get("state") if isinstance(meta, dict) else None
    return state if isinstance(state, dict) else None


def _with_checkpoint_env(launch_config: str, env: dict[str, str]) -> dict[str, str]:
    """``env`` completed by the checkpoint .env beside launch_config.json, which ``ari`` loads
    (exported values win, as in ARI)."""


    env_file = Path(launch_config).resolve().parent / ".env"
    values = read_dotenv(env_file) if env_file.is_file() else {}
    values.update(env)
    return values


def _wizard_caller(state: dict) -> Any:
    """The run_reproduce arguments the wizard's preview uses for these choices (the one
    conversion, ``ari.arguments.caller_args``); a saved state that does not read raises
    ``StateError``, a ValueError."""

    return caller_args(WizardState.from_json(state).choices())


def probe_has_gres(host) -> bool:
    """ARI's cluster-wide GRES answer through the project's ``gres`` probe (no answer = False,
    as ARI treats a failing sinfo)."""

    ctx = ProbeContext(allocation=Allocation.from_env(host.env), only=("gres",),
                       timeout=HELP_TIMEOUT + 5)
    results = run_probes_sync(host, ctx)
    data = results[0].data if results else {}
    return bool(data.get("has_gres"))


def probe_bind_flags(host) -> frozenset[str]:
    """Which bind flags this sbatch advertises, by the sbatch probe's own rule (stdout+stderr of
    ``sbatch --help``, as ARI reads it); no answer (no sbatch, a timeout) drops both flags."""


    if host.which(SBATCH_HELP[0]) is None:
        return frozenset()
    result = asyncio.run(host.run(list(SBATCH_HELP), timeout=HELP_TIMEOUT))
    return frozenset(advertised_bind_flags(result) or ())


def run(args) -> int:

    def fail(exc: Exception, ari: bool = False) -> int:
        """Print why there is no argv: ARI's own refusal (quoted as ARI words it) or bad input."""
        if args.json:
            print(json.dumps({"error": str(exc)}))
        else:
            lang = output_lang(args)
            key = "cli.preview.ari_refuses" if ari else "cli.preview.error"
            print(t(key, lang, message=error_text(exc, lang)), file=sys.stderr)
        return 2 if isinstance(exc, _Unreadable) else 1

    coerced: list[str] = []
    env = dict(os.environ)
    try:
        profile, runtime, written = (None, None, None)
        if args.profile:
            data = _load_json(args.profile, "profile")
            written = _written_state(data)
            if written is not None:
                data, env = written.get("profile"), _with_checkpoint_env(args.profile, env)
            raw, runtime = _profile_and_runtime(data)
            try:
                profile = ExecutionProfile.from_json(raw)
            except ProfileError:
                # ARI does not validate: preview what its dispatcher makes of the values, and say so
                profile, coerced = ari_dispatch_reading(raw)
        caller = ReproduceArgs.from_json(_load_json(args.args, "args")) if args.args \
            else _wizard_caller(written) if written is not None else ReproduceArgs()
    except (ValueError, ProfileError, ArgsError) as exc:
        return fail(exc)

    host = LocalHost()
    has_sbatch = args.sbatch if args.sbatch is not None else host.which("sbatch") is not None
    has_gres = args.gres if args.gres is not None else probe_has_gres(host)
    bind_flags: Any = args.bind_flags if args.bind_flags is not None else probe_bind_flags(host)
    try:
        plan = plan_slurm_dispatch(caller, env, args.repo_dir, has_gres=has_gres,
                                   bind_flags=bind_flags, has_sbatch=has_sbatch,
                                   profile=profile, rubric_max_runtime_sec=runtime)
    except AriError as exc:
        return fail(exc, ari=True)

    out: dict[str, Any] = {"argv": list(plan.argv), "partition_source": plan.partition_source,
                           "partition": plan.partition, "warnings": [*coerced, *plan.warnings]}
    if plan.local_fallback:
        out["local_fallback"] = plan.local_fallback
    note = preview_note(contract_of_written(written, env))  # None for ARI e41c806
    if note is not None:
        out.update(shows=REFERENCE, contract=TYPED_HPC_V1, note=str(note))
    if args.json:
        print(json.dumps(out))
        return 0

    lang = output_lang(args)
    if plan.argv:
        print(shlex.join(plan.argv))
        source = (t("cli.preview.source_explicit", lang) if plan.partition_source == "explicit"
                  else plan.partition_source)  # the others name a variable or a file
        print(t("cli.preview.partition", lang, partition=plan.partition, source=source),
              file=sys.stderr)
    else:
        print(t("cli.preview.no_sbatch", lang, why=render(plan.local_fallback, lang)), file=sys.stderr)
    for warning in out["warnings"]:
        print(t("cli.preview.warning", lang, warning=render(warning, lang)), file=sys.stderr)
    if note is not None:
        print(render(note, lang), file=sys.stderr)
    return 0
