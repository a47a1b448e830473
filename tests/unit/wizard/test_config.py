"""Site defaults from Jupyter config files, with the precedence Jupyter users expect."""
import json

import pytest
from traitlets import TraitError

from ari_jupyter.wizard.config import AriWizard, load_config, wizard_config


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
    from ari_jupyter.wizard.config import open_host
    from ari_jupyter.hosts.host import LocalHost

    config = AriWizard(workspace_template="/work/{user}/runs", demo_workspace_template="/l/{site}")
    env = {"HOME": "/home/me", "USER": "me"}
    site = open_host("gres-cluster", config, env)
    assert site.realpath("/l/gres-cluster/checkpoints/x") == "/gpfs/work/bob/runs/checkpoints/x"
    assert site.realpath("/home/bob") == "/gpfs/home/bob"  # the recording is untouched
    assert config.workspace_for_host(site, env) == "/l/gres-cluster"
    local = open_host(None, config, env)
    assert isinstance(local, LocalHost) and config.workspace_for_host(local) == "/work/me/runs"


def test_seed_defaults_fill_only_what_is_empty():
    from ari_jupyter.wizard.config import open_host
    from ari_jupyter.wizard.site_defaults import seed_defaults
    from ari_jupyter.wizard.state import WizardState

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


# -- a bad value costs its own key only ----------------------------------------------------------

BAD_VALUES = [
    # (file text, the key that is dropped, words the one-line message must contain)
    ("c.AriWizard.workspace_template = '/work/{usr}/ari'\n", "workspace_template",
     ["['usr']", "allowed: ['user', 'home', 'cluster', 'job_id']"]),
    ("c.AriWizard.probe_timeout = 'ten'\n", "probe_timeout", ["expected a float", "'ten'"]),
    ("c.AriWizard.probe_timeout = 0\n", "probe_timeout", ["more than 0 and at most 600 seconds"]),
    ("c.AriWizard.module_filter = '([unclosed'\n", "module_filter", ["not a valid regular expression"]),
    ("c.AriWizard.default_preset = 'gpu_hpc'\n", "default_preset", ["one of: cpu_single", "mpi"]),
    ("c.AriWizard.language = 'fr'\n", "language", ["one of: en, ja, zh"]),
    ("c.AriWizard.probe_timeouts = {'modulez': 30}\n", "probe_timeouts",
     ["unknown probe id 'modulez'", "known: sbatch"]),
    ("c.AriWizard.demo_workspace_template = '~/{place}'\n", "demo_workspace_template",
     ["allowed: ['site', 'user', 'home']"]),
]


@pytest.mark.parametrize("bad, key, words", BAD_VALUES)
def test_one_bad_value_drops_only_that_key(tmp_path, bad, key, words):
    from ari_jupyter.wizard.config import site_config

    path = tmp_path / "ari_jupyter_config.py"
    write(path, "c.AriWizard.default_partition = 'gpu'\n" + bad)
    wizard, problems = site_config(dirs=[tmp_path])
    assert wizard.default_partition == "gpu"  # the rest of the file still applies
    assert getattr(wizard, key) == getattr(AriWizard(), key)  # the bad key: its default
    (problem,) = problems
    line = str(problem)
    assert "\n" not in line and line.startswith(f"{path}: c.AriWizard.{key} ignored: ")
    for word in words:
        assert word in line, line


def test_an_unknown_key_is_one_line_naming_key_file_and_the_known_keys(tmp_path, recwarn):
    from ari_jupyter.wizard.config import site_config

    path = tmp_path / "ari_jupyter_config.json"
    write(path, json.dumps({"AriWizard": {"workspace_templat": "/lustre/{user}", "probe_timeout": 5}}))
    wizard, problems = site_config(dirs=[tmp_path])
    assert wizard.probe_timeout == 5
    assert [str(p) for p in problems] == [
        f"{path}: c.AriWizard.workspace_templat ignored: unknown key; did you mean "
        "workspace_template? known keys: " + ", ".join(sorted(AriWizard.class_trait_names(config=True)))]
    assert not [w for w in recwarn if "not recognized" in str(w.message)]  # no raw traitlets warning


def test_an_unknown_section_and_an_unparsable_file(tmp_path):
    from ari_jupyter.wizard.config import site_config

    user, system = tmp_path / "user", tmp_path / "system"
    write(user / "ari_jupyter_config.py", "c.AriWizrd.default_partition = 'gpu'\n")
    write(system / "ari_jupyter_config.json", '{"AriWizard": {"default_partition": ')
    write(system / "ari_jupyter_config.py", "c.AriWizard.default_partition = 'batch'\n")
    wizard, problems = site_config(dirs=[user, system])
    assert wizard.default_partition == "batch"  # the readable file in the same directory applies
    lines = [str(p) for p in problems]
    assert lines[0].startswith(f"{system / 'ari_jupyter_config.json'}: ignored, it cannot be read: ")
    assert lines[1] == (f"{user / 'ari_jupyter_config.py'}: c.AriWizrd ignored: unknown section; "
                        "this file sets c.AriWizard.<key> only")
    assert len(lines) == 2


def test_the_cli_names_the_bad_key_once_and_goes_on(tmp_path, monkeypatch):
    import subprocess
    import sys

    write(tmp_path / "ari_jupyter_config.py", "c.AriWizard.workspace_template = '/work/{usr}'\n"
                                              "c.AriWizard.bogus = 1\n"
                                              "c.AriWizard.probe_timeout = 3\n")
    env = {**__import__("os").environ, "JUPYTER_CONFIG_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "probe", "--site", "laptop",
                           "--only", "mpi", "--json"], capture_output=True, text=True, env=env,
                          timeout=60)
    lines = proc.stderr.splitlines()
    assert lines == [
        f"ari-jupyter probe: warning: {tmp_path / 'ari_jupyter_config.py'}: c.AriWizard."
        "workspace_template ignored: '/work/{usr}': workspace_template uses unknown placeholder(s) "
        "['usr']; allowed: ['user', 'home', 'cluster', 'job_id']",
        f"ari-jupyter probe: warning: {tmp_path / 'ari_jupyter_config.py'}: c.AriWizard.bogus "
        "ignored: unknown key; known keys: " + ", ".join(sorted(AriWizard.class_trait_names(config=True))),
    ], proc.stderr
    assert json.loads(proc.stdout)["probes"][0]["id"] == "mpi"
