"""Step 3's Modules box in a real JupyterLab: an entry the site does not offer is refused with
the reason, and comes back into the box, selected, to be corrected rather than typed again."""
from __future__ import annotations

import pytest

from .conftest import assert_no_console_errors
from .lab_helpers import LAUNCHER_CARD, open_lab, wizard_button

pytestmark = pytest.mark.e2e

PLACEHOLDER = "module name, e.g. openmpi/4.1, then Enter"


def test_a_refused_module_comes_back_to_be_corrected(lab, page):
    open_lab(page, lab)
    page.click(LAUNCHER_CARD)
    page.wait_for_selector(".ari-wizard", timeout=60_000)
    wizard_button(page, "gres-cluster").click()
    page.wait_for_selector('.ari-wizard .ari-site:has-text("gres-cluster")')
    wizard_button(page, "Partition & profile").click()
    box = page.get_by_placeholder(PLACEHOLDER)
    tags = page.locator(".ari-wizard .jupyter-widget-tagsinput", has=box)
    box.click()
    box.type("opnmpi/4.1.6")
    box.press("Enter")
    page.wait_for_selector('.ari-module-refused:has-text("opnmpi/4.1.6")', timeout=30_000)
    # the refused entry is back in the box, selected: one key fixes it
    page.wait_for_function("(input) => input.value === 'opnmpi/4.1.6'", arg=box.element_handle(),
                           timeout=10_000)
    assert tags.locator(".jupyter-widget-tag", has_text="opnmpi").count() == 0
    assert page.evaluate("(input) => input.selectionEnd - input.selectionStart",
                         box.element_handle()) == len("opnmpi/4.1.6")

    # corrected: accepted, and the box is left empty for the next entry
    box.press("Home")
    box.press("Delete")
    box.press("Delete")
    box.press("Delete")
    box.type("open")
    box.press("Enter")
    tags.locator(".jupyter-widget-tag", has_text="openmpi/4.1.6").wait_for(timeout=30_000)
    page.wait_for_selector(".ari-module-refused", state="detached", timeout=30_000)
    assert box.input_value() == ""
    assert_no_console_errors(page)
