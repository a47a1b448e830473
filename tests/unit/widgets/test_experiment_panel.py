"""Step 4: typing the experiment, Write (blocked, confirmed, done), hand-off and terminal."""
import html
import json
import re

import pytest

from ari_jupyter.i18n import sentence_gap, t
from ari_jupyter.widgets.terminal_bridge import OPEN_TERMINAL, READY, TERMINAL_OPENED
from ari_jupyter.widgets.wizard import Wizard

from test_widgets_support import fake_bridge, fill_experiment, run, site_and_workspace

RUN_ID = "20261129120000_sparse_gemm_scaling"


def ready_wizard(site_file, bridge=None):
    async def scenario():
        wizard = Wizard(site=str(site_file), bridge=bridge or fake_bridge()[0])
        await wizard.wait()
        return wizard
    return run(scenario())


def fill_and_settle(wizard, workspace):
    """Fill the experiment form, then wait: the workspace change re-runs the shared_fs probe."""
    async def fill():
        fill_experiment(wizard, workspace)
        await wizard.wait()
    run(fill())


def test_write_is_disabled_with_the_reasons_until_the_form_is_complete(tmp_path):
    site_file, workspace = site_and_workspace(tmp_path)
    wizard = ready_wizard(site_file)
    panel = wizard.experiment_panel
    assert panel.write.disabled
    # untouched: no error yet, one neutral line naming the required fields
    assert panel.problems.value == "" and "ari-write-awaiting" in panel.write_reason.value
    panel.do_write()  # Write pressed: each field's error, with its fix
    assert "title" in panel.problems.value and "goal" in panel.problems.value  # with their fixes
    assert panel.write_reason.value.count("<li>") == 0  # said above, not again
    assert t("exp_write_blocked_above", "en") in html.unescape(panel.write_reason.value)

    fill_and_settle(wizard, workspace)
    assert not panel.write.disabled, panel.write_reason.value
    assert RUN_ID in panel.write_reason.value
    assert wizard.state.metrics == ["GFlops"] and wizard.state.workspace == str(workspace)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_problem_that_blocks_write_is_said_once_on_the_page(tmp_path, lang):
    """A problem of step 3 (not on this page) is listed by Write, named by its step; the page's
    own problems are listed once, above, with their fixes."""
    site_file, workspace = site_and_workspace(tmp_path)
    wizard = ready_wizard(site_file)
    wizard.language.value = lang
    panel = wizard.experiment_panel
    fill_and_settle(wizard, workspace)
    wizard.state.title = ""
    wizard.state.max_cpus = 0  # step 3's field
    page = html.unescape(panel.problems.value + panel.write_reason.value
                         + panel.run_settings.findings.value)
    blocking = [p for p in wizard.ctx.step_problems("experiment") if p.severity == "error"]
    assert {p.field for p in blocking} >= {"title", "max_cpus"}
    for problem in blocking:
        assert page.count(problem.text(lang)) == 1, (problem.field, page)
    reason = html.unescape(panel.write_reason.value)
    assert t("exp_write_blocked_both", lang) in reason
    assert t("exp_write_blocked_step", lang, step=t("step_profile", lang)) in reason
    assert panel.write.disabled


def test_previews_show_exactly_what_write_produces(tmp_path):
    site_file, workspace = site_and_workspace(tmp_path)
    wizard = ready_wizard(site_file)

    fill_and_settle(wizard, workspace)
    panel = wizard.experiment_panel
    md_preview = panel.previews.children[0].value
    env_preview = panel.previews.children[1].value
    panel.write.click()
    assert panel.last_emit is not None, panel.result.value
    checkpoint = workspace / "checkpoints" / RUN_ID
    md = (checkpoint / "experiment.md").read_text()
    env = (checkpoint / ".env").read_text()
    assert md.splitlines()[0] == "Partition: small, Max CPUs: 1"
    assert "Metrics: GFlops" in md
    import html
    assert html.escape(md.splitlines()[0]) in md_preview
    # the line a reader would not expect first is explained above the preview
    why_first = html.escape(t("exp_preview_first_line", "en"))
    assert md_preview.startswith(f'<div class="ari-help">{why_first}</div>')
    assert html.escape("ARI_SLURM_PARTITION=small") in env_preview and "ARI_SLURM_PARTITION=small" in env
    state = json.loads((checkpoint / "launch_config.json").read_text())["ari_jupyter"]["state"]
    assert state["title"] == "Sparse GEMM scaling"
    assert (workspace / "launch" / f"{RUN_ID}.sh").exists()
    assert panel.handoff_command.value == f"bash {workspace}/launch/{RUN_ID}.sh"
    assert panel.handoff_box.layout.display == ""
    assert "navigator.clipboard.writeText" in panel.copy.value and RUN_ID in panel.copy.value


