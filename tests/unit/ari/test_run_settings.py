"""Run settings: ARI's names, defaults and encodings; validation; the emit flags; no key values."""
from __future__ import annotations
from repo_paths import REPO

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from ari_jupyter.ari import run_settings as rs
from ari_jupyter.ari.run_settings import RunSettings

REPO = REPO


def severities(settings, **kw):
    return {(p.field.split(".", 1)[1], p.severity) for p in rs.problems(settings, **kw)}


@pytest.mark.parametrize("preset, expected", [
    ("quick", {"ARI_MAX_NODES": "10", "ARI_MAX_DEPTH": "3", "ARI_MAX_REACT": "20",
               "ARI_PARALLEL": "2", "ARI_TIMEOUT_NODE": "1800"}),
    ("standard", {"ARI_MAX_NODES": "30", "ARI_MAX_DEPTH": "5", "ARI_MAX_REACT": "80",
                  "ARI_PARALLEL": "4", "ARI_TIMEOUT_NODE": "7200"}),
    ("thorough", {"ARI_MAX_NODES": "60", "ARI_MAX_DEPTH": "9", "ARI_MAX_REACT": "150",
                  "ARI_PARALLEL": "8", "ARI_TIMEOUT_NODE": "18000"}),
    ("deep", {"ARI_MAX_NODES": "100", "ARI_MAX_DEPTH": "12", "ARI_MAX_REACT": "300",
              "ARI_PARALLEL": "12", "ARI_TIMEOUT_NODE": "28800"}),
    ("exhaustive", {"ARI_MAX_NODES": "120", "ARI_MAX_DEPTH": "15", "ARI_MAX_REACT": "500",
                    "ARI_PARALLEL": "16", "ARI_TIMEOUT_NODE": "43200"}),
])
def test_presets_are_aris_wizard_values_in_aris_encoding(preset, expected):
    env = rs.env_values(RunSettings().with_preset(preset))
    assert {k: env[k] for k in expected} == expected


def test_explicit_value_beats_the_preset_and_a_new_preset_resets_the_budget():
    s = replace(RunSettings().with_preset("deep"), max_nodes=40)
    assert s.scope()["max_nodes"] == 40 and s.scope()["max_depth"] == 12
    assert s.with_preset("quick").scope()["max_nodes"] == 10


@pytest.mark.parametrize("backend, model, api_base, expected", [
    ("", "", "", {}),  # nothing chosen: ARI's own default (ollama / qwen3:8b) applies
    ("openai", "", "", {"ARI_BACKEND": "openai", "ARI_MODEL": "gpt-4o", "ARI_LLM_MODEL": "gpt-4o"}),
    ("anthropic", "claude-opus-4-5", "", {"ARI_BACKEND": "anthropic", "ARI_MODEL": "claude-opus-4-5",
                                          "ARI_LLM_MODEL": "claude-opus-4-5"}),
    ("cli-shim", "", "", {"ARI_BACKEND": "cli-shim", "ARI_MODEL": "claude-cli",
                          "ARI_LLM_MODEL": "claude-cli", "ARI_LLM_API_BASE": "http://localhost:8900/v1"}),
    ("ollama", "llama3.3", "http://gpu01:11434", {"ARI_BACKEND": "ollama", "ARI_MODEL": "llama3.3",
                                                   "ARI_LLM_MODEL": "llama3.3",
                                                   "ARI_LLM_API_BASE": "http://gpu01:11434"}),
])
def test_llm_settings_as_aris_launcher_writes_them(backend, model, api_base, expected):
    env = rs.env_values(RunSettings(llm_backend=backend, llm_model=model, llm_api_base=api_base))
    llm = {k: v for k, v in env.items() if k in ("ARI_BACKEND", "ARI_MODEL", "ARI_LLM_MODEL", "ARI_LLM_API_BASE")}
    assert llm == expected


