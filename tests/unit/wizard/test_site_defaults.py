"""Defaults that fit the site, and a site switch equal to a fresh wizard on the new site."""
import itertools
import json
from pathlib import Path

import pytest

from ari_jupyter.cli import main
from ari_jupyter.hosts.host import list_sites
from ari_jupyter.ari.profile import PRESETS, ExecutionProfile
from ari_jupyter.wizard.site_defaults import SITE_FIELDS, SITE_PRESET, _comparable, presets_matching
from ari_jupyter.widgets.wizard import Wizard

from test_widgets_support import fake_bridge, run

SITES = list_sites()
USER_TEXT = {"title": "Sparse GEMM scaling", "goal": "Measure how SpGEMM scales.",
             "metrics": ["GFlops", "runtime_sec"]}
USER_ERRORS = {"title", "goal", "metrics"}
NO_SLURM = {"laptop": {"sbatch_missing", "no_partition", "shared_fs"}}
"""A site without SLURM: no default can give it sbatch, a partition or a shared filesystem."""


def test_every_demo_site_is_covered():
    assert {"rccs-cloud", "sx40", "gres-cluster", "laptop"} <= set(SITES)


async def _settled(site, home, **kwargs):
    wizard = Wizard(site=site, bridge=fake_bridge()[0], env={"HOME": str(home)}, **kwargs)
    await wizard.wait()
    return wizard


@pytest.mark.parametrize("site", SITES)
def test_the_untouched_state_has_no_error_but_the_missing_user_text(site, tmp_path):
    wizard = run(_settled(site, tmp_path))
    errors = [f for f in wizard.ctx.problems() if f.severity == "error"]
    assert {f.field for f in errors if f.field in USER_ERRORS} == USER_ERRORS
    rest = [f for f in errors if f.field not in USER_ERRORS]
    assert {f.rule for f in rest} <= NO_SLURM.get(site, set()), [f.message for f in rest]
    for name, value in USER_TEXT.items():
        setattr(wizard.state, name, value)
    left = [f for f in wizard.ctx.problems() if f.severity == "error"]
    assert {f.rule for f in left} <= NO_SLURM.get(site, set()), [f.message for f in left]
    if site not in NO_SLURM:
        assert not wizard.experiment_panel.write.disabled


