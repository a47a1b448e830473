"""Step 3: partition with its source, presets, every profile key, inline messages, previews."""
import html
import json
import re

import pytest

from ari_jupyter.ari.profile import PRESETS, PROFILE_KEYS
from ari_jupyter.widgets.wizard import Wizard

from test_widgets_support import fake_bridge, make_site, run


def wizard_on(site: str):
    async def scenario():
        wizard = Wizard(site=site, bridge=fake_bridge()[0])
        await wizard.wait()
        return wizard
    return run(scenario())


def text(widget) -> str:
    return html.unescape(widget.value)


def shown_line(widget) -> str:
    """The preview as read: its pieces (each a span) joined as they are shown."""
    return re.sub(r"<[^>]+>", "", text(widget))


def test_every_profile_key_has_a_widget():
    wizard = Wizard(site="laptop", run_probes=False, bridge=fake_bridge()[0])
    assert set(wizard.profile_panel.fields) == set(PROFILE_KEYS) and len(PROFILE_KEYS) == 24


def test_partitions_come_from_the_probe_and_the_source_is_shown():
    wizard = wizard_on("gres-cluster")
    panel = wizard.profile_panel
    assert set(panel.partition.options) >= {"cpu", "gpu"}
    assert panel.partition.value == "gpu"
    assert "SLURM_JOB_PARTITION" in text(panel.partition_source)

    async def choose():
        panel.partition.value = "cpu"
        assert set(wizard.ctx.runner.running) == {"sbatch", "partitions", "gres"}
        await wizard.wait()
    run(choose())
    assert wizard.state.partition == "cpu" and wizard.state.partition_source == "explicit"
    assert "chosen in the wizard" in text(panel.partition_source)
    assert "--partition cpu" in shown_line(panel.sbatch_preview)


def test_ari_slurm_partition_in_the_environment_wins_and_is_named(tmp_path):
    import json

    site = make_site(tmp_path, "rccs-cloud")
    data = json.loads(site.read_text())
    data["env"]["ARI_SLURM_PARTITION"] = "large"
    site.write_text(json.dumps(data))
    wizard = Wizard(site=str(site), run_probes=False, bridge=fake_bridge()[0])
    assert wizard.state.partition == "large"
    assert "ARI_SLURM_PARTITION" in text(wizard.profile_panel.partition_source)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_preset_fills_every_field_from_the_core(preset):
    wizard = Wizard(site="gres-cluster", run_probes=False, bridge=fake_bridge()[0])
    panel = wizard.profile_panel
    panel.preset.value = preset
    expected = PRESETS[preset]().to_json()
    assert wizard.state.profile.to_json() == expected
    for key, value in expected.items():
        shown = panel.fields[key].widget.value
        if isinstance(value, list):
            assert list(shown) == value, key
        elif isinstance(value, bool) or value is None:
            assert shown == value, key
        else:
            assert shown == (str(value) if panel.fields[key].kind.endswith("int") else value), key


@pytest.mark.parametrize("site, kind", [("rccs-cloud", "cpu_single"), ("gres-cluster", "gpu_single"),
                                        ("sx40", "gpu_single"), ("laptop", "")])
def test_a_new_run_shows_the_sites_default_not_custom_and_returns_to_it(site, kind, tmp_path):
    """Nobody touched step 3: the preset row says "this site's default" and what it is (no
    "custom" the user did not make). After another preset, choosing it again gives exactly the
    profile a fresh wizard on the site starts with."""
    wizard = wizard_on(site)
    panel = wizard.profile_panel
    assert panel.preset.value == "site" and (wizard.state.profile.kind or "") == kind
    fresh = wizard.state.profile.to_json()
    doc = text(panel.preset_doc)
    assert (f"kind of program {kind}" in re.sub("<[^>]+>", "", doc)) if kind else "one process" in doc
    panel.preset.value = "mpi_gpu"
    assert wizard.state.profile.kind == "mpi_gpu"
    panel.preset.value = "site"
    assert wizard.state.profile.to_json() == fresh
    assert panel.preset.value == "site"


