"""Run the benchmarks, print the table, write the JSON.

    python -m benchmarks            # full: 5 repeats (cold start 20), 0.5 s stand-in commands
    python -m benchmarks --quick    # CI: 1 repeat, short delays; proves the code still runs
    python benchmarks/run.py ...    # the same without -m

Every figure is the median of its repeats and is compared with a baseline measured in the
same run (interleaved where both are cheap), so a busy machine slows both sides alike.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # `python benchmarks/run.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

from benchmarks.common import Figure, fmt_seconds, not_measured  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "latest.json"
README = Path(__file__).resolve().parent.parent / "README.md"
README_START = "<!-- benchmarks:start (written by python -m benchmarks; do not edit) -->"
README_END = "<!-- benchmarks:end -->"
GROUPS = ("P1", "P2", "P3", "P4", "P5", "P6", "P7", "scale", "runs")


def _settings(quick: bool, repeats: int | None) -> dict:
    if quick:
        return dict(repeats=repeats or 1, cold_repeats=repeats or 1, delay=0.1, timeout=1.0)
    return dict(repeats=repeats or 5, cold_repeats=max(repeats or 20, 10), delay=0.5, timeout=2.0)


def collect(groups: tuple[str, ...], quick: bool, repeats: int | None = None,
            log=lambda message: None) -> list[Figure]:
    from benchmarks import (cold_start, emit_refusal, hostlists, module_cache, module_listing,
                            probe_suite, runs_status, scale)

    s = _settings(quick, repeats)
    runners = {
        "P1": lambda: probe_suite.p1_probe_suite(s["repeats"], s["delay"]),
        "P2": lambda: probe_suite.p2_hung_controller(s["repeats"], s["timeout"]),
        "P3": lambda: (cold_start.p3_cold_start(s["cold_repeats"])
                       + cold_start.p3_kernel(s["cold_repeats"])),
        "P4": lambda: hostlists.p4_hostlists(s["repeats"], quick),
        "P5": lambda: module_cache.p5_module_cache(s["repeats"], s["delay"]),
        "P6": lambda: module_listing.p6_module_listing(s["repeats"]),
        "P7": lambda: emit_refusal.p7_emit_refusal(s["repeats"]),
        "scale": lambda: scale.p_scale(s["repeats"]),
        "runs": lambda: runs_status.r_runs_status(s["repeats"]),
    }
    figures: list[Figure] = []
    for group in groups:
        log(f"running {group} ...")
        start = time.perf_counter()
        try:
            figures.extend(runners[group]())
        except Exception as error:  # one broken benchmark must not hide the others
            figures.append(not_measured(group, group, f"{type(error).__name__}: {error}"))
        log(f"  {group} took {time.perf_counter() - start:.1f} s")
    return figures


def _value(figure: Figure) -> str:
    if figure.value is None:
        return "-"
    return fmt_seconds(figure.value) if figure.unit == "s" else f"{figure.value:g} {figure.unit}"


def table(figures: list[Figure]) -> str:
    """A Markdown table (readable in a terminal, pasted as is into README.md)."""
    rows = [("id", "measurement", "value", "baseline", "ratio", "target", "met")]
    for f in figures:
        baseline = "-" if f.baseline is None else f"{fmt_seconds(f.baseline) if f.unit == 's' else f.baseline} ({f.baseline_label})"
        ratio = "-" if f.ratio is None else f"{f.ratio:.2f}×"
        met = {True: "yes", False: "NO", None: "-"}[f.met]
        rows.append((f.id, f.title, _value(f), baseline, ratio, f.target or "-", met))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        lines.append("| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)) + " |")
        if index == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    notes = [f"- {f.id}: {f.note}" for f in figures if f.note]
    return "\n".join(lines + ([""] + notes if notes else []))


def readme_region(figures: list[Figure], report: dict) -> str:
    """The README's performance table: the run's own figures, its date and machine."""
    m = report["machine"]
    return "\n".join([
        README_START,
        f"Measured {report['started']} on {m['platform']}, {m['cpus']} CPUs"
        + (f" (load average {m['load_average'][0]:g} at the start)" if m.get("load_average") else "")
        + f", Python {m['python']}, "
        f"ari-jupyter {m['ari_jupyter']} ({report['settings']['repeats']} repeats, cold start "
        f"{report['settings']['cold_repeats']}; {report['seconds']:.0f} s in all).",
        "",
        table(figures),
        README_END,
    ])


def write_readme(figures: list[Figure], report: dict, readme: Path = README) -> bool:
    """Rewrite the marked region of README.md; False when the markers are missing."""
    text = readme.read_text(encoding="utf-8")
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        return False
    new = text[:start] + readme_region(figures, report) + text[end + len(README_END):]
    temporary = readme.with_name(f".{readme.name}.tmp")
    temporary.write_text(new, encoding="utf-8")
    temporary.replace(readme)
    return True


def load_figures(path: Path) -> list[Figure]:
    """The figures of a results file (``ratio`` is derived, so it is dropped)."""
    figures = []
    for data in json.loads(path.read_text())["figures"]:
        figures.append(Figure(**{k: v for k, v in data.items() if k != "ratio"}))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repeat, short delays (CI)")
    parser.add_argument("--repeats", type=int, default=None, help="repeats per figure (median)")
    parser.add_argument("--only", default=",".join(GROUPS),
                        help=f"comma-separated groups to run (default: {','.join(GROUPS)})")
    parser.add_argument("--output", default=str(RESULTS), help=f"JSON file to write (default: {RESULTS})")
    parser.add_argument("--show", metavar="JSON", help="print the table of an earlier run and exit")
    parser.add_argument("--no-readme", action="store_true",
                        help="leave README.md alone (a full run of every group rewrites its table)")
    args = parser.parse_args(argv)
    if args.show:
        print(table(load_figures(Path(args.show))))
        return 0
    groups = tuple(g.strip() for g in args.only.split(",") if g.strip())
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        parser.error(f"unknown group(s) {', '.join(unknown)}; known: {', '.join(GROUPS)}")

    started = time.time()
    load = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    figures = collect(groups, args.quick, args.repeats, log=lambda m: print(m, file=sys.stderr))
    print(table(figures))
    from ari_jupyter import __version__

    report = {
        "quick": args.quick,
        "settings": _settings(args.quick, args.repeats),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "seconds": round(time.time() - started, 2),
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": os.cpu_count(), "ari_jupyter": __version__, "load_average": load},
        "figures": [f.to_json() for f in figures],
    }
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {output}", file=sys.stderr)
    if not (args.quick or args.no_readme) and set(groups) == set(GROUPS):
        if write_readme(figures, report):
            print(f"rewrote the performance table in {README}", file=sys.stderr)
        else:
            print(f"{README} has no benchmark markers; table not written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
