"""Which hand-off contract the installed ARI speaks, and what reaches its jobs.

A stand-in install (an ``ari`` console script, its environment's ``ari-core`` metadata and
ARI's tree beside it, with only the files that tell the contracts apart) makes the ``ari``
probe name the contract; step 4's checklist and check-handoff then say, setting by setting,
what does not reach the newer ARI's jobs. ARI e41c806 keeps every answer it had.
"""
from __future__ import annotations
from repo_paths import REPO

import json
import sys
from pathlib import Path

import pytest

from ari_jupyter.ari import contracts, render
from ari_jupyter.ari.contracts import REFERENCE, TYPED_HPC_V1
from ari_jupyter.base.verdict import ProbeResult
from ari_jupyter.checkpoint.handoff import handoff_checklist
from ari_jupyter.cli.check_handoff import report
from ari_jupyter.hosts.host import LocalHost
from ari_jupyter.i18n import LANGUAGES
from ari_jupyter.probes.ari import probe_ari
from ari_jupyter.probes.context import ProbeContext
from ari_jupyter.wizard.state import WizardState

LAYOUTS = {
    TYPED_HPC_V1: ("ari-skill-hpc/ari_skill_hpc/contracts.py",
                   "ari-skill-hpc/schemas/job-request-v1.schema.json"),
    REFERENCE: ("ari-skill-hpc/src/slurm.py",),
}


def stand_in(tmp: Path, layout: str | None, *, editable: bool = True) -> dict[str, str]:
    """An ARI install the probe can read (nothing of ARI's code): returns the env to find it."""
    root, prefix = tmp / "ARI", tmp / "venv"
    (root / "ari-core" / "ari").mkdir(parents=True)
    (root / "ari-core" / "ari" / "__init__.py").write_text("")
    for mark in LAYOUTS.get(layout, ()):
        (root / mark).parent.mkdir(parents=True, exist_ok=True)
        (root / mark).write_text("")
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "python").symlink_to(sys.executable)
    ari = prefix / "bin" / "ari"
    ari.write_text(f"#!{prefix}/bin/python\nprint('ari-core 0.9.1')\n")
    ari.chmod(0o755)
    site = prefix / "lib" / "python3.11" / "site-packages"
    dist = site / "ari_core-0.9.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ari-core\nVersion: 0.9.1\n")
    if editable:
        (dist / "direct_url.json").write_text(json.dumps(
            {"url": (root / "ari-core").as_uri(), "dir_info": {"editable": True}}))
    return {"PATH": f"{prefix / 'bin'}:/usr/bin:/bin", "HOME": str(tmp)}


def run_probe(env: dict[str, str]) -> ProbeResult:
    import asyncio

    return asyncio.run(probe_ari(LocalHost(env), ProbeContext()))


# -- the probe -----------------------------------------------------------------------------

@pytest.mark.parametrize("layout, status, contract", [
    (TYPED_HPC_V1, "warn", TYPED_HPC_V1),
    (REFERENCE, "ok", REFERENCE),
    (None, "ok", None),  # neither skill: the contract is not told
])
def test_probe_names_the_contract_of_the_installed_code(tmp_path, layout, status, contract):
    result = run_probe(stand_in(tmp_path, layout))
    assert (result.status, result.data["contract"], result.data["version"]) == (status, contract, "0.9.1")
    if contract == TYPED_HPC_V1:
        for lang in LANGUAGES:
            assert TYPED_HPC_V1 in result.text(lang) and result.fix_text(lang)
    else:  # ARI e41c806's words are the ones they were
        assert result.message_id == "probe.ari.ok"


def test_the_newer_skill_installed_as_a_package_is_recognised_too(tmp_path):
    env = stand_in(tmp_path, REFERENCE)
    package = next((tmp_path / "venv" / "lib").glob("python3*/site-packages")) / "ari_skill_hpc"
    package.mkdir()
    (package / "contracts.py").write_text("")
    assert contracts.installed_contract(env) == TYPED_HPC_V1


