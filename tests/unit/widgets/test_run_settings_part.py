"""Step 4's "Run settings" part: simple first, the rest under Advanced; every verdict is the
judge's (live, translated, fixes naming the form field); a checkpoint reopens with its
settings; the CLI's flags write the same files."""
import json
import subprocess
import sys

import pytest

from ari_jupyter.ari.run_settings import SCOPE_PRESETS
from ari_jupyter.i18n import t
from ari_jupyter.widgets.wizard import Wizard

from test_widgets_support import fake_bridge, fill_experiment, run, site_and_workspace
from widget_text import english_sentences, visible_strings

RUN_ID = "20261129120000_sparse_gemm_scaling"


@pytest.fixture(autouse=True)
def fresh_module_cache():
    """The CLI is a fresh process; the wizard must not answer from an earlier test's cache."""
    from ari_jupyter.probes.modules import clear_cache

    clear_cache()
    yield
    clear_cache()


def _wizard(tmp_path, lang="en", env=None):
    return Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0], lang=lang,
                  env={"HOME": str(tmp_path), **(env or {})})


def _rules(part):
    return {f.rule: f for f in part.ctx.step_problems("run_settings")}


def test_simple_first_and_the_rest_under_advanced(tmp_path):
    part = _wizard(tmp_path).experiment_panel.run_settings
    shown = part.children
    assert shown.index(part.backend) < shown.index(part.preset) < shown.index(part.advanced)
    assert part.advanced.selected_index is None  # closed until opened
    assert part.advanced.titles == ("Advanced",)
    inside = part.advanced.children[0].children
    for widget in (part.api_base, *part.phases.values(), *part.budgets.values(),
                   *part.choices.values(), part.allow_web, part.gpus, part.partitions):
        assert widget in inside and widget.description  # every input labelled
    # ARI's wizard presets, and ARI's packaged default named when no backend is chosen
    assert [v for _, v in part.preset.options] == list(SCOPE_PRESETS)
    assert part.backend.value == "" and "ARI's default" in part.backend.label
    assert part.budgets["max_nodes"].value == SCOPE_PRESETS["standard"].max_nodes


def test_a_negative_budget_is_an_error_that_blocks_write_with_a_fix_naming_the_field(tmp_path):
    wizard = _wizard(tmp_path)
    fill_experiment(wizard, tmp_path / "ws")
    panel = wizard.experiment_panel
    part = panel.run_settings
    part.budgets["max_nodes"].value = -2
    assert wizard.state.run_settings.max_nodes == -2
    finding = _rules(part)["run_settings_budget_low"]
    assert finding.severity == "error" and finding.field == "run_settings.max_nodes"
    assert "“Max search nodes”" in finding.fix and "Advanced" in finding.fix
    assert "data-severity=\"error\"" in part.findings.value and "Max search nodes" in part.findings.value
    assert panel.write.disabled and "Max search nodes" not in panel.write_reason.value  # said above
    assert t("exp_write_blocked_above", "en") in panel.write_reason.value
    wizard.ctx.lang = "ja"
    assert "最大探索ノード数" in part.findings.value and "Max nodes" not in part.findings.value
    part.budgets["max_nodes"].value = 40
    assert "run_settings_budget_low" not in _rules(part)
    assert wizard.state.run_settings.scope()["max_nodes"] == 40


def test_an_unknown_model_is_a_warning_and_a_preset_moves_the_untouched_budgets(tmp_path):
    wizard = _wizard(tmp_path)
    part = wizard.experiment_panel.run_settings
    part.backend.value = "anthropic"
    assert "claude-sonnet-4-5" in part.model.options
    part.model.value = "claude-sonnet-9"
    finding = _rules(part)["run_settings_model_unknown"]
    assert finding.severity == "warning" and "“Model”" in finding.fix
    part.budgets["max_depth"].value = 7
    part.preset.value = "deep"
    scope = wizard.state.run_settings.scope()
    assert scope["max_nodes"] == SCOPE_PRESETS["deep"].max_nodes  # as ARI's wizard applies it
    assert part.budgets["max_nodes"].value == SCOPE_PRESETS["deep"].max_nodes
    assert part.budgets["max_depth"].value == SCOPE_PRESETS["deep"].max_depth


