"""Real Environment Modules 5.2 (Debian's package, unpacked and relocated by
tests/testbed/environment-modules.sh; Debian's lmod conflicts with installing it).

What a site with Environment Modules instead of Lmod meets: the modules probe lists through
``$MODULES_CMD``, the reproduce.sh prelude defines ``module`` from ``$MODULESHOME`` in a
non-login bash and loads the profile's modules, check-handoff names an unknown module with
Environment Modules' own words, and the doctor recognises that error. The module tree is the
test bed's (openmpi/4.1, cuda/12.4), written as Tcl modulefiles.
"""
from __future__ import annotations
from repo_paths import TESTS

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ari_jupyter.ari.prelude import render_prelude
from ari_jupyter.ari.profile import ExecutionProfile
from ari_jupyter.doctor import diagnose_text
from ari_jupyter.checkpoint.emit import emit_checkpoint
from ari_jupyter.checkpoint.handoff import check_handoff
from ari_jupyter.hosts.host import LocalHost
from ari_jupyter.probes import ProbeContext, run_probes_sync
from ari_jupyter.base.verdict import ProbeResult
from unit.ari.test_render import golden_state

FIXTURES = TESTS / "fixtures" / "doctor"
UNKNOWN = "ERROR: Unable to locate a modulefile for 'nosuch/1.0'"


def test_modules_probe_lists_through_modules_cmd_and_cli_agrees(envmodules, tmp_path):
    (core,) = run_probes_sync(LocalHost(envmodules), ProbeContext(allocation=None, only=["modules"],
                                                                  module_cache=False))
    assert core.status == "ok", core
    assert core.data["system"] == "environment-modules"
    assert core.data["modules"] == ["cuda/12.4", "openmpi/4.1"]
    assert core.data["mpi_modules"] == ["openmpi/4.1"] and core.data["has_openmpi"] is True
    assert core.command == f"{envmodules['MODULES_CMD']} python -t avail"
    assert f"{envmodules['MODULEPATH']}:\ncuda/12.4\nopenmpi/4.1" in core.evidence

    cli = subprocess.run([sys.executable, "-m", "ari_jupyter", "probe", "--json", "--only", "modules"],
                         env={**envmodules, "PYTHONPATH": os.pathsep.join(sys.path)}, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    (answer,) = json.loads(cli.stdout)["probes"]
    assert {k: answer[k] for k in ("status", "summary", "data")} == \
        {k: core.to_json()[k] for k in ("status", "summary", "data")}


def _run_prelude(envmodules: dict, tmp_path: Path, modules: list[str]) -> subprocess.CompletedProcess:
    """reproduce.sh as ARI runs it: ``bash reproduce.sh``, non-login, `module` undefined."""
    script = tmp_path / "reproduce.sh"
    script.write_text(render_prelude(ExecutionProfile(module_loads=modules))
                      + 'printf "%s\\n" "loaded=$LOADEDMODULES" "mpi=$MPI_HOME" "cuda=$CUDA_VERSION"\n')
    env = {k: envmodules[k] for k in ("PATH", "HOME", "LANG", "MODULESHOME", "MODULEPATH")}
    return subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60)


def test_prelude_defines_module_from_moduleshome_and_loads_in_order(envmodules, tmp_path):
    done = _run_prelude(envmodules, tmp_path, ["openmpi/4.1", "cuda/12.4"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["loaded=openmpi/4.1:cuda/12.4",
                                        "mpi=/usr/lib/x86_64-linux-gnu/openmpi", "cuda=12.4"]


def test_prelude_stops_at_an_unknown_module_and_the_doctor_names_it(envmodules, tmp_path):
    done = _run_prelude(envmodules, tmp_path, ["openmpi/4.1", "nosuch/1.0"])
    assert done.returncode != 0 and "loaded=" not in done.stdout  # set -e: the work never starts
    assert UNKNOWN in done.stderr.splitlines()
    assert [f.rule for f in diagnose_text(done.stderr)][:1] == ["module-unknown"]


def test_the_doctor_fixture_still_matches_environment_modules(envmodules, tmp_path):
    """tests/fixtures/doctor/module_unknown.txt holds this error text; it must stay real."""
    assert UNKNOWN in (FIXTURES / "module_unknown.txt").read_text().splitlines()
    env = {**envmodules, "BASH_ENV": f"{envmodules['MODULESHOME']}/init/bash"}
    done = subprocess.run(["bash", "-c", "module load openmpi/4.1 nosuch/1.0"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stderr.strip() == UNKNOWN


@pytest.mark.parametrize("modules, status", [(["openmpi/4.1"], "ok"), (["openmpi/4.1", "nosuch/1.0"], "fail")])
def test_check_handoff_loads_the_modules_with_environment_modules(envmodules, tmp_path, modules, status):
    workspace = tmp_path / "ws"
    state = golden_state(workspace=str(workspace), provided_files=[], module_loads=modules)
    state.set_probe_result(ProbeResult("shared_fs", "ok", "shared", data={"path": str(workspace)}))
    checkpoint = emit_checkpoint(state, force=True).checkpoint_dir
    # As a site's terminal has it after Environment Modules' init: BASH_ENV reaches batch bash.
    env = {**envmodules, "BASH_ENV": f"{envmodules['MODULESHOME']}/init/bash"}
    checks = {r.id: r for r in check_handoff(checkpoint, host=LocalHost(env), timeout=30)}
    got = checks["modules"]
    assert got.status == status, got
    if status == "fail":
        assert "Unable to locate a modulefile for 'nosuch/1.0'" in got.summary and got.fix
    else:
        assert got.summary.endswith("openmpi/4.1")


@pytest.mark.parametrize("modules, rc, last_line", [
    (["openmpi/4.1", "nosuch/1.0"], 1,
     "ari-jupyter 引き継ぎ: module load が失敗しました（上の出力を参照）。この実行のモジュールは次で"
     "確かめられます: ari-jupyter check-handoff {checkpoint}"),
    (["openmpi/4.1"], 127,
     "ari-jupyter 引き継ぎ: PATH に 'ari' がありません。先に ARI の環境を有効にしてください。"),
])
def test_the_handoff_script_says_in_the_runs_language_where_it_stopped(envmodules, tmp_path, modules,
                                                                       rc, last_line):
    """The hand-off script, run as the second terminal runs it (non-login bash, no `ari`): an
    unknown module stops it after the module system's own words, then the run's sentence."""
    from ari_jupyter.ari.render import render_handoff_script

    checkpoint = tmp_path / "checkpoints" / "r"
    script = tmp_path / "handoff.sh"
    script.write_text(render_handoff_script(
        golden_state(lang="ja", module_loads=modules, workspace=str(tmp_path), site_name=""), str(checkpoint),
        str(script)), encoding="utf-8")
    env = {k: envmodules[k] for k in ("HOME", "LANG", "MODULESHOME", "MODULEPATH")}
    env["PATH"] = os.pathsep.join(d for d in envmodules["PATH"].split(os.pathsep)
                                  if not (Path(d) / "ari").exists())  # where ARI is installed too
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == rc, done.stderr
    said = done.stderr.strip().splitlines()
    assert said[-1] == last_line.format(checkpoint=checkpoint)
    assert (UNKNOWN in said) is (rc == 1)