def test_a_preset_equal_to_the_sites_default_stays_as_picked():
    """gres-cluster's default is the gpu_single preset's profile: picking gpu_single shows
    gpu_single (its own note), not the site's entry it also equals."""
    wizard = wizard_on("gres-cluster")
    panel = wizard.profile_panel
    panel.preset.value = "gpu_single"
    assert panel.preset.value == "gpu_single"
    assert "GPU" in text(panel.preset_doc)


def test_editing_a_field_after_a_preset_switches_back_to_custom():
    wizard = Wizard(site="gres-cluster", run_probes=False, bridge=fake_bridge()[0])
    panel = wizard.profile_panel
    panel.preset.value = "mpi"
    panel.fields["ntasks_per_node"].widget.value = "2"
    assert wizard.state.profile.ntasks_per_node == 2
    assert panel.preset.value == "custom"


def test_typing_a_non_number_shows_an_inline_message_and_keeps_the_state():
    wizard = Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0])
    field = wizard.profile_panel.fields["requested_nodes"]
    field.widget.value = "two"
    assert wizard.state.profile.requested_nodes is None
    assert "two" in text(field.message) and "ari-msg-error" in field.message.value
    field.widget.value = "0"  # below the schema minimum: the trait refuses it
    assert wizard.state.profile.requested_nodes is None and field.message.value
    field.widget.value = "2"
    assert wizard.state.profile.requested_nodes == 2 and "ari-msg-error" not in field.message.value


def test_gpu_request_without_gres_shows_the_validator_message_and_ari_refusal():
    wizard = wizard_on("sx40")  # 4 V100 visible, no GRES configured
    panel = wizard.profile_panel
    panel.fields["requested_gpus_per_task"].widget.value = "1"
    message = text(panel.fields["requested_gpus_per_task"].message) + text(panel.problems)
    assert "GRES" in message
    assert "ari-sbatch-error" in panel.sbatch_preview.value
    assert "no GRES configured" in shown_line(panel.sbatch_preview)  # ARI's own RuntimeError text
    panel.allow_no_gres.value = True  # ARI_SLURM_ALLOW_NO_GRES=1: ARI drops the GPU flags
    assert wizard.state.allow_no_gres is True
    assert "ari-sbatch-line" in panel.sbatch_preview.value
    assert "--gpus-per-task" not in shown_line(panel.sbatch_preview)


def test_sbatch_preview_follows_every_field():
    wizard = wizard_on("gres-cluster")
    panel = wizard.profile_panel
    panel.preset.value = "mpi_gpu"
    # the wizard's node count (the allocation's, 1 here) is a caller argument: it beats the profile
    assert "--nodes 1 " in shown_line(panel.sbatch_preview)
    panel.nodes.value = 0  # 0 = leave it to the profile (ARI's "not given")
    assert wizard.state.nodes == 0
    line = shown_line(panel.sbatch_preview)
    for token in ("--nodes 4", "--ntasks 32", "--ntasks-per-node 8", "--exclusive",
                  "--gres=gpu:v100:1", "--mem=256G", "--constraint=skylake", "--hint=nomultithread"):
        assert token in line, token
    panel.fields["gpu_type"].widget.value = ""
    line = shown_line(panel.sbatch_preview)
    assert "--gres=" not in line and "--gpus-per-task 1" in line
    panel.max_cpus.value = 2
    panel.walltime.value = "00:20:00"
    line = shown_line(panel.sbatch_preview)
    assert "--cpus-per-task 2" in line and "--time 00:20:00" in line


def test_modules_are_offered_from_the_modules_probe_and_reach_the_prelude():
    wizard = wizard_on("rccs-cloud")
    panel = wizard.profile_panel
    assert set(panel.offered_modules) == {"cuda/12.4", "openmpi/4.1"}
    assert "cuda/12.4" in text(panel.modules_help)  # the names on offer are suggested
    panel.modules.value = ["openmpi/4.1"]
    assert wizard.state.module_loads == ["openmpi/4.1"]
    prelude = text(panel.prelude_preview)
    assert "module load openmpi/4.1" in prelude
    panel.preset.value = "mpi"
    assert "srun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS" in text(panel.prelude_preview)


