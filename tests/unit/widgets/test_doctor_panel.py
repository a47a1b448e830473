"""The Doctor step: paste text or pick a checkpoint file, click Diagnose, read the rows."""
from repo_paths import TESTS
import re
import shutil
from pathlib import Path

import pytest

from ari_jupyter.widgets.wizard import Wizard

from test_widgets_support import fake_bridge, fill_experiment, run, site_and_workspace

FIXTURES = TESTS / "fixtures"
APP_WITHOUT_SRUN = (FIXTURES / "doctor" / "reproduce" / "app_no_srun.sh").read_text()
NOGRES_ERROR = (FIXTURES / "slurm" / "nogres_gres_request.txt").read_text()
FANOUT = "srun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS ./app"


def rows(panel) -> dict[str, list[tuple[str, str]]]:
    """rule -> [(severity, line)] as rendered in the findings table."""
    found: dict[str, list[tuple[str, str]]] = {}
    for rule, line, severity in re.findall(
            r'<tr class="ari-doctor-finding[^"]*" data-rule="([^"]+)" data-line="([^"]*)">.*?'
            r'ari-doctor-badge-(\w+)', panel.findings_view.value):
        found.setdefault(rule, []).append((severity, line))
    return found


def doctor_on(site="rccs-cloud", preset=None):
    wizard = Wizard(site=site, run_probes=False, bridge=fake_bridge()[0], lang="en")
    if preset:
        wizard.profile_panel.preset.value = preset
    wizard.go(4)
    return wizard, wizard.doctor_panel


def test_reproduce_without_srun_under_mpi_on_two_nodes_is_L6_with_its_line():
    wizard, panel = doctor_on(preset="mpi")
    assert wizard.state.nodes == 2 and wizard.state.profile.kind == "mpi"
    assert "mpi" in panel.context_note.value and "nodes: 2" in panel.context_note.value
    panel.text.value = APP_WITHOUT_SRUN
    panel.diagnose_button.click()
    found = rows(panel)
    assert found["L6"] == [("error", "5")]
    assert panel.detected_kind == "reproduce"
    (l6,) = [f for f in panel.findings if f.rule == "L6"]
    assert l6.suggestion == FANOUT
    # the row shows the fix and the exact line to use
    assert "Line to use:" in panel.findings_view.value and FANOUT in panel.findings_view.value
    assert "errors: " in panel.findings_view.value


def test_one_node_is_no_fan_out_error():
    """The same script on one node: the node count reaches the linter (no L6 error)."""
    wizard, panel = doctor_on(preset="cpu_single")
    wizard.state.nodes = 1
    panel.text.value = APP_WITHOUT_SRUN
    panel.diagnose()
    assert ("error", "5") not in rows(panel).get("L6", [])
    assert "nodes: 1" in panel.context_note.value


def test_the_real_nogres_sbatch_error_is_the_gres_row():
    _, panel = doctor_on(site="laptop")
    panel.text.value = NOGRES_ERROR
    panel.diagnose_button.click()
    assert rows(panel) == {"gres-invalid": [("error", "1")]}
    assert panel.detected_kind == "log"
    assert "ARI_SLURM_ALLOW_NO_GRES=1" in panel.findings_view.value


def test_nothing_to_diagnose_says_so():
    _, panel = doctor_on(site="laptop")
    assert panel.diagnose() == []
    assert "Nothing to diagnose" in panel.findings_view.value


def test_clean_text_says_no_problem_found():
    _, panel = doctor_on(site="laptop")
    panel.text.value = "Submitted batch job 42\nall ranks finished\n"
    panel.diagnose()
    assert panel.findings == []
    assert "ari-doctor-clean" in panel.findings_view.value


def test_text_the_doctor_does_not_know_is_not_called_clean():
    """A file that is no log, script or experiment.md: "no known problem" would read as a clean
    log; it says nothing was checked, and where to say what the file is."""
    _, panel = doctor_on(site="laptop")
    panel.text.value = "my-hostname\n"
    panel.diagnose()
    assert panel.detected_kind == "unrecognized" and "ari-doctor-clean" not in panel.findings_view.value
    assert "so nothing was checked. Choose what it is under Kind." in panel.findings_view.value
    panel.kind.value = "log"  # said what it is: looked at as that
    panel.diagnose()
    assert panel.detected_kind == "log" and "ari-doctor-clean" in panel.findings_view.value


def test_the_recorded_runs_reproduce_log_is_read_as_a_jobs_output():
    """The demo run's own reproduce.log (ranks on both nodes, the metric lines) pasted into the
    panel: read as a log, with what was read said, not "nothing was checked"."""
    import json

    from ari_jupyter.hosts.recorded_run import RUNS_DIR
    from ari_jupyter.hosts.recorded_site import RecordedSite

    (run_id,) = RecordedSite.load("rccs-cloud").runs
    files = json.loads((RUNS_DIR / f"{run_id}.json").read_text(encoding="utf-8"))["files"]
    _, panel = doctor_on(site="laptop")
    panel.text.value = files[f"checkpoints/{run_id}/repro_sandbox/reproduce.log"]["text"]
    panel.diagnose()
    assert panel.detected_kind == "log"
    assert [(f.rule, f.severity) for f in panel.findings] == [("job-output", "info")]
    assert "nothing was checked" not in panel.findings_view.value
    assert "triad_mbps" in panel.findings_view.value