def test_writing_again_asks_before_overwriting_and_keeps_a_backup(tmp_path):
    site_file, workspace = site_and_workspace(tmp_path)
    wizard = ready_wizard(site_file)

    fill_and_settle(wizard, workspace)
    panel = wizard.experiment_panel
    panel.write.click()
    first = (workspace / "checkpoints" / RUN_ID / "experiment.md").read_text()

    panel.goal.value = "A different goal: measure strong scaling on two nodes."
    panel.write.click()
    assert panel.confirm.layout.display == ""  # asked, nothing changed yet
    assert "already exists" in panel.confirm_text.value
    assert (workspace / "checkpoints" / RUN_ID / "experiment.md").read_text() == first

    panel.cancel.click()
    assert panel.confirm.layout.display == "none"
    panel.write.click()
    panel.overwrite.click()
    second = (workspace / "checkpoints" / RUN_ID / "experiment.md").read_text()
    assert "strong scaling" in second and second != first
    backups = list((workspace / "launch" / "backup" / RUN_ID).rglob("experiment.md"))
    assert backups and backups[0].read_text() == first


def test_a_blocking_problem_found_by_the_core_disables_write(tmp_path):
    site_file, workspace = site_and_workspace(tmp_path)
    wizard = ready_wizard(site_file)

    fill_and_settle(wizard, workspace)
    panel = wizard.experiment_panel
    panel.files.value = "relative/data.csv"
    assert wizard.state.provided_files == ["relative/data.csv"]
    assert panel.write.disabled
    assert "relative/data.csv" in panel.problems.value and "ari-msg-error" in panel.problems.value
    assert t("exp_write_blocked_above", "en") in html.unescape(panel.write_reason.value)


def _written_with_a_terminal_bridge(tmp_path):
    """Step 4 filled and written, with the extension's terminal bridge not yet answering."""
    site_file, workspace = site_and_workspace(tmp_path)
    bridge, comms = fake_bridge()
    wizard = ready_wizard(site_file, bridge)
    fill_and_settle(wizard, workspace)
    panel = wizard.experiment_panel
    panel.write.click()
    return panel, comms[0], workspace


def _open_in_terminal(panel, comm, terminal: str) -> dict:
    """Click Open in terminal and answer as the extension does; the request it sent."""
    panel.open_terminal.click()
    message = comm.sent[-1]
    comm.reply({"type": TERMINAL_OPENED, "request_id": message["request_id"], "ok": True,
                "terminal": terminal})
    return message


def test_open_in_terminal_only_after_the_extension_answers(tmp_path):
    panel, comm, workspace = _written_with_a_terminal_bridge(tmp_path)
    assert panel.open_terminal.layout.display == "none"  # no extension yet: Copy only
    comm.reply({"type": READY, "protocol": 1})
    assert panel.open_terminal.layout.display == ""
    message = _open_in_terminal(panel, comm, "3")
    assert message["type"] == OPEN_TERMINAL
    assert message["command"] == panel.handoff_command.value
    assert message["cwd"] == str(workspace) and message["run"] is False
    assert "3" in panel.terminal_status.value


