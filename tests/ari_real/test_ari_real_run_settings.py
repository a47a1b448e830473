"""ARI's own config resolution and workflow loader end with exactly the run settings we wrote.

For each row, `ari-jupyter emit` writes a checkpoint with the row's flags (ARI_ROOT points at
ARI, so workflow.yaml is written too); then in ARI's venv, with only ARI_CHECKPOINT_DIR
exported (as the hand-off does), ARI loads the checkpoint .env at import and resolves its
config in `ari run`'s order (`_resolve_cfg`, `--profile hpc`, the bfts and evaluator env
overrides). The resolved values must be the chosen ones; the pipeline loader must see the
disabled stages disabled and every other stage enabled with its dependencies on enabled
stages only; launch_config.json must carry ARI's writer types; no key value anywhere.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ari_jupyter.ari.run_settings import SCOPE_PRESETS, STAGE_GROUPS
from ari_jupyter.checkpoint.handoff import check_handoff
from ari_jupyter.hosts.host import LocalHost

pytestmark = pytest.mark.ari

DRIVER = (Path(__file__).parent / "drivers" / "run_settings_resolution.py").read_text()
SECRET = "sk-ant-never-written-0123456789abcdef"

# flags -> expected resolution (llm backend, model, base_url, litellm id; bfts; evaluator; env)
ROWS = {
    # nothing chosen: nothing written, ARI keeps its packaged workflow.yaml's llm section
    "defaults": ([], dict(backend=None, model=None, base_url="", litellm=None, preset="standard")),
    "openai-quick": (["--llm-backend", "openai", "--scope-preset", "quick"],
                     dict(backend="openai", model="gpt-4o", base_url="", litellm="gpt-4o",
                          preset="quick")),
    "anthropic-deep-custom": (
        ["--llm-backend", "anthropic", "--llm-model", "claude-opus-4-5", "--scope-preset", "deep",
         "--max-nodes", "40", "--node-timeout-min", "45", "--frontier-score", "ucb_like",
         "--composite", "geometric_mean", "--axis-mode", "legacy", "--allow-web",
         "--phase-model", "coding=claude-sonnet-4-5", "--phase-model", "eval=gpt-4o",
         "--paper-language", "ja", "--no-review", "--no-ear"],
        dict(backend="anthropic", model="claude-opus-4-5", base_url="",
             litellm="anthropic/claude-opus-4-5", preset="deep", max_nodes=40, node_timeout_min=45,
             frontier_score="ucb_like", composite="geometric_mean", axis_mode="legacy", allow_web=True,
             env={"ARI_MODEL_CODING": "claude-sonnet-4-5", "ARI_MODEL_EVAL": "gpt-4o",
                  "ARI_PAPER_LANGUAGE": "ja"}, off=("ear", "review"))),
    "ollama-remote-exhaustive": (
        ["--llm-backend", "ollama", "--llm-model", "llama3.3", "--llm-api-base", "http://gpu01:11434",
         "--scope-preset", "exhaustive", "--parallel", "6", "--max-depth", "4", "--max-react", "33",
         "--no-reproduce", "--gpus-per-job", "2", "--valid-partitions", "small,large"],
        dict(backend="ollama", model="llama3.3", base_url="http://gpu01:11434",
             litellm="ollama_chat/llama3.3", preset="exhaustive", parallel=6, max_depth=4, max_react=33,
             env={"ARI_SLURM_GPUS": "2", "SLURM_VALID_PARTITIONS": "small,large"}, off=("reproduce",))),
    "cli-shim-thorough": (["--llm-backend", "cli-shim", "--scope-preset", "thorough"],
                          dict(backend="cli-shim", model="claude-cli", base_url="http://localhost:8900/v1",
                               litellm="openai/claude-cli", preset="thorough")),
}

WRITER_TYPES = {"llm_model": str, "llm_provider": str, "profile": str, "max_nodes": int, "max_depth": int,
                "max_react": int, "timeout_node_s": int, "parallel": int, "frontier_score": str,
                "composite": str, "axis_mode": str, "allow_web": bool, "hpc_cpus": int, "hpc_memory_gb": int,
                "hpc_gpus": int, "hpc_walltime": str, "partition": str, "phase_models": dict,
                "include_ear": bool, "include_review": bool, "include_reproduce": bool, "language": str}


def _emit(ari_env, tmp_path: Path, flags: list[str]) -> Path:
    env = {**os.environ, "ARI_ROOT": str(ari_env.root), "HOME": str(tmp_path), "ANTHROPIC_API_KEY": SECRET,
           "OPENAI_API_KEY": SECRET}
    proc = subprocess.run(
        [sys.executable, "-m", "ari_jupyter", "emit", "--json", "--title", "Settings check",
         "--goal", "Check the run settings.", "--metric", "GFlops", "--partition", "small",
         "--max-cpus", "2", "--workspace", str(tmp_path / "ws"), "--no-probes", "--force", *flags],
        capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return Path(json.loads(proc.stdout)["checkpoint_dir"])


@pytest.mark.parametrize("row", list(ROWS))
def test_aris_config_resolution_ends_with_the_chosen_settings(ari_env, tmp_path, row):
    flags, want = ROWS[row]
    ckpt = _emit(ari_env, tmp_path, flags)
    home = tmp_path / "terminal-home"
    home.mkdir()
    # the second terminal: ARI's test environment without its LLM base export (a shell export
    # would win over the .env, override=False), plus ARI_CHECKPOINT_DIR as the hand-off exports it
    terminal = {k: v for k, v in ari_env.env.items() if k != "ARI_LLM_API_BASE"}
    terminal.update({"ARI_CHECKPOINT_DIR": str(ckpt), "HOME": str(home)})
    proc = subprocess.run([str(ari_env.python), "-c", DRIVER, str(ckpt), "hpc"], cwd=tmp_path,
                          env=terminal, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    package = yaml.safe_load((ari_env.root / "ari-core" / "config" / "workflow.yaml").read_text())
    if want["backend"] is None:
        want = {**want, "backend": package["llm"]["backend"], "model": package["llm"]["model"]}
        want["litellm"] = want["model"] if want["backend"] == "openai" else want["litellm"]

    preset = SCOPE_PRESETS[want["preset"]]
    scope = {name: want.get(name, getattr(preset, name))
             for name in ("max_nodes", "max_depth", "max_react", "parallel", "node_timeout_min")}
    assert got["llm"] == {"backend": want["backend"], "model": want["model"], "base_url": want["base_url"],
                          "litellm_model": want["litellm"]}
    assert got["bfts"] == {"max_total_nodes": scope["max_nodes"], "max_depth": scope["max_depth"],
                           "max_react_steps": scope["max_react"],
                           "timeout_per_node": scope["node_timeout_min"] * 60,
                           "max_parallel_nodes": scope["parallel"],
                           "frontier_score": want.get("frontier_score", "scientific_plus_diversity"),
                           "allow_web": want.get("allow_web", False)}
    assert ("bfts" in got["web_skill_phase"]) is want.get("allow_web", False)
    assert got["evaluator"] == {"composite": want.get("composite", "harmonic_mean"),
                                "axis_mode": want.get("axis_mode", "dynamic")}
    assert got["env"] == {"ARI_PAPER_LANGUAGE": "en", **want.get("env", {})}

    # ARI's pipeline loader: disabled stages disabled, the rest enabled with intact dependencies
    off = set().union(*(STAGE_GROUPS[g] for g in want.get("off", ())))
    all_stages = {s["stage"] for s in package["pipeline"] if s.get("enabled", True)}
    assert set(got["disabled"]) == off
    enabled = {s["stage"]: s["depends_on"] for s in got["pipeline"]}
    assert set(enabled) == all_stages - off
    original = {s["stage"]: s.get("depends_on") for s in package["pipeline"]}
    for stage, deps in enabled.items():
        before = original[stage]
        if isinstance(before, list):
            expected = [d for d in before if d not in off]
        else:
            expected = [] if before in off else before
        assert deps == expected, f"{stage}: depends_on {deps!r}, ARI's GUI would write {expected!r}"
        listed = [deps] if isinstance(deps, str) else (deps or [])
        assert set(listed) <= set(enabled), f"{stage} depends on a stage that is not enabled: {listed}"

    # launch_config.json: ARI's writer keys with ARI's writer types
    config = json.loads((ckpt / "launch_config.json").read_text())
    for key, kind in WRITER_TYPES.items():
        if key in config:
            assert type(config[key]) is kind, f"{key}: {type(config[key]).__name__}, ARI writes {kind.__name__}"
    assert {"llm_model", "llm_provider", "max_nodes", "max_depth", "max_react", "timeout_node_s", "parallel",
            "frontier_score", "composite", "axis_mode", "allow_web", "include_ear", "include_review",
            "include_reproduce"} <= set(config)
    if ROWS[row][1]["backend"] is not None:
        assert (config["llm_provider"], config["llm_model"]) == (want["backend"], want["model"])
    else:
        assert (config["llm_provider"], config["llm_model"]) == ("", "")

    # no key value anywhere we wrote
    for path in [*ckpt.rglob("*"), *(tmp_path / "ws" / "launch").glob("*")]:
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path


def test_check_handoff_says_whether_the_backends_key_is_set_never_its_value(ari_env, tmp_path):
    ckpt = _emit(ari_env, tmp_path, ["--llm-backend", "anthropic"])
    terminal = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "h")}
    (tmp_path / "h").mkdir()
    checks = {c.id: c for c in check_handoff(ckpt, host=LocalHost(env=terminal), timeout=20)}
    assert checks["api_key"].status == "fail" and "ANTHROPIC_API_KEY is not set" in checks["api_key"].summary
    (tmp_path / "h" / ".env").write_text(f"ANTHROPIC_API_KEY={SECRET}\n")
    checks = {c.id: c for c in check_handoff(ckpt, host=LocalHost(env=terminal), timeout=20)}
    assert checks["api_key"].status == "ok" and str(tmp_path / "h" / ".env") in checks["api_key"].summary
    assert SECRET not in json.dumps([c.to_json() for c in checks.values()])
