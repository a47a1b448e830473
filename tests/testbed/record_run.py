"""Turn a kept whole run into the recorded run every demo site shows.

    ARI_WHOLERUN_KEEP=/var/tmp/ari-wholerun-keep python -m pytest tests/ari_real/test_ari_real_whole_run.py
    python tests/testbed/record_run.py /var/tmp/ari-wholerun-keep

The first line runs ARI for real on the 2-node test bed with SLURM accounting and keeps its
workspace, the phases ``ari-jupyter status`` saw, each distinct squeue answer, accounting's
answer for the run's jobs (``sacct.json``: the Runs panel's own sacct line, asked while the
test bed was up) and the figures; the second writes
``ari_jupyter/hosts/runs/<run_id>.json`` (the format ``hosts/recorded_run.py`` reads) and
points every bundled demo site at it (``"runs"`` in ``hosts/sites/*.json``), removing the run it
replaces. Re-run both after a new whole run.

Kept: the workspace's text files (checkpoint, tree.json, nodes_tree.json, ari.log, the hand-off
log, the BFTS jobs' outputs and evidence, the reproduce sandbox and its log, the hand-off
script, ARI's ``cost_summary.json``: its LLM use). The jobs: each distinct squeue answer, each
job as it saw itself from inside (its environment dump), for a job squeue missed or saw only
pending, and accounting's row of each (how it ended: state, exit code, elapsed seconds, nodes,
time limit), read back by ``hosts/recorded_run.py`` as a live site's sacct answer is. Left out: process ids (a recorded pid could name a live process here), lock files,
binaries (the paper's PDF, ARI's bundle) and the LLM's prompt and memory traces. Every text is
redacted (``base/redact``); a log over ``MAX_FILE`` bytes keeps its tail. The workspace's path
becomes ``@WORKSPACE@`` and the job owner ``@USER@``, filled in where the run is placed.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from ari_jupyter.base.redact import redact  # noqa: E402
from ari_jupyter.hosts.recorded_run import FORMAT, USER_TOKEN, WORKSPACE_TOKEN  # noqa: E402
from ari_jupyter.runs.jobs import SEP, SQUEUE_FIELDS  # noqa: E402
from ari_jupyter.slurm.accounting import ACCOUNT_FIELDS, parse_accounting  # noqa: E402
from ari_jupyter.slurm.cancel_record import RECORD as CANCEL_RECORD  # noqa: E402
from ari_jupyter.slurm.hostlist import compress  # noqa: E402

RUNS_DIR = REPO / "ari_jupyter" / "hosts" / "runs"
SITES_DIR = REPO / "ari_jupyter" / "hosts" / "sites"
MAX_FILE = 48 * 1024
LEFT_OUT_NAMES = {".ari_pid", ".ari_handoff_pid", "prompt_trace.jsonl", "memory_access.jsonl",
                  "cost_trace.jsonl"}
LEFT_OUT_SUFFIXES = (".pdf", ".tar.gz", ".lock", ".png", ".jpg", ".pyc")
TRIMMED_SUFFIXES = (".log", ".out", ".jsonl", ".txt")
USER_FIELD = SQUEUE_FIELDS.index("%u")
SACCT_USER_FIELD = ACCOUNT_FIELDS.index("User") - len(ACCOUNT_FIELDS)  # counted from the end: a name may hold "|"


def kept_text(path: Path) -> str | None:
    """The file's text as it will be shipped, or None when it is left out."""
    if path.name in LEFT_OUT_NAMES or path.name.endswith(LEFT_OUT_SUFFIXES) or path.is_symlink():
        return None
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(data) > MAX_FILE and path.name.endswith(TRIMMED_SUFFIXES):
        tail = text[-MAX_FILE:]
        tail = tail[tail.find("\n") + 1:]
        text = f"[recording: the first {len(data) - len(tail.encode())} bytes are left out]\n{tail}"
    return redact(text, {})


def placeholders(text: str, workspace: str) -> str:
    return text.replace(workspace, WORKSPACE_TOKEN)


def queue_rows(stdout: str, workspace: str, user: str) -> str:
    """A squeue answer with the workspace and the job owner as placeholders."""
    rows = []
    for row in stdout.splitlines():
        fields = row.split(SEP)
        # the Runs panel's format, or its first 8 fields (a run recorded before the envelope fields)
        if len(fields) in (8, len(SQUEUE_FIELDS)) and fields[USER_FIELD].strip() == user:
            fields[USER_FIELD] = USER_TOKEN
        rows.append(placeholders(redact(SEP.join(fields), {}), workspace))
    return "".join(row + "\n" for row in rows)


def accounting_rows(stdout: str, workspace: str, user: str) -> str:
    """sacct's answer (``sacct -X -P -n``, ``ACCOUNT_FIELDS``) with the workspace and the job
    owner as placeholders; every row must read back (``parse_accounting``)."""
    rows = []
    for row in stdout.splitlines():
        if not row.strip():
            continue
        fields = row.split("|")
        if fields[SACCT_USER_FIELD].strip() == user:
            fields[SACCT_USER_FIELD] = USER_TOKEN
        rows.append(placeholders(redact("|".join(fields), {}), workspace))
    text = "".join(row + "\n" for row in rows)
    read, unreadable = parse_accounting(text)
    if unreadable or not read:
        raise SystemExit(f"sacct.json: {unreadable} row(s) of {len(rows)} cannot be read back")
    return text