def test_lmods_own_modules_are_not_suggested(tmp_path):
    """Debian's Lmod lists Core/lmod and Core/settarg beside the software: not offered as
    module loads, counted apart (named as the module system's own), yet typing one is still
    answered (it is on the site)."""
    from ari_jupyter.i18n import t
    from ari_jupyter.probes.modules import clear_cache
    from widget_text import as_shown, shown

    clear_cache()  # the same MODULEPATH as rccs-cloud's: an earlier listing would answer
    site = json.loads(make_site(tmp_path).read_text(encoding="utf-8"))
    for command in site["commands"]:
        if command["argv"][-1:] == ["module -t avail 2>&1"]:
            command["stdout"] += "/usr/share/lmod/lmod/modulefiles/Core:\nCore/lmod\nCore/settarg\n"
        elif command["argv"][:1] == ["lmod"]:
            command["stderr"] += "/usr/share/lmod/lmod/modulefiles/Core:\nCore/lmod\nCore/settarg\n"
    path = tmp_path / "with-lmod-core.json"
    path.write_text(json.dumps(site), encoding="utf-8")
    wizard = wizard_on(str(path))
    panel = wizard.profile_panel
    assert "Core/lmod" in panel.offered_modules  # a fact of the site, kept
    panel.modules.value = ["Core/lmod"]  # typed: still accepted, as it is on the site
    assert wizard.state.module_loads == ["Core/lmod"]
    offered = re.search(r"Offered here: ([^<]*)", text(panel.modules_help)).group(1)
    assert "cuda/12.4" in offered and "lmod" not in offered and "settarg" not in offered
    # counted apart and named, so step 3 does not contradict step 2's count of every modulefile
    assert as_shown(t("profile_modules_help_own", "en", count=2, own="Core/lmod, Core/settarg")) \
        in shown(panel.modules_help.value)


def test_module_filter_from_config_limits_the_choice():
    from ari_jupyter.wizard.config import AriWizard

    async def scenario():
        wizard = Wizard(site="rccs-cloud", bridge=fake_bridge()[0],
                        config=AriWizard(module_filter="^openmpi/"))
        await wizard.wait()
        return wizard
    wizard = run(scenario())
    assert wizard.profile_panel.offered_modules == ["openmpi/4.1"]


def test_switching_language_keeps_the_chosen_preset():
    wizard = Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0])
    panel = wizard.profile_panel
    panel.preset.value = "mpi"
    wizard.language.value = "zh"
    assert panel.preset.value == "mpi" and wizard.state.profile.kind == "mpi"
    assert panel.preset.options[:2] == (("本站点的默认值", "site"), ("自定义", "custom"))


@pytest.mark.parametrize("lang, gpu, cpu_mpi", [("en", "GPU", "MPI on CPUs"),
                                                ("ja", "GPU", "CPU の MPI"),
                                                ("zh", "GPU", "CPU 上的 MPI")])
def test_each_preset_says_its_kind_and_what_it_is_for(lang, gpu, cpu_mpi):
    """A CPU MPI user must not take "mpi" by its name: ARI reads kind mpi as GPU code."""
    wizard = Wizard(site="rccs-cloud", lang=lang, run_probes=False, bridge=fake_bridge()[0])
    labels = dict((value, label) for label, value in wizard.profile_panel.preset.options)
    assert labels["mpi"].startswith("mpi — ") and gpu in labels["mpi"]
    assert labels["cpu_single"].startswith("cpu_single — ") and cpu_mpi in labels["cpu_single"]
    wizard.language.value = "en" if lang != "en" else "ja"
    relabelled = dict((value, label) for label, value in wizard.profile_panel.preset.options)
    assert relabelled["cpu_single"] != labels["cpu_single"]


