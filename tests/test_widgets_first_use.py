"""What a new user meets first: words that fit the site, and a calm form before anything is typed."""
import html

import pytest

from ari_jupyter.site_defaults import named_preset
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
    ("en", "GPUs without GRES", "with GRES"),
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
    assert "requested through GRES" in panel.preset.label
    assert "without GRES" not in panel.preset.label
