"""Is ARI itself installed where the hand-off script will run ``ari run``?"""
from __future__ import annotations

from ..hosts.host import Host
from ..base.plain_text import plain
from .context import ProbeContext, evidence_of, first_line, run_command
from .parsers import parse_version
from ..base.verdict import ProbeResult
from ..ari.contracts import TYPED_HPC_V1, installed_contract


async def probe_ari(host: Host, ctx: ProbeContext) -> ProbeResult:
    path = host.which("ari")
    if path is None:
        # "fail", as check-handoff says: the hand-off's `ari run` cannot start without it. A
        # demo site's ARI exists only in its recording: the verdict is about that site.
        demo = "_demo" if host.is_demo else ""
        return ProbeResult.of(
            "ari", "fail", f"probe.ari.missing{demo}", fix_id=f"probe.ari.missing{demo}.fix",
            params={"site": host.name} if demo else {},
            command="which ari", data={"path": None, "version": None},
        )
    # rich colours ARI's usage and errors unless told not to (the codes are stripped anyway)
    result = await run_command(host, ["ari", "--version"],
                               env={**host.env, "NO_COLOR": "1", "TERM": "dumb"})
    output = plain(result.output)
    version = parse_version(output) if result.ok else None
    # which hand-off contract its installed code speaks (read from its files, as the hand-off's
    # `ari run` would find them); a demo site's ARI is only a recording: not asked
    contract = None if host.is_demo else installed_contract(host.env)
    data = {"path": path, "version": version, "contract": contract}
    evidence = evidence_of(host, result)
    if result.timed_out:
        return ProbeResult.of(
            "ari", "warn", "probe.ari.version_timeout", fix_id="probe.ari.version_timeout.fix",
            # the probe's time limit, not the command's own elapsed time: the path lookup may
            # have spent most of the budget, and "within 0.0s" would blame ari for it
            params={"path": path, "seconds": f"{ctx.timeout_for('ari'):.1f}"},
            command=result.command, evidence=evidence, data=data,
        )
    if not result.ok:
        answer = first_line(output) or f"exit {result.returncode}"
        lowered = output.lower()
        if "no such option" in lowered or "unrecognized arguments" in lowered:
            answer = "`--version` is not an ari option"
            return ProbeResult("ari", "ok", f"ari at {path} (version not reported: {answer})",
                               command=result.command, evidence=evidence, data=data,
                               message_id="probe.ari.no_version_option", params={"path": path})
        return ProbeResult.of(
            "ari", "warn", "probe.ari.broken", fix_id="probe.ari.install.fix",
            params={"path": path, "answer": answer},
            command=result.command, evidence=evidence, data=data,
        )
    if contract == TYPED_HPC_V1:
        return ProbeResult.of(
            "ari", "warn", "probe.ari.ok_typed", fix_id="probe.ari.ok_typed.fix",
            params={"version": version or "?", "path": path, "contract": contract},
            command=result.command, evidence=evidence, data=data,
        )
    return ProbeResult("ari", "ok", f"ari {version or '(version unknown)'} at {path}",
                       command=result.command, evidence=evidence, data=data,
                       message_id="probe.ari.ok", params={"version": version or "?", "path": path})