def test_the_version_string_does_not_decide(tmp_path):
    """Both layouts answer ``ari-core 0.9.1``: only the files tell them apart."""
    typed, reference = tmp_path / "t", tmp_path / "r"
    typed.mkdir(), reference.mkdir()
    answers = {contracts.installed_contract(stand_in(typed, TYPED_HPC_V1)),
               contracts.installed_contract(stand_in(reference, REFERENCE))}
    assert answers == {TYPED_HPC_V1, REFERENCE}


# -- what reaches the jobs -------------------------------------------------------------------

def state_for(contract: str | None, tmp_path: Path, sbatch: str = "/opt/slurm/bin/sbatch",
              **choices) -> WizardState:
    values = dict(partition="small", max_cpus=4, walltime="02:00:00", mem_gb=8,
                  module_loads=["gcc/12.2.0", "openmpi/4.1.5"], allow_no_gres=True,
                  workspace=str(tmp_path / "ws"), run_id="20261206101500_triad", title="Triad",
                  goal="Measure the triad bandwidth.", metrics=["bandwidth"])
    values.update(choices)
    state = WizardState(**values)
    probes = {"sbatch": ProbeResult("sbatch", "ok", "sbatch", data={"path": sbatch})}
    if contract is not None:
        probes["ari"] = ProbeResult("ari", "ok", "ari", data={"contract": contract})
    state.probe_results = probes
    return state


NOT_REACHING = {"contract.valid_partitions", "contract.module_loads", "contract.env_file",
                "contract.max_cpus", "contract.walltime", "contract.allow_no_gres",
                "contract.log_dir", "contract.reproduce"}


@pytest.mark.parametrize("choices, sbatch, missing, reaching", [
    ({}, "/opt/slurm/bin/sbatch", NOT_REACHING,
     {"contract.partition", "contract.mem_gb", "contract.scheduler_path", "contract.ledger"}),
    # sbatch on the jobs' default PATH: nothing to write, nothing to say about it
    ({"module_loads": [], "allow_no_gres": False, "walltime": "", "mem_gb": None}, "/usr/bin/sbatch",
     NOT_REACHING - {"contract.module_loads", "contract.allow_no_gres", "contract.walltime"},
     {"contract.partition", "contract.ledger"}),
    # no run id yet: ARI would put the ledger in the checkpoint and make it 0700
    ({"run_id": ""}, "/usr/bin/sbatch", NOT_REACHING | {"contract.ledger"},
     {"contract.partition", "contract.mem_gb"}),
])
def test_setting_by_setting_what_reaches_the_newer_aris_jobs(tmp_path, choices, sbatch, missing,
                                                             reaching):
    findings = contracts.job_settings(TYPED_HPC_V1, state_for(TYPED_HPC_V1, tmp_path, sbatch, **choices).choices())
    assert {f.rule for f in findings if f.severity == "warning"} == missing
    assert {f.rule for f in findings if f.severity == "info"} == reaching
    for finding in findings:
        for lang in LANGUAGES:
            assert finding.text(lang) and (finding.severity == "info" or finding.fix_text(lang))


def test_with_ari_e41c806_every_setting_reaches_the_jobs(tmp_path):
    assert contracts.job_settings(REFERENCE, state_for(REFERENCE, tmp_path).choices()) == []


@pytest.mark.parametrize("lang, words", [
    ("en", ("typed-hpc-v1", "ARI_ENV_FILE is read nowhere", "SLURM_VALID_PARTITIONS has no reader",
            "ARI_SLURM_ALLOW_NO_GRES has no reader", "SLURM_LOG_DIR has no reader",
            "the agent's cpus_per_task wins", "modules: to slurm_submit", "ARI_SCHEDULER_PATH=/opt/slurm/bin")),
    ("ja", ("typed-hpc-v1", "ARI_ENV_FILE はどこでも読まれません", "SLURM_VALID_PARTITIONS を読むコードはなく")),
    ("zh", ("typed-hpc-v1", "没有任何地方读取 ARI_ENV_FILE", "没有代码读取 SLURM_LOG_DIR")),
])
def test_checklist_and_check_handoff_name_what_does_not_reach_the_jobs(tmp_path, lang, words):
    state = state_for(TYPED_HPC_V1, tmp_path)
    steps = handoff_checklist(state.choices(), state.checkpoint_dir, port=8765, env={})
    assert [s.id for s in steps] == ["handoff", "reproduce", "dashboard", "contract"]
    printed = report([], steps, lang)
    for word in words:
        assert word in printed
    assert steps[-1].to_json()["messages"]["detail"]["message_id"] == "contract.step.detail"


