"""GPUs without GRES, said with one voice: the site check's fix, step 3's refusal of the seed
guide's sx40 profile, the doctor on sbatch's and on ARI's refusal, and the reproduce.sh lint all
carry ``errors.NO_GRES_WAY``, the one way that works (no GPU request reaches sbatch; ARI's
ARI_SLURM_ALLOW_NO_GRES=1 drops them), in every language; and that way does pass."""
from __future__ import annotations

import pytest

from ari_jupyter.ari.errors import NO_GRES_WAY, gpu_without_gres
from ari_jupyter.ari.profile import ExecutionProfile
from ari_jupyter.ari.validate import validate
from ari_jupyter.doctor import diagnose_text
from ari_jupyter.doctor.reproduce_lint import lint_reproduce
from ari_jupyter.hosts.recorded_site import RecordedSite
from ari_jupyter.i18n import message, say
from ari_jupyter.probes import ProbeContext, run_probes_sync
from ari_jupyter.slurm.allocation import Allocation

SEED_SX40 = {"kind": "gpu_single", "paper_max_ranks": 1, "requested_gpus_per_task": 1}
"""The seed guide's sx40 profile (gpu_type left out: no GRES)."""
SX40_ENV = {"ARI_SLURM_CPUS": "4", "ARI_SLURM_WALLTIME": "00:30:00"}


def sx40_probes():
    host = RecordedSite.load("sx40")
    return run_probes_sync(host, ProbeContext(allocation=Allocation.from_env(host.env),
                                              partition="sx40", timeout=20))


def site_check():
    [gres] = [p for p in sx40_probes() if p.id == "gres"]
    return gres


def step_3_refusal(env=SX40_ENV):
    return [p for p in validate(ExecutionProfile.from_json(SEED_SX40), probes=sx40_probes(),
                                partition="sx40", env=env) if p.field == "requested_gpus_per_task"]


def doctor_on(line):
    [found] = [f for f in diagnose_text(line + "\n", kind="log") if f.severity == "error"]
    return found


def lint_l3():
    [found] = [f for f in lint_reproduce("#!/bin/bash\n./app\n", profile=SEED_SX40, has_gres=False)
               if f.rule == "L3"]
    return found


VOICES = {
    "site check (gres)": site_check,
    "step 3 on sx40, the seed's profile": lambda: step_3_refusal()[0],
    "doctor: sbatch's Invalid generic resource": lambda: doctor_on(
        "sbatch: error: Invalid generic resource (gres) specification"),
    "doctor: ARI's refusal": lambda: doctor_on("RuntimeError: " + gpu_without_gres("", 1, 0)),
    "reproduce.sh lint L3": lint_l3,
}


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
@pytest.mark.parametrize("voice", list(VOICES))
def test_every_view_says_the_one_way(voice, lang):
    said = VOICES[voice]()
    assert say(message(NO_GRES_WAY), lang) in said.fix_text(lang)
    assert "rely on --gpus-per-task" not in said.fix_text("en")


def test_the_way_is_what_ari_does():
    way = say(message(NO_GRES_WAY), "en")
    assert "ARI_SLURM_ALLOW_NO_GRES=1" in way and "drops every GPU flag" in way
    assert "--gpus-per-task" in way and "ARI_SLURM_GPUS" in way and "gpu_single_nogres" in way


def test_the_way_works_for_the_seed_profile():
    """Step 3 refuses the seed's sx40 profile as ARI would, and accepts it with the one way."""
    [refused] = step_3_refusal()
    assert refused.severity == "error" and "GPUs (4)" in refused.fix
    passed = step_3_refusal({**SX40_ENV, "ARI_SLURM_ALLOW_NO_GRES": "1"})
    assert [p.severity for p in passed] == ["info"]
