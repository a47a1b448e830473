"""P3 as a user gets it: a fresh venv that holds only the package, the runs paired A/B/A/B.

    python -m benchmarks.fresh_venv [--pairs 15] [--venv DIR]

Installs this checkout (not editable, as ``pip install ari-jupyter`` does) into a new venv, then
times, in fresh interpreters, ``import ipywidgets`` (A) against ``from ari_jupyter import
Wizard; Wizard()`` (B) and ``Wizard(site='rccs-cloud')`` (C), one after the other in each
pair, and prints the medians and the ratios B/A and C/A. Run it on a quiet machine: the load
average at the start is printed with the result.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CASES = {
    "A": "import ipywidgets",
    "B": "from ari_jupyter import Wizard; Wizard()",
    "C": "from ari_jupyter import Wizard; Wizard(site='rccs-cloud')",
}


def _time(python: Path, code: str, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run([str(python), "-c", code], check=True, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, cwd="/")
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fresh_venv",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--venv", type=Path, default=None, help="reuse (or make) the venv here")
    args = parser.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="ari-fresh-venv-home-"))
    target = args.venv or Path(tempfile.mkdtemp(prefix="ari-fresh-venv-")) / "venv"
    python = target / "bin" / "python"
    if not python.exists():
        venv.create(target, with_pip=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", str(REPO)], check=True)
    # no user site, no checkout on the path, a HOME of its own: only what the venv holds
    env = {"PATH": f"{target / 'bin'}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
           "PYTHONNOUSERSITE": "1"}
    for code in CASES.values():  # warm-up: bytecode written, as after pip install
        _time(python, code, env)
    samples: dict[str, list[float]] = {k: [] for k in CASES}
    load = os.getloadavg()[0]
    for _ in range(args.pairs):
        for name, code in CASES.items():
            samples[name].append(_time(python, code, env))
    medians = {k: statistics.median(v) for k, v in samples.items()}
    print(f"fresh venv {target}, {args.pairs} rounds A/B/C, load average {load:.2f} at the start")
    for name, code in CASES.items():
        print(f"  {name} {medians[name] * 1000:7.1f} ms  {code}")
    print(f"  Wizard() / import ipywidgets: {medians['B'] / medians['A']:.2f}x")
    print(f"  Wizard(site='rccs-cloud') / import ipywidgets: {medians['C'] / medians['A']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