def test_each_step_shows_its_own_problems():
    wizard = Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0])
    profile, experiment = wizard.profile_panel, wizard.experiment_panel
    experiment.title.value = "x"
    experiment.title.value = ""  # touched: its error shows
    assert "title" not in text(profile.problems)  # an empty title is step 4's business
    assert "title" in text(experiment.problems)
    profile.walltime.value = "later"
    # beside the Walltime box (not under Modules), and not in step 4
    assert "'later'" in html.unescape(text(profile.box_messages["walltime"]))
    assert "'later'" not in html.unescape(text(profile.problems) + text(experiment.problems))


def test_a_partial_or_unknown_module_is_refused_with_a_visible_message():
    wizard = wizard_on("rccs-cloud")
    panel = wizard.profile_panel
    panel.modules.value = ["openmpi"]  # a partial name + Enter
    assert wizard.state.module_loads == [] and list(panel.modules.value) == []
    message = text(panel.modules_message)
    assert "openmpi" in message and "openmpi/4.1" in message
    panel.modules.value = ["nvhpc/24"]
    assert "nvhpc/24" in text(panel.modules_message) and wizard.state.module_loads == []
    panel.modules.value = ["openmpi/4.1"]
    assert wizard.state.module_loads == ["openmpi/4.1"] and text(panel.modules_message) == ""


def test_a_refusal_names_the_entry_for_the_box_to_take_back():
    """The lab extension puts a refused entry back into the box (``data-typed``), quoted so any
    typed text stays an attribute value (the browser test sees it come back)."""
    wizard = wizard_on("rccs-cloud")
    panel = wizard.profile_panel
    typed = 'opnmpi"><b>x'
    panel.modules.value = [typed]
    assert f'data-typed="{html.escape(typed, quote=True)}"' in panel.modules_message.value


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_simple_first_labels_are_words_and_the_rest_is_advanced(lang):
    from ari_jupyter.i18n import t

    wizard = Wizard(site="gres-cluster", run_probes=False, bridge=fake_bridge()[0], lang=lang)
    panel = wizard.profile_panel
    simple = [panel.fields[key] for key in ("min_ranks", "ntasks_per_node", "requested_gpus_per_node")]
    for field in simple:
        assert field.row in panel.simple_box.children
        assert field.widget.description == t("label_" + field.key, lang)
        assert field.key in field.widget.tooltip  # the ARI key: a tooltip and a caption
    advanced = panel.advanced.children[0]
    assert panel.advanced.selected_index is None  # closed until opened
    assert panel.fields["exclusive"].row in panel.fields_box.children
    assert panel.fields["exclusive"].widget.description == t("label_exclusive", lang)
    assert panel.fields_box in advanced.children
    for key, field in panel.fields.items():
        label = field.widget.description if field.name is None else \
            re.sub(r"<[^>]+>", "", text(field.name))
        assert label == t("label_" + key, lang) and label != key, key


def test_after_a_site_switch_step_3_says_what_blocks_write_where_it_is_seen():
    """rccs-cloud with the mpi preset and openmpi/4.1, then sx40 (no module system): the module
    is left out, and said; put back (as a reopened run has it), its error is under the Modules
    box, not in the closed Advanced field of the same name; the preset shown is the new
    profile's, not "mpi"; the help says there is no module system."""
    from ari_jupyter.i18n import t

    async def scenario():
        wizard = Wizard(site="rccs-cloud", lang="en", bridge=fake_bridge()[0])
        await wizard.wait()
        panel = wizard.profile_panel
        panel.preset.value = "mpi"
        panel.modules.value = ["openmpi/4.1"]
        await wizard.wait()
        wizard.use_site("sx40")
        await wizard.wait()
        assert wizard.state.module_loads == [] and "openmpi/4.1" in panel.modules_help.value
        wizard.state.module_loads = ["openmpi/4.1"]
        return wizard, panel

    wizard, panel = run(scenario())
    blocking = [p for p in wizard.ctx.step_problems("profile") if p.severity == "error"]
    assert [p.rule for p in blocking] == ["modules_no_system"]
    from widget_text import as_shown, shown

    assert as_shown(blocking[0].text("en")) in shown(panel.problems.value)
    assert panel.fields["module_loads"].message.value == ""
    assert panel.preset.value == "site" and wizard.state.profile == wizard.ctx.site_profile()
    assert as_shown(t("profile_modules_none", "en")) in shown(panel.modules_help.value)


