"""Every word translated: on every demo site, in ja and zh, after the probes and after Write,
no sentence a person sees is English (commands, paths, identifiers and quoted tool output
aside). The same walk in English finds English: the detector works."""
import re

import pytest

from ari_jupyter.ari.profile import PRESETS
from ari_jupyter.hosts.host import list_sites
from ari_jupyter.i18n import t
from ari_jupyter.widgets.wizard import STEP_KEYS, Wizard

from test_widgets_support import fake_bridge, run
from widget_text import english_sentences, visible_strings


def _every_step(wizard) -> list[str]:
    strings = []
    for index in range(len(STEP_KEYS)):
        wizard.go(index)
        strings += visible_strings(wizard)
    return strings


def _walk(site, lang, home):
    async def scenario():
        wizard = Wizard(site=site, bridge=fake_bridge()[0], env={"HOME": str(home)}, lang=lang)
        await wizard.wait()
        after_probes = _every_step(wizard)
        state = wizard.state
        state.title, state.goal, state.metrics = "SpGEMM", "Measure it.", ["GFlops"]
        wizard.experiment_panel.do_write(force=True)
        check = wizard.experiment_panel.start_handoff_check()
        if check is not None:
            await check
        return wizard, after_probes, _every_step(wizard)
    return run(scenario())


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_the_hand_off_verdicts_follow_a_language_switch(lang, tmp_path):
    """Checked in English, then the language switched: the verdicts are said again in it."""
    wizard, _, after_write = _walk("rccs-cloud", "en", tmp_path)
    verdicts = visible_strings(wizard.experiment_panel.handoff_checks)
    assert len(verdicts) >= 8 and english_sentences(verdicts)
    wizard.language.value = lang
    assert english_sentences(visible_strings(wizard.experiment_panel.handoff_checks)) == []


@pytest.mark.parametrize("lang", ["ja", "zh"])
@pytest.mark.parametrize("site", list_sites())
def test_no_visible_sentence_is_english(site, lang, tmp_path):
    wizard, after_probes, after_write = _walk(site, lang, tmp_path)
    assert len(after_probes) > 50
    assert english_sentences(after_probes) == []
    assert english_sentences(after_write) == []
    if site != "laptop":  # the laptop cannot write (no SLURM): its refusal is checked above
        assert wizard.experiment_panel.last_emit is not None
    # Japanese and Chinese put no space after a full stop (a sentence and its fix are joined)
    assert [s for s in after_probes + after_write if "。 " in s] == []


def test_english_says_no_plural_placeholders(tmp_path):
    """No "warning(s)" in English: a count reads "errors: 2" or "2 with warnings"."""
    _, after_probes, after_write = _walk("laptop", "en", tmp_path)  # a warning among its checks
    assert any(s.endswith(" with warnings") for s in after_probes)
    assert [s for s in after_probes + after_write if re.search(r"[a-z]\(s\)", s)] == []


def test_the_same_walk_in_english_finds_english(tmp_path):
    _, after_probes, after_write = _walk("rccs-cloud", "en", tmp_path)
    assert len(english_sentences(after_probes)) > 10
    assert any(s.startswith("Checkpoint written") for s in after_write)
    assert len(english_sentences(after_write)) > len(english_sentences(after_probes))


def test_step_titles_follow_the_language(tmp_path):
    wizard = Wizard(site="sx40", run_probes=False, bridge=fake_bridge()[0], lang="zh",
                    env={"HOME": str(tmp_path)})
    labels = [label for label, _ in wizard.steps.options]
    assert labels[0].startswith("1. ") and "Allocation" not in labels[0]


def _walk_presets(lang, home):
    """Choose every preset in English, then switch the language: the notes follow it."""
    async def scenario():
        wizard = Wizard(site="rccs-cloud", bridge=fake_bridge()[0], env={"HOME": str(home)},
                        lang="en")
        await wizard.wait()
        seen = {}
        for name in PRESETS:
            wizard.language.value = "en"
            wizard.go(STEP_KEYS.index("step_profile"))
            wizard.profile_panel.preset.value = name
            wizard.language.value = lang
            seen[name] = _every_step(wizard)
        return seen
    return run(scenario())


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_preset_notes_and_aris_refusal_follow_the_language(lang, tmp_path):
    """rccs-cloud has no GRES: a GPU preset shows ARI's refusal (quoted, as code) next to the
    translated note of the preset."""
    for name, strings in _walk_presets(lang, tmp_path).items():
        assert t("preset_" + name, lang) in strings, name
        assert english_sentences(strings) == [], name


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_the_sbatch_previews_warnings_follow_the_language(lang, tmp_path):
    """GPUs asked on a site without GRES, with "allow no GRES" ticked: ARI drops the GPU flags
    and the preview says so in the wizard's language."""
    async def scenario():
        wizard = Wizard(site="rccs-cloud", bridge=fake_bridge()[0], env={"HOME": str(tmp_path)},
                        lang=lang)
        await wizard.wait()
        wizard.go(STEP_KEYS.index("step_profile"))
        panel = wizard.profile_panel
        panel.preset.value = "gpu_single"  # one GPU per task: ARI refuses it without GRES
        panel.allow_no_gres.value = True
        return visible_strings(panel.sbatch_preview)
    shown = run(scenario())
    assert any("ARI_SLURM_ALLOW_NO_GRES=1" in s for s in shown), shown
    assert english_sentences(shown) == [], shown
