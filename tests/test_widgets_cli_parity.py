"""The CLI and the wizard are two views of one core: same verdicts, same files, byte for byte,
and the same site config (a Jupyter config directory) gives both the same defaults."""
import json
import re
import shutil
import subprocess
import sys

import pytest

from ari_jupyter.i18n import sentence_gap
from ari_jupyter.widgets.wizard import Wizard

from test_widgets_support import fake_bridge, make_site, run

RUN_ID = "20261129120000_sparse_gemm_scaling"
SITES = ["rccs-cloud", "sx40", "gres-cluster", "laptop"]


@pytest.fixture(autouse=True)
def fresh_module_cache():
    """The CLI is a fresh process; the wizard must not answer from an earlier test's cache."""
    from ari_jupyter.probes.modules import clear_cache

    clear_cache()
    yield
    clear_cache()


def cli(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ari_jupyter", *args], capture_output=True,
                          text=True, timeout=120, env=env)


@pytest.mark.parametrize("base", SITES)
def test_probe_verdicts_are_identical(tmp_path, base):
    """Same site, same workspace: every probe gives the same verdict."""
    site = make_site(tmp_path, base)
    workspace = tmp_path / "ws"  # the copied site maps tmp_path into its shared /work
    proc = cli("probe", "--json", "--site", str(site), "--checkpoint-dir", str(workspace))
    assert proc.returncode in (0, 1), proc.stderr
    from_cli = {p["id"]: p for p in json.loads(proc.stdout)["probes"]}

    async def scenario():
        wizard = Wizard(site=str(site), bridge=fake_bridge()[0])
        wizard.experiment_panel.workspace.value = str(workspace)
        await wizard.wait()
        return wizard
    wizard = run(scenario())
    assert str(workspace) in wizard.state.probe_results["shared_fs"].summary
    from_wizard = {pid: r.to_json() for pid, r in wizard.state.probe_results.items()}
    assert set(from_wizard) == set(from_cli)
    for probe_id in from_cli:
        for key in ("status", "summary", "command", "fix"):
            assert from_wizard[probe_id][key] == from_cli[probe_id][key], (probe_id, key)
        # the rows show exactly these verdicts
        row = wizard.checks_panel.rows[probe_id]
        assert row.icon.tooltip == {"ok": "ok", "warn": "warning", "fail": "failed", "skip": "skipped",
                                    "unknown": "unknown"}[from_cli[probe_id]["status"]]


def test_emitted_files_are_identical(tmp_path):
    site = make_site(tmp_path, "rccs-cloud")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    data = tmp_path / "matrix.mtx"
    data.write_text("%%MatrixMarket\n")
    goal = "Measure how SpGEMM throughput scales from one to two nodes."

    async def scenario():
        wizard = Wizard(site=str(site), bridge=fake_bridge()[0])
        await wizard.wait()
        p3, p4 = wizard.profile_panel, wizard.experiment_panel
        p3.preset.value = "mpi"
        p3.max_cpus.value = 1
        p3.walltime.value = "00:30:00"
        p3.modules.value = ["openmpi/4.1"]
        p4.title.value = "Sparse GEMM scaling"
        p4.goal.value = goal
        p4.metrics.value = ["GFlops", "runtime_sec"]
        p4.files.value = str(data)
        p4.workspace.value = str(workspace)
        p4.run_id.value = RUN_ID
        await wizard.wait()
        assert not p4.write.disabled, p4.write_reason.value
        p4.write.click()
        return wizard

    wizard = run(scenario())
    assert wizard.experiment_panel.last_emit is not None, wizard.experiment_panel.result.value
    from_wizard = tmp_path / "from_wizard"
    shutil.move(str(workspace), from_wizard)
    workspace.mkdir()

    proc = cli("emit", "--site", str(site), "--preset", "mpi",
               "--max-cpus", "1", "--walltime", "00:30:00", "--module", "openmpi/4.1",
               "--title", "Sparse GEMM scaling", "--goal", goal, "--metric", "GFlops,runtime_sec",
               "--provided-file", str(data), "--workspace", str(workspace), "--run-id", RUN_ID,
               "--lang", "en", "--json")
    assert proc.returncode == 0, proc.stderr

    names = ["checkpoints/%s/experiment.md" % RUN_ID, "checkpoints/%s/.env" % RUN_ID,
             "launch/%s.sh" % RUN_ID]
    for name in names:
        assert (workspace / name).read_bytes() == (from_wizard / name).read_bytes(), name
    # launch_config.json: identical except the moment it was written
    configs = []
    for root in (workspace, from_wizard):
        config = json.loads((root / "checkpoints" / RUN_ID / "launch_config.json").read_text())
        config["ari_jupyter"].pop("written_at")
        configs.append(config)
    assert configs[0] == configs[1]
    assert sorted(p.name for p in (workspace / "checkpoints" / RUN_ID).iterdir()) == \
        sorted(p.name for p in (from_wizard / "checkpoints" / RUN_ID).iterdir())



