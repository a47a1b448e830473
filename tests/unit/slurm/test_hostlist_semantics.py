"""Where the hostlist parsers disagree, ours follows SLURM: a table of SLURM 22.05's own
answers (``scontrol show hostnames``), checked against ours, against a live ``scontrol``
when one is installed, and against the peers (ClusterShell, python-hostlist, submitit) to
record how each of them differs. ``ERROR`` is a refusal."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess

import pytest

from ari_jupyter.slurm.hostlist import HostlistError, compress, expand

ERROR = "ERROR"

# hostlist, SLURM 22.05 (scontrol show hostnames), ClusterShell 1.10, python-hostlist 2.3, submitit 1.5
TABLE = [
    ("n[008-10]", ["n008", "n009", "n010"], ERROR, ["n008", "n009", "n010"], ["n008", "n009", "n010"]),
    ("n[9-011]", ["n9", "n10", "n11"], ERROR, ["n9", "n10", "n11"], ["n9", "n10", "n11"]),
    ("n[3-1]", ERROR, ERROR, ERROR, []),
    ("n1 n2", ["n1", "n2"], ["n1 n2"], ["n1 n2"], ["n1 n2"]),
    ("n[1,1]", ["n1", "n1"], ["n1"], ["n1"], ["n1", "n1"]),
    ("n1,n1", ["n1", "n1"], ["n1"], ["n1"], ["n1", "n1"]),
    ("n[3,1-2]", ["n3", "n1", "n2"], ["n1", "n2", "n3"], ["n3", "n1", "n2"], ["n3", "n1", "n2"]),
    ("n[1-2],n1", ["n1", "n2", "n1"], ["n1", "n2"], ["n1", "n2"], ["n1", "n2", "n1"]),
    ("r[1-2]n[1-2]", ["r1n1", "r1n2", "r2n1", "r2n2"], ["r1n1", "r1n2", "r2n1", "r2n2"],
     ["r1n1", "r1n2", "r2n1", "r2n2"], ["r1n1", "r1n2", "r2n1", "r2n2"]),
]
IDS = [row[0] for row in TABLE]
COLUMNS = "hostlist, slurm, clustershell, python_hostlist, submitit"

# Where ours knowingly accepts more than SLURM 22.05 (a suffix after the last bracket, which
# sinfo prints on some sites): SLURM says "Invalid hostlist", ours and every peer expand it.
SUPERSET = [("n[1-2]-ib", ["n1-ib", "n2-ib"])]


def _ours(hostlist: str):
    try:
        return list(expand(hostlist))
    except HostlistError:
        return ERROR


@pytest.mark.parametrize(COLUMNS, TABLE, ids=IDS)
def test_ours_answers_as_slurm(hostlist, slurm, clustershell, python_hostlist, submitit):
    assert _ours(hostlist) == slurm


@pytest.mark.parametrize(COLUMNS, TABLE, ids=IDS)
def test_compress_keeps_what_slurm_keeps(hostlist, slurm, clustershell, python_hostlist, submitit):
    """Order and duplicates survive a round trip, as with SLURM's own hostlists."""
    if slurm != ERROR:
        assert list(expand(compress(slurm))) == slurm


@pytest.mark.parametrize("hostlist, names", SUPERSET)
def test_documented_superset(hostlist, names):
    assert _ours(hostlist) == names


@pytest.fixture(scope="module")
def scontrol(tmp_path_factory):
    """``scontrol show hostnames`` needs only a configuration file, never a controller."""
    if shutil.which("scontrol") is None:
        pytest.skip("scontrol not installed (the table holds SLURM 22.05's recorded answers)")
    conf = tmp_path_factory.mktemp("slurm") / "slurm.conf"
    conf.write_text("ClusterName=semantics\nSlurmctldHost=localhost\nNodeName=n1 CPUs=1\n"
                    "PartitionName=p Nodes=n1\n")

    def hostnames(hostlist: str):
        run = subprocess.run(["scontrol", "show", "hostnames", hostlist], capture_output=True,
                             text=True, timeout=30, env={"SLURM_CONF": str(conf), "PATH": "/usr/bin:/bin"})
        refused = run.returncode != 0 or "Invalid" in run.stdout + run.stderr
        return ERROR if refused else run.stdout.split()

    return hostnames


@pytest.mark.parametrize(COLUMNS, TABLE, ids=IDS)
def test_the_table_is_what_scontrol_says(scontrol, hostlist, slurm, clustershell, python_hostlist, submitit):
    assert scontrol(hostlist) == slurm


def test_the_superset_is_refused_by_scontrol(scontrol):
    for hostlist, _ in SUPERSET:
        assert scontrol(hostlist) == ERROR


def _peer(module: str):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} not installed (pip install '.[bench]')")


def _answer(function, hostlist):
    try:
        return list(function(hostlist))
    except Exception:  # each peer raises its own error type
        return ERROR


@pytest.mark.parametrize(COLUMNS, TABLE, ids=IDS)
def test_clustershell_differs_as_recorded(hostlist, slurm, clustershell, python_hostlist, submitit):
    _peer("ClusterShell")
    from ClusterShell.NodeSet import NodeSet

    assert _answer(NodeSet, hostlist) == clustershell


@pytest.mark.parametrize(COLUMNS, TABLE, ids=IDS)
def test_python_hostlist_differs_as_recorded(hostlist, slurm, clustershell, python_hostlist, submitit):
    _peer("hostlist")
    import hostlist as module

    assert _answer(module.expand_hostlist, hostlist) == python_hostlist


@pytest.mark.parametrize(COLUMNS, TABLE, ids=IDS)
def test_submitit_differs_as_recorded(hostlist, slurm, clustershell, python_hostlist, submitit):
    _peer("submitit")
    from submitit.slurm.slurm import _parse_node_list

    assert _answer(_parse_node_list, hostlist) == submitit