@pytest.mark.parametrize("kind, expected", [("log", "log"), ("reproduce", "reproduce")])
def test_the_kind_can_be_forced(kind, expected):
    _, panel = doctor_on(preset="mpi")
    panel.text.value = NOGRES_ERROR
    panel.kind.value = kind
    panel.diagnose()
    assert panel.detected_kind == expected
    assert ("gres-invalid" in rows(panel)) == (kind == "log")


def test_a_file_picked_from_the_written_checkpoint(tmp_path):
    site, workspace = site_and_workspace(tmp_path)

    async def scenario():
        wizard = Wizard(site=str(site), bridge=fake_bridge()[0], lang="en")
        await wizard.wait()
        fill_experiment(wizard, workspace)
        await wizard.wait()
        assert wizard.experiment_panel.do_write() is not None, wizard.experiment_panel.result.value
        return wizard

    wizard = run(scenario())
    panel = wizard.doctor_panel
    checkpoint = Path(wizard.state.checkpoint_dir)
    shutil.copyfile(FIXTURES / "slurm" / "nogres_gres_request.txt", checkpoint / "ari_run_1.log")
    wizard.go(4)  # entering the step lists the files anew
    labels = [label for label, _ in panel.source.options]
    assert labels[0] == "(paste text below)" and panel.source.label == labels[0]
    assert "ari_run_1.log" in labels and "experiment.md" in labels
    panel.source.value = str(checkpoint / "ari_run_1.log")
    assert panel.text.value == NOGRES_ERROR  # the file is shown
    panel.diagnose_button.click()
    assert list(rows(panel)) == ["gres-invalid"]

    # Editing the text diagnoses the edit, read as the picked file's kind (a .log)
    panel.text.value = NOGRES_ERROR + "bash: mpirun: command not found\n"
    panel.diagnose()
    assert "gres-invalid" in rows(panel) and len(rows(panel)) == 2

    # back to pasting: the file is forgotten, the text box is the input
    panel.source.value = ""
    assert panel.source.label == "(paste text below)"  # shown, not a blank box
    panel.text.value = APP_WITHOUT_SRUN
    panel.diagnose()
    assert panel.detected_kind == "reproduce"


def test_rows_follow_the_language():
    wizard, panel = doctor_on(preset="mpi")
    panel.text.value = APP_WITHOUT_SRUN
    panel.diagnose()
    wizard.language.value = "ja"
    assert "エラー" in panel.findings_view.value and "ルール" in panel.findings_view.value
    assert panel.kind.options[0][0] == "自動判定"
    assert rows(panel)["L6"] == [("error", "5")]


def test_a_long_file_shows_its_tail_but_is_diagnosed_whole(tmp_path, monkeypatch):
    from ari_jupyter.widgets import doctor_panel

    monkeypatch.setattr(doctor_panel, "SHOWN_CHARS", 200)
    wizard, panel = doctor_on(site="laptop")
    checkpoint = tmp_path / "checkpoints" / "20261129120000_long"
    checkpoint.mkdir(parents=True)
    wizard.state.workspace, wizard.state.run_id = str(tmp_path), checkpoint.name
    log = checkpoint / "ari_run_1.log"
    log.write_text(NOGRES_ERROR + "".join(f"step {i} ok\n" for i in range(100)))
    panel.list_files()
    panel.source.value = str(log)
    assert len(panel.text.value) == 200 and "Invalid generic resource" not in panel.text.value
    assert "last 200 of" in panel.findings_view.value
    panel.diagnose()
    assert "gres-invalid" in rows(panel)  # line 1, outside the shown tail
    panel.text.value = panel.text.value + "edited\n"
    panel.diagnose()
    assert "gres-invalid" not in rows(panel)  # now the box is the input


def test_a_multi_line_fix_is_a_code_block_with_its_lines_and_a_copy_button():
    import html

    wizard, panel = doctor_on(preset="mpi")
    panel.text.value = "#!/usr/bin/env bash\nmodule load openmpi/4.1\nsrun ./app\n"
    panel.kind.value = "reproduce"
    panel.diagnose()
    row = re.search(r'<tr class="ari-doctor-finding[^"]*ari-doctor-rule-L5".*?</tr>',
                    panel.findings_view.value, re.S)
    assert row, panel.findings_view.value
    fix = re.search(r'<div class="ari-doctor-fix">(.*?)</div>\s*(?:<div class="ari-doctor-sugg|</td>)',
                    row.group(0), re.S)
    block = re.search(r'<div class="ari-codeblock"><button[^>]*class="ari-copy-code"[^>]*>[^<]*'
                      r'</button><pre[^>]*>(.*?)</pre>', fix.group(1), re.S)
    assert block, fix.group(1)
    lines = html.unescape(block.group(1)).splitlines()
    assert len(lines) > 3 and any(line.lstrip().startswith("if ") for line in lines)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_multi_line_fix_is_shown_once(lang):
    """The L5 prelude is the fix's code block, not repeated as a "suggested line" below it."""
    import html

    wizard, panel = doctor_on(preset="mpi")
    wizard.language.value = lang
    panel.text.value = "#!/usr/bin/env bash\nmodule load openmpi/4.1\nsrun ./app\n"
    panel.kind.value = "reproduce"
    panel.diagnose()
    (l5,) = [f for f in panel.findings if f.rule == "L5"]
    assert "\n" in l5.suggestion
    row = re.search(r'<tr class="ari-doctor-finding[^"]*ari-doctor-rule-L5".*?</tr>',
                    panel.findings_view.value, re.S).group(0)
    first_line = l5.suggestion.splitlines()[0]
    assert html.unescape(row).count(first_line) == 1
    assert row.count('class="ari-copy-code"') == 1
    block = re.search(r'<pre[^>]*>(.*?)</pre>', row, re.S)
    assert html.unescape(block.group(1)).splitlines() == l5.suggestion.splitlines()
    assert "ari-doctor-suggestion" not in row


