"""``ari-jupyter lint FILE``: what ARI will read from an experiment.md, and lints E1-E10.

The expected partition and CPU count default to ``ARI_SLURM_PARTITION`` / ``ARI_SLURM_CPUS``
from this environment, completed by a ``.env`` beside the file (a checkpoint's own, which
``ari`` loads when ``ARI_CHECKPOINT_DIR`` points there; exported values win, as in ARI).
Exit 0 when no error-level finding, 1 otherwise, 2 when the file cannot be read.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..ari.dotenv import read_dotenv
from ..i18n import render, t
from . import output_lang
from ..ari.lint_experiment import lint_experiment, parse_experiment
from ..base.bounded_read import EXPERIMENT_CAP, BoundedReadError, read_stream, read_window
from ._errors import cannot_read


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lint", help="check an experiment.md against ARI's parse rules (E1-E10)",
        description="Report what ARI reads from an experiment.md and every way it could misread it.")
    parser.add_argument("file", metavar="FILE", help="experiment.md to check ('-' reads stdin)")
    parser.add_argument("--json", action="store_true", help="print findings and parsed values as JSON")
    parser.add_argument("--partition", help="the partition the run should use (default: ARI_SLURM_PARTITION)")
    parser.add_argument("--cpus", type=int, help="CPUs per job (default: ARI_SLURM_CPUS)")
    parser.add_argument("--ari-profile", default="hpc", choices=("hpc", "laptop", "cloud"),
                        help="the --profile given to `ari run` (default: hpc)")
    parser.add_argument("--no-check-files", action="store_true",
                        help="do not look for the provided files on this machine")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:  # bounded: a regular file of a few hundred KB at most (never /dev/zero or a FIFO)
        if args.file == "-":
            text, env_file = read_stream(sys.stdin.buffer, cap=EXPERIMENT_CAP, errors="strict").text, None
        else:
            path = Path(args.file)
            text = read_window(path, cap=EXPERIMENT_CAP, errors="strict").text
            env_file = path.resolve().parent / ".env"
    except BoundedReadError as exc:
        print("ari-jupyter lint: " + t(exc.message_id, output_lang(args), **exc.params), file=sys.stderr)
        return 2
    except (OSError, UnicodeDecodeError) as exc:
        print("ari-jupyter lint: " + render(cannot_read(args.file, exc), output_lang(args)), file=sys.stderr)
        return 2
    env = read_dotenv(env_file) if env_file is not None and env_file.is_file() else {}
    env.update(os.environ)
    findings = lint_experiment(text, partition=args.partition, cpus=args.cpus, env=env,
                               ari_profile=args.ari_profile, check_files=not args.no_check_files)
    if args.json:
        parsed = parse_experiment(text)
        print(json.dumps({
            "file": args.file,
            "findings": [f.to_json() for f in findings],
            "parsed": {
                "partition": parsed.partition, "max_cpus": parsed.max_cpus,
                "primary_metric": parsed.primary_metric,
                "evaluator_metrics": list(parsed.evaluator_metrics),
                "min_expected_metric": parsed.min_expected_metric,
                "provided_files": list(parsed.provided_files),
                "slurm_text_trigger": parsed.slurm_text_trigger,
            },
        }, indent=2, ensure_ascii=False))
    else:
        lang = output_lang(args)
        for f in findings:
            where = f"{args.file}:{f.line}" if f.line else args.file
            severity = f.severity if lang == "en" else t(f"doctor_severity_{f.severity}", lang)
            print(f"{where}: {f.rule} {severity}: {f.text(lang)}")
            if f.fix_text(lang):
                print("    " + t("cli.fix_line", lang, fix=f.fix_text(lang)))
        counts = {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")}
        print(t("cli.lint.counts", lang, errors=counts["error"], warnings=counts["warning"],
                notes=counts["info"]))
    return 1 if any(f.is_error for f in findings) else 0
