"""The wizard as a whole: site choice, probes filling the rows, navigation, language, restore."""
import os

import pytest

from ari_jupyter.wizard.config import AriWizard
from ari_jupyter.i18n import t
from ari_jupyter.probes import PROBE_IDS
from ari_jupyter.widgets._base import is_shown
from ari_jupyter.widgets.wizard import Wizard

from test_widgets_support import fake_bridge, fill_experiment, run, site_and_workspace


def test_outside_an_allocation_the_configured_demo_site_is_used():
    async def scenario():
        wizard = Wizard(config=AriWizard(demo_site="sx40"), env={"HOME": "/home/x", "USER": "x"},
                        bridge=fake_bridge()[0])
        await wizard.wait()
        return wizard

    wizard = run(scenario())
    assert wizard.ctx.site_name == "sx40"
    assert wizard.state.site_name == "sx40"
    assert wizard.state.allocation.job_id == "48213"
    assert "sx40" in wizard.allocation_panel.banner.value
    # every probe ran and its row shows the verdict, not a spinner
    assert set(wizard.state.probe_results) == set(PROBE_IDS)
    for probe_id, row in wizard.checks_panel.rows.items():
        assert "spin" not in row.icon.icon, probe_id
    assert wizard.state.probe_results["gres"].data["has_gres"] is False


def test_outside_an_allocation_without_a_demo_site_the_wizard_says_so():
    wizard = Wizard(config=AriWizard(), env={"HOME": "/home/x", "USER": "x", "PATH": "/nonexistent"},
                    run_probes=False, bridge=fake_bridge()[0])
    assert not wizard.state.allocation.inside_allocation
    assert t("alloc_banner_outside", "en")[:40] in wizard.allocation_panel.banner.value.replace("&#x27;", "'")
    assert is_shown(wizard.allocation_panel.demo_picker)
    assert set(wizard.allocation_panel.demo_picker.options) >= {"sx40", "rccs-cloud", "gres-cluster", "laptop"}


def test_picking_a_demo_site_switches_host_allocation_and_probes():
    async def scenario():
        wizard = Wizard(config=AriWizard(), env={"HOME": "/home/x", "USER": "x", "PATH": "/nonexistent"},
                        run_probes=False, bridge=fake_bridge()[0])
        wizard.allocation_panel.demo_picker.value = "gres-cluster"
        await wizard.wait()
        return wizard

    wizard = run(scenario())
    assert wizard.ctx.site_name == "gres-cluster"
    assert wizard.state.allocation.gpus_on_node == 4
    assert wizard.state.probe_results["gres"].data["has_gres"] is True
    assert "gres-cluster" in wizard.header.value


def _shown(wizard):
    """(step index, the panel shown): every panel built is a child, only the step's is shown."""
    panels = [child for child in wizard.children if child in wizard._panels]
    assert panels == [p for p in wizard._panels if p is not None]
    shown = [panel for panel in panels if is_shown(panel)]
    assert shown == [wizard.panel]
    return wizard.step, shown[0]


@pytest.mark.parametrize("lang", ["ja", "zh", "en"])
def test_a_language_switch_stays_on_the_step_shown(lang):
    """New step labels reset the buttons to step 1 on their way (ipywidgets): the wizard must
    not show step 1 meanwhile, nor rebuild the step shown."""
    wizard = Wizard(site="rccs-cloud", lang="en" if lang != "en" else "ja", run_probes=False,
                    bridge=fake_bridge()[0])
    wizard.go(3)
    panel = wizard.experiment_panel
    shown = []
    wizard.observe(lambda change: shown.append(change["new"]), names="children")
    wizard.language.value = lang
    assert _shown(wizard) == (3, panel)
    assert shown == []  # the children never changed, not even for a moment
    assert wizard.steps.value == 3 and not wizard.back.disabled


