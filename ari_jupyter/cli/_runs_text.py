"""Plain-text rendering of the run answers for ``ari-jupyter runs|status|cancel``."""
from __future__ import annotations

from typing import Any, Iterable


def nodes_text(nodes: dict[str, int]) -> str:
    return (f"{nodes['total']} nodes: {nodes['done']} done, {nodes['failed']} failed, "
            f"{nodes['running']} running")


def best_text(best: dict[str, Any] | None) -> str:
    return f"{best['name']} = {best['value']:g} ({best['node_id']})" if best else "-"


_HEADER = ("run", "phase", "nodes", "best", "jobs", "updated", "title")


def runs_table(answer: dict[str, Any], lang: str = "en") -> str:
    from ..i18n import t

    rows = answer["runs"]
    if not rows:
        return t("runs.none", lang, path=f"{answer['workspace']}/checkpoints")
    header = tuple(t(f"runs.header.{name}", lang) for name in _HEADER)
    body = [(r["run_id"], r["phase"],
             f"{r['nodes']['done']}/{r['nodes']['failed']}/{r['nodes']['running']}/{r['nodes']['total']}",
             best_text(r["best_metric"]), str(r["jobs"]), r["updated_at"][:19], r["title"])
            for r in rows]
    widths = [max(_width(row[i]) for row in [header, *body]) for i in range(len(header) - 1)]
    lines = ["  ".join(cell + " " * (w - _width(cell)) for cell, w in zip(row[:-1], widths))
             + "  " + row[-1] for row in [header, *body]]
    if answer.get("scheduler") == "absent":
        lines.append(t("runs.no_slurm", lang))
    return "\n".join(lines)


def _width(cell: str) -> int:
    """Terminal columns: CJK characters take two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in cell)


def jobs_text(jobs: dict[str, Any], tail_lines: int = 5) -> list[str]:
    lines = []
    if jobs["scheduler"] == "absent":
        lines.append("jobs: unknown (no squeue on this machine)")
    elif jobs["scheduler"] == "error":
        lines.append(f"jobs: unknown ({jobs['problem']})")
    elif not jobs["jobs"]:
        lines.append("jobs: none of this run's in the queue")
    else:
        lines.append("jobs:")
        for job in jobs["jobs"]:
            lines.append(f"  {job['job_id']}  {job['name']}  {job['state']}  {job['elapsed']}  "
                         f"{job['nodes']} node(s) {job['where']}  [{job['kind']}]")
            if job["output"]:
                lines.append(f"    output: {job['output']}")
            lines += [f"    | {line}" for line in job["tail"][-tail_lines:]]
    if jobs["accounting"] == "no":
        lines.append("  (no SLURM accounting here: finished jobs are not listed)")
    return lines


def findings_text(findings: Iterable[dict[str, Any]], lang: str = "en") -> list[str]:
    """Each finding (the JSON of ``Finding.to_json``) in ``lang`` when it has a message id."""
    from ..i18n import t

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
            lines.append(f"    {t('cli.fix', lang)} {fix}")
    return lines


def status_text(status: dict[str, Any], log_lines: int = 15, lang: str = "en") -> str:
    title = f"  \"{status['title']}\"" if status["title"] else ""
    stage = f" (stage {status['stage']})" if status["stage"] else ""
    lines = [f"run {status['run_id']}{title}",
             f"checkpoint: {status['checkpoint_dir']}",
             f"phase: {status['phase']}{stage}",
             f"{nodes_text(status['nodes'])}; best: {best_text(status['best_metric'])}",
             f"ARI: {status['process']}"]
    lines += [f"note: {note}" for note in status["notes"]]
    lines += jobs_text(status["jobs"])
    if status["findings"]:
        lines.append("findings:")
        lines += findings_text(status["findings"], lang)
    if status["log_tail"]:
        lines.append(f"log ({status['log_file']}):")
        lines += [f"  {line}" for line in status["log_tail"][-log_lines:]]
    return "\n".join(lines)
