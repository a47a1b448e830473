"""The chain of follow-up allocations of one run: its record, the next link, what it shows.

The approved count and the envelope are the ones recorded at Write (``launch_config.json``'s
saved state, hashed with the follow-up script); each follow-up submitted is recorded in the
checkpoint's ``followups.json`` (``ari.followup.CHAIN_FILE``) by an atomic write under a lock
on the checkpoint, so two links never both take the last approved follow-up. The rules are
``ari.followup``'s; this module asks the checkpoint and SLURM.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from ..ari.followup import (CHAIN_FILE, FOLLOWUP_SCRIPT, Envelope, FollowupError, envelope_problem,
                            followup_environment, next_step, sbatch_argv)
from ..ari.render import LAUNCH_CONFIG_KEY
from ..ari.run_settings import RunSettings, api_key_status
from ..base.files import atomic_write
from ..hosts.host import Host, LocalHost
from ..i18n import DEFAULT_LANGUAGE, t
from ..wizard.run_settings_view import ari_default_llm
from .accounting import recorded_links
from .jobs import Job, JobsView
from .reading import read_json

SBATCH_TIMEOUT = 60.0


@dataclass(frozen=True)
class Link:
    """One follow-up job: its id and the job it waits for (afterany)."""

    job_id: str
    after: str
    submitted_at: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"job_id": self.job_id, "after": self.after, "submitted_at": self.submitted_at}


@dataclass(frozen=True)
class Chain:
    approved: int
    envelope: Envelope | None
    links: tuple[Link, ...] = ()
    script_sha256: str = ""
    """The follow-up script's hash recorded at Write ("" when none was written)."""
    run_settings: RunSettings = RunSettings()
    """The run settings saved at Write (which LLM backend, hence which key the run needs)."""

    @property
    def used(self) -> int:
        return len(self.links)


def read_chain(checkpoint: Path) -> Chain:
    """What Write approved and what was submitted since (0 approved: no chain)."""
    config = read_json(checkpoint / "launch_config.json", 1024 * 1024).data
    section = config.get(LAUNCH_CONFIG_KEY) if isinstance(config, dict) else None
    state = section.get("state") if isinstance(section, dict) else None
    if not isinstance(state, dict):
        return Chain(0, None)
    approved = state.get("followups")
    if isinstance(approved, bool) or not isinstance(approved, int) or approved < 1:
        return Chain(0, None)
    nodes = state.get("nodes")
    envelope = Envelope(str(state.get("partition") or ""),
                        nodes if isinstance(nodes, int) and not isinstance(nodes, bool) and nodes > 0 else 1,
                        str(state.get("walltime") or ""))
    hashes = section.get("files_sha256") if isinstance(section.get("files_sha256"), dict) else {}
    links = [Link(raw["job_id"], raw["after"], raw["submitted_at"]) for raw in recorded_links(checkpoint)]
    try:
        settings = RunSettings.from_json(state.get("run_settings") or {})
    except ValueError:
        settings = RunSettings()
    return Chain(approved, envelope, tuple(links), str(hashes.get(FOLLOWUP_SCRIPT, "")), settings)


@dataclass(frozen=True)
class Submitted:
    """The outcome: ``result`` is "submitted", "finished", "exhausted" or "refused"."""

    result: str
    message_id: str
    params: dict[str, Any]
    job_id: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"result": self.result, "message_id": self.message_id, "params": self.params,
                "job_id": self.job_id}


def _refused(detail: str) -> Submitted:
    return Submitted("refused", "followup.refused", {"detail": detail})


def key_left_behind(chain: Chain, checkpoint: Path, environ: Mapping[str, str]) -> str:
    """The key variable the run's backend needs when it is set in ``environ`` (the submitting
    shell) but in no .env file ari reads in the follow-up, which is not given the shell's
    secrets (``ari.followup.followup_environment``); "" when the follow-up would find it, or
    when the shell has none to leave behind."""
    backend = chain.run_settings.llm_backend or ari_default_llm(environ)[0]
    here = api_key_status(chain.run_settings, environ, checkpoint_dir=str(checkpoint), default_backend=backend)
    if here.source != "environment":
        return ""
    there = api_key_status(chain.run_settings, followup_environment(environ), checkpoint_dir=str(checkpoint),
                           default_backend=backend)
    return "" if there.is_set else here.variable


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


