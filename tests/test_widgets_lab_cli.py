"""`ari-jupyter lab`: notebook copied when absent, demo site outside an allocation."""
import json
import subprocess
import sys
from pathlib import Path

from ari_jupyter.cli.lab import NOTEBOOK_NAME, packaged_notebook, plan_lab

REPO = Path(__file__).resolve().parent.parent


def test_outside_an_allocation_a_demo_site_is_set(tmp_path):
    plan = plan_lab(str(tmp_path), None, [], {"HOME": "/h"}, euid=1000)
    assert plan.env_changes == {"ARI_JUPYTER_DEMO_SITE": "rccs-cloud"}
    assert plan.copy_from == packaged_notebook()
    assert plan.argv[-1] == str(tmp_path / NOTEBOOK_NAME)
    assert plan.argv[1:4] == ["-m", "jupyter", "lab"]


def test_precedence_of_the_demo_site(tmp_path):
    env = {"ARI_JUPYTER_DEMO_SITE": "sx40"}
    assert plan_lab(str(tmp_path), "laptop", [], env, euid=1000).env_changes["ARI_JUPYTER_DEMO_SITE"] == "laptop"
    assert plan_lab(str(tmp_path), None, [], env, euid=1000).env_changes["ARI_JUPYTER_DEMO_SITE"] == "sx40"
    assert plan_lab(str(tmp_path), None, [], {}, euid=1000,
                    configured_demo_site="gres-cluster").env_changes["ARI_JUPYTER_DEMO_SITE"] == "gres-cluster"


def test_inside_an_allocation_no_demo_site_and_an_existing_notebook_is_kept(tmp_path):
    (tmp_path / NOTEBOOK_NAME).write_text("{}")
    env = {"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": "n1", "SLURM_JOB_NUM_NODES": "1"}
    plan = plan_lab(str(tmp_path), "sx40", ["--", "--port=9999"], env, euid=0)
    assert plan.env_changes == {} and plan.inside_allocation
    assert plan.copy_from is None
    assert plan.argv[-2:] == ["--allow-root", "--port=9999"]


def test_print_command_does_not_start_anything(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "lab", "--dir", str(tmp_path),
                           "--print-command"], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert "ARI_JUPYTER_DEMO_SITE=rccs-cloud" in proc.stdout
    assert not (tmp_path / NOTEBOOK_NAME).exists()


def test_the_packaged_notebook_is_the_repository_notebook_without_outputs():
    packaged = json.loads(packaged_notebook().read_text(encoding="utf-8"))
    repo = json.loads((REPO / "notebooks" / NOTEBOOK_NAME).read_text(encoding="utf-8"))
    assert packaged == repo
    for cell in repo["cells"]:
        assert cell.get("outputs", []) == [] and cell.get("execution_count") is None


def test_an_unknown_demo_site_is_refused_before_jupyterlab_starts(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "lab", "--dir", str(tmp_path),
                           "--demo-site", "atlantis", "--print-command"], capture_output=True,
                          text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert proc.returncode == 2
    assert "unknown demo site 'atlantis'" in proc.stderr and "rccs-cloud" in proc.stderr
