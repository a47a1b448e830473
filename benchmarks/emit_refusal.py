"""P7: ``ari-jupyter emit`` refuses a node-local workspace while sinfo, squeue, sbatch and srun
hang: the verdict needs only the mount table, so no probe is waited for."""
from __future__ import annotations

import io
import os
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from .common import Figure, median

HUNG = "#!/bin/sh\nexec sleep 1000\n"


def p7_emit_refusal(repeats: int) -> list[Figure]:
    from ari_jupyter.cli import main

    times, refused = [], True
    with tempfile.TemporaryDirectory(prefix="ari-bench-p7-") as tmp:  # /tmp: node-local
        bin_dir = Path(tmp) / "bin"
        bin_dir.mkdir()
        for name in ("sinfo", "squeue", "sbatch", "srun", "scontrol"):
            (bin_dir / name).write_text(HUNG)
            (bin_dir / name).chmod(0o755)
        saved = {k: os.environ.get(k) for k in ("PATH", "SLURM_JOB_ID", "ARI_JUPYTER_DEMO_SITE")}
        os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
        os.environ["SLURM_JOB_ID"] = "42"
        os.environ.pop("ARI_JUPYTER_DEMO_SITE", None)
        try:
            for index in range(repeats):
                err = io.StringIO()
                start = time.perf_counter()
                with redirect_stdout(io.StringIO()), redirect_stderr(err):
                    code = main(["emit", "--title", f"refusal {index}", "--goal", "g",
                                 "--metric", "accuracy", "--partition", "small", "--max-cpus", "4",
                                 "--walltime", "01:00:00", "--workspace", str(Path(tmp) / "ws"),
                                 "--probe-timeout", "10"])
                times.append(time.perf_counter() - start)
                refused = refused and code == 1 and "node-local" in err.getvalue()
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    value = median(times)
    return [Figure("P7", "emit refuses a node-local workspace while sinfo & co. hang", value, "s",
                   10.0, "the probe timeout it no longer waits for", "≤ 0.5 s",
                   value <= 0.5 and refused, repeats=repeats, samples=times,
                   note=f"refused with the node-local message every time: {refused}; "
                        "measured inside the process (interpreter start excluded)")]
