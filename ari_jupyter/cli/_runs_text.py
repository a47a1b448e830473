"""Plain-text rendering of the run answers for ``ari-jupyter runs|status|cancel``."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterable

from ._columns import columns
from ._ledger_text import ledger_lines
from ..runs.chain import chain_text
from ..i18n import message, render_message, say, t
from ..slurm.parsers import gpus_per_node
from ..ari.cost import hours_text
from ..ari.time_fit import idle_duration
from ..runs.cost import usd_text


def best_text(best: dict[str, Any] | None) -> str:
    return f"{best['name']} = {best['value']:g} ({best['node_id']})" if best else "-"


_HEADER = ("run", "phase", "nodes", "best", "jobs", "cost", "updated", "title")


def runs_table(answer: dict[str, Any], lang: str = "en") -> str:
    rows = answer["runs"]
    workspaces = answer.get("workspaces") or [answer["workspace"]]
    if not rows:
        return t("runs.none", lang, path=", ".join(f"{w}/checkpoints" for w in workspaces))
    # several workspaces listed (runs written outside the default one): each row says where
    names = _HEADER if len(workspaces) == 1 else (*_HEADER[:-1], "workspace", _HEADER[-1])
    header = tuple(t(f"runs.header.{name}", lang) for name in names)
    # without an answer from squeue no count is known: "?" as `status` says "unknown", never 0
    known = answer.get("scheduler") not in ("absent", "error", "partial")
    body = [(r["run_id"], phase_text(r["phase"], lang),
             f"{r['nodes']['done']}/{r['nodes']['failed']}/{r['nodes']['running']}/{r['nodes']['total']}",
             best_text(r["best_metric"]), str(r["jobs"]) if known else "?", cost_cell(r, lang),
             r["updated_at"][:19],
             *((r["workspace"],) if len(workspaces) > 1 else ()), r["title"])
            for r in rows]
    widths = [max(columns(row[i]) for row in [header, *body]) for i in range(len(header) - 1)]
    lines = ["  ".join(cell + " " * (w - columns(cell)) for cell, w in zip(row[:-1], widths))
             + "  " + row[-1] for row in [header, *body]]
    for row in rows:  # a run with follow-ups approved: its chain, under the table
        lines += [f"{row['run_id']}: {line.strip()}" for line in chain_lines(row.get("chain"), lang)]
    if answer.get("scheduler") == "absent":
        lines.append(t("runs.no_slurm", lang))
    elif answer.get("scheduler") in ("error", "partial"):
        lines.append(t(f"runs.squeue_{'failed' if answer['scheduler'] == 'error' else 'partial'}",
                       lang, problem=_in_lang(
            answer.get("problem", ""), answer.get("problem_message"), lang)))
    return "\n".join(lines)


def cost_cell(row: dict[str, Any], lang: str) -> str:
    """Node-hours used (``?`` when SLURM did not say) and the LLM's cost where ARI recorded it."""
    hours = "?" if row.get("node_hours") is None else hours_text(row["node_hours"])
    if row.get("llm_cost_usd") is None:
        return t("runs.cost_cell", lang, hours=hours)
    return t("runs.cost_cell_llm", lang, hours=hours, usd=usd_text(row["llm_cost_usd"]))


def _resources(partition: Any, nodes: Any, cpus: Any, gpus: Any, walltime: Any, lang: str) -> str:
    unknown = t("runs.jobs.not_approved", lang)
    return t("runs.jobs.resources", lang, **{
        name: unknown if value in (None, "") else value for name, value in (
            ("partition", partition), ("nodes", nodes), ("cpus", cpus), ("gpus", gpus),
            ("walltime", walltime))})


