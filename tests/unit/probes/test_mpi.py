"""mpi (srun preferred, mpirun/mpiexec second, an MPI module as a last hint) and ari."""
from __future__ import annotations

import pytest

from ari_jupyter.probes import modules as modules_probe

from probe_support import cmd, output, probe, said_in_every_language, site

SRUN_VERSION = cmd(["srun", "--version"], output("sbatch/version_debian.txt"))
SRUN_LIST = cmd(["srun", "--mpi=list"], "", output("srun/mpi_list_22.05.txt"))
MPIRUN = cmd(["mpirun", "--version"], output("mpirun/openmpi_4.1.4.txt"))
MPIEXEC = cmd(["mpiexec", "--version"], output("mpirun/mpiexec_openrte_4.1.4.txt"))
MPICH = cmd(["mpiexec", "--version"], output("mpirun/mpich_4.1.2.txt"))
INTEL = cmd(["mpirun", "--version"], output("mpirun/intel_2021.11.txt"))
SRUN_BROKEN = cmd(["srun", "--version"], "", output("slurm-errors/unconfigured.txt").replace("sinfo", "srun"), 1)
NO_MODULE = cmd(["bash", "-lc", "module -t avail 2>&1"], output("module-avail/module_not_found.txt"), "", 127)
OPENMPI_MODULE = cmd(["bash", "-lc", "module -t avail 2>&1"], output("module-avail/lmod_8.6_terse.txt"))


@pytest.fixture(autouse=True)
def fresh_cache():
    modules_probe.clear_cache()
    yield
    modules_probe.clear_cache()


@pytest.mark.parametrize(
    "programs, commands, status, launcher, words",
    [
        (["srun"], [SRUN_VERSION, SRUN_LIST], "ok", "srun", "srun 22.05.8 available (preferred, PMI plugins pmi2)"),
        (["srun", "mpirun"], [SRUN_VERSION, SRUN_LIST, MPIRUN], "ok", "srun", "also mpirun (Open MPI 4.1.4)"),
        (["mpirun", "mpiexec"], [MPIRUN, MPIEXEC], "warn", "mpirun", "no srun; mpirun (Open MPI 4.1.4), mpiexec (Open MPI 4.1.4)"),
        (["mpiexec"], [MPICH], "warn", "mpiexec", "mpiexec (MPICH 4.1.2)"),
        (["mpirun"], [INTEL], "warn", "mpirun", "mpirun (Intel MPI 2021.11)"),
        (["srun", "mpirun"], [SRUN_BROKEN, MPIRUN], "warn", "mpirun", "srun does not run (srun: fatal: Could not establish"),
        (["bash"], [OPENMPI_MODULE], "warn", None, "module openmpi/4.1 should provide mpirun"),
        (["bash"], [NO_MODULE], "fail", None, "no working MPI launcher"),
        ([], [], "fail", None, "no working MPI launcher"),
        (["srun", "bash"], [SRUN_BROKEN, NO_MODULE], "fail", None, "srun does not run"),
    ],
)
def test_mpi(programs, commands, status, launcher, words):
    result = probe(site(programs=programs, commands=commands), "mpi")
    assert result.status == status, result
    assert result.data["launcher"] == launcher
    assert words in result.summary
    said_in_every_language(result)


def test_srun_plugins_and_versions_are_data():
    result = probe(site(programs=["srun", "mpirun"], commands=[
        SRUN_VERSION, cmd(["srun", "--mpi=list"], output("srun/mpi_list_23.02.txt")), MPIRUN]), "mpi")
    assert result.data["srun"]["mpi_plugins"] == ["none", "cray_shasta", "pmi2", "pmix", "pmix_v4"]
    assert result.data["srun"]["version"] == "22.05.8"
    assert result.data["mpirun"]["flavour"] == "Open MPI"


def test_hung_version_query_still_counts_the_launcher():
    result = probe(site(programs=["mpirun"], commands=[cmd(["mpirun", "--version"], delay=3600)]),
                   "mpi", timeout=0.3)
    assert result.status == "warn"  # present; whether it works could not be asked
    assert result.data["mpirun"]["version"] is None and result.data["launcher"] == "mpirun"


# --------------------------------------------------------------------------- ari


@pytest.mark.parametrize(
    "commands, status, version, words",
    [
        ([cmd(["ari", "--version"], "ari-core 0.9.1\n")], "ok", "0.9.1", "ari 0.9.1 at /usr/bin/ari"),
        ([cmd(["ari", "--version"], "", "Usage: ari [OPTIONS] COMMAND [ARGS]...\nTry 'ari --help' for help.\n\nError: No such option: --version\n", 2)],
         "ok", None, "`--version` is not an ari option"),
        # rich's colours (ARI's CLI), one code even inside the option's name: read as plain text
        ([cmd(["ari", "--version"], "", "\x1b[33mUsage: \x1b[0m\x1b[1mari [OPTIONS] COMMAND [ARGS]...\x1b[0m\n"
              "\x1b[31m╭─\x1b[0m\x1b[31m Error \x1b[0m\x1b[31m──╮\x1b[0m\n\x1b[31m│\x1b[0m No such option: "
              "\x1b[1;36m-\x1b[0m\x1b[1;36m-version\x1b[0m \x1b[31m│\x1b[0m\n", 2)],
         "ok", None, "`--version` is not an ari option"),
        ([cmd(["ari", "--version"], "", "Traceback (most recent call last):\nModuleNotFoundError: No module named 'ari'\n", 1)],
         "warn", None, "does not start: Traceback"),
        ([cmd(["ari", "--version"], delay=3600)], "warn", None, "did not answer"),
    ],
)
def test_ari(commands, status, version, words):
    result = probe(site(programs=["ari"], commands=commands), "ari", timeout=0.3)
    assert result.status == status, result
    assert result.data["version"] == version
    assert words in result.summary
    assert "\x1b" not in result.evidence  # shown in step 2's details: no [1;33m


@pytest.mark.parametrize("where, says, fix_says", [
    # this machine: the hand-off's `ari run` stops with exit 127, as check-handoff says
    ("here", "not on PATH here", ("pip install", "~/.bash_profile", "check-handoff")),
    # a recording: its site has no ARI, and nothing is to be installed for a lesson
    ("recorded", "the recording of table", ("Nothing to install", "your own cluster")),
])
def test_ari_missing_fails_as_the_handoff_would(tmp_path, where, says, fix_says):
    from ari_jupyter.hosts.host import LocalHost

    host = LocalHost(env={"PATH": str(tmp_path), "HOME": str(tmp_path)}) if where == "here" \
        else site()
    result = probe(host, "ari")
    assert result.status == "fail" and "exit 127" in result.summary
    assert says in result.summary, result.summary
    assert "kotama7/ARI" in result.fix and all(words in result.fix for words in fix_says), result.fix
    said_in_every_language(result)
