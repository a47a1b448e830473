"""Driver (ARI's venv): what ARI's own config resolution makes of a checkpoint, as `ari run` does.

argv: CHECKPOINT PROFILE. ARI_CHECKPOINT_DIR is exported by the caller (as the hand-off does), so
importing ari.cli loads the checkpoint .env; then ari run's own order: _resolve_cfg (no --config),
_apply_profile, apply_bfts_env_overrides, apply_evaluator_env_overrides. Prints JSON.
"""
import json
import os
import sys
from pathlib import Path

import ari.cli  # noqa: F401  (loads the .env files, override=False)
from ari.cli.run import _apply_profile, _resolve_cfg
from ari.config import apply_bfts_env_overrides, apply_evaluator_env_overrides
from ari.llm.client import LLMClient
from ari.pipeline.yaml_loader import load_disabled_stage_names, load_pipeline

ckpt, profile = Path(sys.argv[1]), sys.argv[2]
cfg = _resolve_cfg(None)
if profile:
    _apply_profile(cfg, profile)
apply_bfts_env_overrides(cfg)
apply_evaluator_env_overrides(cfg)
web = next((s for s in cfg.skills if s.name == "web-skill"), None)
workflow = ckpt / "workflow.yaml"
enabled = load_pipeline(workflow) if workflow.is_file() else []
print(json.dumps({
    "llm": {"backend": cfg.llm.backend, "model": cfg.llm.model, "base_url": cfg.llm.base_url,
            "litellm_model": LLMClient(cfg.llm)._model_name()},
    "bfts": {"max_total_nodes": cfg.bfts.max_total_nodes, "max_depth": cfg.bfts.max_depth,
             "max_react_steps": cfg.bfts.max_react_steps, "timeout_per_node": cfg.bfts.timeout_per_node,
             "max_parallel_nodes": cfg.bfts.max_parallel_nodes, "frontier_score": cfg.bfts.frontier_score,
             "allow_web": cfg.bfts.allow_web},
    "web_skill_phase": (web.phase if web is not None else None),
    "evaluator": {"composite": cfg.evaluator.composite, "axis_mode": cfg.evaluator.axis_mode},
    "env": {k: v for k, v in os.environ.items()
            if k.startswith("ARI_MODEL_") or k in ("ARI_PAPER_LANGUAGE", "ARI_SLURM_GPUS",
                                                   "SLURM_VALID_PARTITIONS")},
    "pipeline": [{"stage": s.get("stage"), "depends_on": s.get("depends_on")} for s in enabled],
    "disabled": sorted(load_disabled_stage_names(workflow)) if workflow.is_file() else [],
}))