def test_back_next_and_step_indicator_move_through_the_steps():
    wizard = Wizard(site="laptop", run_probes=False, bridge=fake_bridge()[0])
    assert wizard._back is None  # step 1 has nothing to go back to: no Back to open
    assert [type(c).__name__ for c in wizard.children] == [
        "HTML", "Dropdown", "HTML", "ToggleButtons", "AllocationPanel", "Button"]
    wizard.next.click()
    assert wizard.children[-2:] == (wizard.back, wizard.next) and not wizard.back.disabled
    assert wizard.back.description == t("nav_back", wizard.ctx.lang)
    wizard.next.click()
    assert _shown(wizard) == (2, wizard.profile_panel) and wizard.steps.value == 2
    wizard.next.click()
    assert _shown(wizard)[0] == 3 and not wizard.next.disabled and not wizard.back.disabled
    wizard.next.click()
    assert _shown(wizard) == (4, wizard.doctor_panel) and wizard.next.disabled
    wizard.next.click()
    assert _shown(wizard)[0] == 4
    wizard.steps.value = 1
    assert _shown(wizard) == (1, wizard.checks_panel)
    wizard.back.click()
    assert _shown(wizard) == (0, wizard.allocation_panel) and wizard.back.disabled
    assert [type(c).__name__ for c in wizard.children] == [
        "HTML", "Dropdown", "HTML", "ToggleButtons", "AllocationPanel", "ChecksPanel",
        "ProfilePanel", "ExperimentPanel", "DoctorPanel", "Button", "Button"]
    assert not is_shown(wizard.back)  # step 1 shows no Back
    wizard.next.click()
    assert is_shown(wizard.back) and _shown(wizard) == (1, wizard.checks_panel)


def test_a_step_change_moves_only_the_two_panels():
    """Going back to a step already shown sends the two panels' classes (and the buttons'
    state), never the wizard's children: replacing a child makes the page build its view again."""
    wizard = Wizard(site="laptop", run_probes=False, bridge=fake_bridge()[0])
    for step in range(5):
        wizard.go(step)
    changed = []
    wizard.observe(lambda change: changed.append(change["name"]), names="children")
    for step in (2, 0, 4, 1):
        wizard.go(step)
        assert _shown(wizard) == (step, wizard.panel)
    assert changed == []


def test_back_built_after_a_language_switch_speaks_the_new_language():
    wizard = Wizard(site="laptop", lang="en", run_probes=False, bridge=fake_bridge()[0])
    wizard.language.value = "ja"
    wizard.go(1)
    assert wizard.back.description == t("nav_back", "ja") and not wizard.back.disabled


@pytest.mark.parametrize("shown_before", [True, False], ids=["panels-shown", "panels-not-yet-built"])
@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_language_switch_relabels_every_step(lang, shown_before):
    wizard = Wizard(site="rccs-cloud", lang="en", run_probes=False, bridge=fake_bridge()[0])
    assert wizard.next.description == "Next"
    if shown_before:
        for step in range(5):
            wizard.go(step)
        assert wizard.checks_panel.rerun.description == t("checks_rerun", "en")
    wizard.language.value = lang
    assert wizard.state.lang == lang
    assert wizard.next.description == t("nav_next", lang)
    assert wizard.steps.options[1][0].endswith(t("step_checks", lang))
    assert wizard.checks_panel.rerun.description == t("checks_rerun", lang)
    assert wizard.experiment_panel.write.description == t("exp_write", lang)
    assert t("placement_title", lang) in wizard.allocation_panel.facts.value
    assert wizard.profile_panel.partition.description == t("profile_partition", lang)


def test_default_language_follows_the_locale():
    wizard = Wizard(site="laptop", run_probes=False, bridge=fake_bridge()[0],
                    env={"LANG": "zh_CN.UTF-8", "HOME": "/h", "USER": "u"})
    assert wizard.state.lang == "zh"
    assert wizard.next.description == t("nav_next", "zh")


