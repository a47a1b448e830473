"""P3: cold start of the wizard in a fresh interpreter vs importing ipywidgets alone.

Every command runs as ``python -c`` in a clean process, so every import is paid for. Three
wizard figures: the command of the target as written (a plain script has no running event
loop, so ``Wizard()`` puts its probes off until their results are first looked at); the same
inside a running loop, as in a Jupyter kernel, where the probes are only scheduled; and, for
the record, the plain script that also looks at the results, so the probes run (demo site).
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
WIZARD_IN_ALLOCATION = "import ari_jupyter; ari_jupyter.Wizard(site='rccs-cloud')"
WIZARD_WITH_RESULTS = "import ari_jupyter; ari_jupyter.Wizard().state.probe_results"
WIDGET_COUNT = (
    "from ipywidgets.widgets import widget\n"
    "import ari_jupyter\n"
    "before = len(widget._instances)\n"
    "wizard = ari_jupyter.Wizard(run_probes=False)\n"
    "built = len(widget._instances) - before\n"
    "for step in range(5):\n"
    "    wizard.go(step)\n"
    "print(built, len(widget._instances) - before)\n"
)
IPYWIDGETS = "import ipywidgets"
TITLE = "cold start: import ari_jupyter; Wizard() vs import ipywidgets"
TITLE_IN_LOOP = "cold start as in a kernel (Wizard() inside a running event loop)"
TITLE_WITH_RESULTS = "plain script: Wizard() then its probe results (probes run)"
TITLE_KERNEL = "cold start in a real kernel: import ari_jupyter; Wizard() vs import ipywidgets"
TITLE_KERNEL_ALLOCATION = "the same, on a demo site inside an allocation (Wizard(site='rccs-cloud'))"


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)


# Paired: each fresh kernel times ``import ipywidgets`` (the baseline) and then the rest of the
# wizard's start in one cell, so both sides meet the same kernel at the same moment. Kernels
# differ from one another by more than our share (their first cell runs beside the kernel's own
# start-up threads); a baseline from other kernels would add that spread to the ratio.
TIMED_IN_KERNEL = (
    "import time as _t\n_s = _t.perf_counter()\nimport ipywidgets\n_m = _t.perf_counter()\n"
    "{code}\nprint('ARI_BENCH', _m - _s, _t.perf_counter() - _s)\n"
)


def _in_fresh_kernel(code: str, env: dict[str, str]) -> tuple[float, float]:
    """Seconds of ``import ipywidgets`` and of that import followed by ``code`` in a freshly
    started ipykernel (jupyter_client), timed inside the kernel; the kernel's own start is not
    counted (it is the same for both sides)."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", env=env)
    try:
        lines = []

        def output(message):
            if message["msg_type"] == "stream":
                lines.append(message["content"]["text"])

        reply = client.execute_interactive(TIMED_IN_KERNEL.format(code=code), timeout=120,
                                           output_hook=output)
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"kernel: {reply['content'].get('ename')}: {reply['content'].get('evalue')}")
        marked = [line for line in "".join(lines).splitlines() if line.startswith("ARI_BENCH ")]
        baseline, whole = marked[-1].split()[1:3]
        return float(baseline), float(whole)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def p3_kernel(repeats: int) -> list[Figure]:
    """P3j: the same comparison in real kernels, fresh for every sample and paired inside each;
    P3ja, for the record, the wizard on a demo site inside an allocation (step 1 then also
    shows the placement)."""
    env = pythonpath_env()
    env.pop("ARI_JUPYTER_DEMO_SITE", None)
    try:
        _in_fresh_kernel(WIZARD, env)
    except Exception as error:  # no ipykernel/jupyter_client: said, not hidden
        why = f"{type(error).__name__}: {error}"
        return [not_measured("P3j", TITLE_KERNEL, why, "≤ 1.3×"),
                not_measured("P3ja", TITLE_KERNEL_ALLOCATION, why, "report")]
    pairs = {"wizard": [], "in_allocation": []}
    for _ in range(repeats):  # interleaved: a machine-wide slowdown hits every side
        pairs["wizard"].append(_in_fresh_kernel(WIZARD, env))
        pairs["in_allocation"].append(_in_fresh_kernel(WIZARD_IN_ALLOCATION, env))
    label = "import ipywidgets, timed in the same fresh kernel"
    figures = []
    for id, title, key, target in (("P3j", TITLE_KERNEL, "wizard", "≤ 1.3×"),
                                   ("P3ja", TITLE_KERNEL_ALLOCATION, "in_allocation", "report")):
        baselines = [baseline for baseline, _ in pairs[key]]
        wholes = [whole for _, whole in pairs[key]]
        ratios = sorted(whole / baseline for baseline, whole in pairs[key])
        value, base = median(wholes), median(baselines)
        met = value <= 1.3 * base if target != "report" else None
        figures.append(Figure(
            id, title, value, "s", base, label, target, met, repeats=repeats, samples=wholes,
            note=(f"each sample in its own freshly started kernel (jupyter_client), timed inside "
                  f"it, the baseline first in the same cell; per-kernel ratios "
                  f"{ratios[0]:.2f}-{ratios[-1]:.2f}×, median {median(ratios):.2f}×"),
            extra={"baseline_samples": baselines, "kernel_ratios": ratios}))
    return figures


def p3_cold_start(repeats: int) -> list[Figure]:
    env = pythonpath_env()
    env.pop("ARI_JUPYTER_DEMO_SITE", None)
    for code in (WIZARD, WIZARD_IN_LOOP, WIZARD_WITH_RESULTS):
        probe = _python(code, env)
        if probe.returncode != 0:
            last = (probe.stderr.strip().splitlines() or ["no output"])[-1]
            return [not_measured("P3", TITLE, f"Wizard unavailable ({last})", "≤ 1.3×")]
    samples = medians({"wizard": lambda: _python(WIZARD, env),
                       "in_loop": lambda: _python(WIZARD_IN_LOOP, env),
                       "with_results": lambda: _python(WIZARD_WITH_RESULTS, env),
                       "ipywidgets": lambda: _python(IPYWIDGETS, env),
                       "python": lambda: _python("pass", env)}, repeats)
    m = {name: median(values) for name, values in samples.items()}
    baseline = m["ipywidgets"]
    label = "python -c 'import ipywidgets'"
    extra = {"baseline_samples": samples["ipywidgets"], "python_samples": samples["python"]}
    widgets_note = _widget_count(env)
    return [
        Figure("P3", TITLE, m["wizard"], "s", baseline, label, "≤ 1.3×",
               m["wizard"] <= 1.3 * baseline, repeats=repeats, samples=samples["wizard"],
               note=f"outside a kernel Wizard() puts its probes off until their results are "
                    f"looked at; {widgets_note}; bare interpreter start {m['python']:.3f} s",
               extra=extra),
        Figure("P3k", TITLE_IN_LOOP, m["in_loop"], "s", baseline, label, "≤ 1.3×",
               m["in_loop"] <= 1.3 * baseline, repeats=repeats, samples=samples["in_loop"],
               extra=extra),
        Figure("P3r", TITLE_WITH_RESULTS, m["with_results"], "s", baseline, label, "report",
               None, repeats=repeats, samples=samples["with_results"], extra=extra),
    ]


def _widget_count(env: dict[str, str]) -> str:
    """How many widget objects (each Layout and Style is one) Wizard() builds, and all five
    steps once shown."""
    counted = _python(WIDGET_COUNT, env)
    try:
        first, every = counted.stdout.split()
    except ValueError:
        return "widget objects not counted"
    return f"widget objects built by Wizard(): {first} (after every step was shown: {every})"
