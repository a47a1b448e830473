"""Helpers for the probe tests: raw command outputs from tests/fixtures/outputs/ and small
recorded sites built from them, run through the real probe runner."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ari_jupyter.slurm.allocation import Allocation
from ari_jupyter.base.mounts import Mount
from ari_jupyter.hosts.recorded_site import RecordedCommand, RecordedSite
from ari_jupyter.probes import ProbeContext, ProbeResult, run_probes_sync

OUTPUTS = Path(__file__).parent / "fixtures" / "outputs"
CAPTURED_ENVS = Path(__file__).parent / "fixtures" / "env"


def output(name: str) -> str:
    """A recorded command output, decoded the way the host decodes real output."""
    return (OUTPUTS / name).read_bytes().decode("utf-8", errors="replace")


def captured_env(name: str) -> dict[str, str]:
    """``KEY=value`` lines of an environment captured on the test bed (comments and srun
    chatter skipped)."""
    env = {}
    for line in (CAPTURED_ENVS / name).read_text().splitlines():
        if line.startswith("#") or "=" not in line or line.startswith("srun:"):
            continue
        key, value = line.split("=", 1)
        env[key] = value
    return env


def cmd(argv: Sequence[str], stdout: str = "", stderr: str = "", rc: int = 0,
        delay: float = 0.0) -> RecordedCommand:
    return RecordedCommand(tuple(argv), stdout, stderr, rc, delay)


def site(
    programs: Iterable[str] = (),
    commands: Iterable[RecordedCommand] = (),
    env: Mapping[str, str] | None = None,
    mounts: Iterable[Mount] = (),
    symlinks: Mapping[str, str] | None = None,
    name: str = "table",
) -> RecordedSite:
    """A recorded site where each named program lives in /usr/bin."""
    which = {p: (p if p.startswith("/") else f"/usr/bin/{p}") for p in programs}
    return RecordedSite(
        name=name,
        env=dict({"HOME": "/home/alice", "USER": "alice"} if env is None else env),
        mount_table=list(mounts),
        programs=which,
        commands=list(commands),
        symlinks=dict(symlinks or {}),
    )


def probe(host, probe_id: str, **context) -> ProbeResult:
    """Run one probe through the runner (own timeout, shared commands) and return its result."""
    ctx = ProbeContext(allocation=Allocation.from_env(host.env), only=[probe_id], **context)
    (result,) = run_probes_sync(host, ctx)
    assert result.id == probe_id
    return result


ALLOCATION_ENV = {
    "HOME": "/home/alice", "USER": "alice",
    "SLURM_JOB_ID": "77", "SLURM_JOB_PARTITION": "small", "SLURM_JOB_NODELIST": "n[1-2]",
    "SLURM_JOB_NUM_NODES": "2", "SLURM_NTASKS": "4", "SLURM_TASKS_PER_NODE": "3,1",
}


def said_in_every_language(result: ProbeResult) -> None:
    """The verdict and its fix read as Japanese and Chinese, not as English left in place (tool
    output quoted inside a sentence aside)."""
    import re

    from widget_text import english_sentences

    cjk = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
    assert result.message_id, result
    assert result.text("en") == result.summary and result.fix_text("en") == result.fix, result
    quoted = [line for line in result.evidence.splitlines() if line.strip()]
    for lang in ("ja", "zh"):
        said = [result.text(lang)] + ([result.fix_text(lang)] if result.fix else [])
        for sentence in said:
            assert cjk.search(sentence), (lang, sentence)
        bare = [_without(sentence, quoted) for sentence in said]
        assert english_sentences(bare) == [], (lang, said)


def _without(sentence: str, quoted: list[str]) -> str:
    for line in quoted:
        sentence = sentence.replace(line.strip(), " ")
    return sentence