@pytest.mark.parametrize("env, expected", [
    ({}, "OPENAI_API_KEY: not set"),
    ({"OPENAI_API_KEY": "sk-test-value-123"}, "OPENAI_API_KEY: set (environment)"),
])
def test_key_presence_is_shown_never_the_value(tmp_path, env, expected):
    part = _wizard(tmp_path, env=env).experiment_panel.run_settings
    part.backend.value = "openai"
    assert expected in part.key.value and "sk-test" not in part.key.value
    part.backend.value = "ollama"
    assert "ollama needs no API key" in part.key.value


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_every_word_of_the_part_is_translated_also_with_findings(tmp_path, lang):
    part = _wizard(tmp_path, lang=lang).experiment_panel.run_settings
    part.backend.value = "openai"
    part.model.value = "gpt-9"
    part.budgets["parallel"].value = -1
    part.partitions.value = "a b"
    assert len(_rules(part)) >= 3
    strings = visible_strings(part)
    assert len(strings) > 30
    assert english_sentences(strings) == []


def test_from_checkpoint_restores_the_run_settings(tmp_path):
    site_file, workspace = site_and_workspace(tmp_path)

    async def scenario():
        wizard = Wizard(site=str(site_file), bridge=fake_bridge()[0])
        await wizard.wait()
        fill_experiment(wizard, workspace)
        part = wizard.experiment_panel.run_settings
        part.backend.value = "openai"
        part.model.value = "gpt-5.4"
        part.preset.value = "quick"
        part.budgets["max_react"].value = 33
        part.phases["coding"].value = "gpt-4o"
        part.choices["paper_language"].value = "ja"
        part.allow_web.value = True
        part.partitions.value = "small"
        await wizard.wait()
        result = wizard.experiment_panel.do_write()
        assert result is not None, wizard.experiment_panel.result.value
        restored = Wizard.from_checkpoint(result.checkpoint_dir, site=str(site_file),
                                          run_probes=False, bridge=fake_bridge()[0])
        return wizard, restored, result

    wizard, restored, result = run(scenario())
    assert restored.state.run_settings == wizard.state.run_settings
    part = restored.experiment_panel.run_settings
    assert (part.backend.value, part.model.value, part.preset.value) == ("openai", "gpt-5.4", "quick")
    assert part.budgets["max_react"].value == 33 and part.phases["coding"].value == "gpt-4o"
    assert part.choices["paper_language"].value == "ja" and part.allow_web.value is True
    assert part.partitions.value == "small"
    env = (workspace / "checkpoints" / RUN_ID / ".env").read_text()
    assert "ARI_MODEL=gpt-5.4\n" in env and "ARI_MAX_REACT=33\n" in env and "ARI_MODEL_CODING=gpt-4o\n" in env


def test_the_cli_flags_write_the_same_files(tmp_path):
    """Same settings typed into the part and given as emit's flags: byte-identical files."""
    site_file, workspace = site_and_workspace(tmp_path)

    async def scenario():
        wizard = Wizard(site=str(site_file), bridge=fake_bridge()[0])
        await wizard.wait()
        fill_experiment(wizard, workspace)
        part = wizard.experiment_panel.run_settings
        part.backend.value = "anthropic"
        part.model.value = "claude-opus-4-5"
        part.api_base.value = "http://localhost:4000"
        part.preset.value = "thorough"
        part.budgets["max_nodes"].value = 45
        part.budgets["node_timeout_min"].value = 90
        part.phases["review"].value = "claude-haiku-3-5"
        part.choices["frontier_score"].value = "ucb_like"
        part.choices["paper_format"].value = "neurips"
        part.partitions.value = "small,large"
        await wizard.wait()
        assert not wizard.experiment_panel.write.disabled, wizard.experiment_panel.write_reason.value
        return wizard.experiment_panel.do_write()

    assert run(scenario()) is not None
    from_wizard = tmp_path / "from_wizard"
    workspace.rename(from_wizard)
    workspace.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "ari_jupyter", "emit", "--site", str(site_file), "--title", "Sparse GEMM scaling",
         "--goal", "Measure how SpGEMM throughput scales from one to two nodes.", "--metric", "GFlops",
         "--workspace", str(workspace), "--run-id", RUN_ID, "--walltime", "00:30:00", "--max-cpus", "1",
         "--llm-backend", "anthropic", "--llm-model", "claude-opus-4-5",
         "--llm-api-base", "http://localhost:4000", "--scope-preset", "thorough", "--max-nodes", "45",
         "--node-timeout-min", "90", "--phase-model", "review=claude-haiku-3-5",
         "--frontier-score", "ucb_like", "--paper-format", "neurips", "--valid-partitions", "small,large",
         "--lang", "en", "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    ckpt = f"checkpoints/{RUN_ID}"
    for name in (f"{ckpt}/experiment.md", f"{ckpt}/.env", f"launch/{RUN_ID}.sh"):
        assert (workspace / name).read_bytes() == (from_wizard / name).read_bytes(), name
    configs = []
    for root in (workspace, from_wizard):
        config = json.loads((root / ckpt / "launch_config.json").read_text())
        config["ari_jupyter"].pop("written_at")
        configs.append(config)
    assert configs[0] == configs[1]
    assert configs[0]["max_nodes"] == 45 and configs[0]["llm_provider"] == "anthropic"


