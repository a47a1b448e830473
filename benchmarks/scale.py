"""Scale: the partition list of a 10,000-node, 200-partition cluster.

sinfo folds alike nodes into one line, so its output grows with the number of distinct
node shapes, not nodes. The worst case is generated here: every node reports its own
memory size (as real machines do when RealMemory is measured per node), so each node is
a line of its own, in its partition and again in the cluster-wide ``all`` partition:
20,000 lines. Measured: the partitions probe's parser (time and peak memory, against
merely splitting the lines), the whole ``partitions`` probe through ``LocalHost`` with a
stand-in ``sinfo`` printing that text, and the Combobox the wizard shows the names in.
"""
from __future__ import annotations

import shlex
import shutil
import tempfile
import time
import tracemalloc
from pathlib import Path

from .common import Figure, median, medians

NODES = 10_000
PARTITIONS = 200


def sinfo_text(nodes: int = NODES, partitions: int = PARTITIONS) -> str:
    """``sinfo --noheader -o '%P|%a|%l|%D|%c|%m|%G'`` of the worst-case cluster."""
    lines = []
    per_partition = nodes // (partitions - 1)
    for node in range(nodes):
        part = min(node // per_partition, partitions - 2)
        memory = 191_000 + node % 997
        gres = "gpu:a100:4(S:0-1)" if part % 4 == 0 else "(null)"
        name = f"p{part:03d}"
        lines.append(f"{name}|up|1-00:00:00|1|48|{memory}|{gres}")
        lines.append(f"all*|up|7-00:00:00|1|48|{memory}|{gres}")
    return "\n".join(lines) + "\n"


def _split_only(text: str) -> int:
    return sum(1 for line in text.splitlines() if len(line.split("|")) == 7)


def p_scale(repeats: int) -> list[Figure]:
    from ari_jupyter.hosts.host import LocalHost
    from ari_jupyter.probes import ProbeContext, run_probes_sync
    from ari_jupyter.slurm.parsers import parse_sinfo

    text = sinfo_text()
    parsed = parse_sinfo(text)
    assert len(parsed.partitions) == PARTITIONS and parsed.default == "all"
    samples = medians({"parse": lambda: parse_sinfo(text), "split": lambda: _split_only(text)}, repeats)

    tracemalloc.start()
    parse_sinfo(text)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    probe_times, seen, summary_len = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="ari-bench-scale-") as tmp:
        (Path(tmp) / "sinfo.txt").write_text(text)
        cat = shutil.which("cat") or "/bin/cat"
        script = Path(tmp) / "sinfo"
        script.write_text(f"#!/bin/sh\nexec {cat} {shlex.quote(str(Path(tmp) / 'sinfo.txt'))}\n")
        script.chmod(0o755)
        host = LocalHost({"PATH": tmp, "HOME": tmp})
        for _ in range(repeats):
            start = time.perf_counter()
            [result] = run_probes_sync(host, ProbeContext(only=["partitions"], timeout=30))
            probe_times.append(time.perf_counter() - start)
        seen = len(result.data.get("partitions") or [])
        summary_len = len(result.summary)

    widget_note = ""
    try:
        import ipywidgets

        names = [p["name"] for p in parsed.partitions]
        start = time.perf_counter()
        combo = ipywidgets.Combobox(options=names, ensure_option=False)
        combo.options = names[::-1]
        widget_s = (time.perf_counter() - start) / 2
        widget_note = f"; Combobox with {len(names)} options: {widget_s * 1e3:.1f} ms"
    except ImportError:
        widget_note = "; Combobox not measured (ipywidgets missing)"

    parse, split = median(samples["parse"]), median(samples["split"])
    lines = text.count("\n")
    return [
        Figure("S1", f"parse sinfo of {NODES:,} nodes / {PARTITIONS} partitions ({lines:,} lines)",
               parse, "s", split, "splitting the lines only", "report", None, repeats=repeats,
               samples=samples["parse"],
               note=f"peak memory {peak / 1e6:.1f} MB for {len(text) / 1e6:.2f} MB of text{widget_note}",
               extra={"peak_bytes": peak, "text_bytes": len(text), "lines": lines}),
        Figure("S2", "whole partitions probe on that output (stand-in sinfo, LocalHost)",
               median(probe_times), "s", parse, "parser alone", f"all {PARTITIONS} partitions seen",
               seen == PARTITIONS,
               repeats=repeats, samples=probe_times,
               note=f"partitions seen by the probe: {seen}/{PARTITIONS}; summary {summary_len:,} characters",
               extra={"partitions_seen": seen, "summary_chars": summary_len}),
    ]
