"""SLURM probes: can this node submit, which partitions exist, is GRES configured, how long
does the current allocation have left."""
from __future__ import annotations

import asyncio
import re
from datetime import datetime

from ..ari.errors import NO_GRES_WAY
from ..ari.sbatch import bind_flags_from_help
from ..i18n import message, t
from ..hosts.host import Host
from ..base.commands import CommandResult
from .context import (
    ProbeContext,
    chosen_partition,
    evidence_of,
    first_line,
    is_unconfigured,
    last_line,
    off_loop,
    run_command,
    unanswered,
)
from .evidence_words import bind_flags_note
from .parsers import parse_version
from ..slurm.parsers import SINFO_FORMAT, ari_has_gres, gres_lines, parse_gres_spec, parse_sinfo, parse_squeue_time, TimeLeft
from ..slurm.refusal import refusal_fix_id, refusal_kind
from ..base.verdict import ProbeResult

SINFO_PARTITIONS = ("sinfo", "--noheader", "-o", SINFO_FORMAT)
SINFO_GRES = ("sinfo", "-h", "-o", "%G")  # exactly what ARI runs
SBATCH_HELP = ("sbatch", "--help")  # ARI reads its stdout+stderr to keep or drop bind flags

NO_SLURM_FIX = (
    "Run the wizard where the SLURM client works (inside the allocation or on a login node); "
    "without sbatch ARI's reproduce step raises \"sandbox_kind=slurm requested but `sbatch` is "
    "not on PATH\" (ARI_PHASE1_ALLOW_FALLBACK=1 runs it on this host instead)."
)


TIME_LEFT_WARN_SECONDS = 3600


def ends_at_clock(end: float, now: float) -> str:
    """When the allocation ends (``end``, seconds since the epoch), on this machine's clock: a
    time left read once goes stale while the notebook stays open, its end does not.
    ``14:32 JST`` on the day of ``now``, otherwise with the date (``2026-12-07 14:32 JST``)."""
    start = datetime.fromtimestamp(now).astimezone()
    finish = datetime.fromtimestamp(end).astimezone()
    shown = finish.strftime("%H:%M %Z" if finish.date() == start.date() else "%Y-%m-%d %H:%M %Z")
    return shown.strip()


def time_left_until(result: ProbeResult, answered_at: float, lang: str | None) -> str:
    """`` (until about 14:32 JST)`` for a time_left answer read at ``answered_at``; empty when it
    names no time left (no limit, outside an allocation, no answer)."""
    seconds = result.data.get("seconds")
    if result.id != "time_left" or not isinstance(seconds, int) or result.data.get("unlimited"):
        return ""
    return t("probe.time_left.until", lang, ends=ends_at_clock(answered_at + seconds, answered_at))


# ---------------------------------------------------------------------------------------------
# sbatch


def advertised_bind_flags(help_run: CommandResult) -> list[str] | None:
    """The bind flags ARI would keep, read from ``sbatch --help`` exactly as ARI reads it
    (stdout+stderr, whatever the exit code); None when sbatch did not answer in time."""
    if help_run.timed_out or help_run.not_found:
        return None
    return sorted(bind_flags_from_help(help_run.stdout + help_run.stderr))



