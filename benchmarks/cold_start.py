"""P3: cold start of the wizard in a fresh interpreter vs importing ipywidgets alone.

Both run as ``python -c`` in a clean process, so every import is paid for. Two wizard
figures: the command of the target as written (a plain script has no running event
loop, so ``Wizard()`` runs its probes synchronously before returning), and the same
inside a running loop, as in a Jupyter kernel, where the probes are only scheduled.
"""
from __future__ import annotations

import subprocess
import sys

from .common import Figure, median, medians, not_measured, pythonpath_env

WIZARD = "import ari_jupyter; ari_jupyter.Wizard()"
WIZARD_IN_LOOP = (
    "import asyncio\n"
    "async def main():\n"
    "    import ari_jupyter; ari_jupyter.Wizard()\n"
    "asyncio.run(main())\n"
)
IPYWIDGETS = "import ipywidgets"
TITLE = "cold start: import ari_jupyter; Wizard() vs import ipywidgets"
TITLE_IN_LOOP = "cold start as in a kernel (Wizard() inside a running event loop)"


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)


def p3_cold_start(repeats: int) -> list[Figure]:
    env = pythonpath_env()
    env.pop("ARI_JUPYTER_DEMO_SITE", None)
    for code in (WIZARD, WIZARD_IN_LOOP):
        probe = _python(code, env)
        if probe.returncode != 0:
            last = (probe.stderr.strip().splitlines() or ["no output"])[-1]
            return [not_measured("P3", TITLE, f"Wizard unavailable ({last})", "≤ 1.5×")]
    samples = medians({"wizard": lambda: _python(WIZARD, env),
                       "in_loop": lambda: _python(WIZARD_IN_LOOP, env),
                       "ipywidgets": lambda: _python(IPYWIDGETS, env),
                       "python": lambda: _python("pass", env)}, repeats)
    m = {name: median(values) for name, values in samples.items()}
    baseline = m["ipywidgets"]
    label = "python -c 'import ipywidgets'"
    extra = {"baseline_samples": samples["ipywidgets"], "python_samples": samples["python"]}
    return [
        Figure("P3", TITLE, m["wizard"], "s", baseline, label, "≤ 1.5×",
               m["wizard"] <= 1.5 * baseline, repeats=repeats, samples=samples["wizard"],
               note=f"outside a kernel Wizard() waits for its probes (demo site); "
                    f"bare interpreter start {m['python']:.3f} s", extra=extra),
        Figure("P3k", TITLE_IN_LOOP, m["in_loop"], "s", baseline, label, "≤ 1.5×",
               m["in_loop"] <= 1.5 * baseline, repeats=repeats, samples=samples["in_loop"],
               extra=extra),
    ]
