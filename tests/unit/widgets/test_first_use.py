"""What a new user meets first: words that fit the site, and a calm form before anything is typed."""
import html
import re

import pytest

from ari_jupyter.wizard.site_defaults import named_preset
from ari_jupyter.widgets.wizard import Wizard

from test_widgets_support import fake_bridge, run


def wizard_on(site: str, lang: str = "en"):
    async def scenario():
        wizard = Wizard(site=site, lang=lang, bridge=fake_bridge()[0])
        await wizard.wait()
        return wizard
    return run(scenario())


def text(widget) -> str:
    return html.unescape(widget.value)


# -- sx40: the default kind is gpu_single on GPUs without GRES -------------------------------

@pytest.mark.parametrize("lang, without, with_gres", [
    ("en", "GPUs without GRES", "via GRES"),
    ("ja", "GRES のない GPU", "GRES あり"),
    ("zh", "无 GRES 的 GPU", "有 GRES"),
])
def test_sx40s_default_reads_as_gpus_without_gres(lang, without, with_gres):
    wizard = wizard_on("sx40", lang)
    panel = wizard.profile_panel
    assert wizard.state.profile.kind == "gpu_single" and not wizard.state.profile.gpu_type
    assert named_preset(wizard.ctx.site_profile()) == "gpu_single_nogres"
    assert panel.preset.value == "site"
    label = panel.preset.label
    assert "gpu_single" in label and without in label and with_gres not in label, label
    doc = text(panel.preset_doc)
    assert without.split()[0] in doc or "GRES" in doc
    # what it needs: no GPU request, a partition whose nodes have GPUs
    assert {"en": "requests none", "ja": "GPU を要求しません", "zh": "不申请 GPU"}[lang] in doc, doc


def test_a_site_with_gres_keeps_the_gres_words():
    panel = wizard_on("gres-cluster").profile_panel
    assert "via GRES" in panel.preset.label
    assert "without GRES" not in panel.preset.label


# -- a calm first look: required fields marked, their errors once touched or on Write ---------

def _errors_shown(panel) -> str:
    return text(panel.problems) + text(panel.run_id_note) + text(panel.write_reason)


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_a_fresh_step_4_shows_no_error_and_one_neutral_line_by_write(lang):
    from ari_jupyter.i18n import t

    wizard = wizard_on("rccs-cloud", lang)
    panel = wizard.experiment_panel
    assert panel.write.disabled  # the empty fields still block Write
    shown = _errors_shown(panel)
    assert "ari-msg-error" not in panel.problems.value and "ari-sev-error" not in shown, shown
    for rule in ("exp_title", "exp_goal", "exp_metrics"):
        assert t(rule, lang) in text(panel.write_reason)
    assert 'ari-write-awaiting' in panel.write_reason.value
    assert panel.write_reason.value.count("ari-write-reason") == 1  # one line
    assert all("ari-sev-error" not in child.value for child in panel.previews.children)
    assert "ari-required" in panel.title._dom_classes and "ari-required" in panel.goal._dom_classes
    assert "ari-required-label" in panel.metrics_label.value


def test_a_touched_field_shows_its_error_and_the_others_wait():
    wizard = wizard_on("rccs-cloud")
    panel = wizard.experiment_panel
    panel.title.value = "x"
    panel.title.value = ""  # typed, then emptied: touched
    assert "The title is empty." in text(panel.problems)
    assert "The research goal is empty." not in text(panel.problems)
    assert "Research goal" in text(panel.write_reason)  # still waiting, named in the line


def test_pressing_write_shows_every_fields_error():
    wizard = wizard_on("rccs-cloud")
    panel = wizard.experiment_panel
    assert panel.do_write() is None
    problems = text(panel.problems)
    for said in ("The title is empty.", "The research goal is empty.", "No metric"):
        assert said in problems
    assert "ari-write-awaiting" not in panel.write_reason.value