async def probe_sbatch(host: Host, ctx: ProbeContext) -> ProbeResult:
    """sbatch on PATH, its version, the bind flags its ``--help`` advertises (ARI drops the
    others), and (with a partition) the scheduler's answer to a test submission from this
    node — hosted notebook nodes are sometimes not allowed to submit."""
    path = host.which("sbatch")
    if path is None:
        return ProbeResult(
            "sbatch", "fail", "sbatch is not on PATH: ARI cannot submit SLURM jobs from here",
            command="which sbatch", fix=NO_SLURM_FIX, data={"path": None},
            message_id="probe.sbatch.missing", fix_id="probe.no_slurm.fix",
        )
    # Every question at once (version, --help, and the test submission when the partition is
    # known from the choice or the environment): a loaded controller is paid once, not twice.
    partition, source = chosen_partition(host, ctx)
    questions = [run_command(host, ["sbatch", "--version"]), run_command(host, SBATCH_HELP)]
    if partition:
        questions.append(run_command(host, ["sbatch", "--test-only", "-p", partition, "--wrap", "true"]))
    version_run, help_run, *tests = await asyncio.gather(*questions)
    version = parse_version(version_run.stdout) if version_run.ok else None
    data = {"path": path, "version": version, "bind_flags": None, "partition": None,
            "test_only": None}
    if version_run.timed_out:
        return ProbeResult.of(
            "sbatch", "unknown", "probe.sbatch.version_timeout",
            params={"path": path, "seconds": f"{version_run.elapsed:.1f}"},
            command=version_run.command, evidence=evidence_of(host, version_run), data=data,
        )
    if not version_run.ok:
        unconfigured = is_unconfigured(version_run)
        return ProbeResult.of(
            "sbatch", "fail", "probe.sbatch.unconfigured" if unconfigured else "probe.sbatch.broken",
            fix_id="probe.unconfigured.fix" if unconfigured else "probe.no_slurm.fix",
            params={"path": path, "code": version_run.returncode,
                    "answer": last_line(version_run.output)},
            command=version_run.command, evidence=evidence_of(host, version_run), data=data,
        )
    if not partition:
        data["bind_flags"] = advertised_bind_flags(help_run)
        return ProbeResult(
            "sbatch", "ok",
            f"sbatch {version or '(version unknown)'} at {path}; no partition chosen, so no "
            "test submission was made",
            command=version_run.command, data=data,
            message_id="probe.sbatch.no_partition",
            params={"version": version or "?", "path": path},
            evidence=evidence_of(host, version_run, note=bind_flags_note(data["bind_flags"])),
        )
    data["partition"], data["partition_source"] = partition, source
    test, = tests
    data["bind_flags"] = advertised_bind_flags(help_run)
    hiccup = unanswered("sbatch", host, test, message("probe.what.may_submit", partition=partition))
    if hiccup is not None:
        return ProbeResult(**{**hiccup.to_json(), "data": data})
    answer = first_line(test.stderr or test.stdout) or f"exit {test.returncode}"
    said = re.sub(r"^sbatch:\s*(error:\s*)?", "", answer)  # the summary says who answered
    data["test_only"] = {"returncode": test.returncode, "answer": answer}
    evidence = evidence_of(host, version_run, test, note=bind_flags_note(data["bind_flags"]))
    if test.ok:
        return ProbeResult(
            "sbatch", "ok",
            f"sbatch {version or ''} may submit to {partition}: {said}".replace("  ", " "),
            command=test.command, evidence=evidence, data=data,
            message_id="probe.sbatch.may_submit" if version else "probe.sbatch.may_submit_unversioned",
            params={"version": version or "", "partition": partition, "answer": said},
        )
    kind = refusal_kind(test.stderr + test.stdout)
    data["test_only"]["refusal"] = kind
    fix_id = refusal_fix_id(kind)
    return ProbeResult(
        "sbatch", "fail",
        f"sbatch refuses a test job on partition {partition}: {said}",
        command=test.command, evidence=evidence, data=data,
        message_id="probe.sbatch.refused", params={"partition": partition, "answer": said},
        fix_id=fix_id, fix=t(fix_id, "en", partition=partition),
    )


# ---------------------------------------------------------------------------------------------
# partitions