@pytest.mark.parametrize("site", [s for s in SITES if s not in NO_SLURM])
def test_the_command_line_writes_with_the_same_defaults(site, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    code = main(["emit", "--site", site, "--title", USER_TEXT["title"], "--goal",
                 USER_TEXT["goal"], "--metric", "GFlops", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    wizard = run(_settled(site, tmp_path))
    with open(json.loads(captured.out)["checkpoint_dir"] + "/launch_config.json") as handle:
        written = json.load(handle)
    state = written.get("wizard_state") or written.get("state") or written
    for name in ("partition", "max_cpus", "walltime", "nodes"):
        if name in state:
            assert state[name] == getattr(wizard.state, name), name


def _site_values(wizard) -> dict:
    state = wizard.state
    values = {name: _comparable(getattr(state, name)) for name in SITE_FIELDS}
    values["allocation"] = state.allocation.to_json() if state.allocation is not None else None
    # A second `module avail` in one process may come from the probe's cache: same answer.
    values["probes"] = {r.id: (r.status, r.summary.replace(" (cached)", ""))
                        for r in state.probe_list()}
    values["site_name"] = state.site_name
    values["host"] = wizard.ctx.host.name
    values["run_id"] = state.run_id
    return values


@pytest.mark.parametrize("old, new", list(itertools.permutations(SITES, 2)))
def test_switching_sites_equals_a_fresh_wizard_on_the_new_site(old, new, tmp_path):
    async def scenario():
        wizard = await _settled(old, tmp_path)
        for name, value in USER_TEXT.items():
            setattr(wizard.state, name, value)
        if old not in NO_SLURM:
            assert wizard.experiment_panel.do_write() is not None
            assert wizard.experiment_panel.result.value
        wizard.use_site(new)
        await wizard.wait()
        fresh = await _settled(new, tmp_path)
        for name, value in USER_TEXT.items():
            setattr(fresh.state, name, value)
        return wizard, fresh

    wizard, fresh = run(scenario())
    assert _site_values(wizard) == _site_values(fresh)
    for name, value in USER_TEXT.items():
        assert getattr(wizard.state, name) == value
    panel = wizard.experiment_panel
    assert panel.last_emit is None and panel.result.value == "" and panel.checklist.value == ""
    assert wizard.ctx.site_name == new
    assert [(f.rule, f.severity, f.message) for f in wizard.ctx.problems()] == \
        [(f.rule, f.severity, f.message) for f in fresh.ctx.problems()]


def test_use_site_none_looks_at_this_machine(tmp_path):
    wizard = run(_settled("sx40", tmp_path))
    wizard.use_site(None)
    assert not getattr(wizard.ctx.host, "is_demo", False)
    assert wizard.state.site_name == ""


@pytest.mark.parametrize("new, kept", [("sx40", False),          # no module system at all
                                       ("gres-cluster", False),  # modules, but not that one
                                       ("rccs-cloud", True)])    # the same site again
def test_a_module_the_new_site_does_not_offer_is_left_out_and_said(new, kept, tmp_path):
    """A module is a site's: switching sites, one the new site does not offer is dropped once its
    modules check answers, and step 3 says so (it stayed as a red error nobody had caused)."""
    from ari_jupyter.i18n import render
    from ari_jupyter.wizard.site_defaults import modules_left_out

    async def scenario():
        wizard = await _settled("rccs-cloud", tmp_path)
        wizard.state.module_loads = ["openmpi/4.1"]
        wizard.use_site(new)
        await wizard.wait()
        return wizard

    wizard = run(scenario())
    errors = [f for f in wizard.ctx.problems() if f.field == "module_loads" and f.severity == "error"]
    assert errors == []
    if kept:
        assert wizard.state.module_loads == ["openmpi/4.1"] and modules_left_out(wizard.state) is None
        return
    assert "openmpi/4.1" not in wizard.state.module_loads
    note = render(modules_left_out(wizard.state), "en")
    assert note.startswith(f"Left out on switching to {new}, which does not offer them: openmpi/4.1.")
    assert "openmpi/4.1" in wizard.profile_panel.modules_help.value
    wizard.state.module_loads = [*wizard.state.module_loads, "openmpi/4.1"]  # added back: silent
    assert modules_left_out(wizard.state) is None


def test_a_module_is_kept_while_the_new_sites_modules_check_cannot_tell(tmp_path):
    from ari_jupyter.base.verdict import ProbeResult
    from ari_jupyter.wizard.site_defaults import settle_carried_modules

    wizard = run(_settled("rccs-cloud", tmp_path))
    wizard.state.module_loads = ["openmpi/4.1"]
    wizard.ctx.runner.cancel_all()
    wizard.use_site("gres-cluster")
    wizard.ctx.runner.cancel_all()
    wizard.state.set_probe_result(ProbeResult("modules", "unknown", "timed out"))
    settle_carried_modules(wizard.state)
    assert wizard.state.module_loads == ["openmpi/4.1"]  # the validator judges it when known


@pytest.mark.parametrize("site, flow", [("rccs-cloud", True), ("sx40", False)])
def test_the_checklist_names_the_r_ccs_cloud_flow_on_r_ccs_cloud_only(site, flow, tmp_path):
    wizard = run(_settled(site, tmp_path))
    for name, value in USER_TEXT.items():
        setattr(wizard.state, name, value)
    assert wizard.experiment_panel.do_write() is not None
    assert ("R-CCS Cloud" in wizard.experiment_panel.checklist.value) is flow


def test_a_reopened_state_follows_the_new_site_after_a_demo_button(tmp_path):
    """The demo-site buttons call the same switch as ``use_site``, also on a restored run."""
    fresh = run(_settled("rccs-cloud", tmp_path))
    restored = Wizard(state=fresh.state.copy(), bridge=fake_bridge()[0],
                      env={"HOME": str(tmp_path)}, run_probes=False)

    async def scenario():
        restored.allocation_panel.demo_picker.value = "sx40"
        await restored.wait()
        return await _settled("sx40", tmp_path)

    sx40 = run(scenario())
    assert restored.state.partition == sx40.state.partition == "sx40"
    assert _site_values(restored)["walltime"] == _site_values(sx40)["walltime"]
    assert restored.state.max_cpus == sx40.state.max_cpus


@pytest.mark.parametrize("given, code", [("0", 0), ("-1", 1)])
def test_memory_0_is_the_partitions_default_as_in_the_wizard(given, code, tmp_path, capsys):
    """The wizard's Memory GB 0 means no --mem; so does --mem-gb 0, even over a JSON's value."""
    base = ["emit", "--site", "rccs-cloud", "--title", "x", "--goal", "y", "--metric", "GFlops",
            "--workspace", str(tmp_path), "--walltime", "00:30:00", "--force", "--json"]
    assert main([*base, "--mem-gb", "2"]) == 0
    written = json.loads(capsys.readouterr().out)["checkpoint_dir"]
    assert "ARI_SLURM_MEM_GB=2" in (Path(written) / ".env").read_text()
    again = main([*base, "--from-json", f"{written}/launch_config.json", "--run-id",
                  "20261203120000_again", "--mem-gb", given])
    captured = capsys.readouterr()
    assert again == code, captured.err
    if code == 0:
        env = (Path(json.loads(captured.out)["checkpoint_dir"]) / ".env").read_text()
        assert "ARI_SLURM_MEM_GB" not in env
    else:
        assert "Memory must be at least 1 GB, got -1" in captured.err


@pytest.mark.parametrize("flag, field, rule, given", [
    ("--max-cpus", "max_cpus", "max_cpus_low", "0"),
    ("--max-cpus", "max_cpus", "max_cpus_low", "-1"),
    ("--nodes", "nodes", "nodes_low", "-1"),  # 0 is ARI's "not given": the profile decides
])
def test_a_number_below_one_is_refused_never_replaced_by_a_default(flag, field, rule, given,
                                                                   tmp_path, capsys):
    """0 is a value the user gave, like -1: refused by name, not quietly filled from the site."""
    code = main(["emit", "--site", "rccs-cloud", "--title", "x", "--goal", "y", "--metric", "GFlops",
                 "--workspace", str(tmp_path), flag, given])
    captured = capsys.readouterr()
    said = captured.out + captured.err
    assert code != 0 and not list(tmp_path.glob("checkpoints/*")), said
    assert rule in said or "at least 1" in said or "1 or more" in said, said


def test_an_untouched_max_cpus_follows_the_partition_the_user_picks(tmp_path, monkeypatch, capsys):
    """sx40: the default partition's nodes have 40 CPUs, cpu's 36. Picking cpu must not leave
    a 40 nobody typed that sbatch refuses; a value the user typed stays. emit agrees."""
    async def scenario():
        wizard = await _settled("sx40", tmp_path)
        assert (wizard.state.partition, wizard.state.max_cpus) == ("sx40", 40)
        wizard.ctx.choose_partition("cpu")
        await wizard.wait()
        picked = wizard.state.max_cpus
        wizard.ctx.choose_partition("sx40")
        await wizard.wait()
        back = wizard.state.max_cpus
        wizard.state.max_cpus = 12  # typed
        wizard.ctx.choose_partition("cpu")
        await wizard.wait()
        return wizard, picked, back

    wizard, picked, back = run(scenario())
    assert (picked, back, wizard.state.max_cpus) == (36, 40, 12)
    assert not [f for f in wizard.ctx.problems() if f.field == "max_cpus"]
    monkeypatch.setenv("HOME", str(tmp_path))
    code = main(["emit", "--site", "sx40", "--partition", "cpu", "--title", USER_TEXT["title"],
                 "--goal", USER_TEXT["goal"], "--metric", "GFlops", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    with open(json.loads(captured.out)["checkpoint_dir"] + "/.env") as handle:
        assert "ARI_SLURM_CPUS=36\n" in handle.read()


def test_an_untouched_max_cpus_fits_the_tasks_per_node_of_the_preset(tmp_path, monkeypatch, capsys):
    """rccs-cloud's nodes have 4 CPUs; the mpi preset puts 4 tasks on each. Applying it must
    not leave a Max CPUs nobody typed that makes sbatch refuse the job; a typed one stays (and
    is refused, saying why). emit --preset mpi agrees."""
    async def scenario(typed):
        wizard = await _settled("rccs-cloud", tmp_path)
        for name, value in USER_TEXT.items():
            setattr(wizard.state, name, value)
        if typed is not None:
            wizard.state.max_cpus = typed
        wizard.ctx.apply_preset("mpi")
        await wizard.wait()
        return wizard

    untouched = run(scenario(None))
    assert untouched.state.max_cpus == 1
    assert [f.message for f in untouched.ctx.problems() if f.severity == "error"] == []
    typed = run(scenario(2))  # (3 is the site's default: typing it back is not a choice)
    assert typed.state.max_cpus == 2
    assert [f.field for f in typed.ctx.problems() if f.severity == "error"] == ["ntasks_per_node"]

    monkeypatch.setenv("HOME", str(tmp_path))
    argv = ["emit", "--site", "rccs-cloud", "--preset", "mpi", "--title", USER_TEXT["title"],
            "--goal", USER_TEXT["goal"], "--metric", "GFlops", "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    with open(json.loads(capsys.readouterr().out)["checkpoint_dir"] + "/.env") as handle:
        assert "ARI_SLURM_CPUS=1\n" in handle.read()
    assert main([*argv, "--max-cpus", "2", "--run-id", "20260101000000_typed"]) == 1
    assert "4 tasks × 2 CPUs = 8 per node, nodes have 4" in capsys.readouterr().err


def test_an_untouched_max_cpus_follows_the_tasks_per_node_typed_in_step_3(tmp_path, monkeypatch,
                                                                          capsys):
    """After the mpi preset (4 tasks on rccs-cloud's 4-CPU nodes: Max CPUs 1), typing 2 tasks
    per node gives each task 2 CPUs while nobody typed Max CPUs. emit --tasks-per-node agrees,
    with the same profile."""
    async def scenario():
        wizard = await _settled("rccs-cloud", tmp_path)
        for name, value in USER_TEXT.items():
            setattr(wizard.state, name, value)
        wizard.ctx.apply_preset("mpi")
        wizard.state.profile.min_ranks = 4
        wizard.state.profile.ntasks_per_node = 2
        await wizard.wait()
        return wizard

    wizard = run(scenario())
    assert wizard.state.max_cpus == 2
    assert [f.message for f in wizard.ctx.problems() if f.severity == "error"] == []

    monkeypatch.setenv("HOME", str(tmp_path))
    argv = ["emit", "--site", "rccs-cloud", "--preset", "mpi", "--ranks", "4", "--tasks-per-node",
            "2", "--title", USER_TEXT["title"], "--goal", USER_TEXT["goal"], "--metric", "GFlops",
            "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    checkpoint = Path(json.loads(capsys.readouterr().out)["checkpoint_dir"])
    assert "ARI_SLURM_CPUS=2\n" in (checkpoint / ".env").read_text()
    written = json.loads((checkpoint / "launch_config.json").read_text())["ari_jupyter"]["state"]
    assert written["profile"] == wizard.state.profile.to_json()


def _probes(*, gpus, has_gres, gres=()):
    from ari_jupyter.base.verdict import ProbeResult

    return {"gpus": ProbeResult("gpus", "ok", "", data={"count": gpus}),
            "gres": ProbeResult("gres", "ok", "", data={"has_gres": has_gres, "gres": list(gres)}),
            "mpi": ProbeResult("mpi", "ok", "", data={"srun": {"path": "/usr/bin/srun"}})}


@pytest.mark.parametrize("gpus, has_gres, gres, kind", [
    (0, False, (), "cpu_single"),       # no GPU anywhere: kind mpi would make ARI ask for CUDA
    (None, False, (), "mpi"),           # the GPU probe did not tell
    (0, True, ("gpu:v100:4",), "mpi"),  # the compute nodes have GPUs, the notebook's node not
])
def test_several_nodes_without_any_gpu_default_to_cpu_single_with_the_same_shape(
        gpus, has_gres, gres, kind):
    from ari_jupyter.wizard.config import AriWizard
    from ari_jupyter.wizard.site_defaults import _profile_for

    profile = _profile_for(AriWizard(), _probes(gpus=gpus, has_gres=has_gres, gres=gres), nodes=2)
    assert (profile.kind, profile.requested_nodes, profile.ntasks_per_node, profile.min_ranks) \
        == (kind, 2, 1, 2)


SITE_MPI = ExecutionProfile(kind="cpu_single", requested_nodes=2, ntasks_per_node=1, min_ranks=2)


@pytest.mark.parametrize("profile, site, expected", [
    (SITE_MPI, SITE_MPI, [SITE_PRESET]),                       # the site's own default
    (PRESETS["mpi"](), SITE_MPI, ["mpi"]),                     # a named preset
    (PRESETS["gpu_single"](), PRESETS["gpu_single"](), [SITE_PRESET, "gpu_single"]),  # both
    (ExecutionProfile(), ExecutionProfile(), [SITE_PRESET]),   # no profile on a 1-node site
    (ExecutionProfile(kind="mpi", requested_nodes=3), SITE_MPI, []),  # edited by hand: custom
    (SITE_MPI, None, []),                                      # no site default known
])
def test_presets_matching_names_every_entry_the_profile_equals(profile, site, expected):
    assert presets_matching(profile, site) == expected
