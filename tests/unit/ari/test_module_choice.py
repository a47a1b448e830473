"""The module picker's answer to each typed entry (table-driven)."""
from __future__ import annotations

import pytest

from ari_jupyter.ari.module_choice import choose_module, software_modules

OFFERED = ["openmpi/4.1", "openmpi/5.0", "gcc/12.2", "cuda/12.4", "intel-mpi/2021"]


@pytest.mark.parametrize("typed, offered, name, reason, candidates", [
    ("openmpi/4.1", OFFERED, "openmpi/4.1", "", ()),
    (" gcc/12.2 ", OFFERED, "gcc/12.2", "", ()),
    ("openmpi", OFFERED, None, "unknown", ("openmpi/4.1", "openmpi/5.0")),
    ("OpenMPI", OFFERED, None, "unknown", ("openmpi/4.1", "openmpi/5.0")),
    ("mpi", OFFERED, None, "unknown", ("openmpi/4.1", "openmpi/5.0", "intel-mpi/2021")),
    ("nvhpc", OFFERED, None, "unknown", ()),
    # a typo: the close names, as `emit --module` names them (difflib, like the validator)
    ("openmpi/4.l", OFFERED, None, "unknown", ("openmpi/4.1", "openmpi/5.0")),
    ("opnmpi/5.0", OFFERED, None, "unknown", ("openmpi/5.0", "openmpi/4.1")),
    ("gcc/12.3", OFFERED, None, "unknown", ("gcc/12.2",)),
    ("-f", OFFERED, None, "invalid", ()),
    ("", OFFERED, None, "invalid", ()),
    ("anything/1", [], "anything/1", "", ()),  # no list from the site: nothing to check against
])
def test_choose_module(typed, offered, name, reason, candidates):
    choice = choose_module(typed, offered)
    assert (choice.name, choice.reason, choice.candidates) == (name, reason, candidates)
    assert choice.accepted == (name is not None)


@pytest.mark.parametrize("names, software", [
    (["cuda/12.4", "openmpi/4.1", "Core/lmod", "Core/settarg"], ["cuda/12.4", "openmpi/4.1"]),
    (["lmod", "settarg", "gcc/12"], ["gcc/12"]),  # Lmod without its Core/ directory name
    (["dot", "module-git", "module-info", "modules", "null", "use.own", "openmpi"], ["openmpi"]),
    (["lmod-tools/1.0", "Core/gcc/12", "mylab/null-model"], ["lmod-tools/1.0", "Core/gcc/12",
                                                            "mylab/null-model"]),
    ([], []),
])
def test_the_module_systems_own_modulefiles_are_not_software(names, software):
    assert software_modules(names) == software