def test_site_defaults_come_from_config(tmp_path):
    config = AriWizard(workspace_template="/scratch/{user}/ari-runs", default_preset="mpi",
                       demo_workspace_template=str(tmp_path / "teach" / "{user}-{site}"))
    wizard = Wizard(site="rccs-cloud", config=config, run_probes=False, bridge=fake_bridge()[0],
                    env={"HOME": str(tmp_path), "USER": "student"})
    # a demo site: the workspace is on this machine, and the site sees it as its own template
    assert wizard.state.workspace == str(tmp_path / "teach" / "student-rccs-cloud")
    assert wizard.ctx.host.realpath(wizard.state.workspace) == "/scratch/u12345/ari-runs"
    assert wizard.state.profile.kind == "mpi"
    assert wizard.state.partition == "small"  # the allocation's, ARI's sources being empty
    assert wizard.state.partition_source == "SLURM_JOB_PARTITION"
    assert wizard.state.nodes == 2


def test_from_checkpoint_restores_the_written_state(tmp_path):
    site_file, workspace = site_and_workspace(tmp_path)

    async def scenario():
        wizard = Wizard(site=str(site_file), bridge=fake_bridge()[0])
        await wizard.wait()
        fill_experiment(wizard, workspace)
        wizard.profile_panel.preset.value = "mpi"
        await wizard.wait()
        result = wizard.experiment_panel.do_write()
        assert result is not None, wizard.experiment_panel.result.value
        restored = Wizard.from_checkpoint(result.checkpoint_dir, site=str(site_file),
                                          run_probes=False, bridge=fake_bridge()[0])
        return wizard, restored

    wizard, restored = run(scenario())
    original = wizard.state.to_json()
    again = restored.state.to_json()
    assert again == original
    assert restored.experiment_panel.title.value == "Sparse GEMM scaling"
    assert restored.profile_panel.fields["requested_nodes"].widget.value == "2"
    assert restored.ctx.site_name == wizard.ctx.site_name


def test_wizard_is_importable_from_the_package():
    import ari_jupyter

    assert ari_jupyter.Wizard is Wizard


def test_a_restored_demo_run_reopens_on_its_demo_site():
    from ari_jupyter.wizard.state import WizardState

    state = WizardState(site_name="sx40", title="x")
    wizard = Wizard(state=state, run_probes=False, bridge=fake_bridge()[0],
                    env={"HOME": "/h", "USER": "u", "PATH": "/nonexistent"})
    assert wizard.ctx.site_name == "sx40" and wizard.state is state


def test_suggested_modules_are_preselected_when_the_site_has_them():
    async def scenario():
        wizard = Wizard(site="rccs-cloud", bridge=fake_bridge()[0],
                        config=AriWizard(suggested_modules=["openmpi/4.1", "nvhpc/24.3"]))
        await wizard.wait()
        return wizard

    wizard = run(scenario())
    assert wizard.state.module_loads == ["openmpi/4.1"]  # nvhpc is not in this site's module avail
    assert list(wizard.profile_panel.modules.value) == ["openmpi/4.1"]


def test_a_real_allocation_uses_the_workspace_template():
    env = {"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_JOB_NUM_NODES": "2",
           "SLURM_NNODES": "2", "SLURM_JOB_PARTITION": "small", "USER": "bob", "HOME": "/home/bob"}
    config = AriWizard(workspace_template="/lustre/{user}/{job_id}")
    wizard = Wizard(config=config, run_probes=False, bridge=fake_bridge()[0], env=env)
    assert wizard.ctx.site_reason == "site_reason_allocation"
    assert wizard.state.workspace == "/lustre/bob/42"
    assert wizard.ctx.host.realpath("/lustre/bob/42") == os.path.realpath("/lustre/bob/42")