TIMED_OUT_AFTER = re.compile(r"\[timed out after [0-9.]+s\]")

CONFIG = """\
c.AriWizard.demo_workspace_template = {demo!r}
c.AriWizard.default_partition = "large"
c.AriWizard.default_preset = "mpi"
c.AriWizard.probe_timeout = 2.5
c.AriWizard.probe_timeouts = {{"modules": 6.0}}
c.AriWizard.suggested_modules = ["openmpi/4.1", "not-on-this-site/1.0"]
"""


def test_a_config_file_gives_both_the_same_defaults(tmp_path, monkeypatch):
    """One JUPYTER_CONFIG_DIR for both: workspace, partition, preset, timeouts and modules
    come from it on either side, and the written files are identical."""
    config_dir = tmp_path / "jupyter-config"
    config_dir.mkdir()
    demo_root = tmp_path / "demo"
    (config_dir / "ari_jupyter_config.py").write_text(CONFIG.format(demo=f"{demo_root}/{{site}}"))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(config_dir))
    # `ari --version` outlives probe_timeout; `module avail` (lmod) only its own longer timeout.
    # The margins are seconds, not tenths: on a loaded machine the quick probes must still
    # finish inside probe_timeout on both sides, or the two files differ by timing alone.
    site = make_site(tmp_path, "rccs-cloud", delays={("ari", "--version"): 5.0, ("lmod",): 3.5})
    workspace = demo_root / "rccs-cloud-test"
    inputs = {"title": "Sparse GEMM scaling", "goal": "Measure how SpGEMM scales.",
              "metrics": ["GFlops"], "run_id": RUN_ID, "walltime": "00:30:00", "max_cpus": 1}

    async def scenario():
        wizard = Wizard(site=str(site), bridge=fake_bridge()[0], lang="en")
        assert wizard.ctx.runner.context().timeouts == {"modules": 6.0}
        p3, p4 = wizard.profile_panel, wizard.experiment_panel
        p4.title.value, p4.goal.value = inputs["title"], inputs["goal"]
        p4.metrics.value, p4.run_id.value = inputs["metrics"], inputs["run_id"]
        p3.walltime.value, p3.max_cpus.value = inputs["walltime"], inputs["max_cpus"]
        await wizard.wait()
        return wizard

    wizard = run(scenario())
    state = wizard.state
    assert state.workspace == str(workspace)
    assert (state.partition, state.partition_source) == ("large", "c.AriWizard.default_partition")
    assert state.profile.kind == "mpi"
    assert state.module_loads == ["openmpi/4.1"]
    verdicts = {pid: r.summary for pid, r in state.probe_results.items()}
    assert "within 2.5s" in verdicts["ari"] and state.probe("modules").status == "ok", verdicts
    assert wizard.experiment_panel.do_write() is not None, wizard.experiment_panel.result.value
    from_wizard = tmp_path / "from_wizard"
    shutil.move(str(workspace), from_wizard)

    proc = cli("emit", "--site", str(site), "--title", inputs["title"], "--goal", inputs["goal"],
               "--metric", "GFlops", "--run-id", RUN_ID, "--walltime", "00:30:00", "--max-cpus", "1",
               "--lang", "en", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["checkpoint_dir"] == f"{workspace}/checkpoints/{RUN_ID}"
    for name in (f"checkpoints/{RUN_ID}/experiment.md", f"checkpoints/{RUN_ID}/.env",
                 f"launch/{RUN_ID}.sh"):
        assert (workspace / name).read_bytes() == (from_wizard / name).read_bytes(), name
    written = []
    for root in (workspace, from_wizard):
        config = json.loads((root / "checkpoints" / RUN_ID / "launch_config.json").read_text())
        config["ari_jupyter"].pop("written_at")
        for result in config["ari_jupyter"]["state"]["probe_results"]:
            # a timed-out command's evidence gives its own share of the probe's budget, which
            # depends on how long the lookup before it took: a clock reading, not a default
            result["evidence"] = TIMED_OUT_AFTER.sub("[timed out after …]", result["evidence"])
        written.append(config)
    assert written[0] == written[1]
    assert sum("[timed out after …]" in r["evidence"]
               for r in written[0]["ari_jupyter"]["state"]["probe_results"]) == 1
    cli_state = written[0]["ari_jupyter"]["state"]
    assert {r["id"]: r["summary"] for r in cli_state["probe_results"]} == verdicts


def test_a_broken_config_file_does_not_stop_emit(tmp_path, monkeypatch):
    config_dir = tmp_path / "jupyter-config"
    config_dir.mkdir()
    (config_dir / "ari_jupyter_config.json").write_text('{"AriWizard": {"probe_timeout": -1}}')
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(config_dir))
    workspace = tmp_path / "ws"
    proc = cli("emit", "--site", str(make_site(tmp_path)), "--no-probes", "--title", "x",
               "--goal", "g", "--metric", "m", "--walltime", "00:10:00", "--max-cpus", "1",
               "--workspace", str(workspace), "--run-id", RUN_ID)
    assert ("ari_jupyter_config.json: c.AriWizard.probe_timeout ignored: -1: probe_timeout must "
            "be more than 0 and at most 600 seconds") in proc.stderr
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("box, flag, value", [
    ("nodes", "--nodes", -2), ("mem_gb", "--mem-gb", -1), ("max_cpus", "--max-cpus", -1),
])
def test_a_value_below_one_is_refused_in_the_same_words(box, flag, value):
    """Typed into step 3 or passed to emit: the same sentence, beside the box in the wizard
    (the box is not a bounded one that turns -2 into 0 without a word)."""
    from widget_text import as_shown, shown

    args = {"--walltime": "00:10:00", "--max-cpus": "1", flag: str(value)}
    proc = cli("emit", "--site", "rccs-cloud", "--title", "t", "--goal", "g", "--metric", "m",
               "--no-probes", *[part for item in args.items() for part in item])
    assert proc.returncode == 1
    said = next(line for line in proc.stderr.splitlines() if line.startswith(f"- {flag}: "))
    sentence = said.removeprefix(f"- {flag}: ").split(" (")[0]

    wizard = Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0])
    panel = wizard.profile_panel
    getattr(panel, box).value = value
    assert getattr(wizard.state, box) == value
    assert as_shown(sentence) in shown(panel.box_messages[box].value)
    assert as_shown(sentence) not in shown(panel.problems.value)  # beside the box, said once


