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


@pytest.mark.parametrize("template, env, expected", [
    ("~/ari-demo/{site}", {"HOME": "/home/t", "USER": "t"}, "/home/t/ari-demo/sx40"),
    ("/tmp/teach/{user}/{site}", {"HOME": "/home/t", "USER": "t"}, "/tmp/teach/t/sx40"),
    ("demo/{site}", {"HOME": "/home/t", "PWD": "/srv/class"}, "/srv/class/demo/sx40"),
    ("{home}/x/../demo-{site}", {"HOME": "/home/t"}, "/home/t/demo-sx40"),
])
def test_demo_workspace_is_a_local_absolute_path(template, env, expected):
    assert AriWizard(demo_workspace_template=template).demo_workspace_for("sx40", env) == expected


def test_demo_workspace_site_names_cannot_escape_the_directory():
    path = AriWizard(demo_workspace_template="/d/{site}").demo_workspace_for("../../etc x", {"HOME": "/h"})
    assert path.startswith("/d/") and ".." not in path and " " not in path


@pytest.mark.parametrize("template", ["/d/{job_id}", ""])
def test_invalid_demo_workspace_templates_are_rejected(template):
    with pytest.raises(TraitError):
        AriWizard(demo_workspace_template=template)


def test_demo_sites_map_the_local_workspace_onto_their_own():
    from ari_jupyter.config import open_host
    from ari_jupyter.host import LocalHost

    config = AriWizard(workspace_template="/work/{user}/runs", demo_workspace_template="/l/{site}")
    env = {"HOME": "/home/me", "USER": "me"}
    site = open_host("gres-cluster", config, env)
    assert site.realpath("/l/gres-cluster/checkpoints/x") == "/gpfs/work/bob/runs/checkpoints/x"
    assert site.realpath("/home/bob") == "/gpfs/home/bob"  # the recording is untouched
    assert config.workspace_for_host(site, env) == "/l/gres-cluster"
    local = open_host(None, config, env)
    assert isinstance(local, LocalHost) and config.workspace_for_host(local) == "/work/me/runs"


def test_seed_defaults_fill_only_what_is_empty():
    from ari_jupyter.config import open_host, seed_defaults
    from ari_jupyter.model import WizardState

    config = AriWizard(default_partition="large", default_preset="mpi", demo_workspace_template="/l/{site}")
    host = open_host("rccs-cloud", config, {"HOME": "/h"})
    fresh = WizardState()
    seed_defaults(fresh, config, host, {"HOME": "/h"})
    assert (fresh.workspace, fresh.partition, fresh.profile.kind) == ("/l/rccs-cloud", "large", "mpi")
    assert fresh.site_name == "rccs-cloud" and fresh.nodes == 2
    chosen = WizardState(workspace="/mine", partition="small", partition_source="explicit")
    chosen.profile = chosen.profile.__class__.from_json({"kind": "cpu_single"})
    seed_defaults(chosen, config, host, {"HOME": "/h"}, keep_profile=True)
    assert (chosen.workspace, chosen.partition, chosen.profile.kind) == ("/mine", "small", "cpu_single")