def envelope_lines(job: dict[str, Any], envelope: dict[str, Any] | None, lang: str) -> list[str]:
    """What the job asks, what the user approved for its kind, and what is outside."""
    if not job.get("partition") and not job.get("outside"):
        return []  # squeue did not say (sacct's rows, older recordings)
    try:
        gpus = gpus_per_node(job.get("tres_per_node", ""))
    except ValueError:
        gpus = job.get("tres_per_node")
    lines = [t("runs.jobs.asks", lang, resources=_resources(
        job["partition"], job["nodes"], job.get("cpus_per_node"), gpus, job.get("time_limit"), lang))]
    approved = (envelope or {}).get(job.get("kind", ""))
    if approved:
        lines.append(t("runs.jobs.approved", lang, kind=say(
            {"message_id": f"runs.envelope.kind.{job['kind']}"}, lang), resources=_resources(
            approved["partition"], approved["nodes"], approved["cpus_per_node"],
            approved["gpus_per_node"], approved["walltime"], lang)))
    if job.get("outside"):
        lines.append(t("runs.jobs.outside", lang, over=say([o["said"] for o in job["outside"]], lang)))
    return lines


def jobs_text(jobs: dict[str, Any], tail_lines: int = 5, lang: str = "en",
              envelope: dict[str, Any] | None = None) -> list[str]:
    lines = []
    if jobs["scheduler"] == "absent" and not jobs.get("problem"):
        lines.append(t("runs.jobs.no_squeue", lang))
    elif jobs["scheduler"] in ("absent", "error", "partial"):  # why: squeue missing, failing, cut
        lines.append(t("runs.jobs.error", lang,
                       problem=_in_lang(jobs["problem"], jobs.get("problem_message"), lang)))
    listed = jobs["scheduler"] not in ("absent", "error")  # a partial answer lists what it read
    if listed and not jobs["jobs"] and jobs["scheduler"] != "partial":
        lines.append(t("runs.jobs.demo_none" if jobs["scheduler"] == "recording" else "runs.jobs.none", lang))
    elif listed and jobs["jobs"]:
        recorded = "runs.jobs.recorded_header" + ("_accounted" if jobs.get("accounting") == "yes" else "")
        lines.append(t(recorded if jobs["scheduler"] == "recording" else "runs.jobs.header", lang))
        for job in jobs["jobs"]:
            lines.append(t("runs.jobs.row", lang, **{k: job[k] for k in (
                "job_id", "name", "state", "elapsed", "nodes", "where", "kind")}))
            if job.get("pending"):  # why it waits, when it may start, what the user can do
                lines.append("    " + say(job["pending"], lang))
            if job.get("exit_code") and job.get("source") == "sacct":  # it ended: how, from accounting
                lines.append(t("runs.acct.ended", lang, state=job["state"], exit_code=job["exit_code"]))
            if job.get("cancelled_by"):  # who: the checkpoint's cancel record
                lines.append("    " + say(job["cancelled_by"], lang))
            lines += envelope_lines(job, envelope, lang)
            if job["output"]:
                lines.append(t("runs.jobs.output", lang, path=job["output"]))
            lines += [f"    | {line}" for line in job["tail"][-tail_lines:]]
    if jobs["accounting"] == "no":
        lines.append(t("runs.jobs.no_accounting", lang))
    return lines


def findings_text(findings: Iterable[dict[str, Any]], lang: str = "en") -> list[str]:
    """Each finding (the JSON of ``Finding.to_json``) in ``lang`` when it has a message id."""
    lines = []
    for finding in findings:
        params = dict(finding.get("params") or {})
        translated = lang != "en"  # English is the answer's own text
        message = (t(finding["message_id"], lang, **params) if translated and finding.get("message_id")
                   else finding["message"])
        fix = t(finding["fix_id"], lang, **params) if translated and finding.get("fix_id") else finding["fix"]
        severity = finding["severity"] if lang == "en" else t(f"doctor_severity_{finding['severity']}", lang)
        lines.append(f"  {severity}: {message} [{finding['rule']}]")
        if fix:
            lines.append("    " + t("cli.fix_line", lang, fix=fix))
    return lines


def phase_text(phase: str, lang: str = "en") -> str:
    """The phase's name in ``lang``, as the Runs panel says it ("not started", never the
    JSON's ``not-started``); a phase the catalog does not know stays as it is."""
    try:
        return t(f"runs.phase.{phase}", lang)
    except KeyError:
        return phase