@pytest.mark.parametrize("box, flag, value", [
    ("nodes", "--nodes", 0),     # ARI's "not given": the profile's requested_nodes decide
    ("mem_gb", "--mem-gb", 0),   # the partition's default: no --mem
    ("max_cpus", "--max-cpus", 0),  # refused, as -1 is
])
def test_zero_means_the_same_in_step_3_and_emit(box, flag, value, tmp_path):
    """The core reads a typed 0 once (model.resource_value): step 3's box and emit's flag give
    the same state, the same findings and the same sbatch line."""
    from ari_jupyter.wizard.state import resource_value
    from widget_text import shown

    workspace = tmp_path / "ws"
    args = {"--walltime": "00:10:00", "--max-cpus": "2", "--preset": "mpi", flag: str(value)}
    proc = cli("emit", "--site", "rccs-cloud", "--title", "t", "--goal", "g", "--metric", "m",
               "--no-probes", "--workspace", str(workspace), "--run-id", RUN_ID, "--force",
               *[part for item in args.items() for part in item])

    wizard = Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0])
    panel = wizard.profile_panel
    panel.preset.value = "mpi"
    panel.walltime.value, panel.max_cpus.value = "00:10:00", 2
    getattr(panel, box).value = value
    assert getattr(wizard.state, box) == resource_value(box, value)
    errors = [f.rule for f in wizard.state.blocking_problems() if f.field == box]
    if box == "max_cpus":
        assert proc.returncode == 1 and "max_cpus_low" in errors
        return
    assert proc.returncode == 0, proc.stderr
    assert errors == []
    # emit's checkpoint, reopened, holds the same value and shows the same sbatch line
    reopened = Wizard.from_checkpoint(workspace / "checkpoints" / RUN_ID, run_probes=False,
                                      bridge=fake_bridge()[0])
    assert getattr(reopened.state, box) == getattr(wizard.state, box)
    line = shown(panel.sbatch_preview.value)
    assert shown(reopened.profile_panel.sbatch_preview.value).split("--chdir")[0] == \
        line.split("--chdir")[0]
    if box == "nodes":
        assert "--nodes 2" in line  # the mpi preset's requested_nodes


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("walltime", ["90 min", "９０分", "1h"])
def test_a_walltime_that_is_no_slurm_time_gets_one_error_in_the_same_words(walltime, lang):
    """'90 min' is no SLURM time, and (a space) no .env value either: one error, the one that
    says what to type, with one example, from emit and beside step 3's box alike."""
    from widget_text import as_shown, shown

    proc = cli("emit", "--site", "rccs-cloud", "--title", "t", "--goal", "g", "--metric", "m",
               "--no-probes", "--max-cpus", "1", "--walltime", walltime, "--lang", lang)
    assert proc.returncode == 1
    said = [line for line in proc.stderr.splitlines() if line.startswith("- --walltime: ")]
    assert len(said) == 1, proc.stderr
    assert "HH:MM:SS" in said[0] and "01:00:00" in said[0] and "04:00:00" not in said[0]

    wizard = Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0], lang=lang)
    panel = wizard.profile_panel
    panel.walltime.value = walltime
    told = [f for f in wizard.ctx.problems() if f.field == "walltime"]
    assert [f.rule for f in told] == ["walltime_not_slurm"], told
    message, fix = told[0].text(lang), told[0].fix_text(lang)
    assert message in said[0] and fix in said[0]  # the CLI's line: message (fix)
    assert shown(panel.box_messages["walltime"].value) == as_shown(message + sentence_gap(message) + fix)
    assert "walltime" not in shown(panel.problems.value).lower()