@pytest.mark.parametrize("settings, kw, expected", [
    (RunSettings(), {}, set()),
    (RunSettings(llm_backend="openai", llm_model="gpt-4o"), {}, set()),
    (RunSettings(llm_backend="openai", llm_model="gpt-4"), {}, {("llm_model", "warning")}),
    (RunSettings(llm_backend="anthropic", llm_model="gpt-4o"), {}, {("llm_model", "warning")}),
    (RunSettings(llm_backend="ollama", llm_model="phi4:14b"), {}, set()),  # free entry
    (RunSettings(llm_backend="vllm"), {}, {("llm_backend", "warning")}),
    (RunSettings(llm_backend="custom"), {}, {("llm_model", "error")}),
    (RunSettings(llm_model="my model"), {}, {("llm_model", "error")}),
    (RunSettings(llm_api_base="localhost:11434"), {}, {("llm_api_base", "error")}),
    (RunSettings(phase_models={"coding": "gpt-4o"}), {}, set()),
    (RunSettings(phase_models={"writing": "gpt-4o"}), {}, {("phase_models", "error")}),
    (RunSettings(max_nodes=-1), {}, {("max_nodes", "error")}),
    (RunSettings(max_depth=0), {}, {("max_depth", "error")}),
    (RunSettings(node_timeout_min=-30), {}, {("node_timeout_min", "error")}),
    (RunSettings(parallel=100), {}, {("parallel", "warning")}),
    (RunSettings(scope_preset="huge"), {}, {("scope_preset", "error")}),
    (RunSettings(frontier_score="best"), {}, {("frontier_score", "error")}),
    (RunSettings(axis_mode="custom"), {}, {("axis_mode", "warning")}),
    (RunSettings(paper_language="fr"), {}, {("paper_language", "error")}),
    (RunSettings(paper_format="neurips"), {}, {("paper_format", "info")}),
    (RunSettings(gpus_per_job=2), {"has_gres": False}, {("gpus_per_job", "error")}),
    (RunSettings(gpus_per_job=2), {"has_gres": True}, set()),
    (RunSettings(gpus_per_job=2), {}, set()),  # GRES unknown: silent
    (RunSettings(gpus_per_job=-1), {}, {("gpus_per_job", "error")}),
    (RunSettings(valid_partitions=("small", " large")), {"partition": "small"}, {("valid_partitions", "error")}),
    (RunSettings(valid_partitions=("small", "large")), {"partition": "gpu"}, {("valid_partitions", "warning")}),
    (RunSettings(valid_partitions=("small", "large")), {"partition": "small"}, set()),
])
def test_validation(settings, kw, expected):
    assert severities(settings, **kw) == expected


def test_gres_error_names_the_flag_and_the_fix():
    (problem,) = rs.problems(RunSettings(gpus_per_job=1), has_gres=False)
    assert "--gres=gpu:1" in problem.message and "0" in problem.fix


def test_valid_partitions_written_without_spaces():
    env = rs.env_values(RunSettings(valid_partitions=("small", "large")))
    assert env["SLURM_VALID_PARTITIONS"] == "small,large"


def test_launch_config_keys_have_aris_writer_types():
    keys = rs.launch_config_keys(RunSettings(llm_backend="openai", gpus_per_job=2,
                                             phase_models={"coding": "gpt-4o"}, include_review=False))
    types = {"llm_model": str, "llm_provider": str, "max_nodes": int, "max_depth": int, "max_react": int,
             "timeout_node_s": int, "parallel": int, "frontier_score": str, "composite": str,
             "axis_mode": str, "allow_web": bool, "hpc_gpus": int, "phase_models": dict,
             "include_ear": bool, "include_review": bool, "include_reproduce": bool, "language": str}
    assert {k: type(v) for k, v in keys.items()} == types
    assert keys["include_review"] is False and keys["timeout_node_s"] == 7200
    default = rs.launch_config_keys(RunSettings())
    assert (default["llm_provider"], default["llm_model"]) == ("", "")  # ARI's writer: "" when unset


def test_stage_toggles_rewrite_like_aris_gui():
    doc = {"pipeline": [{"stage": "write_paper"}, {"stage": "review_paper", "depends_on": ["write_paper"]},
                        {"stage": "merge_reviews", "depends_on": "review_paper"},
                        {"stage": "generate_ear", "depends_on": ["write_paper"]},
                        {"stage": "finalize", "depends_on": ["review_paper", "generate_ear", "write_paper"]}]}
    rs.apply_stage_toggles(doc, RunSettings(include_review=False))
    by = {s["stage"]: s for s in doc["pipeline"]}
    assert by["review_paper"]["enabled"] is False and by["merge_reviews"]["enabled"] is False
    assert by["merge_reviews"]["depends_on"] == []
    assert by["finalize"]["depends_on"] == ["generate_ear", "write_paper"]
    assert "enabled" not in by["generate_ear"]


def test_round_trip_and_bad_json():
    s = RunSettings(llm_backend="openai", phase_models={"eval": "o3"}, valid_partitions=("a", "b"),
                    max_nodes=7, allow_web=True, include_ear=False)
    assert RunSettings.from_json(json.loads(json.dumps(s.to_json()))) == s
    with pytest.raises(ValueError, match="max_nodes.*wrong type"):
        RunSettings.from_json({"max_nodes": "7"})
    with pytest.raises(ValueError, match="model: not a run setting"):
        RunSettings.from_json({"model": "x"})