def test_later_steps_are_built_when_first_shown_from_the_current_state_and_language():
    from ari_jupyter.widgets._base import Panel

    wizard = Wizard(site="rccs-cloud", lang="en", run_probes=False, bridge=fake_bridge()[0])
    assert _shown(wizard) == (0, wizard._panels[0])
    assert wizard._panels[1:] == [None] * 4
    wizard.ctx.state.title = "Built later"
    wizard.ctx.state.partition = "large"
    wizard.language.value = "ja"
    wizard.next.click()
    wizard.next.click()
    wizard.next.click()
    step, panel = _shown(wizard)
    assert step == 3 and panel is wizard.experiment_panel and isinstance(panel, Panel)
    assert panel.title.value == "Built later"
    assert panel.write.description == t("exp_write", "ja")
    assert wizard.profile_panel.partition.value == "large"  # step 3 was passed through: built
    assert wizard._panels[2] is wizard.profile_panel
    assert wizard._panels[4] is None
    wizard.ctx.state.title = "Changed after"
    assert panel.title.value == "Changed after"  # a built panel follows the state as before


def test_wizard_outside_a_kernel_defers_its_probes_until_displayed():
    wizard = Wizard(site="laptop", bridge=fake_bridge()[0])  # no running loop
    runner = wizard.ctx.runner
    assert set(runner.deferred) == set(PROBE_IDS) and wizard.ctx.state.probe_results == {}
    bundle = wizard._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert runner.deferred == () and set(wizard.ctx.state.probe_results) == set(PROBE_IDS)


def test_a_deferred_run_is_only_scheduled_inside_a_loop_and_awaited_by_wait():
    wizard = Wizard(site="laptop", bridge=fake_bridge()[0])  # built without a loop
    runner = wizard.ctx.runner

    async def scenario():
        wizard._repr_mimebundle_()  # as a kernel displays it: must not block the loop
        scheduled = (set(runner.running), dict(wizard.ctx.state.probe_results))
        await wizard.wait()
        return scheduled

    running, results_when_scheduled = run(scenario())
    assert running == set(PROBE_IDS) and results_when_scheduled == {}
    assert set(wizard.ctx.state.probe_results) == set(PROBE_IDS) and runner.running == []


def test_wait_runs_a_deferred_run_on_the_loop():
    wizard = Wizard(site="laptop", bridge=fake_bridge()[0])
    run(wizard.wait())
    assert set(wizard.ctx.state.probe_results) == set(PROBE_IDS)
    assert tuple(sorted(PROBE_IDS)) in wizard.ctx.runner.tasks  # ran as a task, not blocking


def _site_values(state):
    from ari_jupyter.wizard.site_defaults import SITE_FIELDS

    return {name: getattr(state, name) for name in SITE_FIELDS}


def test_in_a_kernel_a_new_runs_defaults_wait_for_the_loop_and_step_1_stays_as_shown():
    """Outside an allocation step 1 shows only the allocation and the site, given at once; the
    defaults come when the kernel's loop turns, equal to a wizard's without a loop, and step 1
    does not change for them (no message more)."""
    import asyncio

    plain = _site_values(Wizard(site="laptop", lang="en", run_probes=False,
                                bridge=fake_bridge()[0]).ctx.state)
    assert plain["workspace"] and plain["profile"] is not None

    async def scenario():
        wizard = Wizard(site="laptop", lang="en", run_probes=False, bridge=fake_bridge()[0])
        step_1 = wizard._panels[0]
        shown = (step_1.banner.value, step_1.demo_picker.value)
        given = (wizard.ctx.state.site_name, wizard.ctx.state.allocation is not None,
                 wizard.ctx.state.workspace)
        await asyncio.sleep(0)
        return wizard, shown, given

    wizard, shown, given = run(scenario())
    assert given == ("laptop", True, "")
    assert _site_values(wizard.ctx.state) == plain
    assert (wizard._panels[0].banner.value, wizard._panels[0].demo_picker.value) == shown


@pytest.mark.parametrize("look", ["state", "probe context", "step 3", "site switch"])
def test_whatever_reads_the_defaults_before_the_loop_turns_gets_them(look):
    expected = _site_values(Wizard(site="laptop", lang="en", run_probes=False,
                                   bridge=fake_bridge()[0]).ctx.state)

    async def scenario():
        wizard = Wizard(site="laptop", lang="en", run_probes=False, bridge=fake_bridge()[0])
        if look == "state":
            return _site_values(wizard.state)
        if look == "probe context":
            return {"workspace": wizard.ctx.runner.context().workspace}
        if look == "step 3":
            wizard.go(2)
            return {"partition": wizard.profile_panel.partition.value,
                    "workspace": wizard.ctx.state.workspace}
        wizard.use_site("laptop")
        return _site_values(wizard.ctx.state)

    seen = run(scenario())
    assert seen == {name: expected[name] for name in seen}