def test_an_error_in_an_advanced_field_opens_advanced():
    """A profile from elsewhere (a file, a reopened run) whose memory per node is more than the
    site's nodes have: the error blocks Write, so the Advanced section it is in opens by itself."""
    async def scenario():
        wizard = Wizard(site="rccs-cloud", lang="en", bridge=fake_bridge()[0])
        await wizard.wait()
        panel = wizard.profile_panel
        assert panel.advanced.selected_index is None
        profile = PRESETS["mpi"]()
        profile.memory_gb_per_node = 100_000
        wizard.state.profile = profile
        return wizard, panel

    wizard, panel = run(scenario())
    rules = {(p.field, p.rule) for p in wizard.ctx.step_problems("profile") if p.severity == "error"}
    assert ("memory_gb_per_node", "mem_node_over") in rules
    assert panel.advanced.selected_index == 0
    assert "ari-msg-error" in panel.fields["memory_gb_per_node"].message.value


def test_max_cpus_not_set_shows_zero_not_a_made_up_one():
    """A state without Max CPUs (nothing allocated, nothing typed) shows 0 beside "Max CPUs is
    not set", as Nodes shows 0 for "not set"; a 0 typed over a number is refused as emit's
    --max-cpus 0 is."""
    wizard = wizard_on("rccs-cloud")
    panel = wizard.profile_panel
    wizard.state.max_cpus = None
    assert panel.max_cpus.value == 0
    assert "max_cpus_unset" in [p.rule for p in wizard.state.problems()]
    panel.max_cpus.value = 3
    assert wizard.state.max_cpus == 3
    panel.max_cpus.value = 0
    assert wizard.state.max_cpus == 0
    assert "max_cpus_low" in [p.rule for p in wizard.state.problems()]


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_a_refused_profile_value_is_said_in_the_wizards_words_and_goes_with_it(lang):
    """Ranks -3: the field says it in the wizard's language (not traitlets' English about an
    ExecutionProfile instance), and a preset that sets Ranks takes the refusal away."""
    from ari_jupyter.i18n import t
    from widget_text import as_shown, shown

    wizard = Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0], lang=lang)
    panel = wizard.profile_panel
    field = panel.fields["min_ranks"]
    field.widget.value = "-3"
    said = shown(field.message.value)
    assert said == as_shown(t("profile_too_small", lang, label=t("label_min_ranks", lang), low=1,
                                value=-3))
    assert "trait" not in said and "ExecutionProfile" not in said
    panel.preset.value = "mpi"
    assert field.widget.value == "8" and shown(field.message.value) == ""


@pytest.mark.parametrize("box, bad, good", [
    ("walltime", "90 min", "01:00:00"), ("max_cpus", 999, 2), ("nodes", -2, 2),
])
def test_a_preview_built_from_refused_values_says_it_is_not_ready(box, bad, good):
    """'--time '90 min'' shown as if it were a line to use: the preview says first that the
    page holds refused values, and stops saying so once they are fixed."""
    wizard = wizard_on("rccs-cloud")
    panel = wizard.profile_panel
    assert "ari-preview-not-ready" not in panel.sbatch_preview.value
    getattr(panel, box).value = bad
    assert "ari-preview-not-ready" in panel.sbatch_preview.value
    getattr(panel, box).value = good
    assert "ari-preview-not-ready" not in panel.sbatch_preview.value


