"""The sbatch argv ARI builds for each preset, recorded as golden files, one argument a line.

Like submitit's sbatch record: a change to the line ARI submits shows as a line-by-line diff
of the argv (``golden_support``), not as a failed comparison of two long lists. The repository
folder is a fixed path, so the files hold no temporary names.
"""
from __future__ import annotations

import pytest

from ari_jupyter.ari.profile import PRESETS
from ari_jupyter.ari.sbatch import ReproduceArgs, build_sbatch_argv
from golden_support import GOLDEN, assert_matches_golden

REPO = "/work/ari/checkpoints/20260101120000_golden/repro_sandbox"

CASES = {
    **{f"{name}.argv": (name, {"partition": "small", "cpus": 4, "walltime": "01:00:00", "nodes": 2},
                        {}, True) for name in PRESETS},
    "gpu_single_nogres.argv": ("gpu_single", {"partition": "sx40", "cpus": 8}, {"ARI_SLURM_ALLOW_NO_GRES": "1"},
                               False),
    "cpu_single_env_only.argv": ("cpu_single", {}, {"ARI_SLURM_PARTITION": "small", "ARI_SLURM_CPUS": "16",
                                                    "ARI_SLURM_WALLTIME": "02:00:00"}, True),
}


def _argv(name: str) -> str:
    preset, args, env, has_gres = CASES[name]
    argv = build_sbatch_argv(ReproduceArgs(timeout_global_sec=600, **args), env, REPO,
                             has_gres=has_gres, bind_flags=True, profile=PRESETS[preset]())
    return "".join(f"{arg}\n" for arg in argv)


@pytest.mark.parametrize("name", sorted(CASES))
def test_sbatch_argv_matches_golden(name):
    assert_matches_golden(GOLDEN / "sbatch" / name, _argv(name))


def test_every_golden_has_a_case():
    assert sorted(p.name for p in (GOLDEN / "sbatch").glob("*.argv")) == sorted(CASES)


def test_a_changed_argument_fails_with_the_line_that_changed(tmp_path, monkeypatch):
    """The failure names the line: one argument changed, one line out and one in."""
    monkeypatch.delenv("ARI_UPDATE_GOLDEN", raising=False)
    golden = tmp_path / "mpi.argv"
    golden.write_text(_argv("mpi.argv"))
    changed = _argv("mpi.argv").replace("\n8\n", "\n16\n", 1)
    with pytest.raises(AssertionError) as failure:
        assert_matches_golden(golden, changed)
    lines = str(failure.value).splitlines()
    assert [line for line in lines if line[:1] in "+-" and line[:3] not in ("+++", "---")] == ["-8", "+16"]