def test_a_new_write_does_not_say_its_command_was_typed_into_the_terminal(tmp_path):
    """The terminal still holds the first Write's command: "typed, press Enter" would now run
    the wrong script, so the note goes until Open in terminal types the new one."""
    panel, comm, _ = _written_with_a_terminal_bridge(tmp_path)
    comm.reply({"type": READY, "protocol": 1})
    _open_in_terminal(panel, comm, "1")
    first = panel.handoff_command.value
    assert t("exp_terminal_opened", "en", terminal="1") in html.unescape(panel.terminal_status.value)
    panel.run_id.value = "20261129130000_second_run"
    panel.write.click()
    assert panel.handoff_command.value != first
    assert panel.terminal_status.value == ""
    assert _open_in_terminal(panel, comm, "2")["command"] == panel.handoff_command.value
    assert t("exp_terminal_opened", "en", terminal="2") in html.unescape(panel.terminal_status.value)


def test_typing_in_the_workspace_reruns_only_the_shared_fs_probe(tmp_path):
    site_file, workspace = site_and_workspace(tmp_path)
    wizard = ready_wizard(site_file)
    before = dict(wizard.state.probe_results)

    async def change():
        wizard.experiment_panel.workspace.value = "/tmp/node-local-ws"
        assert wizard.ctx.runner.running == ["shared_fs"]
        await wizard.wait()
    run(change())
    after = wizard.state.probe_results
    assert after["shared_fs"].status == "fail"
    assert all(after[k] is before[k] for k in before if k != "shared_fs")
    assert "ari-shared-fs" in wizard.experiment_panel.shared_fs.value
    assert "ari-sev-error" in wizard.experiment_panel.shared_fs.value


def test_after_write_the_checklist_and_check_handoff_appear(tmp_path):
    site_file, workspace = site_and_workspace(tmp_path)
    wizard = ready_wizard(site_file)

    async def fill_write_check():
        fill_experiment(wizard, workspace)
        await wizard.wait()
        panel = wizard.experiment_panel
        assert panel.check_handoff.layout.display == "none"
        panel.write.click()
        assert panel.check_handoff.layout.display == ""
        panel.check_handoff.click()
        await panel.handoff_task
        return panel

    panel = run(fill_write_check())
    checklist = panel.checklist.value
    assert "ari-checklist-dashboard" in checklist and "ari viz" in checklist
    # --host only in the line that says the setup guide's command has no such flag
    assert "--host" not in re.sub(r'<div class="ari-seed-note.*?</div>', "", checklist)
    assert 'data-spot="dashboard"' in checklist
    assert "ari-dashboard-warning" in checklist and "ssh -N -L" in checklist
    assert "rc01" in checklist  # the tunnel goes to the allocation's first node
    assert f"bash {workspace}/launch/{RUN_ID}.sh" in checklist.replace("&#x27;", "'")
    assert "ari-checklist-reproduce" in checklist
    # an ordered list numbers its steps: a title of its own number would read "1. 1. ..."
    assert re.findall(r"<li[^>]*><b>\d", checklist) == [], checklist
    from ari_jupyter.checkpoint.handoff import CHECK_IDS
    assert [r.id for r in panel.handoff_results] == list(CHECK_IDS)
    for result in panel.handoff_results:
        assert f"ari-handoff-{result.id}" in panel.handoff_checks.value
    by_id = {r.id: r.status for r in panel.handoff_results}
    assert by_id["checkpoint"] == "ok" and by_id["script"] == "ok"


def test_after_write_one_status_shows_and_it_follows_the_language(tmp_path):
    from ari_jupyter.widgets.wizard import Wizard
    from test_widgets_support import fake_bridge

    wizard = Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0], lang="en")
    panel = wizard.experiment_panel
    panel.title.value, panel.goal.value = "Scaling", "Measure scaling from one to two nodes."
    panel.metrics.value = ["GFlops"]
    panel.workspace.value = str(tmp_path / "ws")
    assert "asks first" in panel.write_reason.value  # /tmp is tmpfs on the demo site
    assert panel.do_write(force=True) is not None
    assert panel.write_reason.value == "" and "ari-write-ok" in panel.result.value
    wizard.language.value = "ja"
    assert panel.write_reason.value == "" and "Checkpoint written" not in panel.result.value
    panel.title.value = "Scaling again"  # an edit since the write: "ready" comes back
    assert panel.write_reason.value != ""