def test_kind_and_partition_findings_sit_under_their_rows_of_the_simple_part():
    """A GPU kind on a site without any GPU is said under the preset row (the kind's own box is
    in Advanced, closed), and an unknown partition under the partition box, not far below."""
    from widget_text import as_shown, shown

    async def scenario():
        wizard = Wizard(site="rccs-cloud", lang="en", bridge=fake_bridge()[0])
        await wizard.wait()
        return wizard

    wizard = run(scenario())
    panel = wizard.profile_panel
    assert wizard.state.profile.kind == "cpu_single"  # the site shows no GPU: not kind mpi
    assert panel.box_messages["kind"].value == ""
    panel.preset.value = "mpi"
    (finding,) = [p for p in wizard.ctx.step_problems("profile") if p.field == "kind"]
    assert finding.rule == "gpu_kind_no_gpu_site" and finding.severity == "warning"
    assert as_shown(finding.text("en")) in shown(panel.box_messages["kind"].value)
    assert as_shown(finding.text("en")) not in shown(panel.problems.value)
    assert panel.advanced.selected_index is None

    panel.partition.value = "no-such-partition"
    (refused,) = [p for p in wizard.ctx.step_problems("profile") if p.field == "partition"]
    assert as_shown(refused.text("en")) in shown(panel.box_messages["partition"].value)
    assert as_shown(refused.text("en")) not in shown(panel.problems.value)


def test_the_not_ready_line_counts_every_box_marked_in_red():
    """Five boxes in red, five counted: the boxes whose text is no number ('abc') are refused
    before the core judges anything, and the preview's count includes them."""
    from ari_jupyter.i18n import t
    from widget_text import as_shown, shown

    wizard = wizard_on("rccs-cloud")
    panel = wizard.profile_panel
    panel.nodes.value = -2
    panel.max_cpus.value = 999
    panel.walltime.value = "90 min"
    panel.fields["min_ranks"].widget.value = "abc"
    panel.fields["ntasks_per_node"].widget.value = "-3"
    assert as_shown(t("preview_not_ready", "en", count=5)) in shown(panel.sbatch_preview.value)
    panel.fields["min_ranks"].widget.value = "2"
    assert as_shown(t("preview_not_ready", "en", count=4)) in shown(panel.sbatch_preview.value)


@pytest.mark.parametrize("site, key", [("rccs-cloud", "preview_no_workflow_demo"),
                                       (None, "preview_no_workflow")])
def test_without_ari_here_step_3_says_the_line_needs_workflow_yaml(site, key):
    """No ARI on this machine: no workflow.yaml carries nodes and flags, so ARI would take them
    from the rubric (step 4's hand-off says so); step 3's "line ARI will run" says it too, and
    says nothing where ARI's workflow.yaml is found."""
    from ari_jupyter.ari.render import rubric_nodes
    from ari_jupyter.i18n import t
    from widget_text import as_shown, shown

    wizard = Wizard(site=site, lang="en", run_probes=False, bridge=fake_bridge()[0])
    wizard.ctx.workflow_found = False
    panel = wizard.profile_panel
    panel.refresh_previews()
    assert as_shown(t(key, "en", rubric=rubric_nodes(wizard.state.choices()))) in shown(panel.sbatch_title.value)
    wizard.ctx.workflow_found = True
    panel.refresh_previews()
    assert "workflow.yaml" not in shown(panel.sbatch_title.value)


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_the_preview_and_the_checklist_say_the_same_of_the_node_count(tmp_path, lang):
    """rccs-cloud, no ARI here: step 3's preview shows --nodes 2, and both it and the checklist
    after Write say that this 2 does not reach ARI without workflow.yaml (the rubric decides)."""
    from ari_jupyter.ari.render import rubric_nodes
    from ari_jupyter.checkpoint import handoff
    from ari_jupyter.i18n import say
    from unit.widgets.test_demo_workspace import demo_wizard
    from widget_text import as_shown, shown

    wizard = demo_wizard(tmp_path, "rccs-cloud")
    wizard.ctx.workflow_found = False
    wizard.ctx.lang = lang
    panel = wizard.profile_panel
    panel.refresh_previews()
    assert "--nodes 2" in shown(panel.sbatch_preview.value)
    said = say(rubric_nodes(wizard.state.choices()), lang)
    assert "2" in said and as_shown(said) in shown(panel.sbatch_title.value)
    wizard.experiment_panel.write.click()
    emitted = wizard.experiment_panel.last_emit
    [reproduce] = [item for item in handoff.handoff_checklist(
        wizard.state.choices(), emitted.checkpoint_dir, notes=emitted.notes) if item.id == "reproduce"]
    assert said in say(reproduce.detail, lang)
    checklist = wizard.experiment_panel.checklist.value  # the setup guide's run and dashboard lines
    assert 'data-spot="handoff"' in checklist and 'data-spot="dashboard"' in checklist