@pytest.mark.parametrize("preset,warns", [("standard", True), ("quick", False)])
def test_time_fit_step_4_and_check_handoff_say_the_same(tmp_path, preset, warns):
    """The site's allocation has 3:12:45 left: Standard (up to 16 h) will not fit, Quick will;
    step 4 shows the core's warning and check-handoff says the same words."""
    site = make_site(tmp_path, "rccs-cloud")
    workspace = tmp_path / "ws"
    workspace.mkdir()

    async def scenario():
        wizard = Wizard(site=str(site), bridge=fake_bridge()[0])
        await wizard.wait()
        wizard.experiment_panel.run_settings.preset.value = preset
        await wizard.wait()
        return wizard
    wizard = run(scenario())
    shown = [f for f in wizard.ctx.step_problems("run_settings") if f.rule == "time_fit_short"]
    html = wizard.experiment_panel.run_settings.findings.value
    proc = cli("emit", "--site", str(site), "--title", "t", "--goal", "g", "--metric", "GFlops",
               "--llm-backend", "ollama", "--scope-preset", preset, "--workspace", str(workspace),
               "--run-id", RUN_ID, "--json")
    assert proc.returncode == 0, proc.stderr
    checkpoint = json.loads(proc.stdout)["checkpoint_dir"]
    checked = cli("check-handoff", "--site", str(site), "--json", checkpoint)
    [fit] = [c for c in json.loads(checked.stdout)["checks"] if c["id"] == "time_fit"]
    if warns:
        [finding] = shown
        assert fit["status"] == "warn"
        assert (fit["summary"], fit["fix"]) == (finding.message, finding.fix)
        assert "up to 16 hours" in finding.message and "about 3.2 hours" in finding.message
        assert "up to 16 hours" in html
    else:
        assert shown == [] and fit["status"] == "ok" and "16 hours" not in html