def test_the_cli_with_the_checkpoint_finds_what_the_doctor_step_finds(tmp_path):
    """``ari-jupyter doctor --checkpoint`` reads the run's profile, nodes and .env from its
    launch_config.json, as the Doctor step reads its state: one reproduce.sh, one verdict
    (before, the CLI knew no kind and no nodes and said three of six findings)."""
    import json
    import subprocess
    import sys

    from env_support import env_without

    site, workspace = site_and_workspace(tmp_path)

    async def scenario():
        wizard = Wizard(site=str(site), bridge=fake_bridge()[0], lang="en")
        await wizard.wait()
        fill_experiment(wizard, workspace)
        wizard.profile_panel.preset.value = "mpi"
        wizard.state.nodes = 2
        await wizard.wait()
        assert wizard.experiment_panel.do_write() is not None, wizard.experiment_panel.result.value
        return wizard

    wizard = run(scenario())
    script = tmp_path / "reproduce.sh"
    script.write_text("#!/bin/bash\nmodule load openmpi/4.1\n./stencil --n 1024\n")
    panel = wizard.doctor_panel
    panel.text.value = script.read_text()
    in_wizard = {(f.rule, f.severity, f.line) for f in panel.diagnose()}
    assert {"L6", "G1"} <= {rule for rule, _, _ in in_wizard}  # needs nodes 2 and kind mpi

    proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "doctor", "--json", "--checkpoint",
                           wizard.state.checkpoint_dir, str(script)], capture_output=True,
                          text=True, timeout=120, env=env_without("SLURM_", "ARI_"))
    assert proc.returncode == 1, proc.stderr
    from_cli = {(f["rule"], f["severity"], f["line"]) for f in json.loads(proc.stdout)}
    assert from_cli == in_wizard


@pytest.mark.parametrize("site, said", [
    ("rccs-cloud", "Judged for profile kind cpu_single, nodes: 2."),
    ("laptop", "Judged with no execution profile: ARI runs reproduce.sh as one process."),
])
def test_step_5_says_what_it_judges_for_in_words_not_dashes(site, said):
    from widget_text import shown

    async def scenario():
        wizard = Wizard(site=site, lang="en", bridge=fake_bridge()[0])
        await wizard.wait()
        return wizard

    panel = run(scenario()).doctor_panel
    assert shown(panel.context_note.value) == said
    assert panel.source.label == "(paste text below)"


def test_the_doctor_step_diagnoses_off_the_kernels_loop(monkeypatch):
    """Diagnose in a kernel (a running loop): the doctor works in another thread, the loop goes
    on turning meanwhile, and the findings are those of the same text diagnosed at once. (How
    long the loop waits at most is a benchmark: ``benchmarks/hostile_inputs.py``, step 5.)"""
    import asyncio
    import threading

    from ari_jupyter.widgets import doctor_panel

    _, panel = doctor_on(preset="mpi")
    panel.text.value = APP_WITHOUT_SRUN
    threads, real = [], doctor_panel.diagnose_text

    def slow_diagnosis(*args, **kwargs):
        threads.append(threading.get_ident())
        threading.Event().wait(0.3)  # a long log's worth of work
        return real(*args, **kwargs)

    monkeypatch.setattr(doctor_panel, "diagnose_text", slow_diagnosis)

    async def click() -> tuple[int, int]:
        turns = 0
        panel.diagnose_button.click()
        assert panel.diagnose_button.disabled  # no second click while it works
        while not panel.diagnosing.done():
            await asyncio.sleep(0.01)
            turns += 1
        await asyncio.sleep(0)  # the done-callback that shows the findings
        return threading.get_ident(), turns

    loop_thread, turns = asyncio.run(click())
    assert threads and threads[0] != loop_thread
    assert turns >= 5, turns  # the loop turned while the doctor worked
    off_loop = sorted((f.rule, f.line) for f in panel.findings)
    assert ("L6", 5) in off_loop and not panel.diagnose_button.disabled
    panel.diagnose()  # the same text, at once
    assert sorted((f.rule, f.line) for f in panel.findings) == off_loop
