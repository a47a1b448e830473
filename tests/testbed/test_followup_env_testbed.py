"""A follow-up allocation, submitted through the real path on the real test bed, is not given
the hand-off shell's secrets: slurmctld stores a batch job's environment (its state save
directory, shown to admins and, with ``job_env``, to accounting), so the LLM key exported in the
shell that submits it must not be in it, while what the follow-up needs (PATH, HOME, ARI's
settings) is; the job finds the key where ``ari`` reads it, in ``~/.env``.

The checkpoint is written by ``emit`` with one follow-up approved; ``ari-jupyter follow-up
--after`` submits it after a held job, from a shell with a fake key exported. The environment
slurmctld stored for the job is read from its state save directory; then the held job is
cancelled, the follow-up starts (afterany) and runs its script, whose first ``ari-jupyter``
call (a recording one on PATH) writes the environment the job sees and says the run is
finished, so the job ends there. With the key in no .env at all, nothing is submitted.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ari_jupyter.ari.run_settings import RunSettings
from ari_jupyter.checkpoint.emit import emit_checkpoint
from ari_jupyter.hosts.host import LocalHost
from testbed.test_runs_testbed import wait_for
from unit.ari.test_render import golden_state

pytestmark = pytest.mark.slurm
FAKE_KEY = "sk-canary-Zq8Lx2Vb6Nm4Tk0"


def _stubs(tmp_path: Path, seen: Path) -> Path:
    """``ari`` (found) and an ``ari-jupyter`` that writes the job's environment to ``seen``
    and answers that the run is finished, so the follow-up script ends at that step."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ari").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "ari-jupyter").write_text(
        f'#!/bin/sh\nenv > {seen}.tmp && mv {seen}.tmp {seen}\n'
        '[ "$1" = follow-up ] && [ "$3" = --finished ] && exit 0\nexit 1\n')
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    return bin_dir


def _stored_environment(bed, job_id: str) -> bytes:
    """The environment slurmctld keeps for a batch job (StateSaveLocation/hash.N/job.ID)."""
    return (bed.lab_dir / "state" / f"hash.{int(job_id) % 10}" / f"job.{job_id}" / "environment").read_bytes()


@pytest.mark.parametrize("key_in_dotenv", [True, False])
def test_the_followup_job_is_not_given_the_shells_key(testbed_nogres, tmp_path, key_in_dotenv):
    bed = testbed_nogres
    home, ari_root, seen = tmp_path / "home", tmp_path / "ari", tmp_path / "followup-env.txt"
    home.mkdir()
    ari_root.mkdir()
    if key_in_dotenv:  # where ari reads it: ~/.env, owner-only
        (home / ".env").write_text(f"OPENAI_API_KEY={FAKE_KEY}\n")
        (home / ".env").chmod(0o600)
    state = golden_state(workspace=str(tmp_path / "ws"), provided_files=[], module_loads=[], followups=1,
                         run_settings=RunSettings(llm_backend="openai"))
    ckpt = Path(emit_checkpoint(state, host=LocalHost(), force=True).checkpoint_dir)
    shell = {"PATH": f"{_stubs(tmp_path, seen)}:{bed.env['PATH']}", "HOME": str(home), "LANG": "C.UTF-8",
             "ARI_ROOT": str(ari_root), "ARI_MEMORY_BACKEND": "in_memory", "OPENAI_API_KEY": FAKE_KEY,
             "ARI_GITHUB_TOKEN": "ghp-canary-token", "EDITOR": "vi"}
    holder = bed.run(["sbatch", "--parsable", "--hold", "-N", "1", "-t", "5", "-o", "/dev/null",
                      "--wrap", "true"], check=True).stdout.strip()
    try:
        done = bed.run([sys.executable, "-m", "ari_jupyter", "follow-up", str(ckpt), "--after", holder,
                        "--json"], extra_env=shell, timeout=120)
        outcome = json.loads(done.stdout)
        assert FAKE_KEY not in done.stdout + done.stderr
        if not key_in_dotenv:
            # the follow-up would not find the key: nothing submitted, the user told where to put it
            assert done.returncode == 1 and outcome["message_id"] == "followup.refused.key_in_shell", outcome
            assert "~/.env" in outcome["message"]
            queued = bed.run(["squeue", "-h", "-n", "ari-followup", "-o", "%i"], check=True).stdout
            assert not queued.strip() and not (ckpt / "followups.json").exists()
            return
        assert done.returncode == 0 and outcome["result"] == "submitted", (outcome, done.stderr)
        job = outcome["job_id"]
        stored = _stored_environment(bed, job)
        assert FAKE_KEY.encode() not in stored and b"ghp-canary" not in stored and b"EDITOR=" not in stored
        assert b"OPENAI_API_KEY" not in stored
        for wanted in (f"HOME={home}", f"ARI_ROOT={ari_root}", "ARI_MEMORY_BACKEND=in_memory", "LANG=C.UTF-8"):
            assert wanted.encode() in stored, wanted
        # the held allocation ends; the follow-up runs its script (afterany)
        bed.run(["scancel", holder], check=True)
        wait_for(seen.is_file, 120, f"follow-up job {job} to run its script",
                 lambda: bed.run(["squeue", "-h", "-j", job, "-o", "%T %r"]).stdout)
        inside = dict(line.split("=", 1) for line in seen.read_text().splitlines() if "=" in line)
        assert "OPENAI_API_KEY" not in inside and "ARI_GITHUB_TOKEN" not in inside and "EDITOR" not in inside
        assert FAKE_KEY not in seen.read_text()
        assert (inside["HOME"], inside["ARI_ROOT"], inside["ARI_CHECKPOINT_DIR"]) == (
            str(home), str(ari_root), str(ckpt))
        assert inside["PATH"].startswith(str(tmp_path / "bin")) and inside["SLURM_JOB_ID"] == job

        def ended():
            state = bed.run(["scontrol", "show", "job", job]).stdout
            return state if "JobState=COMPLETED" in state or "JobState=FAILED" in state else None
        # it passed its key check with the key from ~/.env (exit 2 without one), and ended
        assert "JobState=COMPLETED" in wait_for(ended, 60, f"follow-up job {job} to end")
        said = (ckpt / f"followup_{job}.out").read_text()
        assert "is set neither here nor in a .env" not in said, said
    finally:
        bed.run(["scancel", holder])
        bed.run(["scancel", "-n", "ari-followup"])