async def probe_partitions(host: Host, ctx: ProbeContext) -> ProbeResult:
    """The partitions sinfo lists (name, default, availability, limits, GRES)."""
    if host.which("sinfo") is None:
        return ProbeResult(
            "partitions", "skip", "sinfo is not on PATH: no SLURM client on this host",
            command="which sinfo", fix=NO_SLURM_FIX, data={"partitions": [], "default": None},
            message_id="probe.sinfo_missing", fix_id="probe.no_slurm.fix",
        )
    result = await ctx.run_shared(host, SINFO_PARTITIONS)
    hiccup = unanswered("partitions", host, result, message("probe.what.partition_list"))
    if hiccup is not None:
        return hiccup
    evidence = evidence_of(host, result)
    if not result.ok:
        return ProbeResult.of(
            "partitions", "unknown", "probe.partitions.sinfo_failed",
            params={"code": result.returncode, "answer": first_line(result.output)},
            command=result.command, evidence=evidence,
            data={"partitions": [], "default": None},
        )
    parsed = await off_loop(parse_sinfo, result.stdout, size=len(result.stdout))
    data = {"partitions": parsed.partitions, "default": parsed.default}
    if not parsed.partitions:
        if parsed.rejected:
            return ProbeResult.of(
                "partitions", "unknown", "probe.partitions.unreadable",
                params={"count": len(parsed.rejected)},
                command=result.command, evidence=evidence, data=data,
            )
        return ProbeResult.of(
            "partitions", "warn", "probe.partitions.none_visible",
            fix_id="probe.partitions.none_visible.fix",
            command=result.command, evidence=evidence, data=data,
        )
    names = [p["name"] for p in parsed.partitions]
    listing = ", ".join(
        f"{p['name']}{'*' if p['default'] else ''} ({p['avail']}, {p['nodes']} node{'s' if p['nodes'] != 1 else ''}"
        + (f", {p['cpus']} CPUs" if p["cpus"] is not None else "")
        + (f", {'+'.join(p['gres'])}" if p["gres"] else "")
        + ")"
        for p in parsed.partitions
    )
    partition, source = chosen_partition(host, ctx)
    data["chosen"], data["chosen_source"] = partition, source
    if partition and partition not in names:
        return ProbeResult.of(
            "partitions", "fail" if source == "chosen" else "warn", "probe.partitions.not_listed",
            fix_id="probe.partitions.not_listed.fix",
            params={"partition": partition, "names": ", ".join(names),
                    "source": message("probe.partition_source.chosen") if source == "chosen"
                    else source},
            command=result.command, evidence=evidence, data=data,
        )
    down = [p["name"] for p in parsed.partitions if p["avail"].lower() != "up"]
    if partition and partition in down:
        return ProbeResult.of(
            "partitions", "warn", "probe.partitions.chosen_down",
            fix_id="probe.partitions.chosen_down.fix",
            params={"partition": partition, "count": len(names), "listing": listing,
                    "state": dict((p["name"], p["avail"]) for p in parsed.partitions)[partition]},
            command=result.command, evidence=evidence, data=data,
        )
    if len(down) == len(names):
        return ProbeResult.of(
            "partitions", "warn", "probe.partitions.none_up", params={"listing": listing},
            command=result.command, evidence=evidence, data=data,
        )
    return ProbeResult(
        "partitions", "ok", f"{len(names)} partition{'s' if len(names) != 1 else ''}: {listing}",
        command=result.command, evidence=evidence, data=data,
        message_id="probe.partitions.ok" if len(names) != 1 else "probe.partitions.ok_one",
        params={"count": len(names), "listing": _listing_messages(parsed.partitions)},
    )


def _listing_messages(partitions) -> list[dict]:
    """Each partition as a sentence parameter, so the listing reads in the user's language."""

    out = []
    for p in partitions:
        key = "probe.partitions.item" + ("_one" if p["nodes"] == 1 else "") \
            + ("" if p["cpus"] is not None else "_nocpu")
        out.append(message(key, name=p["name"] + ("*" if p["default"] else ""), avail=p["avail"],
                           nodes=p["nodes"], cpus=p["cpus"] if p["cpus"] is not None else "",
                           gres=(", " + "+".join(p["gres"])) if p["gres"] else ""))
    return out


# ---------------------------------------------------------------------------------------------
# gres


def gpu_types(specs: list[str]) -> list[str]:
    """GPU types named in GRES entries, in listing order (the choices for gpu_type)."""
    types = []
    for spec in specs:
        parsed = parse_gres_spec(spec)
        if parsed and parsed.name == "gpu" and parsed.type and parsed.type not in types:
            types.append(parsed.type)
    return types


async def cluster_gres(host: Host, ctx: ProbeContext):
    """``(result, has_gres)`` of ARI's own GRES check, shared by the gres and gpus probes.
    ``has_gres`` is None when sinfo is absent or did not answer."""
    if host.which("sinfo") is None:
        return None, None
    result = await ctx.run_shared(host, SINFO_GRES)
    if not result.ok:
        return result, None
    return result, ari_has_gres(result.stdout)


