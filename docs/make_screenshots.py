"""Regenerate docs/screenshots: the browser test that checks every wizard step takes them.

    python docs/make_screenshots.py [--out docs/screenshots] [--chromium /usr/bin/chromium]

Runs ``tests/e2e/test_wizard_look_e2e.py`` (JupyterLab in headless Chromium, the rccs-cloud
demo site, Light and Dark, en/ja/zh, an axe-core scan of every step) with
``ARI_SCREENSHOTS_DIR`` set, so the pictures are the ones that test judged: every step in Light
and Dark, in English and Japanese, and step 3 with wrong values typed (03-profile-errors-*).
Needs Debian's chromium, CJK fonts (fonts-noto-cjk), the Python playwright package and
axe-core (``cd tests/e2e && npm ci``); no network, no cluster.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TEST = "tests/e2e/test_wizard_look_e2e.py"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "screenshots")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args(argv)
    if not Path(args.chromium).exists():
        print(f"no browser at {args.chromium}: apt-get install chromium", file=sys.stderr)
        return 2
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("0[1-9]-*.png"):
        old.unlink()  # the steps' pictures are this run's; hub-*.png come from the hub test
    env = {**os.environ, "ARI_SCREENSHOTS_DIR": str(out), "ARI_E2E_CHROMIUM": args.chromium,
           "ARI_E2E_REQUIRED": "1"}
    return subprocess.call([sys.executable, "-m", "pytest", TEST, "-q", "-p", "no:cacheprovider"],
                           cwd=REPO, env=env)


if __name__ == "__main__":
    sys.exit(main())
