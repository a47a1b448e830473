"""modules: Lmod / Environment Modules / a login shell's ``module``, and the per-MODULEPATH cache."""
from __future__ import annotations

import pytest

from ari_jupyter.probes import modules as modules_probe

from probe_support import cmd, output, probe, site

LMOD = "/usr/share/lmod/lmod/libexec/lmod"
LMOD_AVAIL = (LMOD, "python", "-t", "avail")
LOGIN = ("bash", "-lc", "module -t avail 2>&1")


@pytest.fixture(autouse=True)
def fresh_cache():
    modules_probe.clear_cache()
    yield
    modules_probe.clear_cache()


def lmod_site(stderr="", rc=0, delay=0.0, modulepath="/tmp/slurm-lab/modulefiles"):
    return site(
        programs=[LMOD, "bash"],
        env={"HOME": "/home/alice", "LMOD_CMD": LMOD, "LMOD_VERSION": "8.6.19", "MODULEPATH": modulepath},
        commands=[cmd(LMOD_AVAIL, output("module-avail/lmod_8.6_python_stdout.txt"), stderr, rc, delay)],
    )


def test_lmod_listing_from_stderr():
    result = probe(lmod_site(output("module-avail/lmod_8.6_terse.txt")), "modules")
    assert result.status == "ok"
    assert result.data["system"] == "lmod" and result.data["version"] == "8.6.19"
    assert result.data["modules"] == ["cuda/12.4", "openmpi/4.1", "Core/lmod", "Core/settarg"]
    assert result.data["has_openmpi"] is True
    assert result.data["openmpi_modules"] == ["openmpi/4.1"]
    assert result.data["cuda_modules"] == ["cuda/12.4"]
    assert "_ModuleTable" not in result.evidence  # Lmod's stdout is code, not evidence
    assert result.command == f"{LMOD} python -t avail"


@pytest.mark.parametrize(
    "stderr, rc, delay, status, words",
    [
        (output("module-avail/lmod_annotated.txt"), 0, 0, "ok", "7 modules via Lmod"),
        (output("module-avail/empty.txt"), 0, 0, "warn", "lists no modules"),
        (output("module-avail/lmod_error.txt"), 1, 0, "unknown", "failed (exit 1)"),
        ("", 0, 3600, "unknown", "did not answer within"),
    ],
)
def test_lmod_verdicts(stderr, rc, delay, status, words):
    result = probe(lmod_site(stderr, rc, delay), "modules", timeout=0.3)
    assert result.status == status, result
    assert words in result.summary


def test_annotated_listing_without_openmpi_still_finds_easybuild_openmpi():
    result = probe(lmod_site(output("module-avail/lmod_annotated.txt")), "modules")
    assert result.data["openmpi_modules"] == ["OpenMPI/4.1.5-GCC-12.3.0"]


def test_environment_modules_via_modules_cmd():
    modulecmd = "/usr/share/modules/libexec/modulecmd.tcl"
    host = site(programs=[modulecmd], env={"HOME": "/h", "MODULES_CMD": modulecmd},
                commands=[cmd([modulecmd, "python", "-t", "avail"], "", output("module-avail/env_modules_5.txt"))])
    result = probe(host, "modules")
    assert result.status == "ok" and result.data["system"] == "environment-modules"
    assert result.data["has_openmpi"] is False and result.data["mpi_modules"] == ["mpich/4.1.2"]
    assert "MPI module: mpich/4.1.2" in result.summary


def test_login_shell_fallback_when_the_kernel_never_initialised_modules():
    host = site(programs=["bash"], commands=[cmd(LOGIN, output("module-avail/lmod_8.6_terse.txt"))])
    result = probe(host, "modules")
    assert result.status == "ok" and result.data["system"] == "login-shell"
    assert result.data["has_openmpi"] is True
    # the system is named in words, in the reader's language, not as the identifier
    assert "modules via the login shell" in result.text("en")
    assert result.text("ja").startswith("ログインシェル のモジュール")
    assert result.text("zh").startswith("通过 登录 shell 找到")


@pytest.mark.parametrize(
    "programs, commands",
    [
        (["bash"], [cmd(LOGIN, output("module-avail/module_not_found.txt"), "", 127)]),
        ([], []),
    ],
)
def test_no_module_system_is_skip(programs, commands):
    result = probe(site(programs=programs, commands=commands), "modules")
    assert result.status == "skip"
    assert result.data["modules"] == [] and result.data["has_openmpi"] is False


def test_lmod_cmd_pointing_nowhere_falls_back_to_the_login_shell():
    host = site(programs=["bash"], env={"HOME": "/h", "LMOD_CMD": "/gone/lmod"},
                commands=[cmd(LOGIN, output("module-avail/module_not_found.txt"), "", 127)])
    assert probe(host, "modules").status == "skip"


def test_listing_is_cached_per_modulepath_for_the_process():
    host = lmod_site(output("module-avail/lmod_8.6_terse.txt"))
    first = probe(host, "modules")
    host.commands[0] = cmd(LMOD_AVAIL, "", output("module-avail/lmod_error.txt"), 1)
    second = probe(host, "modules")
    assert first.data["cached"] is False and second.data["cached"] is True
    assert second.status == "ok" and second.data["modules"] == first.data["modules"]
    assert "(cached)" in second.summary
    # A different MODULEPATH is a different listing; the cache can be turned off.
    host.env["MODULEPATH"] = "/elsewhere"
    assert probe(host, "modules").status == "unknown"
    host.env["MODULEPATH"] = "/tmp/slurm-lab/modulefiles"
    assert probe(host, "modules", module_cache=False).status == "unknown"


def test_failures_are_not_cached():
    host = lmod_site(output("module-avail/lmod_error.txt"), rc=1)
    assert probe(host, "modules").status == "unknown"
    host.commands[0] = cmd(LMOD_AVAIL, "", output("module-avail/lmod_8.6_terse.txt"))
    assert probe(host, "modules").status == "ok"


def test_lmod_without_modulepath_falls_back_to_the_login_shell():
    host = site(
        programs=[LMOD, "bash"], env={"HOME": "/home/alice", "LMOD_CMD": LMOD},
        commands=[cmd(LMOD_AVAIL, output("module-avail/lmod_8.6_python_stdout.txt"), ""),
                  cmd(LOGIN, output("module-avail/lmod_8.6_terse.txt"))],
    )
    result = probe(host, "modules")
    assert result.status == "ok" and result.data["system"] == "login-shell"
    assert "openmpi/4.1" in result.data["modules"]


def test_lmod_without_modulepath_and_nothing_in_the_login_shell_warns():
    host = site(
        programs=[LMOD, "bash"], env={"HOME": "/home/alice", "LMOD_CMD": LMOD},
        commands=[cmd(LMOD_AVAIL, "", ""), cmd(LOGIN, "")],
    )
    result = probe(host, "modules")
    assert result.status == "warn" and result.data["system"] == "lmod"