@pytest.mark.parametrize("backend, env, files, expected", [
    ("ollama", {}, {}, ("", True, "")),
    ("cli-shim", {}, {}, ("", True, "")),
    ("openai", {"OPENAI_API_KEY": "sk-test-123456789"}, {}, ("OPENAI_API_KEY", True, "environment")),
    ("openai", {}, {"home": "OPENAI_API_KEY=sk-test-123456789\n"}, ("OPENAI_API_KEY", True, "home")),
    ("anthropic", {}, {"root": "# ANTHROPIC_API_KEY=\nANTHROPIC_API_KEY=\n"}, ("ANTHROPIC_API_KEY", False, "")),
    ("anthropic", {}, {"root": "ANTHROPIC_API_KEY=sk-ant-xyz\n"}, ("ANTHROPIC_API_KEY", True, "root")),
])
def test_api_key_status_says_set_or_not_and_where_never_the_value(tmp_path, backend, env, files, expected):
    home, root = tmp_path / "home", tmp_path / "ari"
    home.mkdir(), root.mkdir()
    where = {"home": home / ".env", "root": root / ".env"}
    for name, text in files.items():
        where[name].write_text(text)
    status = rs.api_key_status(RunSettings(llm_backend=backend), {**env, "HOME": str(home),
                                                                   "ARI_ROOT": str(root)})
    source = {str(where["home"]): "home", str(where["root"]): "root"}.get(status.source, status.source)
    assert (status.variable, status.is_set, source) == expected
    assert "sk-" not in status.message + status.source


def _emit(tmp_path, *flags, extra_env=None):
    ws = tmp_path / "ws"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ARI_ROOT": str(tmp_path / "no-ari"),
           **(extra_env or {})}
    return subprocess.run(
        [sys.executable, "-m", "ari_jupyter", "emit", "--json", "--title", "Triad", "--goal",
         "Measure it.", "--metric", "GB/s", "--partition", "small", "--max-cpus", "4",
         "--workspace", str(ws), "--no-probes", "--force", *flags],
        capture_output=True, text=True, timeout=120, cwd=REPO, env=env)


def test_emit_flags_reach_env_and_launch_config_and_from_json_keeps_them(tmp_path):
    done = _emit(tmp_path, "--llm-backend", "anthropic", "--llm-model", "claude-opus-4-5",
                 "--phase-model", "coding=claude-sonnet-4-5", "--phase-model", "EVAL=gpt-4o",
                 "--scope-preset", "deep", "--max-nodes", "40", "--max-react", "90",
                 "--node-timeout-min", "60", "--parallel", "3", "--allow-web", "--paper-language", "ja",
                 "--paper-format", "neurips", "--gpus-per-job", "1", "--valid-partitions", "small,large",
                 extra_env={"ANTHROPIC_API_KEY": "sk-ant-secret-value-000"})
    assert done.returncode == 0, done.stderr
    ckpt = Path(json.loads(done.stdout)["checkpoint_dir"])
    env = dict(l.split("=", 1) for l in (ckpt / ".env").read_text().splitlines() if l and l[0] != "#")
    assert {k: env[k] for k in ("ARI_BACKEND", "ARI_MODEL", "ARI_MODEL_CODING", "ARI_MODEL_EVAL",
                                "ARI_MAX_NODES", "ARI_MAX_DEPTH", "ARI_MAX_REACT", "ARI_TIMEOUT_NODE",
                                "ARI_PARALLEL", "ARI_BFTS_ALLOW_WEB", "ARI_PAPER_LANGUAGE",
                                "ARI_SLURM_GPUS", "SLURM_VALID_PARTITIONS")} == {
        "ARI_BACKEND": "anthropic", "ARI_MODEL": "claude-opus-4-5", "ARI_MODEL_CODING": "claude-sonnet-4-5",
        "ARI_MODEL_EVAL": "gpt-4o", "ARI_MAX_NODES": "40", "ARI_MAX_DEPTH": "12", "ARI_MAX_REACT": "90",
        "ARI_TIMEOUT_NODE": "3600", "ARI_PARALLEL": "3", "ARI_BFTS_ALLOW_WEB": "1",
        "ARI_PAPER_LANGUAGE": "ja", "ARI_SLURM_GPUS": "1", "SLURM_VALID_PARTITIONS": "small,large"}
    config = json.loads((ckpt / "launch_config.json").read_text())
    assert (config["llm_provider"], config["max_nodes"], config["timeout_node_s"], config["allow_web"]) == \
        ("anthropic", 40, 3600, True)
    for path in ckpt.rglob("*"):
        if path.is_file():
            assert "sk-ant-secret-value-000" not in path.read_text(errors="replace"), path
    # --from-json brings every run setting back; a flag given again overrides it
    again = _emit(tmp_path, "--from-json", str(ckpt / "launch_config.json"), "--no-allow-web",
                  "--no-review")
    # no ARI here: no workflow.yaml to carry the stage switched off; refused as the wizard does,
    # naming the flag
    assert again.returncode == 1 and "- --no-review: A stage is switched off" in again.stderr
    again = _emit(tmp_path, "--from-json", str(ckpt / "launch_config.json"), "--no-allow-web")
    assert again.returncode == 0, again.stderr
    config2 = json.loads((ckpt / "launch_config.json").read_text())
    state1, state2 = config["ari_jupyter"]["state"]["run_settings"], config2["ari_jupyter"]["state"]["run_settings"]
    assert state2 == {**state1, "allow_web": False}


