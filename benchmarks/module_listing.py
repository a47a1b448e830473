"""P6: a site with 20,000 modules. The listing is parsed in linear time, and while it goes
through the real modules probe (a stand-in ``$LMOD_CMD`` printing it the way Lmod does, on
stderr) no message posted to the event loop waits long: the kernel keeps answering widgets.
"""
from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from .common import Figure, median, medians

MODULES = 20_000


def listing(modules: int = MODULES) -> str:
    """``module -t avail`` of a big site: two trees, versions, Lmod's (default) marks."""
    half = modules // 2
    lines = []
    for tree, start in (("/apps/modulefiles/Core", 0), ("/apps/modulefiles/Compiler", half)):
        lines.append(f"{tree}:")
        for index in range(start, start + half):
            mark = "(default)" if index % 10 == 0 else ""
            lines.append(f"pkg{index // 10:04d}/{index % 10}.{index % 3}.0{mark}")
    return "\n".join(lines) + "\n"


def p6_module_listing(repeats: int) -> list[Figure]:
    from ari_jupyter.hosts.host import LocalHost
    from ari_jupyter.probes import ProbeContext
    from ari_jupyter.probes.parsers import parse_module_avail

    from .probe_suite import _suite_with_message_waits

    text = listing()
    assert len(parse_module_avail(text)) == MODULES
    samples = medians({"parse": lambda: parse_module_avail(text),
                       "split": lambda: text.splitlines()}, repeats)
    walls, waits, seen = [], [], 0
    with tempfile.TemporaryDirectory(prefix="ari-bench-p6-") as tmp:
        (Path(tmp) / "listing.txt").write_text(text)
        lmod = Path(tmp) / "lmod"
        lmod.write_text(f"#!/bin/sh\nexec /bin/cat {tmp}/listing.txt >&2\n")
        lmod.chmod(0o755)
        host = LocalHost({"PATH": tmp, "HOME": tmp, "LMOD_CMD": str(lmod),
                          "MODULEPATH": "/apps/modulefiles/Core:/apps/modulefiles/Compiler"})
        for _ in range(repeats):
            ctx = ProbeContext(only=["modules"], module_cache=False)
            wall, longest, _, results = asyncio.run(_suite_with_message_waits(host, ctx))
            walls.append(wall)
            waits.append(longest)
            seen = len(results[0].data.get("modules") or [])
    parse = median(samples["parse"])
    return [
        Figure("P6", f"parse a {MODULES:,}-module listing (module -t avail)", parse, "s",
               median(samples["split"]), "splitting the lines only", "≤ 50 ms", parse <= 0.050,
               repeats=repeats, samples=samples["parse"]),
        Figure("P6m", f"longest wait of a widget message while the modules probe reads "
               f"{MODULES:,} modules", median(waits), "s", 0.010, "message interval (10 ms)",
               "≤ 50 ms", median(waits) <= 0.050 and seen == MODULES, repeats=repeats,
               samples=waits, note=f"modules seen by the probe: {seen:,}; probe wall "
                                   f"{median(walls) * 1e3:.0f} ms; worst wait {max(waits) * 1e3:.1f} ms",
               extra={"modules_seen": seen, "walls": walls}),
    ]
