"""Capture the non-SLURM texts the doctor reads, produced on the real test bed (root).

    python tests/testbed/capture_doctor_texts.py

``permission_denied_shared.txt``: a reproduce.sh on the shared filesystem (fuse.sshfs under
$HOME, as tests/testbed/shared-fs.sh mounts it) runs ``./app`` that lost its execute bit; the
job step's stderr, as bash on a compute node prints it, goes to tests/fixtures/doctor/testbed/.
``step_memory_unavailable.txt``: on the ``mem`` variant (memory a consumable resource) a job
with ``--mem=200`` runs srun with ``SLURM_MEM_PER_NODE=1000`` in its environment, as a step
inherits it from an outer allocation; salloc's and srun's stderr.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from testbed.cluster import Testbed, can_run  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "fixtures" / "doctor" / "testbed"
STEP_MEMORY = ["salloc", "-N1", "-n1", "--mem=200", "env", "SLURM_MEM_PER_NODE=1000",
               "srun", "-n1", "true"]
REPRODUCE = "#!/bin/bash\nset -u\necho building\nprintf '#!/bin/sh\\necho ran\\n' > app\n./app\n"


def main() -> int:
    ok, reason = can_run()
    if not ok:
        print(f"cannot run the test bed: {reason}", file=sys.stderr)
        return 1
    bed = Testbed()
    mounted_before = subprocess.run(["bash", str(HERE / "shared-fs.sh"), "status"],
                                    capture_output=True).returncode == 0
    try:
        env = bed.ensure("nogres").env
        mount = subprocess.run(["bash", str(HERE / "shared-fs.sh"), "start"], capture_output=True,
                               text=True, check=True, stdin=subprocess.DEVNULL).stdout.split()[-1]
        with tempfile.TemporaryDirectory(dir=mount, prefix="repro-") as repo:
            script = Path(repo) / "reproduce.sh"
            script.write_text(REPRODUCE)
            proc = subprocess.run(["srun", "-N1", "-n1", "--chdir", repo, "bash", str(script)],
                                  env=env, capture_output=True, text=True, timeout=120)
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "permission_denied_shared.txt").write_text(proc.stderr)
        print(f"exit {proc.returncode}: {proc.stderr.strip()}")
        proc = subprocess.run(STEP_MEMORY, env=bed.ensure("mem").env, capture_output=True,
                              text=True, timeout=120, stdin=subprocess.DEVNULL)
        (OUT / "step_memory_unavailable.txt").write_text(proc.stderr)
        print(f"exit {proc.returncode}: {proc.stderr.strip()}")
    finally:
        if not mounted_before:
            subprocess.run(["bash", str(HERE / "shared-fs.sh"), "stop"], capture_output=True,
                           stdin=subprocess.DEVNULL)
        bed.release_lock()
    return 0


if __name__ == "__main__":
    sys.exit(main())
