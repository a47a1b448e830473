"""GPUs this node can see (``nvidia-smi -L``) against what SLURM can hand out (GRES).

The sx40 pattern: GPUs are physically there but SLURM has no GRES, so every GPU request
(``--gres``, ``--gpus-per-task``) is rejected and ARI refuses to add GPU flags at all unless
``ARI_SLURM_ALLOW_NO_GRES=1``.
"""
from __future__ import annotations

import asyncio

from ..i18n import message
from ..hosts.host import Host
from .context import ProbeContext, evidence_of, first_line, run_command
from .parsers import parse_nvidia_smi
from ..slurm.parsers import gres_lines, parse_gres_spec
from ..base.verdict import ProbeResult
from .slurm import cluster_gres, gpu_types


def _models(gpus: list[dict]) -> str:
    counts: dict[str, int] = {}
    for gpu in gpus:
        counts[gpu["model"]] = counts.get(gpu["model"], 0) + 1
    return ", ".join(f"{n}× {model}" for model, n in counts.items())


async def probe_gpus(host: Host, ctx: ProbeContext) -> ProbeResult:
    if host.which("nvidia-smi") is None:
        return ProbeResult(
            "gpus", "skip", "nvidia-smi is not on PATH: no NVIDIA GPUs visible on this node",
            command="which nvidia-smi", data={"count": 0, "gpus": [], "models": []},
            message_id="probe.gpus.no_smi",
        )
    # ARI's GRES question (shared with the gres probe) starts with nvidia-smi, not after it.
    gres = asyncio.ensure_future(cluster_gres(host, ctx))
    try:
        smi = await run_command(host, ["nvidia-smi", "-L"])
    except BaseException:
        gres.cancel()
        raise
    data = {"count": None, "gpus": [], "models": [], "has_gres": None, "gres_gpu_types": []}
    gpus = parse_nvidia_smi(smi.stdout)
    if smi.timed_out or not gpus:
        gres.cancel()  # only GPUs seen here make the GRES answer matter
    if smi.timed_out:
        return ProbeResult.of(
            "gpus", "unknown", "probe.gpus.smi_timeout", fix_id="probe.gpus.smi_timeout.fix",
            params={"seconds": f"{smi.elapsed:.1f}"},
            command=smi.command, evidence=evidence_of(host, smi), data=data,
        )
    if not smi.ok and not gpus:
        if "no devices were found" in smi.output.lower():
            data["count"] = 0
            return ProbeResult.of("gpus", "skip", "probe.gpus.none_found",
                                  command=smi.command, evidence=evidence_of(host, smi), data=data)
        return ProbeResult.of(
            "gpus", "unknown", "probe.gpus.smi_failed", fix_id="probe.gpus.smi_failed.fix",
            params={"code": smi.returncode, "answer": first_line(smi.output)},
            command=smi.command, evidence=evidence_of(host, smi), data=data,
        )
    data.update(count=len(gpus), gpus=gpus, models=sorted({g["model"] for g in gpus}))
    if not gpus:
        return ProbeResult.of("gpus", "skip", "probe.gpus.none_listed",
                              command=smi.command, evidence=evidence_of(host, smi), data=data)
    sinfo, has_gres = await gres
    data["has_gres"] = has_gres
    evidence = evidence_of(host, smi, sinfo) if sinfo is not None else evidence_of(host, smi)
    seen = f"{len(gpus)} GPU{'s' if len(gpus) != 1 else ''} visible ({_models(gpus)})"
    seen_msg = message("probe.gpus.seen" if len(gpus) != 1 else "probe.gpus.seen_one",
                       count=len(gpus), models=_models(gpus))
    if has_gres is False:
        # One verdict per cause: the missing GRES is the gres check's (its fix says what to
        # do); this line says what is on the node and points there.
        return ProbeResult(
            "gpus", "ok",
            f"{seen} but SLURM has no GRES (see the GRES check)",
            command=smi.command, evidence=evidence,
            fix="See the GRES check: how GPU jobs run without GRES.",
            data=data, message_id="probe.gpus.no_gres", fix_id="probe.fix.see_gres",
            params={"seen": seen_msg},
        )
    if has_gres is None:
        why = message("probe.gpus.why.no_slurm" if sinfo is None else "probe.gpus.why.sinfo_silent")
        return ProbeResult.of("gpus", "ok", "probe.gpus.gres_unknown",
                              params={"seen": seen_msg, "why": why},
                              command=smi.command, evidence=evidence, data=data)
    specs = [parse_gres_spec(s) for s in gres_lines(sinfo.stdout)]
    gpu_specs = [s for s in specs if s and s.name == "gpu"]
    data["gres_gpu_types"] = gpu_types([s.raw for s in gpu_specs])
    if not gpu_specs:
        return ProbeResult.of(
            "gpus", "warn", "probe.gpus.no_gpu_gres", fix_id="probe.gpus.no_gpu_gres.fix",
            params={"seen": seen_msg, "gres": ", ".join(s.raw for s in specs if s)},
            command=smi.command, evidence=evidence, data=data,
        )
    types = data["gres_gpu_types"]
    hint = f"; gpu_type may be {' or '.join(types)}" if types else "; untyped GRES: leave gpu_type empty"
    return ProbeResult(
        "gpus", "ok",
        f"{seen}; GRES {', '.join(s.raw for s in gpu_specs)}{hint}",
        command=smi.command, evidence=evidence, data=data,
        message_id="probe.gpus.ok", params={
            "seen": seen_msg, "gres": ", ".join(s.raw for s in gpu_specs),
            "hint": message("probe.gpu_type_may_be", types=" or ".join(types)) if types
            else message("probe.gpus.untyped")},
    )