async def probe_gres(host: Host, ctx: ProbeContext) -> ProbeResult:
    """GRES cluster-wide (ARI's check) and on the chosen partition.

    Both questions go to the controller at once: the partition's GRES is the last column of
    the partition listing (shared with the partitions probe), not a second ``sinfo -p``."""
    if host.which("sinfo") is None:
        return ProbeResult(
            "gres", "skip", "sinfo is not on PATH: no SLURM client on this host",
            command="which sinfo", data={"has_gres": None}, message_id="probe.sinfo_missing",
        )
    partition, source = chosen_partition(host, ctx)
    listing_task = asyncio.ensure_future(ctx.run_shared(host, SINFO_PARTITIONS))
    try:
        result, has_gres = await cluster_gres(host, ctx)
    except BaseException:
        listing_task.cancel()
        raise
    hiccup = unanswered("gres", host, result, "GRES")  # the same word in every language
    if hiccup is not None:
        listing_task.cancel()
        return ProbeResult(**{**hiccup.to_json(), "data": {"has_gres": None}})
    if has_gres is None:
        listing_task.cancel()
        return ProbeResult.of(
            "gres", "unknown", "probe.gres.sinfo_failed",
            params={"code": result.returncode, "answer": first_line(result.output)},
            command=result.command, evidence=evidence_of(host, result),
            data={"has_gres": None, "ari_sees_gres": False},
        )
    cluster_specs = gres_lines(result.stdout)
    data = {
        "has_gres": has_gres, "ari_sees_gres": has_gres, "gres": cluster_specs,
        "gpu_types": gpu_types(cluster_specs),
        "partition": None, "partition_gres": None, "partition_has_gres": None,
    }
    runs = [result]
    listing = await listing_task
    parsed_listing = (await off_loop(parse_sinfo, listing.stdout, size=len(listing.stdout))
                      if listing.ok else None)
    if partition is None and parsed_listing is not None:
        partition, source = parsed_listing.default, "sinfo default"
    if partition:
        data["partition"], data["partition_source"] = partition, source
        runs.append(listing)
        hiccup = unanswered("gres", host, listing, message("probe.what.gres_on", partition=partition))
        if hiccup is not None:
            # The cluster-wide answer (ARI's own check) stands; the partition's is unknown.
            return ProbeResult(**{**hiccup.to_json(), "data": data,
                                  "evidence": evidence_of(host, *runs)})
        entry = next((p for p in parsed_listing.partitions if p["name"] == partition), None) \
            if parsed_listing is not None else None
        if entry is not None:
            data["partition_gres"] = list(entry["gres"])
            data["partition_has_gres"] = bool(entry["gres"])
    evidence = evidence_of(host, *runs)
    command = result.command
    if not has_gres:
        # Not a problem for what the probe can know: the default profile asks for no GPU (the
        # CLI has no profile). A profile that does ask gets its verdict from the judge
        # (``judge.probe_verdict``), with the validator's severity.
        return ProbeResult.of("gres", "ok", "probe.gres.none", fix_id=NO_GRES_WAY,
                              command=command, evidence=evidence, data=data)
    listing = ", ".join(cluster_specs)
    parsed = [(spec, parse_gres_spec(spec)) for spec in cluster_specs]
    data["unparsed"] = [spec for spec, p in parsed if p is None]
    if data["unparsed"]:
        return ProbeResult.of(
            "gres", "warn", "probe.gres.unparsed", fix_id="probe.gres.unparsed.fix",
            params={"line": first_line(data["unparsed"][0], 60)},
            command=command, evidence=evidence, data=data,
        )
    if not any(p.name == "gpu" for _, p in parsed):
        return ProbeResult.of(
            "gres", "warn", "probe.gres.no_gpu_kind", fix_id="probe.gres.no_gpu_kind.fix",
            params={"listing": listing}, command=command, evidence=evidence, data=data,
        )
    if partition and data["partition_has_gres"] is False:
        return ProbeResult.of(
            "gres", "warn", "probe.gres.not_on_partition",
            fix_id="probe.gres.not_on_partition.fix",
            params={"listing": listing, "partition": partition},
            command=command, evidence=evidence, data=data,
        )
    where = (f"; partition {partition} has {', '.join(data['partition_gres'])}"
             if data["partition_gres"] and data["partition_gres"] != cluster_specs else "")
    types = f"; gpu_type may be {' or '.join(data['gpu_types'])}" if data["gpu_types"] else ""
    return ProbeResult(
        "gres", "ok", f"GRES configured: {listing}{where}{types}",
        command=command, evidence=evidence, data=data,
        message_id="probe.gres.ok", params={
            "listing": listing,
            "where": message("probe.gres.partition_has", partition=partition,
                             gres=", ".join(data["partition_gres"])) if where else "",
            "types": message("probe.gpu_type_may_be", types=" or ".join(data["gpu_types"]))
            if types else ""},
    )


