"""Fail (exit 1) when a test report shows a skipped `slurm` test, or a test-bed variant that
never ran, or a skipped test of ARI's real code (marker `ari`, property ``ari_real``). CI runs
this after pytest so the real-cluster and real-ARI tests cannot silently disappear.

    python tests/testbed/check_no_slurm_skips.py REPORT [--allow-missing-variant] [--require-ari]

``--require-ari``: also fail when no ARI test ran at all (a junit REPORT only).

REPORT is pytest's --junitxml file (slurm tests carry the property ``slurm_testbed`` =
gres | nogres | any, set by tests/conftest.py) or the slurm-skips.json that conftest writes
to $ARI_TEST_REPORT_DIR.
"""
from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

VARIANTS = ("gres", "nogres")


def ari_outcomes(path: Path) -> tuple[int, list[str]]:
    """(ARI tests that ran, skipped ARI tests with their reasons) from a junit report."""
    ran, skipped = 0, []
    for case in ET.parse(path).getroot().iter("testcase"):
        if not any(p.get("name") == "ari_real" for p in case.iter("property")):
            continue
        skip = case.find("skipped")
        if skip is not None:
            skipped.append(f"{case.get('classname')}::{case.get('name')}: {skip.get('message', '')}")
        else:
            ran += 1
    return ran, skipped


def from_junit(path: Path) -> tuple[Counter, list[str]]:
    ran: Counter = Counter()
    skipped: list[str] = []
    for case in ET.parse(path).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        variant = props.get("slurm_testbed")
        if variant is None:
            continue
        name = f"{case.get('classname')}::{case.get('name')}"
        skip = case.find("skipped")
        if skip is not None:
            skipped.append(f"{name}: {skip.get('message', '')}")
        else:
            ran[variant] += 1
    return ran, skipped


def from_json(path: Path) -> tuple[Counter, list[str]]:
    data = json.loads(path.read_text())
    skipped = [f"{s['nodeid']}: {s['reason']}" for s in data.get("skipped", [])]
    return Counter(data.get("variants", {})), skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="fail when slurm tests were skipped")
    parser.add_argument("report", type=Path, help="junit XML or slurm-skips.json")
    parser.add_argument("--allow-missing-variant", action="store_true",
                        help="do not require a test to have run in each variant")
    parser.add_argument("--require-ari", action="store_true",
                        help="fail when no test of ARI's real code ran")
    args = parser.parse_args(argv)
    if not args.report.is_file():
        print(f"check_no_slurm_skips: no report at {args.report}: did the slurm tests run?")
        return 1
    ran, skipped = (from_json if args.report.suffix == ".json" else from_junit)(args.report)
    problems = [f"skipped slurm test: {s}" for s in skipped]
    if not args.allow_missing_variant:
        # "any" tests run on whichever variant is up: they count for neither on their own
        problems += [f"no slurm test ran on the {v} test bed" for v in VARIANTS if ran[v] == 0]
    summary = ", ".join(f"{v}: {n}" for v, n in sorted(ran.items())) or "none"
    print(f"slurm tests ran ({summary}); {len(skipped)} skipped")
    if args.report.suffix != ".json":
        ari_ran, ari_skipped = ari_outcomes(args.report)
        problems += [f"skipped ARI test: {s}" for s in ari_skipped]
        if args.require_ari and ari_ran == 0:
            problems.append("no test of ARI's real code ran")
        print(f"ARI tests ran: {ari_ran}; {len(ari_skipped)} skipped")
    for problem in problems:
        print(f"FAIL: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
