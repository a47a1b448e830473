"""Teaching on a demo site: Write works on this machine out of the box, while the shared-
filesystem verdict is the demo site's own view of its default workspace."""
import os
from pathlib import Path

import pytest

from ari_jupyter.wizard.config import AriWizard
from ari_jupyter.widgets.wizard import Wizard

from test_widgets_support import fake_bridge, run

RUN_ID = "20261129120000_demo_run"


def demo_wizard(tmp_path: Path, site: str):
    async def scenario():
        wizard = Wizard(site=site, config=AriWizard(), bridge=fake_bridge()[0], lang="en",
                        env={"HOME": str(tmp_path), "USER": "student", "LANG": "C"})
        panel, profile = wizard.experiment_panel, wizard.profile_panel
        panel.title.value = "Demo run"
        panel.goal.value = "See what the wizard writes."
        panel.metrics.value = ["GFlops"]
        panel.run_id.value = RUN_ID
        profile.walltime.value = "00:30:00"
        profile.max_cpus.value = 1
        await wizard.wait()
        return wizard
    return run(scenario())


@pytest.mark.parametrize("site, on_site", [("rccs-cloud", "/work/u12345/ari"),
                                           ("sx40", "/work/alice/ari"),
                                           ("gres-cluster", "/gpfs/work/bob/ari")])
def test_write_on_a_demo_site_succeeds_with_the_default_workspace(tmp_path, site, on_site):
    wizard = demo_wizard(tmp_path, site)
    workspace = tmp_path / "ari-demo" / site
    assert wizard.state.workspace == str(workspace)
    verdict = wizard.state.probe_results["shared_fs"]
    assert verdict.status in ("ok", "warn") and verdict.data["resolved"] == on_site, verdict.summary
    panel = wizard.experiment_panel
    assert not panel.write.disabled, panel.write_reason.value
    panel.write.click()
    assert panel.last_emit is not None, panel.result.value
    checkpoint = workspace / "checkpoints" / RUN_ID
    assert panel.last_emit.checkpoint_dir == str(checkpoint)
    assert {"experiment.md", ".env", "launch_config.json"} <= {p.name for p in checkpoint.iterdir()}
    assert (workspace / "launch" / f"{RUN_ID}.sh").is_file()
    assert f"SLURM_LOG_DIR={workspace}/slurm_logs" in (checkpoint / ".env").read_text()
    assert str(checkpoint) in (workspace / "launch" / f"{RUN_ID}.sh").read_text()
    assert panel.confirm.layout.display == "none"  # nothing to confirm


def test_a_site_without_shared_storage_judges_the_demo_path_node_local(tmp_path):
    """laptop has no network filesystem: its verdict on the demo path is the laptop's, not
    this machine's (the path exists here, under tmp_path)."""
    wizard = demo_wizard(tmp_path, "laptop")
    verdict = wizard.state.probe_results["shared_fs"]
    assert verdict.status == "fail" and verdict.data["resolved"] == "/work/student/ari"
    assert verdict.data["fstype"] == "ext4"


def test_switching_sites_moves_a_default_workspace_but_keeps_a_typed_one(tmp_path):
    wizard = Wizard(site="rccs-cloud", config=AriWizard(), run_probes=False, bridge=fake_bridge()[0],
                    env={"HOME": str(tmp_path), "USER": "student"})
    wizard.ctx.runner.start = lambda only=None: None  # no probe runs: only the defaults matter
    wizard.ctx.switch_site("sx40")
    assert wizard.state.workspace == str(tmp_path / "ari-demo" / "sx40")
    assert wizard.ctx.host.realpath(wizard.state.workspace) == "/work/alice/ari"
    wizard.experiment_panel.workspace.value = str(tmp_path / "mine")
    wizard.ctx.switch_site("rccs-cloud")
    assert wizard.state.workspace == str(tmp_path / "mine")


def test_a_workspace_the_runs_panel_does_not_list_is_said_with_the_command_that_does(tmp_path):
    """The Runs panel (and ``ari-jupyter runs``) list the default workspace, the one the server
    picks from the same config and environment, and those runs were written to. Another one
    typed in step 4 gets a note naming both: Write makes the panel list it too."""
    from ari_jupyter.runs.service import default_workspace

    env = {"HOME": str(tmp_path), "USER": "student", "LANG": "C", "ARI_JUPYTER_DEMO_SITE": "rccs-cloud"}
    wizard = Wizard(config=AriWizard(), bridge=fake_bridge()[0], lang="en", env=env, run_probes=False)
    panel = wizard.experiment_panel
    listed = default_workspace(env)
    assert wizard.state.workspace == listed
    os.makedirs(listed)  # a workspace the panel lists (one that does not exist: the next test)
    panel.refresh()
    assert "ARI runs" not in panel.shared_fs.value
    panel.workspace.value = str(tmp_path / "my runs")
    assert "ARI runs" in panel.shared_fs.value and listed in panel.shared_fs.value
    assert "lists this workspace too" in panel.shared_fs.value
    assert f"ari-jupyter runs --workspace '{tmp_path / 'my runs'}'" in panel.shared_fs.value.replace("&#x27;", "'")
    panel.workspace.value = listed + "/"  # the same folder, written differently
    assert "ARI runs" not in panel.shared_fs.value


def test_a_default_runs_workspace_that_does_not_exist_is_not_named(tmp_path):
    """A teaching machine: the Runs panel's default workspace (the site config's) does not
    exist here, so step 4 does not send the user to it; it says the panel lists the workspace
    once a run is written, and the command that lists it now."""
    from ari_jupyter.runs.service import default_workspace

    env = {"HOME": str(tmp_path), "USER": "student", "LANG": "C", "ARI_JUPYTER_DEMO_SITE": "rccs-cloud"}
    wizard = Wizard(config=AriWizard(), bridge=fake_bridge()[0], lang="en", env=env, run_probes=False)
    panel = wizard.experiment_panel
    absent = default_workspace(env)
    assert not os.path.exists(absent)
    panel.workspace.value = str(tmp_path / "class")
    shown = panel.shared_fs.value.replace("&#x27;", "'")
    assert absent not in shown and "lists this workspace once Write has written a run here" in shown
    assert f"ari-jupyter runs --workspace {tmp_path / 'class'}" in shown
