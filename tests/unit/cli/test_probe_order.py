"""``ari-jupyter probe`` prints its lines in the wizard's order whatever order probes finish in,
each as soon as every probe before it has answered; the tally's order is fixed too."""
from __future__ import annotations

import io
import itertools
from types import SimpleNamespace

import pytest

from ari_jupyter.cli.probe import InOrder
from ari_jupyter.probes import PROBE_IDS

IDS = ("sbatch", "gres", "mpi", "ari")

# (finish order, what is printed after each arrival)
CASES = [
    (("sbatch", "gres", "mpi", "ari"), [["sbatch"], ["gres"], ["mpi"], ["ari"]]),
    (("ari", "mpi", "gres", "sbatch"), [[], [], [], ["sbatch", "gres", "mpi", "ari"]]),
    (("gres", "sbatch", "ari", "mpi"), [[], ["sbatch", "gres"], [], ["mpi", "ari"]]),
    (("sbatch", "mpi", "gres", "ari"), [["sbatch"], [], ["gres", "mpi"], ["ari"]]),
]


@pytest.mark.parametrize("finished, printed", CASES, ids=lambda v: "-".join(v) if isinstance(v[0], str) else None)
def test_each_line_comes_once_every_probe_before_it_has_answered(finished, printed):
    out: list[str] = []
    order = InOrder(IDS, lambda result: out.append(result.id))
    for probe_id, expected in zip(finished, printed):
        before = len(out)
        order.add(SimpleNamespace(id=probe_id))
        assert out[before:] == expected


def test_every_finish_order_prints_the_same_order():
    for finished in itertools.permutations(IDS):
        out: list[str] = []
        order = InOrder(IDS, lambda result: out.append(result.id))
        for probe_id in finished:
            order.add(SimpleNamespace(id=probe_id))
        assert out == list(IDS)


def test_the_command_prints_the_wizards_order_and_a_fixed_tally(tmp_path, monkeypatch):
    from test_widgets_support import make_site

    from ari_jupyter.cli import main

    # mpi and gres answer late, so they finish after the probes listed after them
    site = make_site(tmp_path, "rccs-cloud", delays={("srun", "--version"): 0.6, ("sinfo", "-h", "-o", "%G"): 0.3})
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "no-config"))
    outputs = []
    for _ in range(2):
        stdout, stderr = io.StringIO(), io.StringIO()
        monkeypatch.setattr("sys.stdout", stdout)
        monkeypatch.setattr("sys.stderr", stderr)
        main(["probe", "--site", str(site), "--lang", "en"])
        outputs.append(stdout.getvalue().splitlines())
    for lines in outputs:
        assert [line.split()[1] for line in lines[1:-1]] == list(PROBE_IDS)
        assert lines[-1].endswith("8 ok, 1 skip")
    assert [line.split()[:2] for line in outputs[0]] == [line.split()[:2] for line in outputs[1]]