@pytest.mark.parametrize("flags, message, code", [
    (("--max-nodes", "-5"), "(max_nodes) must be at least 1, got -5. (Set “Max search nodes” (Run settings, Advanced)", 1),
    (("--phase-model", "coding"), "error: --phase-model 'coding': write PHASE=MODEL", 2),  # unreadable: usage
    (("--gpus-per-job", "-1"), "GPUs per job must be 0 or more", 1),
])
def test_emit_refuses_bad_settings(tmp_path, flags, message, code):
    done = _emit(tmp_path, *flags)
    assert done.returncode == code and message in done.stderr, done.stderr


def test_a_written_checkpoint_reopens_with_its_run_settings(tmp_path):
    """from_checkpoint (the wizard) and --from-json read the state stored in launch_config.json."""
    from ari_jupyter.checkpoint.load import load_checkpoint

    done = _emit(tmp_path, "--llm-backend", "openai", "--llm-model", "o3", "--scope-preset", "thorough",
                 "--max-react", "99", "--phase-model", "paper=gpt-4o", "--paper-format", "icml")
    assert done.returncode == 0, done.stderr
    settings = load_checkpoint(json.loads(done.stdout)["checkpoint_dir"]).run_settings
    assert settings == RunSettings(llm_backend="openai", llm_model="o3", scope_preset="thorough",
                                   max_react=99, phase_models={"paper": "gpt-4o"}, paper_format="icml")


def test_every_setting_is_described_with_the_variable_ari_reads():
    assert [s.name for s in rs.SETTINGS] == list(RunSettings.__dataclass_fields__)
    everything = RunSettings(llm_backend="openai", llm_api_base="http://x:1", phase_models={"idea": "o3"},
                             gpus_per_job=1, valid_partitions=("a",))
    written = set(rs.env_values(everything))
    for setting in rs.SETTINGS:
        for name in setting.ari_name.replace("<PHASE>", "IDEA").split(", "):
            name = name.split(" ")[0]
            if name.startswith(("ARI_", "SLURM_")):
                assert name in written, (setting.name, name)


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_stages_off_without_workflow_yaml_is_refused_in_the_users_language(tmp_path, lang):
    """The refusal and the workflow.yaml note inside it are in ja/zh, not English."""
    from widget_text import english_sentences

    refused = _emit(tmp_path, "--no-review", "--lang", lang)
    assert refused.returncode != 0
    assert "stages are switched off" not in refused.stderr
    assert "ARI_ROOT" in refused.stderr and "workflow.yaml" in refused.stderr
    assert english_sentences(refused.stderr.splitlines()) == [], refused.stderr


@pytest.mark.parametrize("ui_lang, paper, told", [
    ("ja", "en", True),    # a Japanese wizard, ARI's English default: said once, as info
    ("zh", "en", True),
    ("ja", "ja", False),   # chosen
    ("en", "en", False),   # nothing to say
])
def test_an_english_paper_is_said_to_a_user_reading_another_language(ui_lang, paper, told):
    from dataclasses import replace

    from ari_jupyter.ari.run_settings import RunSettings, problems

    found = [f for f in problems(replace(RunSettings(), paper_language=paper), ui_lang=ui_lang)
             if f.rule == "run_settings_paper_in_english"]
    assert [(f.severity, f.field) for f in found] == ([("info", "run_settings.paper_language")] if told else [])
    if told:
        assert {"ja": "日本語", "zh": "中文"}[ui_lang] in found[0].fix_text(ui_lang)
