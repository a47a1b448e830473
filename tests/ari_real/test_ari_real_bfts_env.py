"""What a BFTS job sees of the run, as ARI's own hpc skill builds the job.

ARI's ari-skill-hpc submits every BFTS job with ``sbatch --export=NONE``, resets PATH and
sources ``$ARI_ENV_FILE``. From our checkpoint (its .env loaded as ``ari run`` loads it), ARI's
real ``SlurmClient.submit`` writes the job script; run with an empty environment, as
--export=NONE starts it, the script sources our bfts_env.sh: the run's settings are exported
and the run's module is loaded. No key value reaches the file.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from ari_jupyter.ari.run_settings import RunSettings
from ari_jupyter.checkpoint.emit import emit_checkpoint
from ari_jupyter.base.verdict import ProbeResult
from unit.checkpoint.test_emit import make_state

pytestmark = pytest.mark.ari

DRIVER = (Path(__file__).parent / "drivers" / "hpc_job_script.py").read_text()
SECRET = "sk-ant-never-in-the-job-file-0123456789"
LMOD_INIT = Path("/usr/share/lmod/lmod/init/bash")

FAKE_SBATCH = """#!/bin/sh
# keeps what ARI's hpc skill submits: its argv and the job script
echo "$@" > "$CAPTURE/argv"
for last; do :; done
cp "$last" "$CAPTURE/job.sh"
echo "Submitted batch job 42"
"""
FAKE_SINFO = "#!/bin/sh\nprintf 'small*\\nlarge\\n'\n"


def _checkpoint(tmp_path: Path, workspace: Path | None = None) -> Path:
    modulefiles = (workspace.parent if workspace else tmp_path) / "modulefiles"  # where the nodes see it
    (modulefiles / "bftsdemo").mkdir(parents=True)
    (modulefiles / "bftsdemo" / "1.0.lua").write_text('setenv("BFTS_DEMO_LOADED", "yes")\n')
    shape = {"workspace": workspace, "max_cpus": 1, "mem_gb": None} if workspace else {"mem_gb": 3}
    state = make_state(tmp_path, module_loads=["bftsdemo/1.0"], **shape,
                       run_settings=RunSettings(llm_backend="anthropic", llm_model="claude-opus-4-5",
                                                scope_preset="quick", max_nodes=12))
    state.set_probe_result(ProbeResult("modules", "ok", "Lmod lists 1 module", data={
        "system": "lmod", "modulepath": str(modulefiles), "modules": ["bftsdemo/1.0"]}))
    result = emit_checkpoint(state)
    return Path(result.checkpoint_dir)


def test_aris_bfts_job_sources_our_env_file_and_loads_the_modules(ari_env, tmp_path):
    if not LMOD_INIT.is_file() or shutil.which("bash") is None:
        pytest.skip("Lmod is not installed here")
    ckpt = _checkpoint(tmp_path)
    assert f"ARI_ENV_FILE={ckpt}/bfts_env.sh\n" in (ckpt / ".env").read_text()
    bin_dir, capture, home = tmp_path / "bin", tmp_path / "capture", tmp_path / "home"
    for path in (bin_dir, capture, home):
        path.mkdir()
    for name, body in (("sbatch", FAKE_SBATCH), ("sinfo", FAKE_SINFO)):
        (bin_dir / name).write_text(body)
        (bin_dir / name).chmod(0o755)
    # the terminal that runs `ari run`: ARI_CHECKPOINT_DIR exported by the hand-off, a key set
    terminal = {**ari_env.env, "ARI_CHECKPOINT_DIR": str(ckpt), "HOME": str(home), "CAPTURE": str(capture),
                "ANTHROPIC_API_KEY": SECRET, "PATH": f"{bin_dir}:{ari_env.env.get('PATH', os.environ['PATH'])}"}
    body = "echo bfts-node-started; env | sort"
    proc = subprocess.run([str(ari_env.python), "-c", DRIVER, str(ari_env.root / "ari-skill-hpc" / "src"), body],
                          cwd=tmp_path, env=terminal, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1])["status"] == "submitted", proc.stdout
    assert (capture / "argv").read_text().startswith("--export=NONE ")
    job = (capture / "job.sh").read_text()
    assert f"ARI_ENV_FILE='{ckpt}/bfts_env.sh'" in job and "#SBATCH --mem=3G" in job

    # --export=NONE: the job starts with (almost) nothing of the submitter's environment
    ran = subprocess.run(["env", "-i", f"HOME={home}", "bash", str(capture / "job.sh")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr[-3000:]
    seen = dict(line.split("=", 1) for line in ran.stdout.splitlines() if "=" in line and not line.startswith(" "))
    assert "bfts-node-started" in ran.stdout
    assert seen.get("BFTS_DEMO_LOADED") == "yes", ran.stderr[-2000:]
    assert "bftsdemo/1.0" in seen.get("LOADEDMODULES", "")
    assert seen["ARI_CHECKPOINT_DIR"] == str(ckpt)
    for key, value in {"ARI_MODEL": "claude-opus-4-5", "ARI_BACKEND": "anthropic", "ARI_MAX_NODES": "12",
                       "ARI_SLURM_MEM_GB": "3", "ARI_SLURM_PARTITION": "small"}.items():
        assert seen.get(key) == value, key
    assert "ANTHROPIC_API_KEY" not in seen  # keys are never written: the job gets none from us
    for path in ckpt.iterdir():
        assert SECRET not in path.read_text(errors="replace"), path


def test_the_packaged_default_llm_is_aris(ari_env):
    """The wizard's "ARI's default" when ARI's workflow.yaml is not found here is the one ARI ships."""
    import yaml

    from ari_jupyter.wizard.run_settings_view import PACKAGED_LLM

    llm = yaml.safe_load((ari_env.root / "ari-core" / "config" / "workflow.yaml").read_text())["llm"]
    assert (llm["backend"], llm["model"]) == PACKAGED_LLM


