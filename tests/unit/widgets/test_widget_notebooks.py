"""The notebooks are committed as documents to run, not as results: no outputs, no counts."""
from repo_paths import REPO
import json

import pytest

REPO = REPO
# the repository's notebooks and the packaged ones (the wizard's, the lessons)
NOTEBOOKS = sorted([*(REPO / "notebooks").rglob("*.ipynb"), *(REPO / "ari_jupyter" / "notebooks").rglob("*.ipynb")])
EXPECTED = {"ari_multinode_wizard.ipynb", "01_allocation_and_hostlists.ipynb",
            "02_site_probes_on_demo_sites.ipynb", "03_execution_profiles_and_sbatch.ipynb",
            "04_failure_modes.ipynb", "05_following_a_run.ipynb"}


def test_all_notebooks_are_there():
    assert {path.name for path in NOTEBOOKS} >= EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert "widgets" not in notebook.get("metadata", {})  # no saved widget state either
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_notebook_needs_a_cluster_or_a_secret(path):
    text = path.read_text(encoding="utf-8")
    for forbidden in ("API_KEY", "_TOKEN", "salloc ", "sbatch --wrap"):
        assert forbidden not in text, (path.name, forbidden)