def test_inside_an_allocation_the_defaults_are_given_at_once():
    """Step 1 shows the placement there, which reads them."""
    async def scenario():
        wizard = Wizard(site="rccs-cloud", lang="en", run_probes=False, bridge=fake_bridge()[0])
        return wizard.ctx.state.allocation.inside_allocation, _site_values(wizard.ctx.state)

    inside, values = run(scenario())
    assert inside
    assert values == _site_values(Wizard(site="rccs-cloud", lang="en", run_probes=False,
                                         bridge=fake_bridge()[0]).ctx.state)


@pytest.mark.parametrize("how", ["a new run in a kernel", "an empty state given"])
def test_a_profile_made_when_first_needed_is_followed_as_one_made_at_once(how):
    """Step 1 outside an allocation makes no execution profile (nor loads its module); once
    one is made, by the run's defaults or a first look, editing it reaches every view derived
    from it."""
    import asyncio

    from ari_jupyter.wizard.state import WizardState

    async def scenario():
        state = WizardState() if how == "an empty state given" else None
        wizard = Wizard(state=state, site="laptop", lang="en", run_probes=False,
                        bridge=fake_bridge()[0])
        made_at_start = wizard.ctx.state.trait_has_value("profile")
        await asyncio.sleep(0)
        notified = []
        wizard.ctx.observe_plan(lambda: notified.append(True))
        wizard.state.profile.ntasks_per_node = 2
        return made_at_start, notified

    made_at_start, notified = run(scenario())
    assert not made_at_start and notified


def test_without_probes_nothing_is_deferred():
    wizard = Wizard(site="laptop", run_probes=False, bridge=fake_bridge()[0])
    assert wizard.ctx.runner.deferred == ()
    assert wizard.state.probe_results == {}


def test_the_header_names_a_picked_demo_site_at_once():
    """Picking a demo site in step 1 says so in the header right away (it kept "this machine,
    not inside a SLURM allocation" until another step was shown)."""
    from ari_jupyter.i18n import t
    from widget_text import as_shown, shown

    wizard = Wizard(run_probes=False, bridge=fake_bridge()[0], lang="ja", env={})
    wizard.use_site("gres-cluster")
    header = shown(wizard.header.value)
    assert as_shown(t("wizard_site", "ja", site="gres-cluster",
                      reason=t("site_reason_given", "ja"))) in header
    assert as_shown(t("site_reason_outside", "ja")) not in header


@pytest.mark.parametrize("lang, env, step, expected", [
    ("en", {}, 0, '/ari-jupyter/guides/wizard.md#step-1'),
    ("ja", {}, 2, '/ari-jupyter/guides/wizard.ja.md#step-3'),
    ("zh", {}, 4, '/ari-jupyter/guides/wizard.zh.md#step-5'),
    # under JupyterHub the single-user server's prefix, which its kernels are given
    ("en", {"JUPYTERHUB_SERVICE_PREFIX": "/user/alice/"}, 3,
     '/user/alice/ari-jupyter/guides/wizard.md#step-4'),
])
def test_each_step_links_to_its_section_of_the_shipped_guide(lang, env, step, expected):
    wizard = Wizard(config=AriWizard(), lang=lang, run_probes=False, bridge=fake_bridge()[0],
                    env={"HOME": "/home/x", "USER": "x", "PATH": "/nonexistent", **env})
    header = wizard.header.value
    wizard.go(step)
    assert f'href="{expected}"' in wizard.guide.value
    assert t("wizard_guide_link", lang) in wizard.guide.value
    # the header, with the style sheet in it, is not sent again on a step change
    assert wizard.header.value == header