import html as _html
import re as _re

import pytest


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_write_blocked_reasons_are_a_list_without_doubled_punctuation(lang):
    """Each reason is its own sentence ("…1 以上が必要です（入力値: 0）。"): joined by "; " it
    read "…。; …。". The reasons listed by Write are those of step 3, named by their step."""
    wizard = Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0], lang=lang)
    wizard.state.max_cpus, wizard.state.nodes = 0, -1  # nodes 0: the profile decides (valid)
    panel = wizard.experiment_panel
    panel.refresh()
    assert panel.write.disabled
    value = panel.write_reason.value
    items = [_html.unescape(i) for i in _re.findall(r"<li[^>]*>(.*?)</li>", value)]
    step = t("exp_write_blocked_step", lang, step=t("step_profile", lang))
    blocking = [f"{step}{sentence_gap(step)}{f.text(lang)}" for f in wizard.ctx.problems()
                if f.severity == "error" and f.field in ("max_cpus", "nodes")]
    assert len(items) == 2 and items == blocking, (items, blocking)
    text = _html.unescape(_re.sub(r"<[^>]+>", " ", value))
    assert not _re.search(r"[.。;；]\s*[;；]", text), text
    assert "; " not in text, text


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_writing_again_asks_in_the_wizards_language(tmp_path, lang):
    """The overwrite question quotes the core's refusal in the wizard's language, not English."""
    from widget_text import english_sentences

    site_file, workspace = site_and_workspace(tmp_path)
    wizard = ready_wizard(site_file)
    wizard.language.value = lang
    fill_and_settle(wizard, workspace)
    panel = wizard.experiment_panel
    panel.write.click()
    panel.write.click()
    assert panel.confirm.layout.display == ""
    question = re.sub(r"<[^>]+>", " ", panel.confirm_text.value)
    assert RUN_ID in question and english_sentences([question]) == [], question


@pytest.mark.parametrize("lang, field", [("en", "Workspace"), ("ja", "ワークスペース"), ("zh", "工作区")])
def test_a_node_local_workspace_is_asked_about_in_the_wizards_words(tmp_path, lang, field):
    """The question names the shared-filesystem verdict and the wizard's own remedy (its
    Workspace field), not emit's command-line refusal ("--force", "--checkpoint-dir")."""
    from widget_text import english_sentences

    async def scenario():
        wizard = Wizard(site="rccs-cloud", lang=lang, bridge=fake_bridge()[0])
        fill_experiment(wizard, str(tmp_path / "on-tmpfs"))  # /tmp is tmpfs on the demo site
        await wizard.wait()
        return wizard
    wizard = run(scenario())
    panel = wizard.experiment_panel
    verdict = wizard.state.probe("shared_fs")
    assert verdict.status == "fail"
    asks = ('<span class="ari-write-reason ari-text ari-sev-warning">'
            + wizard.ctx.tr("exp_write_asks", path=panel._target_dir()))
    assert _html.unescape(panel.write_reason.value).startswith(asks)  # not a green "ready"
    assert panel.do_write() is None and panel.confirm.layout.display == ""
    question = _html.unescape(re.sub(r"<[^>]+>", "", panel.confirm_text.value))
    assert verdict.text(lang).rstrip(".。") in question and field in question, question
    assert "--" not in question and "force" not in question.lower(), question
    if lang != "en":
        assert english_sentences([question]) == [], question
    assert panel.overwrite.description == wizard.ctx.tr("exp_write_anyway")
    assert panel.write_reason.value == ""  # no "ready to write" beside the question
    panel.refresh()  # a probe answering meanwhile
    assert panel.write_reason.value == ""
    # under the Workspace field: the verdict and the remedy in the wizard's words, said once
    below_field = _html.unescape(panel.shared_fs.value)
    assert verdict.text(lang) in below_field and field in below_field, below_field
    assert "--checkpoint-dir" not in below_field
    mounts = verdict.data["network_mounts"]  # where to go instead: this node's network mounts
    assert mounts and wizard.ctx.tr("exp_shared_fs_mounts", mounts=wizard.ctx.tr("list.separator").join(mounts)) in below_field
    assert verdict.text(lang) not in _html.unescape(panel.problems.value)
    panel.cancel.click()
    assert panel.confirm.layout.display == "none"
    assert _html.unescape(panel.write_reason.value).startswith(asks)
    panel.workspace.value = f"{mounts[0]}/student/ari"  # on a network mount: ready again
    run(wizard.wait())
    assert _html.unescape(panel.write_reason.value).startswith(
        '<span class="ari-write-reason ari-text ari-sev-ok">'), panel.write_reason.value


