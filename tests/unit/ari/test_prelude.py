"""reproduce.sh prelude (L5 module loads, L6 fan-out): golden files, bash -n, and a real run
with stand-in ``module`` and ``srun`` that record what they were given."""
from __future__ import annotations
from repo_paths import TESTS

import subprocess
from pathlib import Path

import pytest

from golden_support import assert_matches_golden

from ari_jupyter.ari.prelude import (
    PreludeError, fan_out_line, module_load_line, needs_fan_out, render_prelude,
)
from ari_jupyter.ari.profile import PRESETS, ExecutionProfile

GOLDEN = TESTS / "golden" / "prelude"

CASES = {
    **{f"{name}.sh": (PRESETS[name](), {}) for name in PRESETS},
    "cpu_single_site_modules.sh": (PRESETS["cpu_single"](), {"modules": ["gcc/12", "python/3.11"]}),
    "mpi_with_command.sh": (PRESETS["mpi"](), {"modules": ["openmpi/4.1"],
                                               "command": ["./spgemm", "--size", "1 << 20"]}),
    "mpi_mpirun.sh": (PRESETS["mpi"](), {"launcher": "mpirun"}),
    "cpu_two_nodes_from_allocation.sh": (PRESETS["cpu_single"](), {"nodes": 2}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_prelude_matches_golden(name):
    profile, kwargs = CASES[name]
    text = render_prelude(profile, **kwargs)
    path = GOLDEN / name
    assert_matches_golden(path, text)
    subprocess.run(["bash", "-n", str(path)], check=True)


def test_every_golden_has_a_case():
    assert sorted(p.name for p in GOLDEN.glob("*.sh")) == sorted(CASES)


@pytest.mark.parametrize("profile, nodes, expected", [
    (ExecutionProfile(kind="cpu_single"), None, False),
    (ExecutionProfile(kind="cpu_single"), 2, True),
    (ExecutionProfile(kind="gpu_multi", requested_nodes=2), 1, True),
    (ExecutionProfile(kind="mpi"), 1, True),
    (ExecutionProfile(), None, False),
])
def test_needs_fan_out(profile, nodes, expected):
    assert needs_fan_out(profile, nodes) is expected


def test_fan_out_line_matches_aris_l6_pattern():
    import re
    line = fan_out_line(["./a.out"])
    assert re.search(r"srun.*-N \$SLURM_JOB_NUM_NODES.*-n \$SLURM_NTASKS", line)
    assert fan_out_line(["./a.out"], "mpirun") == "mpirun -np $SLURM_NTASKS ./a.out"


@pytest.mark.parametrize("bad", ["", "two words", "tab\there", "nl\nx", "-v"])
def test_bad_module_names_are_refused(bad):
    with pytest.raises(PreludeError):
        module_load_line([bad])


def test_bad_launcher_and_command_are_refused():
    with pytest.raises(PreludeError):
        fan_out_line(["x"], "mpiexec.hydra")
    with pytest.raises(PreludeError):
        fan_out_line(["x\nrm -rf /"])


def _stand_ins(bin_dir: Path, log: Path) -> None:
    for name in ("module", "srun", "mpirun"):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\nprintf "%s\\n" "{name} $*" >> "{log}"\n')
        script.chmod(0o755)


def test_prelude_runs_modules_then_fans_out(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    _stand_ins(bin_dir, log)
    canary = tmp_path / "canary"
    script = tmp_path / "reproduce.sh"
    script.write_text(render_prelude(
        PRESETS["mpi"](), modules=["openmpi/4.1", f"x;touch${{IFS}}{canary}"],
        command=["./spgemm", "$(touch " + str(canary) + ")"]))
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "SLURM_JOB_NUM_NODES": "2"}
    subprocess.run(["bash", str(script)], env=env, check=True, cwd=tmp_path)
    calls = log.read_text().splitlines()
    assert calls[0] == f"module load openmpi/4.1 x;touch${{IFS}}{canary}"
    assert calls[1] == f"srun -N 2 -n 2 ./spgemm $(touch {canary})"
    assert not canary.exists()


def test_srun_receives_the_jobs_task_count(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    _stand_ins(bin_dir, log)
    script = tmp_path / "reproduce.sh"
    script.write_text(render_prelude(PRESETS["mpi"]()) + 'fan_out ./a.out "two words"\n')
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "SLURM_JOB_NUM_NODES": "2", "SLURM_NTASKS": "8"}
    subprocess.run(["bash", str(script)], env=env, check=True, cwd=tmp_path)
    assert log.read_text().splitlines() == ["srun -N 2 -n 8 ./a.out two words"]
