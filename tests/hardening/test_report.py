"""The page generator takes areas it does not know (a new fuzz target's) and the summary
categories from any figure."""
from __future__ import annotations

from .report import render


def _row(area: str, check: str, lost: int = 0, **extra) -> dict:
    return {"area": area, "check": check, "cases": 10, "survived": 10 - lost, "lost": lost,
            "unit": "cases", "note": f"{area} text.", "outcome": "passed", "extra": extra}


def _page(rows: list[dict]) -> str:
    return render({"hypothesis_profile": "dev", "examples_per_property": 50, "root": True,
                   "generated_at": "now", "known_bugs": [], "rows": rows})


def test_an_unknown_area_gets_its_own_section_with_its_counts():
    page = _page([_row("Writes", "kill"), _row("Hostlists", "multi-bracket", hung=2, crashed=1)])
    assert "## Hostlists\n\nHostlists text." in page
    assert "| multi-bracket | 10 cases | 10 | 0 | pass | 1 crashed, 2 hung |" in page
    assert page.index("## Writes") < page.index("## Hostlists")
    assert "- Crashed: 1, Hung: 2, Leaked: 0" in page


def test_secrets_lost_count_as_leaked_and_faults_lost_as_hung():
    page = _page([_row("Secrets", "probe", lost=3), _row("Faults", "probe", lost=1)])
    assert "- Crashed: 0, Hung: 1, Leaked: 3" in page and "**Lost: 4**" in page