def test_after_a_refused_write_a_new_title_mints_the_run_id_again(tmp_path):
    """A Japanese-only title mints a hashed id; Write is refused (node-local, Cancel), the user
    adds ASCII words: the Run id field is still empty and step 4 says the id is still to be
    minted, and Write anyway writes under the new title's id."""
    async def scenario():
        wizard = Wizard(site="rccs-cloud", lang="ja", bridge=fake_bridge()[0])
        fill_experiment(wizard, str(tmp_path / "on-tmpfs"), title="疎行列積のスケーリング", run_id="")
        await wizard.wait()
        return wizard
    wizard = run(scenario())
    panel = wizard.experiment_panel
    assert panel.do_write() is None and panel.confirm.layout.display == ""
    panel.cancel.click()
    assert wizard.state.run_id == "" and panel.run_id.value == ""
    assert "<run_id>" in _html.unescape(panel.write_reason.value)
    panel.title.value = "SpGEMM scaling 疎行列積"
    panel.write.click()
    assert panel.confirm.layout.display == ""  # asked again
    panel.overwrite.click()  # Write anyway
    assert panel.last_emit is not None, panel.result.value
    assert wizard.state.run_id.endswith("_spgemm_scaling"), wizard.state.run_id
    assert panel.run_id.value == wizard.state.run_id
    assert panel.last_emit.checkpoint_dir.endswith(wizard.state.run_id)


@pytest.mark.parametrize("site_has_ari, before_state, before_says", [
    (True, "ready", ""),
    # step 2 already found no `ari`: the dashboard step is not "ready" before the check either
    (False, "not ready", "First fix what the site checks found (ari failed)"),
])
def test_the_checklist_says_not_ready_once_the_check_finds_no_ari(
        tmp_path, site_has_ari, before_state, before_says):
    """The dashboard step is "ready" after Write only while nothing says `ari` is missing: the
    step-2 probe, then the hand-off check in a login shell (which replaces it) turn it "not
    ready", naming the check to fix first."""
    site_file, workspace = site_and_workspace(tmp_path)
    data = json.loads(site_file.read_text(encoding="utf-8"))
    for command in data["commands"]:
        if command["argv"][:2] == ["bash", "-lc"] and command["argv"][2].endswith("command -v ari"):
            command.update(returncode=1, stdout="")
    if not site_has_ari:
        del data["which"]["ari"]
    site_file.write_text(json.dumps(data), encoding="utf-8")
    wizard = ready_wizard(site_file)

    async def write_then_check():
        fill_experiment(wizard, workspace)
        await wizard.wait()
        panel = wizard.experiment_panel
        panel.write.click()
        before = _html.unescape(panel.checklist.value)
        panel.check_handoff.click()
        await panel.handoff_task
        return before, panel

    before, panel = run(write_then_check())
    assert wizard.state.probe("ari").status == ("ok" if site_has_ari else "fail")
    before = before.split('<li class="ari-checklist-dashboard">')[1]  # the last step
    assert f"[{before_state}]" in before and before_says in before, before
    assert {r.id: r.status for r in panel.handoff_results}["ari"] == "fail"
    dashboard = panel.checklist.value.split('<li class="ari-checklist-dashboard">')[1]
    assert '<span class="ari-checklist-state ari-sev-error">[not ready]</span>' in dashboard
    assert "First fix the failed check (ari) above" in dashboard


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_fractional_threshold_is_refused_as_emit_refuses_it_and_holds_write(tmp_path, lang):
    """12.5 in Min. expected metric: the same sentence as ``emit --min-expected-metric 12.5``
    (ARI's agent would read 12), Write waits; 12 is taken and Write is ready again."""
    import subprocess
    import sys

    from ari_jupyter.i18n import render
    from ari_jupyter.wizard.state import min_expected_metric_of
    from env_support import env_without
    from widget_text import as_shown, shown

    site, workspace = site_and_workspace(tmp_path)

    async def scenario():
        wizard = Wizard(site=str(site), bridge=fake_bridge()[0], lang=lang)
        await wizard.wait()
        fill_experiment(wizard, workspace)
        await wizard.wait()
        return wizard

    wizard = run(scenario())
    panel = wizard.experiment_panel
    assert not panel.write.disabled
    panel.min_metric.value = "12.5"
    with pytest.raises(ValueError) as refused:
        min_expected_metric_of("12.5")
    sentence = render(refused.value.args[0], lang)
    assert as_shown(sentence) in shown(panel.problems.value)
    assert panel.write.disabled and wizard.state.min_expected_metric is None
    proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "emit", "--site", str(site),
                           "--title", "t", "--goal", "g", "--metric", "m", "--no-probes",
                           "--min-expected-metric", "12.5", "--lang", lang],
                          capture_output=True, text=True, timeout=120,
                          env=env_without("ARI_", "SLURM_"))
    assert proc.returncode == 2 and sentence in proc.stderr, proc.stderr
    panel.min_metric.value = "12"
    assert wizard.state.min_expected_metric == 12
    assert sentence not in shown(panel.problems.value) and not panel.write.disabled


