"""``emit``'s run-settings flags (ARI's LLM, scope, stages and paper), applied to a RunSettings.

Flags given override what ``--from-json`` brought; ``--scope-preset`` sets the preset's whole
budget first, so ``--scope-preset deep --max-nodes 40`` is Deep with 40 search nodes.
"""
from __future__ import annotations

import argparse
from dataclasses import replace

from ..ari.run_settings import (
    AXIS_MODES, COMPOSITES, FRONTIER_SCORES, PAPER_FORMATS, PAPER_LANGUAGES, SCOPE_PRESETS, RunSettings,
)
from ..wizard.run_settings_view import partitions_from_text


class FlagError(ValueError):
    pass


def add_run_settings_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("ARI run settings", "what `ari run` uses (written to .env, "
                             "launch_config.json and workflow.yaml)")
    g.add_argument("--llm-backend", metavar="NAME", help="ARI_BACKEND: openai, anthropic, ollama, cli-shim, custom")
    g.add_argument("--llm-model", metavar="MODEL", help="ARI_MODEL/ARI_LLM_MODEL (default: the backend's)")
    g.add_argument("--llm-api-base", metavar="URL", help="ARI_LLM_API_BASE")
    g.add_argument("--phase-model", action="append", metavar="PHASE=MODEL",
                   help="ARI_MODEL_<PHASE> for idea, bfts, coding, eval, paper, review; repeatable")
    g.add_argument("--scope-preset", choices=tuple(SCOPE_PRESETS), help="ARI's wizard scope preset")
    g.add_argument("--max-nodes", type=int, metavar="N", help="ARI_MAX_NODES (search-tree nodes, not compute nodes)")
    g.add_argument("--max-depth", type=int, metavar="N", help="ARI_MAX_DEPTH")
    g.add_argument("--max-react", type=int, metavar="N", help="ARI_MAX_REACT (ReAct steps per search node)")
    g.add_argument("--node-timeout-min", type=int, metavar="MIN", help="ARI_TIMEOUT_NODE (per search node; written in seconds)")
    g.add_argument("--parallel", type=int, metavar="N", help="ARI_PARALLEL (search nodes run in parallel)")
    g.add_argument("--frontier-score", choices=FRONTIER_SCORES, help="ARI_FRONTIER_SCORE")
    g.add_argument("--composite", choices=COMPOSITES, help="ARI_COMPOSITE")
    g.add_argument("--axis-mode", choices=AXIS_MODES, help="ARI_AXIS_MODE")
    g.add_argument("--allow-web", action=argparse.BooleanOptionalAction, default=None,
                   help="ARI_BFTS_ALLOW_WEB: web tools during the tree search")
    g.add_argument("--no-ear", action="store_true", help="switch off the EAR stages")
    g.add_argument("--no-review", action="store_true", help="switch off the review stages")
    g.add_argument("--no-reproduce", action="store_true", help="switch off the reproduce stages")
    g.add_argument("--paper-language", choices=PAPER_LANGUAGES, help="ARI_PAPER_LANGUAGE")
    g.add_argument("--paper-format", choices=PAPER_FORMATS, help="paper format (stored; ARI does not use it)")
    g.add_argument("--gpus-per-job", type=int, metavar="N", help="ARI_SLURM_GPUS for every BFTS job")
    g.add_argument("--valid-partitions", metavar="P1,P2", help="SLURM_VALID_PARTITIONS (no spaces)")


def apply_run_settings_flags(settings: RunSettings, args: argparse.Namespace) -> RunSettings:
    if args.scope_preset is not None:
        settings = settings.with_preset(args.scope_preset)
    changes = {}
    for name in ("llm_backend", "llm_model", "llm_api_base", "max_nodes", "max_depth", "max_react",
                 "node_timeout_min", "parallel", "frontier_score", "composite", "axis_mode",
                 "allow_web", "paper_language", "paper_format", "gpus_per_job"):
        value = getattr(args, name, None)
        if value is not None:
            changes[name] = value
    if args.phase_model:
        phases = dict(settings.phase_models)
        for item in args.phase_model:
            phase, sep, model = item.partition("=")
            if not sep or not phase.strip() or not model.strip():
                raise FlagError(f"--phase-model {item!r}: write PHASE=MODEL, e.g. coding=gpt-4o")
            phases[phase.strip().lower()] = model.strip()
        changes["phase_models"] = phases
    for name in ("ear", "review", "reproduce"):
        if getattr(args, f"no_{name}", False):
            changes[f"include_{name}"] = False
    if args.valid_partitions is not None:
        changes["valid_partitions"] = partitions_from_text(args.valid_partitions)
    return replace(settings, **changes)
