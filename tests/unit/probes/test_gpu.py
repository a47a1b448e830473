"""gpus: nvidia-smi -L against SLURM's GRES (the sx40 pattern points at the gres check)."""
from __future__ import annotations

import pytest

from probe_support import cmd, output, probe, said_in_every_language, site

SMI = ("nvidia-smi", "-L")
SINFO_G = ("sinfo", "-h", "-o", "%G")


def gpu_site(smi_fixture=None, smi_rc=0, smi_delay=0.0, gres_fixture=None, gres_stderr="", gres_rc=0):
    programs, commands = ["nvidia-smi"], []
    commands.append(cmd(SMI, output(smi_fixture) if smi_fixture else "", "", smi_rc, smi_delay))
    if gres_fixture is not None or gres_stderr:
        programs.append("sinfo")
        commands.append(cmd(SINFO_G, output(gres_fixture) if gres_fixture else "", gres_stderr, gres_rc))
    return site(programs=programs, commands=commands)


@pytest.mark.parametrize(
    "smi, smi_rc, gres, status, count, has_gres, words",
    [
        ("nvidia-smi/v100x4.txt", 0, "gres/testbed_nogres.txt", "ok", 4, False, "see the GRES check"),
        ("nvidia-smi/v100x4.txt", 0, "gres/testbed_gres.txt", "ok", 4, True, "gpu_type may be v100"),
        ("nvidia-smi/a100_mig.txt", 0, "gres/two_types.txt", "ok", 2, True, "v100 or a100"),
        ("nvidia-smi/h100x1.txt", 0, "gres/untyped.txt", "ok", 1, True, "leave gpu_type empty"),
        ("nvidia-smi/v100x4.txt", 0, "gres/mps_only.txt", "warn", 4, True, "has no gpu entry"),
        ("nvidia-smi/v100x4.txt", 0, None, "ok", 4, None, "GRES unknown (no SLURM client)"),
        ("nvidia-smi/no_devices.txt", 6, "gres/testbed_gres.txt", "skip", 0, None, "no GPU"),
        ("nvidia-smi/driver_failure.txt", 9, "gres/testbed_gres.txt", "unknown", None, None, "couldn't communicate"),
        ("nvidia-smi/garbage.txt", 139, None, "unknown", None, None, "nvidia-smi failed"),
        ("nvidia-smi/garbage.txt", 0, None, "skip", 0, None, "lists no GPU"),
    ],
)
def test_gpus(smi, smi_rc, gres, status, count, has_gres, words):
    result = probe(gpu_site(smi, smi_rc, gres_fixture=gres), "gpus")
    assert result.status == status, result
    assert result.data["count"] == count
    assert result.data.get("has_gres") is has_gres
    assert words in result.summary
    said_in_every_language(result)


def test_sx40_pattern_says_what_to_do():
    result = probe(gpu_site("nvidia-smi/v100x4.txt", gres_fixture="gres/testbed_nogres.txt"), "gpus")
    assert result.data["models"] == ["Tesla V100-SXM2-16GB"]
    assert "4× Tesla V100-SXM2-16GB" in result.summary
    assert "no GRES" in result.summary and "GRES check" in result.summary
    # the long fix is the gres check's (one cause, one fix): this one points there
    assert result.fix_id == "probe.fix.see_gres" and "GRES check" in result.fix and len(result.fix) < 60
    assert "(null)" in result.evidence  # the sinfo answer is part of the evidence


def test_sinfo_hiccup_leaves_gres_unknown_but_counts_gpus():
    host = gpu_site("nvidia-smi/v100x4.txt", gres_stderr=output("slurm-errors/controller_down.txt"), gres_rc=1)
    result = probe(host, "gpus")
    assert result.status == "ok" and result.data["count"] == 4 and result.data["has_gres"] is None
    assert "sinfo did not answer" in result.summary


def test_hung_nvidia_smi_is_unknown_within_the_timeout():
    result = probe(gpu_site("nvidia-smi/v100x4.txt", smi_delay=3600), "gpus", timeout=0.3)
    assert result.status == "unknown" and "did not answer" in result.summary


def test_no_nvidia_smi_is_skip():
    assert probe(site(), "gpus").status == "skip"
