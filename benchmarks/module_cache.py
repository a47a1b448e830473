"""P5: the second ``modules`` probe of the same process answers from the per-MODULEPATH cache.

The stand-in Lmod (``$LMOD_CMD``) takes 0.5 s per listing, like a module tree on a
parallel filesystem; the second probe of the process must not pay it again. This is the
wizard's kernel, which probes again on every refresh. The cache lives in the process only:
separate ``ari-jupyter`` command runs list afresh, and nothing here claims otherwise.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

from .common import Figure, median, write_program

LISTING = "/opt/modulefiles:\ncuda/12.2\ngcc/12.2.0\nopenmpi/4.1.4\npython/3.11\n"


def p5_module_cache(repeats: int, delay: float) -> list[Figure]:
    from ari_jupyter.hosts.host import LocalHost
    from ari_jupyter.probes import ProbeContext, run_probes_sync
    from ari_jupyter.probes.modules import clear_cache

    firsts, seconds, cached = [], [], []
    with tempfile.TemporaryDirectory(prefix="ari-bench-p5-") as tmp:
        lmod = write_program(Path(tmp), "lmod", delay=delay, stderr=LISTING)
        host = LocalHost({"PATH": tmp, "HOME": tmp, "LMOD_CMD": str(lmod),
                          "MODULEPATH": "/opt/modulefiles"})
        for _ in range(repeats):
            clear_cache()
            for bucket in (firsts, seconds):
                start = time.perf_counter()
                [result] = run_probes_sync(host, ProbeContext(only=["modules"]))
                bucket.append(time.perf_counter() - start)
            cached.append(bool(result.data.get("cached")))
    first, second = median(firsts), median(seconds)
    return [Figure("P5", "second modules probe of one process (the wizard's kernel) vs the first "
                   f"(stand-in Lmod takes {delay:g} s; not for separate CLI runs)", second, "s", first, "first modules probe", "≤ 10 ms",
                   second <= 0.010 and all(cached), repeats=repeats, samples=seconds,
                   note=f"second answer marked cached: {all(cached)}",
                   extra={"first_samples": firsts})]