@pytest.mark.parametrize("site, shown_spots", [("sx40", {"nodes", "modules", "gpus"}),
                                               ("gres-cluster", {"nodes", "modules"})])
def test_step_3_says_where_it_differs_from_the_setup_guide(site, shown_spots):
    """One line at each spot where the wizard does otherwise than ARI's setup guide, each with
    its link to the guide's section; the GPU line only where the site has no GRES."""
    from ari_jupyter.wizard.seed_notes import seed_note_url

    wizard = wizard_on(site)
    panel = wizard.profile_panel
    visible = {spot for spot, note in panel.seed_notes.items()
               if note.layout.display != "none" and note.value}
    assert visible == shown_spots
    for spot in shown_spots:
        assert f'href="{seed_note_url(spot, "en", wizard.ctx.local_env)}"' in panel.seed_notes[spot].value
    assert "nodes=&lt;allocation&gt;" in panel.seed_notes["nodes"].value
    wizard.ctx.lang = "ja"
    assert "wizard.ja.md#seed-nodes" in panel.seed_notes["nodes"].value
    assert "ノード" in panel.seed_notes["nodes"].value


@pytest.mark.parametrize("per_task, per_node, said", [
    (1, 0, True),    # preset gpu_single: 0 in the box, --gpus-per-task 1 in the preview
    (2, 1, False),   # the box shows what is asked
    (0, 0, False),   # no GPU at all
])
def test_gpus_per_node_says_when_the_profile_asks_per_rank_instead(per_task, per_node, said):
    wizard = wizard_on("gres-cluster")
    profile = wizard.state.profile.copy()
    profile.requested_gpus_per_task, profile.requested_gpus_per_node = per_task, per_node
    wizard.state.profile = profile
    panel = wizard.profile_panel
    panel.refresh_messages()
    message = html.unescape(re.sub("<[^>]+>", "", panel.fields["requested_gpus_per_node"].message.value))
    assert (f"--gpus-per-task {per_task}" in message) is said, message
    if said:
        assert f"--gpus-per-task {per_task}" in html.unescape(panel.sbatch_preview.value)


@pytest.mark.parametrize("lang, placeholder", [
    ("en", "empty: ARI's 06:00:00"), ("ja", "空欄: ARI の 06:00:00"), ("zh", "留空：ARI 默认 06:00:00")])
def test_an_empty_walltime_box_says_what_the_preview_will_use(lang, placeholder):
    wizard = wizard_on("gres-cluster")
    wizard.language.value = lang
    panel = wizard.profile_panel
    assert wizard.state.walltime == "" and panel.walltime.placeholder == placeholder
    assert "--time 06:00:00" in html.unescape(panel.sbatch_preview.value)


def test_what_concerns_no_single_box_comes_first_under_its_heading():
    """No sbatch on the laptop site is about the whole run: it heads step 3, not the module
    chips it used to sit under."""
    from widget_text import shown

    async def scenario():
        wizard = Wizard(site="laptop", lang="zh", bridge=fake_bridge()[0])
        await wizard.wait()
        return wizard.profile_panel

    panel = run(scenario())
    assert panel.children[0] is panel.problems
    assert shown(panel.problems.value).startswith("关于本次运行整体")
    assert "sbatch" in shown(panel.problems.value)