def test_with_ari_e41c806_the_checklist_is_the_three_steps_it_was(tmp_path):
    for contract in (REFERENCE, None):
        state = state_for(contract, tmp_path)
        steps = handoff_checklist(state.choices(), state.checkpoint_dir, port=8765, env={})
        assert [s.id for s in steps] == ["handoff", "reproduce", "dashboard"]


# -- what the checkpoint writes ----------------------------------------------------------------

@pytest.mark.parametrize("sbatch, scheduler_path", [
    ("/opt/slurm/bin/sbatch", "/opt/slurm/bin:/usr/local/bin:/usr/bin:/bin"),
    ("/usr/bin/sbatch", None),  # already on the jobs' default PATH
    ("/usr/local/bin/sbatch", None),
])
def test_the_newer_contracts_env_lines(tmp_path, sbatch, scheduler_path):
    state = state_for(TYPED_HPC_V1, tmp_path, sbatch)
    values = render.env_values(state.choices()).values
    ledger = values["ARI_HPC_LEDGER_PATH"]
    assert ledger == f"{tmp_path}/ws/ari-ledger/20261206101500_triad/hpc-jobs-v1.json"
    # a folder of its own: ARI chmods the ledger's parent 0700, never the checkpoint then
    assert not ledger.startswith(state.checkpoint_dir.rstrip("/") + "/")
    assert values.get("ARI_SCHEDULER_PATH") == scheduler_path
    assert f"ARI_HPC_LEDGER_PATH={ledger}\n" in render.render_env(state.choices())


def test_the_module_loads_are_written_where_the_agent_passes_them(tmp_path):
    typed = render.render_experiment_md(state_for(TYPED_HPC_V1, tmp_path).choices())
    assert 'pass modules: ["gcc/12.2.0", "openmpi/4.1.5"] to every slurm_submit call' in typed
    assert "Modules loaded before ARI starts" not in typed
    reference = render.render_experiment_md(state_for(REFERENCE, tmp_path).choices())
    assert "- Modules loaded before ARI starts: gcc/12.2.0, openmpi/4.1.5" in reference


@pytest.mark.parametrize("contract", [REFERENCE, None])
def test_ari_e41c806_gets_the_same_files_as_before(tmp_path, contract):
    """The reference's files do not depend on the probe having told the contract."""
    plain = state_for(None, tmp_path)
    plain.probe_results = {}
    told = state_for(contract, tmp_path)
    for name in ("render_env", "render_experiment_md", "render_bfts_env"):
        assert getattr(render, name)(told) == getattr(render, name)(plain)


def test_the_preview_says_which_reproduce_it_shows(tmp_path):
    import subprocess

    state = state_for(TYPED_HPC_V1, tmp_path)
    config = tmp_path / "launch_config.json"
    config.write_text(render.render_launch_config(state.choices()))
    run = lambda *extra: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "ari_jupyter", "preview", "sbatch", "--profile", str(config),
         "--sbatch", "yes", "--gres", "no", "--bind-flags", "no",
         "--repo-dir", str(tmp_path / "repro_sandbox"), *extra], capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)})
    answer = json.loads(run("--json").stdout)
    assert (answer["shows"], answer["contract"]) == (REFERENCE, TYPED_HPC_V1)
    assert "sbatch --wait" in run().stderr
    state.probe_results = {k: v for k, v in state.probe_results.items() if k != "ari"}
    config.write_text(render.render_launch_config(state.choices()))
    assert "shows" not in json.loads(run("--json").stdout)  # ARI e41c806: as before
