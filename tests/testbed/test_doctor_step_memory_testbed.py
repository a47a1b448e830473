"""The step-memory refusal produced live on the test bed's ``mem`` variant.

Memory is a consumable resource there (CR_Core_Memory, DefMemPerCPU=500), so a job with
``--mem=200`` whose srun finds ``SLURM_MEM_PER_NODE=1000`` in its environment (as a step
inherits it from an outer allocation) is refused by slurmctld; the doctor must name the
inherited variables and say that the hand-off script already unsets them. The captured copy
of this text is tests/fixtures/doctor/testbed/step_memory_unavailable.txt.
"""
from __future__ import annotations
from repo_paths import TESTS

import sys
from pathlib import Path

import pytest

from ari_jupyter.doctor import diagnose_text

sys.path.insert(0, str(TESTS / "testbed"))
from capture_doctor_texts import STEP_MEMORY  # noqa: E402  (the command the fixture was made by)

pytestmark = pytest.mark.slurm


@pytest.fixture
def testbed_mem(_testbed):
    return _testbed.ensure("mem")


def test_an_inherited_step_memory_is_refused_and_diagnosed(testbed_mem):
    proc = testbed_mem.run(STEP_MEMORY, timeout=120)
    assert proc.returncode != 0, proc.stderr
    assert "Memory required by task is not available" in proc.stderr, proc.stderr
    (finding,) = [f for f in diagnose_text(proc.stderr, kind="log")]
    assert finding.rule == "step-memory-unavailable"
    assert "SLURM_MEM_PER_NODE" in finding.message
    assert "hand-off script ari-jupyter writes already runs `unset SLURM_MEM_PER_CPU" in finding.fix


def test_without_the_inherited_variable_the_same_job_runs(testbed_mem):
    """The refusal comes from the inherited value, not from the job being too small."""
    proc = testbed_mem.run([arg for arg in STEP_MEMORY if not arg.startswith("SLURM_MEM_PER_")
                            and arg != "env"], timeout=120)
    assert proc.returncode == 0, proc.stderr