@pytest.mark.parametrize("found, off, severity, key", [
    (True, (), None, None),
    (True, ("include_ear",), None, None),
    (False, (), "info", "rs_stages_default"),
    (False, ("include_review",), "error", "rs_stages_need_ari"),
])
def test_the_stage_boxes_say_what_they_can_do_without_ari(found, off, severity, key):
    """Stages live in ARI's workflow.yaml: without ARI here, a stage switched off is refused at
    Write, and said beside the boxes before that (it was said only after Write)."""
    from dataclasses import replace

    from ari_jupyter.ari.run_settings import RunSettings
    from ari_jupyter.wizard.run_settings_view import stages_note

    settings = replace(RunSettings(), **{name: False for name in off})
    note = stages_note(settings, found)
    assert (note[0], note[1].message_id) == (severity, key) if severity else note is None


@pytest.mark.parametrize("found, demo, off, switchable", [
    (True, True, (), True),                    # ARI here: every box works
    (False, False, (), True),                  # a real machine: installing ARI is the way out
    (False, True, (), False),                  # a class on a demo site cannot install ARI
    (False, True, ("include_review",), True),  # a reopened run's stage can go back on
])
def test_stage_boxes_are_fixed_only_on_a_demo_site_without_ari(found, demo, off, switchable):
    from dataclasses import replace

    from ari_jupyter.ari.run_settings import RunSettings
    from ari_jupyter.wizard.run_settings_view import stages_switchable

    settings = replace(RunSettings(), **{name: False for name in off})
    assert stages_switchable(settings, found, demo=demo) is switchable


def test_on_a_demo_site_without_ari_the_stage_boxes_stay_on_and_say_why():
    """A teacher unticking a stage met a refusal the class could not lift (install ARI): on a
    demo site without ARI the boxes stay as ARI runs them, and the note says so."""
    from widget_text import shown

    wizard = Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0])
    part = wizard.experiment_panel.run_settings
    wizard.ctx.workflow_found = False
    part.refresh()
    assert all(box.disabled and box.value for box in part.stages.values())
    assert "the stages stay on here" in shown(part.stages_note.value)
    wizard.ctx.lang = "zh"
    assert "这里不能关闭阶段" in shown(part.stages_note.value)
    wizard.ctx.workflow_found = True
    part.refresh()
    assert not any(box.disabled for box in part.stages.values())


def test_the_wizard_shows_the_stage_note_as_the_boxes_change():
    from widget_text import shown

    wizard = Wizard(site="gres-cluster", run_probes=False, bridge=fake_bridge()[0])
    part = wizard.experiment_panel.run_settings
    wizard.ctx.workflow_found = False  # this machine's ARI, whichever it is: the case without
    part.refresh()
    assert "ARI runs every stage" in shown(part.stages_note.value)
    part.stages["include_ear"].value = False
    assert "Write will refuse it" in shown(part.stages_note.value)
    assert "ari-sev-error" in part.stages_note.value


def test_a_stage_switched_off_without_ari_disables_write_and_says_why_once(tmp_path):
    """No ARI on this machine: a stage box unticked blocks Write (the status above the button
    says why, not "ready"), the reason is said beside the boxes and not again in the list below
    them; ticked again, Write is ready. The CLI refuses the same (test_ari_run_settings)."""
    from widget_text import shown

    wizard = Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0])
    wizard.ctx.workflow_found = False
    wizard.state.workspace = str(tmp_path)
    for name, value in (("title", "Stencil"), ("goal", "Scale it."), ("metrics", ["GFlops"])):
        setattr(wizard.state, name, value)
    panel = wizard.experiment_panel
    part = panel.run_settings
    assert not panel.write.disabled
    part.stages["include_reproduce"].value = False
    assert panel.write.disabled
    assert "Write is disabled" in shown(panel.write_reason.value)  # (the stage boxes are above)
    assert "ready" not in shown(panel.write_reason.value)
    assert "A stage is switched off" not in shown(part.findings.value)
    assert "Write will refuse it" in shown(part.stages_note.value)
    part.stages["include_reproduce"].value = True
    assert not panel.write.disabled and "Write is disabled" not in shown(panel.write_reason.value)