def test_the_laptops_step_3_waits_for_a_partition_before_calling_it_missing():
    wizard = wizard_on("laptop")
    panel = wizard.profile_panel
    assert not wizard.state.partition
    assert "No partition resolves" not in text(panel.box_messages["partition"])
    assert "ari-required" in panel.partition._dom_classes
    step4 = wizard.experiment_panel
    assert "Partition (step 3, Partition & profile)" in text(step4.write_reason)
    panel.partition.value = "x"
    panel.partition.value = ""
    assert "No partition resolves" in text(panel.box_messages["partition"])


def test_the_core_holds_back_only_untouched_empty_required_fields():
    from ari_jupyter.base.verdict import Finding
    from ari_jupyter.ari.judge import awaiting_input

    empty = Finding(rule="title_empty", severity="error", field="title", message="empty")
    other = Finding(rule="title_too_long", severity="error", field="title", message="long")
    assert awaiting_input([empty, other]) == [empty]
    assert awaiting_input([empty, other], touched={"title"}) == []
    assert awaiting_input([empty, other], attempted=True) == []


# -- the sbatch preview breaks only between arguments ----------------------------------------

def test_the_sbatch_preview_keeps_each_flag_with_its_value():
    panel = wizard_on("rccs-cloud").profile_panel
    value = re.sub(r'<wbr>|<span class="ari-seg">|</span>(?!</pre>| <span)', "", text(panel.sbatch_preview))
    assert '<span class="ari-arg">--partition small</span>' in value
    assert '<span class="ari-arg">--time 01:00:00</span>' in value
    assert re.search(r'<span class="ari-arg">--chdir \'[^\']*/repro_sandbox\'</span>', value)


# -- the wizard cell run again in the same kernel keeps what was typed -----------------------

def test_a_rerun_of_the_wizard_cell_in_a_kernel_keeps_what_was_typed(monkeypatch):
    from ari_jupyter.wizard import session
    from ari_jupyter.wizard.state import WizardState

    monkeypatch.setattr(session, "_LATEST", {"context": None})
    monkeypatch.setattr(session, "in_a_kernel", lambda: True)
    first = Wizard(site="sx40", lang="ja", bridge=fake_bridge()[0], run_probes=False)
    panel = first.experiment_panel
    panel.title.value = "Typed before the re-run"
    panel.metrics.value = ["GFlops"]
    again = Wizard(bridge=fake_bridge()[0], run_probes=False)  # the cell's `Wizard()` again
    assert again.ctx.site_name == "sx40" and again.ctx.lang == "ja"
    assert again.state.title == "Typed before the re-run" and again.state.metrics == ["GFlops"]
    assert again.state is not first.state  # its own copy: the old wizard no longer drives it
    assert "title" in again.ctx.touched
    fresh = Wizard(state=WizardState(), bridge=fake_bridge()[0], run_probes=False)
    assert fresh.state.title == ""


def test_outside_a_kernel_every_wizard_starts_afresh(monkeypatch):
    from ari_jupyter.wizard import session

    monkeypatch.setattr(session, "_LATEST", {"context": None})
    monkeypatch.setattr(session, "in_a_kernel", lambda: False)
    first = Wizard(site="sx40", bridge=fake_bridge()[0], run_probes=False)
    first.experiment_panel.title.value = "Typed"
    assert Wizard(bridge=fake_bridge()[0], run_probes=False).state.title == ""


def test_a_site_switch_says_it_is_pending_before_the_work():
    """The header names the new site as pending before the switch's work starts (its message
    leaves first), and the site's own line once done."""
    wizard = Wizard(site="rccs-cloud", bridge=fake_bridge()[0], run_probes=False)
    seen = []
    wizard.header.observe(lambda change: seen.append(html.unescape(change["new"])), names="value")
    wizard.use_site("sx40")
    assert "sx40 — switching" in seen[0], seen[:1]
    assert "switching" not in wizard.header.value and "sx40" in wizard.header.value
