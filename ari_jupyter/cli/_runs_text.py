"""Plain-text rendering of the run answers for ``ari-jupyter runs|status|cancel``."""
from __future__ import annotations

from typing import Any, Iterable


def nodes_text(nodes: dict[str, int]) -> str:
    return (f"{nodes['total']} nodes: {nodes['done']} done, {nodes['failed']} failed, "
            f"{nodes['running']} running")


def best_text(best: dict[str, Any] | None) -> str:
    return f"{best['name']} = {best['value']:g} ({best['node_id']})" if best else "-"


def runs_table(answer: dict[str, Any]) -> str:
    rows = answer["runs"]
    if not rows:
        return f"no runs under {answer['workspace']}/checkpoints"
    header = ("RUN", "PHASE", "NODES d/f/r/total", "BEST", "JOBS", "UPDATED", "TITLE")
    body = [(r["run_id"], r["phase"],
             f"{r['nodes']['done']}/{r['nodes']['failed']}/{r['nodes']['running']}/{r['nodes']['total']}",
             best_text(r["best_metric"]), str(r["jobs"]), r["updated_at"][:19], r["title"])
            for r in rows]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header) - 1)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row[:-1], widths)) + "  " + row[-1]
             for row in [header, *body]]
    if answer.get("scheduler") == "absent":
        lines.append("(no SLURM here: jobs are not listed)")
    return "\n".join(lines)


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


def findings_text(findings: Iterable[dict[str, Any]]) -> list[str]:
    lines = []
    for finding in findings:
        lines.append(f"  {finding['severity']}: {finding['message']} [{finding['rule']}]")
        if finding["fix"]:
            lines.append(f"    fix: {finding['fix']}")
    return lines


def status_text(status: dict[str, Any], log_lines: int = 15) -> str:
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
        lines += findings_text(status["findings"])
    if status["log_tail"]:
        lines.append(f"log ({status['log_file']}):")
        lines += [f"  {line}" for line in status["log_tail"][-log_lines:]]
    return "\n".join(lines)
