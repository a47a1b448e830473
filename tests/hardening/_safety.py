"""Independent checks that rendered checkpoint text is safe and says what the state says.

Written from the shell's and ARI's rules, not from the renderer: a .env line is ``KEY=value``
with nothing bash would expand or split; every hand-off line that carries a user value splits
(POSIX rules, ``shlex``) into exactly the intended words; ARI's parsers read back the chosen
partition, CPUs, metrics and files from experiment.md.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

from ari_jupyter.ari import render
from ari_jupyter.ari.lint_experiment import parse_experiment

SHELL_SPECIAL = set(" \t\n\r\v\f;&|$`'\"\\<>()*?[]#~{}!^")
ENV_LINE = re.compile(r"^([A-Z_][A-Z0-9_]*)=(.*)$")


def env_lines_are_inert(text: str) -> dict[str, str]:
    """Parse a .env as ``set -a; . .env`` would, asserting no line can do more than assign."""
    values = {}
    for line in text.split("\n"):
        if not line or line.startswith("#"):
            continue
        match = ENV_LINE.match(line)
        assert match, f".env line is not KEY=value: {line!r}"
        key, value = match.groups()
        bad = SHELL_SPECIAL & set(value)
        assert not bad, f".env {key} carries shell syntax {sorted(bad)}: {value!r}"
        assert not any(ord(ch) < 32 or ord(ch) == 127 for ch in value), (key, value)
        values[key] = value
    return values


def handoff_words(script: str) -> dict[str, list[str]]:
    """The words of the value-carrying hand-off lines (export, module load, cd, ari run)."""
    words: dict[str, list[str]] = {}
    for line in script.split("\n"):
        for prefix in ("export ARI_CHECKPOINT_DIR=", "module load ", "cd ", "ari run "):
            if line.startswith(prefix):
                assert prefix not in words, f"two {prefix!r} lines: newline injection?"
                words[prefix] = shlex.split(line, comments=False, posix=True)
                if prefix == "module load ":  # ``module load ... || {`` says why it stopped
                    assert words[prefix][-2:] == ["||", "{"], line
                    del words[prefix][-2:]
    return words


def sourced_assignments_are_inert(text: str) -> dict[str, str]:
    """Lines a job sources with bash: each is one ``KEY=word`` (POSIX splitting), and bash
    itself, sourcing them in an empty directory, sets exactly those values and runs nothing."""
    import os
    import subprocess
    import tempfile

    expected = {}
    for line in text.split("\n"):
        if not line or line.startswith("#"):
            continue
        words = shlex.split(line, comments=False, posix=True)
        assert len(words) == 1 and ENV_LINE.match(words[0]), f"not one assignment: {line!r}"
        key, value = ENV_LINE.match(words[0]).groups()
        expected[key] = value
    with tempfile.TemporaryDirectory() as scratch:
        Path(scratch, "a.sh").write_text(text, encoding="utf-8")
        out = subprocess.run(["bash", "--noprofile", "--norc", "-c", 'set -a; . ./a.sh; env -0'],
                             cwd=scratch, capture_output=True, env={"PATH": os.defpath}, timeout=30)
        assert out.returncode == 0, out.stderr
        assert sorted(os.listdir(scratch)) == ["a.sh"], "sourcing the file ran a command"
    seen = dict(item.split("=", 1) for item in out.stdout.decode().split("\0") if "=" in item)
    assert {k: seen.get(k) for k in expected} == expected
    return expected


def check_bfts_env(text: str, state) -> None:
    """bfts_env.sh: inert assignments, then fixed module set-up and one quoted ``module load``."""
    assignments, _, rest = text.partition("\n\n")
    sourced_assignments_are_inert(assignments)
    loads = [line for line in rest.split("\n") if line.startswith("module load ")]
    if state.module_loads:
        assert len(loads) == 1, loads
        words = shlex.split(loads[0].split(" || ")[0], comments=False, posix=True)
        assert words == ["module", "load", *state.module_loads]
    else:
        assert not loads, loads


def check_handoff(script: str, state, checkpoint: str) -> None:
    words = handoff_words(script)
    assert words["export ARI_CHECKPOINT_DIR="] == ["export", f"ARI_CHECKPOINT_DIR={checkpoint}"]
    assert words["cd "] == ["cd", state.workspace]
    if state.module_loads:
        assert words["module load "] == ["module", "load", *state.module_loads]
    else:
        assert "module load " not in words
    assert words["ari run "][:2] == ["ari", "run"]
    # Every other line is fixed text: the same for any state (comments aside).
    fixed = [line for line in script.split("\n")
             if not line.startswith(("export ARI_CHECKPOINT_DIR=", "module load ", "cd ", "#"))]
    for line in fixed:
        assert "\r" not in line and "\x0b" not in line and "\x0c" not in line


def check_experiment(text: str, state) -> None:
    parsed = parse_experiment(text)
    assert parsed.partition == state.partition
    assert parsed.max_cpus == state.max_cpus
    assert parsed.primary_metric == state.metrics[0]
    assert list(parsed.evaluator_metrics) == list(state.metrics)
    assert list(parsed.provided_files) == list(state.provided_files)
    if state.min_expected_metric is not None:
        assert parsed.min_expected_metric == state.min_expected_metric


def check_rendered(state) -> dict[str, str]:
    """Render every file for ``state`` (must succeed) and check each one; returns the texts."""
    if not state.run_id:  # minted at Write, as emit does
        from datetime import datetime

        from ari_jupyter.ari.naming import make_run_id

        state.run_id = make_run_id(state.title, datetime(2025, 1, 1, 12, 0, 0))
    checkpoint = state.checkpoint_dir
    script = f"{state.workspace.rstrip('/')}/launch/{state.run_id}.sh"
    texts = {
        "experiment.md": render.render_experiment_md(state.choices()),
        ".env": render.render_env(state.choices()),
        "handoff": render.render_handoff_script(state.choices(), checkpoint, script),
    }
    values = env_lines_are_inert(texts[".env"])
    assert values["ARI_SLURM_PARTITION"] == state.partition
    if state.walltime:
        assert values["ARI_SLURM_WALLTIME"] == state.walltime
    check_handoff(texts["handoff"], state, checkpoint)
    check_experiment(texts["experiment.md"], state)
    return texts
