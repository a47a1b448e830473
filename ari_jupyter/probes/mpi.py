"""MPI launchers: srun (preferred: the scheduler places ranks, PMI/PMIx wire them up) and
mpirun/mpiexec (fine inside an allocation, but must exist on every compute node)."""
from __future__ import annotations

import asyncio

from ..i18n import message
from ..hosts.host import Host
from .context import ProbeContext, evidence_of, last_line, run_command
from .modules import list_modules
from .parsers import mpi_flavour, mpi_modules, parse_version
from ..slurm.parsers import parse_srun_mpi_list
from ..base.verdict import ProbeResult

async def _describe(host: Host, program: str):
    """``(info, result)`` for a launcher on PATH, ``(None, None)`` otherwise. A launcher that
    cannot even print its version (e.g. srun without a SLURM configuration) does not work."""
    path = host.which(program)
    if path is None:
        return None, None
    result = await run_command(host, [program, "--version"])
    info = {
        "path": path,
        "version": parse_version(result.output) if result.ok else None,
        "works": result.ok or result.timed_out,
        "error": None if result.ok else _error(result),
    }
    if program != "srun":
        info["flavour"] = mpi_flavour(result.output)
    return info, result


def _error(result) -> str:
    """Why a launcher does not run, as said in the probe's data (English)."""
    if result.timed_out:
        return "timed out"
    return last_line(result.output) or f"exit {result.returncode}"


def _error_message(result):
    """The same reason for the sentence: the tool's own last line as it printed it, our words
    in the user's language."""
    if result.timed_out:
        return message("probe.mpi.error.timed_out")
    return last_line(result.output) or message("probe.mpi.error.exit", code=result.returncode)


async def _nothing() -> None:
    return None


def _name(info: dict, program: str) -> str:
    flavour = info.get("flavour") or "MPI"
    version = f" {info['version']}" if info.get("version") else ""
    return f"{program} ({flavour}{version})"


async def probe_mpi(host: Host, ctx: ProbeContext) -> ProbeResult:
    # srun --mpi=list starts with the version questions (its answer is used when srun works).
    plugins = run_command(host, ["srun", "--mpi=list"]) if host.which("srun") else _nothing()
    (srun, srun_run), (mpirun, mpirun_run), (mpiexec, mpiexec_run), plugins_run = await asyncio.gather(
        _describe(host, "srun"), _describe(host, "mpirun"), _describe(host, "mpiexec"), plugins
    )
    runs = [r for r in (srun_run, mpirun_run, mpiexec_run) if r is not None]
    if srun is not None and srun["works"]:
        srun["mpi_plugins"] = parse_srun_mpi_list(plugins_run.output) if plugins_run.ok else []
        runs.append(plugins_run)
    working = [(info, name) for info, name in ((mpirun, "mpirun"), (mpiexec, "mpiexec"))
               if info is not None and info["works"]]
    srun_works = srun is not None and srun["works"]
    data = {
        "srun": srun, "mpirun": mpirun, "mpiexec": mpiexec,
        "launcher": "srun" if srun_works else (working[0][1] if working else None),
    }
    evidence = evidence_of(host, *runs)
    command = runs[0].command if runs else "which srun mpirun mpiexec"
    others = [_name(info, name) for info, name in working]

    if srun_works:
        pmi = [p for p in srun.get("mpi_plugins", []) if p.startswith(("pmix", "pmi2"))]
        version = f" {srun['version']}" if srun.get("version") else ""
        plugins = f", PMI plugins {', '.join(pmi)}" if pmi else ""
        also = f"; also {', '.join(others)}" if others else ""
        return ProbeResult("mpi", "ok", f"srun{version} available (preferred{plugins}){also}",
                           command=command, evidence=evidence, data=data,
                           message_id="probe.mpi.srun", params={
                               "version": version,
                               "plugins": message("probe.mpi.plugins", plugins=", ".join(pmi))
                               if pmi else "",
                               "also": message("probe.mpi.also", others=", ".join(others))
                               if others else ""})
    broken_srun = (message("probe.mpi.srun_broken", error=_error_message(srun_run))
                   if srun is not None else message("probe.mpi.no_srun"))
    if others:
        return ProbeResult.of(
            "mpi", "warn", "probe.mpi.mpirun_only", fix_id="probe.mpi.mpirun_only.fix",
            params={"others": ", ".join(others), "srun": broken_srun},
            command=command, evidence=evidence, data=data,
        )
    listing = await list_modules(host, ctx)
    data["mpi_modules"] = mpi_modules(listing.modules)
    if data["mpi_modules"]:
        module = data["mpi_modules"][0]
        return ProbeResult.of(
            "mpi", "warn", "probe.mpi.module_only", fix_id="probe.mpi.module_only.fix",
            params={"srun": broken_srun, "module": module},
            command=command, evidence=evidence, data=data,
        )
    return ProbeResult.of("mpi", "fail", "probe.mpi.none", fix_id="probe.mpi.none.fix",
                          params={"srun": broken_srun},
                          command=command, evidence=evidence, data=data)