async def submit_next(checkpoint: str | Path, after: str, host: Host | None = None, *,
                      finished: bool = False) -> Submitted:
    """Submit the chain's next follow-up, to start once job ``after`` has ended, or say why
    not: the search is ``finished``, every approved follow-up was submitted, or something of
    the chain cannot be trusted (no envelope sbatch takes, a follow-up script changed since
    Write). The record and the count are changed only after sbatch answered a job id."""
    path = Path(checkpoint).expanduser().absolute()
    host = host or LocalHost()
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # one link at a time: the count is read and written under it
        chain = read_chain(path)
        if chain.envelope is None:
            return Submitted("refused", "followup.refused.none_approved", {})
        step = next_step(chain.approved, chain.used, finished)
        if step == "finished":
            return Submitted("finished", "followup.finished", {})
        if step == "exhausted":
            return Submitted("exhausted", "followup.exhausted", {"used": chain.used, "approved": chain.approved})
        problem = envelope_problem(chain.envelope)
        if problem:
            return _refused(problem)
        script = path / FOLLOWUP_SCRIPT
        if not chain.script_sha256 or _sha256(script) != chain.script_sha256:
            return Submitted("refused", "followup.refused.script_changed", {"path": str(script)})
        left = key_left_behind(chain, path, host.env)
        if left:
            return Submitted("refused", "followup.refused.key_in_shell",
                             {"variable": left, "checkpoint": str(path), "after": after})
        try:
            argv = sbatch_argv(chain.envelope, after, str(script), str(path),
                               str(path / "followup_%j.out"), host.env)
        except FollowupError as exc:
            return _refused(str(exc))
        done = await host.run(argv, timeout=SBATCH_TIMEOUT)
        job_id = done.stdout.strip().split(";")[0] if done.returncode == 0 else ""
        if not job_id.isdigit():
            said = (done.output or "").strip().splitlines()
            return _refused(f"sbatch: {said[-1][-300:] if said else f'exit {done.returncode}'}")
        links = [*chain.links, Link(job_id, after, datetime.now(timezone.utc).isoformat(timespec="seconds"))]
        record = {"approved": chain.approved, "envelope": chain.envelope.to_json(),
                  "links": [link.to_json() for link in links]}
        atomic_write(path / CHAIN_FILE, (json.dumps(record, indent=2) + "\n").encode("utf-8"), 0o600)
        return Submitted("submitted", "followup.submitted",
                         {"job": job_id, "after": after, "used": len(links), "approved": chain.approved,
                          **chain.envelope.to_json()}, job_id)
    finally:
        os.close(fd)


def chain_json(checkpoint: Path, jobs: JobsView | None) -> dict[str, Any] | None:
    """The chain as status shows it: approved, used, the envelope, and each link with its
    state in the queue now, or once it left the queue how it ended as accounting has it (the
    run's one sacct line asks the chain's ids: ``runs.accounting``), "" where nothing says (a
    site without accounting) and, while it is pending, when the scheduler expects it to start (``squeue --start``,
    asked once for every pending job of the run: ``runs.pending``); None when no follow-up was
    approved."""
    chain = read_chain(checkpoint)
    if chain.envelope is None:
        return None
    queued: dict[str, Job] = {job.job_id: job for job in (jobs.jobs if jobs else ())}
    links = []
    for link in chain.links:
        job = queued.get(link.job_id)
        links.append({**link.to_json(), "state": job.state if job else "",
                      "where": job.where if job else "",
                      "expected_start": job.expected_start if job else ""})
    shown = {"approved": chain.approved, "used": chain.used, "envelope": chain.envelope.to_json(),
             "links": links}
    return {**shown, "said": chain_text(shown, DEFAULT_LANGUAGE)}


def chain_text(chain: dict[str, Any] | None, lang: str) -> list[str]:
    """The chain in words: how many of the approved follow-ups were submitted, then each link
    (the job it waits for → the follow-up: its state in the queue now, and its expected start
    while the scheduler has one)."""
    if not chain:
        return []
    lines = [t("runs.chain.summary", lang, used=chain["used"], approved=chain["approved"], **chain["envelope"])]
    for link in chain["links"]:
        state = " ".join(part for part in (link["state"], link["where"]) if part) or t("runs.chain.left", lang)
        start = link.get("expected_start") or ""
        lines.append(t("runs.chain.link_start" if start else "runs.chain.link", lang, after=link["after"],
                       job=link["job_id"], state=state, start=start))
    return lines
