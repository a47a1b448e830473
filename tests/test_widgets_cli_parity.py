"""The CLI and the wizard are two views of one core: same verdicts, same files, byte for byte."""
import json
import shutil
import subprocess
import sys

import pytest

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


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ari_jupyter", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("base", SITES)
def test_probe_verdicts_are_identical(tmp_path, base):
    site = make_site(tmp_path, base)
    proc = cli("probe", "--json", "--site", str(site))
    assert proc.returncode in (0, 1), proc.stderr
    from_cli = {p["id"]: p for p in json.loads(proc.stdout)["probes"]}

    async def scenario():
        wizard = Wizard(site=str(site), bridge=fake_bridge()[0])
        await wizard.wait()
        return wizard
    wizard = run(scenario())
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

