"""Site defaults from Jupyter config files, with the precedence Jupyter users expect."""
import json

import pytest
from traitlets import TraitError

from ari_jupyter.config import AriWizard, load_config, wizard_config


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_defaults_without_any_file(tmp_path):
    wizard = wizard_config(dirs=[tmp_path])
    assert wizard.workspace_template == "/work/{user}/ari"
    assert wizard.probe_timeout == 10.0
    assert wizard.workspace_for({"USER": "alice", "HOME": "/home/alice"}) == "/work/alice/ari"


def test_user_directory_overrides_system_and_py_overrides_json(tmp_path):
    user, system = tmp_path / "user", tmp_path / "system"
    write(system / "ari_jupyter_config.json", json.dumps({"AriWizard": {
        "workspace_template": "/lustre/{user}/ari", "default_partition": "batch",
        "probe_timeout": 20}}))
    write(user / "ari_jupyter_config.json", json.dumps({"AriWizard": {"default_partition": "gpu"}}))
    write(user / "ari_jupyter_config.py", "c.AriWizard.module_filter = '^(cuda|openmpi)/'\n"
                                          "c.AriWizard.probe_timeouts = {'modules': 30.0}\n")
    wizard = wizard_config(dirs=[user, system])  # jupyter_config_path order: user first
    assert wizard.workspace_template == "/lustre/{user}/ari"
    assert wizard.default_partition == "gpu"
    assert wizard.probe_timeout == 20
    assert wizard.timeout_for("modules") == 30.0
    assert wizard.timeout_for("sbatch") == 20
    assert wizard.filter_modules(["cuda/12.4", "gcc/12", "openmpi/4.1"]) == ["cuda/12.4", "openmpi/4.1"]


def test_load_config_ignores_directories_without_files(tmp_path):
    assert dict(load_config([tmp_path / "missing", tmp_path])) == {}


@pytest.mark.parametrize("env, expected", [
    ({"USER": "bob", "HOME": "/home/bob", "SLURM_CLUSTER_NAME": "rccs", "SLURM_JOB_ID": "42"},
     "/scratch/rccs/bob/42"),
])
def test_workspace_placeholders(env, expected):
    wizard = AriWizard(workspace_template="/scratch/{cluster}/{user}/{job_id}")
    assert wizard.workspace_for(env) == expected


@pytest.mark.parametrize("trait, value", [
    ("workspace_template", "/work/{username}/ari"),
    ("module_filter", "([unclosed"),
    ("probe_timeout", 0),
    ("probe_timeout", 3600),
])
def test_invalid_site_values_are_rejected(trait, value):
    with pytest.raises(TraitError):
        AriWizard(**{trait: value})


def test_demo_site_environment_variable_wins_over_config():
    wizard = AriWizard(demo_site="laptop")
    assert wizard.effective_demo_site({}) == "laptop"
    assert wizard.effective_demo_site({"ARI_JUPYTER_DEMO_SITE": "sx40"}) == "sx40"


def test_explicit_object_is_used_as_is():
    wizard = AriWizard(default_partition="x")
    assert wizard_config(wizard) is wizard