def stage_text(stage: str, lang: str = "en") -> str:
    return t("runs.status.stage", lang, stage=stage) if stage else ""


def nodes_line(status: dict[str, Any]) -> dict:
    """The search nodes' counts and the best metric (``runs.status.nodes``), as a message."""
    nodes = status["nodes"]
    return message("runs.status.nodes_one" if nodes["total"] == 1 else "runs.status.nodes",
                   total=nodes["total"], done=nodes["done"], failed=nodes["failed"],
                   running=nodes["running"], best=best_text(status["best_metric"]))


def _in_lang(english: str, said: dict[str, Any] | None, lang: str) -> str:
    """A sentence of the answer in ``lang``; English keeps the answer's own text."""
    return english if lang == "en" else render_message(english, said, lang)


def chain_lines(chain: dict[str, Any] | None, lang: str) -> list[str]:
    """The run's follow-up allocations (``runs.chain.chain_text``), the links indented."""
    said = chain_text(chain, lang)
    return said[:1] + [f"  {line}" for line in said[1:]]


def _moment(at: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(at)
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def history_lines(status: dict[str, Any], lang: str = "en", now: datetime | None = None) -> list[str]:
    """When the run entered each phase (``phase_history``, read from its files), in this
    machine's local time, each with how long it lasted (the current one: since when)."""
    entries = [(e, _moment(e.get("at", ""))) for e in status.get("phase_history") or ()]
    entries = [(e, moment) for e, moment in entries if moment is not None]
    if not entries:
        return []
    lines = [t("runs.status.history", lang)]
    for i, (entry, moment) in enumerate(entries):
        said = {"at": moment.astimezone().strftime("%Y-%m-%d %H:%M:%S"),
                "phase": phase_text(entry["phase"], lang)}
        if i + 1 < len(entries):
            seconds = (entries[i + 1][1] - moment).total_seconds()
            lines.append(t("runs.status.history_entry", lang, **said,
                           lasted=say(idle_duration(max(0, round(seconds))), lang)))
        elif status.get("active"):
            seconds = ((now or datetime.now(timezone.utc)) - moment).total_seconds()
            lines.append(t("runs.status.history_since", lang, **said,
                           lasted=say(idle_duration(max(0, round(seconds))), lang)))
        else:
            lines.append(t("runs.status.history_last", lang, **said))
    return lines


def status_text(status: dict[str, Any], log_lines: int = 15, lang: str = "en") -> str:
    """``ari-jupyter status`` in ``lang``: labels and notes from the catalog, log lines as ARI wrote them."""
    title = f"  \"{status['title']}\"" if status["title"] else ""
    notes = status.get("note_messages") or [None] * len(status["notes"])
    lines = [t("runs.status.run", lang, run_id=status["run_id"], title=title),
             t("runs.status.checkpoint", lang, path=status["checkpoint_dir"]),
             t("runs.status.phase", lang, phase=phase_text(status["phase"], lang),
               stage=stage_text(status["stage"], lang)),
             say(nodes_line(status), lang),
             t("runs.status.process", lang,
               process=_in_lang(status["process"], status.get("process_message"), lang))]
    lines += history_lines(status, lang)
    lines += [t("runs.status.note", lang, note=_in_lang(note, message, lang))
              for note, message in zip(status["notes"], notes)]
    lines += jobs_text(status["jobs"], lang=lang, envelope=status.get("envelope"))
    lines += ledger_lines(status.get("ledger"), lang)  # the newer ARI's submission ledger
    lines += chain_lines(status.get("chain"), lang)  # the follow-up allocations
    if status.get("cost"):  # node-hours per job kind, ARI's LLM use per phase and model
        lines.append(t("runs.status.cost", lang))
        lines += ["  " + say(line, lang) for line in status["cost"]["said"]]
    if status["findings"]:
        lines.append(t("runs.status.findings", lang))
        lines += findings_text(status["findings"], lang)
    if status["log_tail"]:
        lines.append(t("runs.status.log", lang, path=status["log_file"]))
        lines += [f"  {line}" for line in status["log_tail"][-log_lines:]]
    return "\n".join(lines)