# ---------------------------------------------------------------------------------------------
# time_left


async def probe_time_left(host: Host, ctx: ProbeContext) -> ProbeResult:
    """Time left in the allocation this notebook runs in: ``ari run`` dies with it."""
    allocation = ctx.allocation
    job_id = getattr(allocation, "job_id", None) or host.env.get("SLURM_JOB_ID")
    inside = getattr(allocation, "inside_allocation", bool(job_id))
    if not inside or not job_id:
        return ProbeResult(
            "time_left", "skip", "not inside a SLURM allocation (no SLURM_JOB_ID)",
            data={"job_id": None, "seconds": None}, message_id="probe.time_left.outside",
        )
    job_id = str(job_id)
    if not job_id.isdigit():
        return ProbeResult.of(
            "time_left", "unknown", "probe.time_left.bad_job_id", params={"job_id": repr(job_id)},
            data={"job_id": None, "seconds": None},
        )
    if host.which("squeue") is None:
        return ProbeResult.of(
            "time_left", "unknown", "probe.time_left.no_squeue", params={"job_id": job_id},
            command="which squeue", data={"job_id": job_id, "seconds": None},
        )
    result = await run_command(host, ["squeue", "-h", "-j", job_id, "-o", "%L"])
    data = {"job_id": job_id, "seconds": None, "raw": None, "unlimited": False}
    hiccup = unanswered("time_left", host, result, message("probe.what.time_left", job_id=job_id))
    if hiccup is not None:
        return ProbeResult(**{**hiccup.to_json(), "data": data})
    evidence = evidence_of(host, result)
    if not result.ok or not result.stdout.strip():
        return ProbeResult.of(
            "time_left", "unknown", "probe.time_left.unknown_job",
            fix_id="probe.time_left.unknown_job.fix",
            params={"job_id": job_id,
                    "answer": first_line(result.output) or message("probe.answer.empty")},
            command=result.command, evidence=evidence, data=data,
        )
    try:
        left = parse_squeue_time(result.stdout)
    except ValueError as exc:
        return ProbeResult.of(
            "time_left", "unknown", "probe.time_left.unreadable", params={"error": str(exc)},
            command=result.command, evidence=evidence, data=data,
        )
    return time_left_verdict(job_id, left, command=result.command, evidence=evidence)


def time_left_verdict(job_id: str, left: TimeLeft, *, command: str = "", evidence: str = "") -> ProbeResult:
    """The time_left result for ``left`` of job ``job_id``: what the probe says once squeue
    answered, and what the server says as it counts that answer down without asking again."""
    data = {"job_id": job_id, "seconds": left.seconds, "raw": left.raw, "unlimited": left.unlimited}
    if left.unlimited:
        return ProbeResult("time_left", "ok", f"job {job_id} has no time limit",
                           command=command, evidence=evidence, data=data,
                           message_id="probe.time_left.unlimited", params={"job": job_id})
    if left.seconds is not None and left.seconds < TIME_LEFT_WARN_SECONDS:
        return ProbeResult(
            "time_left", "warn",
            f"job {job_id} ends in {left.raw} ({left.seconds // 60} min): an `ari run` started "
            "here stops with it",
            command=command, evidence=evidence, data=data,
            fix="Start a longer allocation for the notebook, or run `ari` from a batch job.",
            message_id="probe.time_left.short", fix_id="probe.time_left.short.fix",
            params={"job": job_id, "left": left.raw, "minutes": left.seconds // 60},
        )
    return ProbeResult("time_left", "ok", f"job {job_id} has {left.raw} left",
                       command=command, evidence=evidence, data=data,
                       message_id="probe.time_left.ok", params={"job": job_id, "left": left.raw})
