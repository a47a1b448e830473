"""Regenerate tests/fixtures/slurm/ from the real test bed (root; starts and stops it).

    python tests/testbed/capture_fixtures.py [--keep-running]

Writes each case's exact stderr to <name>.txt and the rest (argv, exit code, stdout,
variant, SLURM version) to manifest.json. The cases are in error_texts.py.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from testbed.cluster import VARIANTS, Testbed, can_run  # noqa: E402
from testbed.error_texts import CASES, FIXTURE_DIR, MANIFEST, manifest_entry, run_cases  # noqa: E402


def capture(bed: Testbed) -> list[dict]:
    entries: list[dict] = []
    for variant in VARIANTS:
        running = bed.ensure(variant)
        version = subprocess.run(["sinfo", "--version"], env=running.env, capture_output=True,
                                 text=True, check=True).stdout.strip()
        for controller, window in (("up", contextlib.nullcontext), ("down", running.controller_down),
                                   ("hung", running.controller_hung)):
            cases = [c for c in CASES if c.variant == variant and c.controller == controller]
            if not cases:
                continue
            with window():
                outcomes = run_cases(cases, running.env)
            for case in cases:
                outcome = outcomes[case.name]
                case.fixture.write_text(outcome.stderr)
                entries.append(manifest_entry(case, outcome, version))
                last = outcome.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
                print(f"{case.name:32} exit {outcome.returncode:3} {outcome.elapsed_s:6.2f}s  {last[0]}")
    order = [c.name for c in CASES]
    return sorted(entries, key=lambda e: order.index(e["name"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep-running", action="store_true", help="leave the cluster running")
    args = parser.parse_args(argv)
    ok, reason = can_run()
    if not ok:
        print(f"cannot run the test bed: {reason}", file=sys.stderr)
        return 1
    FIXTURE_DIR.mkdir(parents=True, exist_ok=True)
    bed = Testbed()
    try:
        entries = capture(bed)
    finally:
        if not args.keep_running:
            bed.stop()
        bed.release_lock()
    MANIFEST.write_text(json.dumps({
        "generated_by": "tests/testbed/capture_fixtures.py",
        "note": "<name>.txt holds the exact stderr; compare after error_texts.normalize()",
        "cases": entries,
    }, indent=2) + "\n")
    print(f"wrote {len(entries)} cases to {FIXTURE_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
