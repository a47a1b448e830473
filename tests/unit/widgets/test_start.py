"""What ``Wizard()`` costs a kernel: one comm per widget model, and no message after it.

Timings are the benchmarks' (P3j); these tests pin the structure those figures rest on.
"""
from __future__ import annotations

import pytest
from ipywidgets.widgets import widget
from ipywidgets.widgets.widget import Widget

from ari_jupyter.widgets._base import SharedLooks
from ari_jupyter.widgets.wizard import Wizard
from test_widgets_support import fake_bridge


@pytest.mark.parametrize("site", ["laptop", "rccs-cloud", None], ids=["demo-no-allocation",
                                                                     "demo-allocation", "this-machine"])
def test_every_widget_of_step_one_is_made_with_its_final_state(site, monkeypatch):
    """A change after a widget opened is one more kernel message: the wizard sends none."""
    sent = []
    original = Widget.send_state
    monkeypatch.setattr(Widget, "send_state",
                        lambda self, key=None: sent.append((type(self).__name__, key)) or original(self, key))
    Wizard(site=site, lang="en", run_probes=False, bridge=fake_bridge()[0])
    assert sent == []


def test_step_one_opens_few_widget_models():
    """Each Layout and style is a model (a comm) too: widgets that never change them share."""
    before = set(widget._instances)
    wizard = Wizard(site="rccs-cloud", lang="en", run_probes=False, bridge=fake_bridge()[0])
    made = [w for key, w in widget._instances.items() if key not in before]
    layouts = [w for w in made if type(w).__name__ == "Layout"]
    assert len(layouts) == 1 and wizard.layout is layouts[0]
    assert len(made) <= 26, sorted(type(w).__name__ for w in made)


def test_a_shared_layout_refuses_a_change():
    looks = SharedLooks()
    first, second = looks(widget_class_html()), looks(widget_class_html())
    assert first.layout is second.layout and first.style is second.style
    with pytest.raises(AttributeError, match="shared Layout cannot change"):
        first.layout.width = "10px"
    with pytest.raises(AttributeError, match="shared HTMLStyle cannot change"):
        second.style.font_size = "20px"
    assert first.layout.width is None and second.style.font_size is None  # nothing changed


def widget_class_html():
    import ipywidgets

    return ipywidgets.HTML


def test_a_wizard_closes_cleanly(recwarn):
    """Closing (as a kernel's shutdown or ``Widget.close_all()`` does) is no change a shared
    Layout or style refuses: every model's comm goes, nothing is raised or reported."""
    import sys

    unraisable = []
    hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        before = set(widget._instances)
        Wizard(site="rccs-cloud", lang="en", run_probes=False, bridge=fake_bridge()[0])
        opened = [widget._instances[k] for k in set(widget._instances) - before]
        for model in opened:
            model.close()
    finally:
        sys.unraisablehook = hook
    assert unraisable == []
    assert all(model.comm is None for model in opened)
    assert not set(widget._instances) - before