@pytest.fixture
def shared_base(shared_mount):
    """A fresh directory on the test bed's shared filesystem, removed afterwards."""
    base = shared_mount / f"ari-bfts-env-{uuid.uuid4().hex[:8]}"
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slurm
def test_on_the_test_bed_the_bfts_job_has_our_settings_and_module(ari_env, testbed_nogres, shared_base, tmp_path):
    """ARI's hpc skill submits for real (sbatch --export=NONE to slurmctld); inside the job the
    run's module is loaded and the checkpoint's settings are set."""
    if not LMOD_INIT.is_file():
        pytest.skip("Lmod is not installed here")
    bed = testbed_nogres
    ckpt = _checkpoint(tmp_path, workspace=shared_base / "ws")
    assert "ARI_SLURM_MEM_GB" not in (ckpt / ".env").read_text()
    home = tmp_path / "home"
    home.mkdir()
    terminal = {**{k: v for k, v in bed.env.items() if not k.startswith(("ARI_SLURM_", "ARI_PHASE1_"))},
                **{k: v for k, v in ari_env.env.items() if k != "PATH"},
                "ARI_CHECKPOINT_DIR": str(ckpt), "HOME": str(home), "ANTHROPIC_API_KEY": SECRET}
    body = "echo bfts-node-started on $(hostname); env | sort"
    proc = subprocess.run([str(ari_env.python), "-c", DRIVER, str(ari_env.root / "ari-skill-hpc" / "src"), body],
                          cwd=tmp_path, env=terminal, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    submitted = json.loads(proc.stdout.strip().splitlines()[-1])
    assert submitted["status"] == "submitted", submitted
    job_id = submitted["job_id"]
    out = shared_base / "ws" / "slurm_logs" / f"slurm_job_{job_id}.out"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        queued = bed.run(["squeue", "-h", "-j", job_id, "-o", "%T"], timeout=30)
        if not queued.stdout.strip() and out.is_file():
            break
        time.sleep(1)
    text = out.read_text()
    assert "bfts-node-started" in text, text[-2000:]
    seen = dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith(" "))
    assert seen.get("BFTS_DEMO_LOADED") == "yes", text[:2500]
    assert "bftsdemo/1.0" in seen.get("LOADEDMODULES", "")
    for key, value in {"ARI_MODEL": "claude-opus-4-5", "ARI_MAX_NODES": "12", "ARI_SLURM_CPUS": "1",
                       "ARI_CHECKPOINT_DIR": str(ckpt)}.items():
        assert seen.get(key) == value, key
    assert "ANTHROPIC_API_KEY" not in seen and SECRET not in text