def test_a_demo_site_without_slurm_says_where_a_checkpoint_can_be_written():
    """laptop (no SLURM, for teaching) can never enable Write: step 4 says so and names the
    demo sites that can; a site with SLURM says nothing of the kind."""
    from ari_jupyter.i18n import t
    from widget_text import as_shown, shown

    async def on(site):
        wizard = Wizard(site=site, bridge=fake_bridge()[0], lang="ja")
        await wizard.wait()
        return wizard

    laptop = run(on("laptop")).experiment_panel
    assert laptop.write.disabled
    said = t("exp_write_demo_no_slurm", "ja", site="laptop", sites="gres-cluster、rccs-cloud、sx40")
    assert as_shown(said) in shown(laptop.write_reason.value)
    rccs = run(on("rccs-cloud")).experiment_panel
    assert "ari-demo-way-out" not in rccs.write_reason.value


def test_after_an_edit_the_written_result_says_it_holds_the_old_values(tmp_path):
    """The files listed after Write are the written ones: an edit afterwards (step 3's walltime)
    is said above them until Write runs again."""
    from widget_text import shown

    site_file, workspace = site_and_workspace(tmp_path)
    wizard = ready_wizard(site_file)
    fill_and_settle(wizard, workspace)
    panel = wizard.experiment_panel
    assert panel.do_write() is not None
    changed = t("exp_changed_since_written", "en")
    assert changed not in shown(panel.result.value)
    wizard.profile_panel.walltime.value = "00:20:00"
    assert changed in shown(panel.result.value) and "Checkpoint written" in shown(panel.result.value)
    panel.do_write(force=True)
    assert changed not in shown(panel.result.value)


def test_what_the_run_id_will_be_is_said_under_its_box(tmp_path):
    """A title whose letters mostly cannot go into a run id: the sentence sits under Run id,
    not in the list of problems further down."""
    from widget_text import shown

    site_file, workspace = site_and_workspace(tmp_path)
    wizard = ready_wizard(site_file)
    fill_and_settle(wizard, workspace)
    panel = wizard.experiment_panel
    panel.run_id.value = ""
    panel.title.value = "ステンシル計算の2ノードスケーリング"
    assert "…_2" in shown(panel.run_id_note.value)
    assert "…_2" not in shown(panel.problems.value)
    panel.title.value = "Stencil two-node scaling"
    assert panel.run_id_note.value == ""