def jobs_seen_inside(workspace_dir: Path, original: str) -> list[dict[str, str]]:
    """Each job as it saw itself: the environment it wrote from inside (``evidence/job_env_<id>.txt``
    in its work dir; a child node inherits its parent's, so only the one written in its own
    work dir counts)."""
    jobs = {}
    for path in sorted(workspace_dir.rglob("evidence/job_env_*.txt")):
        env = dict(line.split("=", 1) for line in path.read_text(errors="replace").splitlines() if "=" in line)
        here = f"{original}/{path.parent.parent.relative_to(workspace_dir).as_posix()}"
        if env.get("PWD") != here or not env.get("SLURM_JOB_ID"):
            continue
        jobs[env["SLURM_JOB_ID"]] = {"job_id": env["SLURM_JOB_ID"], "name": env.get("SLURM_JOB_NAME", ""),
                                     "nodes": env.get("SLURM_JOB_NUM_NODES", ""),
                                     "where": env.get("SLURM_JOB_NODELIST", ""),
                                     "work_dir": placeholders(here, original)}
    return [jobs[k] for k in sorted(jobs, key=int)]


def record(kept: Path) -> Path:
    workspace_dir = kept / "workspace"
    original = (kept / "READY").read_text().strip()  # the workspace's path while it ran
    (checkpoint,) = (workspace_dir / "checkpoints").iterdir()
    run_id = checkpoint.name
    figures = json.loads((kept / "figures.json").read_text()) if (kept / "figures.json").is_file() else {}
    user = Path(original).parent.name  # the test bed's user: /home/<user>/ari
    files = {}
    for path in sorted(p for p in workspace_dir.rglob("*") if p.is_file()):
        text = kept_text(path)
        if text is not None:
            if path.name == CANCEL_RECORD:  # who cancelled: the job owner, filled in where placed
                text = text.replace(f'"user": "{user}"', f'"user": "{USER_TOKEN}"')
            files[path.relative_to(workspace_dir).as_posix()] = {
                "text": placeholders(text, original), "mtime": round(path.stat().st_mtime, 3)}
    queue = [{"t": entry["t"], "stdout": queue_rows(entry["stdout"], original, user)}
             for entry in map(json.loads, (kept / "squeue.jsonl").read_text().splitlines())]
    phases = json.loads(placeholders(redact((kept / "phases.json").read_text(), {}), original))
    sacct = json.loads((kept / "sacct.json").read_text()) if (kept / "sacct.json").is_file() else None
    reproduce_log = checkpoint / "repro_sandbox" / "reproduce.log"
    hosts = sorted(set(re.findall(r"(?m)^(?:srun|mpirun) rank \d+ of \d+ on (\S+)$",
                                  reproduce_log.read_text(errors="replace") if reproduce_log.is_file() else "")))
    recorded_at = datetime.fromtimestamp((kept / "READY").stat().st_mtime, tz=timezone.utc)
    recording = {
        "format": FORMAT, "run_id": run_id, "nodes": compress(hosts) if hosts else "",
        "recorded_at": recorded_at.isoformat(timespec="seconds"),
        "about": "ari run from the wizard's checkpoint on the project's 2-node SLURM test bed "
                 "(tests/ari_real/test_ari_real_whole_run.py), the LLM scripted "
                 "(tests/scripted_llm): BFTS jobs, then ARI's reproduce job with ranks on both nodes.",
        "accounting": ("slurmdbd: each job's row as sacct gave it once the run had ended (the Runs panel's "
                       "own sacct line); the request (partition, CPUs, TRES) as squeue showed it"
                       if sacct else "none: the test bed had no SLURM accounting storage, so there is no "
                       "sacct output; the jobs are as squeue showed them while the run went"),
        **({"sacct": accounting_rows(sacct["stdout"], original, user)} if sacct else {}),
        "figures": json.loads(placeholders(json.dumps(figures), original)),
        "phases": phases, "queue": queue, "inside": jobs_seen_inside(workspace_dir, original),
        "files": files}
    RUNS_DIR.mkdir(exist_ok=True)
    out = RUNS_DIR / f"{run_id}.json"
    out.write_text(json.dumps(recording, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    for old in RUNS_DIR.glob("*.json"):
        if old != out:
            old.unlink()
    for site in sorted(SITES_DIR.glob("*.json")):
        data = json.loads(site.read_text(encoding="utf-8"))
        data["runs"] = [run_id]
        site.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kept", type=Path, help="the ARI_WHOLERUN_KEEP folder of a whole run")
    args = parser.parse_args(argv)
    if not (args.kept / "READY").is_file():
        parser.error(f"{args.kept} holds no finished whole run (no READY)")
    out = record(args.kept)
    print(f"{out.relative_to(REPO)}: {out.stat().st_size / 1024:.0f} KB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
