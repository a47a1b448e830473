"""Every message names a flag of the command that was run."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ari_jupyter
from ari_jupyter.cli import build_parser
from ari_jupyter.cli._flags import rewritten_sources, speak

EMIT = ("--title", "x", "--goal", "g", "--metric", "m", "--walltime", "00:10:00",
        "--max-cpus", "1", "--no-probes", "--run-id", "20261201000000_x")
OWN_FLAG = re.compile(r"(?<![\w`-])(--[a-z][a-z-]+)")
OTHER_PROGRAM = re.compile(r"`[^`]*`|\b(?:sbatch|srun|sinfo|ari run|ari viz|ari-jupyter \w[\w-]*)\b[^.;]*")


def flags_of(command: str) -> set[str]:
    sub = build_parser()._subparsers._group_actions[0].choices[command]
    return {option for action in sub._actions for option in action.option_strings}


def bare_flags(text: str) -> set[str]:
    """Flags named on their own, not inside a quoted command or after another program."""
    return set(OWN_FLAG.findall(OTHER_PROGRAM.sub("", text)))


def run(*argv, cwd=None):
    env = {**os.environ, "JUPYTER_CONFIG_DIR": "/nonexistent"}
    return subprocess.run([sys.executable, "-m", "ari_jupyter", *argv], capture_output=True,
                          text=True, timeout=120, env=env, cwd=cwd)


@pytest.mark.parametrize("command, text, said", [
    ("emit", "e.g. --checkpoint-dir /work/$USER/ari.", "e.g. --workspace /work/$USER/ari."),
    ("emit", "raise this probe's timeout (--timeout).", "raise this probe's timeout (--probe-timeout)."),
    ("emit", "(force writes it anyway)", "(--force writes it anyway)"),
    ("emit", "Choose another title/run id, or force an overwrite (the current files are backed up "
     "first).", "Choose another title/run id, or add --force to overwrite (the current files are "
     "backed up first)."),
    ("emit", "sbatch --timeout-ish --checkpoint-dirs", "sbatch --timeout-ish --checkpoint-dirs"),
    ("probe", "e.g. --checkpoint-dir /work/$USER/ari.", "e.g. --checkpoint-dir /work/$USER/ari."),
    ("check-handoff", "(--timeout)", "(--timeout)"),
    ("check-handoff", "at the same path, e.g. --checkpoint-dir /work/$USER/ari. (Symptom",
     "at the same path, e.g. `ari-jupyter emit --workspace /work/$USER/ari ...` (then check the "
     "new checkpoint). (Symptom"),
    ("check-handoff", "ask the site where its shared storage is, then pass that folder with "
     "--checkpoint-dir.", "ask the site where its shared storage is, then write a new checkpoint "
     "there with `ari-jupyter emit --workspace <folder> ...`."),
    ("emit", "then pass that folder with --checkpoint-dir.", "then pass that folder with --workspace."),
])
def test_speak(command, text, said):
    assert speak(command, text) == said


@pytest.mark.parametrize("command", ["emit", "check-handoff"])
def test_every_rewritten_text_still_occurs_in_the_core(command):
    """A reworded core message would silently escape the rewrite: each pattern must match."""
    source = "\n".join(p.read_text(encoding="utf-8") for p in Path(ari_jupyter.__file__).parent.rglob("*.py")
                       if "cli" not in p.parts)
    source += "\n".join(p.read_text(encoding="utf-8") for p in
                         (Path(ari_jupyter.__file__).parent / "i18n" / "messages").glob("*.json"))
    for pattern in rewritten_sources(command):
        # the core's literal strings may be split over lines: match on the joined text
        joined = re.sub(r'"\s*\n\s*(?:f?")', "", source)
        loose = pattern.replace(r"(\S+?)(?=[.,;]?(?:\s|$))", r"\S+").replace(
            r"(\S+?)(?=[。（(]|\s|$)", r"\S+")
        assert re.search(loose, joined), pattern


def test_emit_refusing_a_node_local_workspace_names_emit_flags(tmp_path):
    proc = run("emit", "--site", "sx40", "--workspace", str(tmp_path / "ws"), *EMIT)
    assert proc.returncode == 1
    assert "refusing a node-local workspace" in proc.stderr
    # the example is a folder on a network filesystem sx40 mounts, not a guess
    assert "(this node mounts /home, /work), e.g. --workspace $HOME/ari." in proc.stderr
    assert "(--force writes it anyway)" in proc.stderr
    assert bare_flags(proc.stderr) <= flags_of("emit"), proc.stderr


def test_emit_refusing_an_existing_checkpoint_names_force(tmp_path):
    from test_widgets_support import make_site

    site = str(make_site(tmp_path))  # tmp_path is on the site's shared /work
    first = run("emit", "--site", site, "--workspace", str(tmp_path / "ws"), *EMIT)
    assert first.returncode == 0, first.stderr
    again = run("emit", "--site", site, "--workspace", str(tmp_path / "ws"), *EMIT)
    assert again.returncode == 1
    assert "already exists" in again.stderr and "or add --force to overwrite" in again.stderr
    assert bare_flags(again.stderr) <= flags_of("emit"), again.stderr


def test_check_handoff_fixes_name_no_flag_it_lacks(tmp_path):
    written = run("emit", "--site", "sx40", "--workspace", str(tmp_path / "ws"), "--force", *EMIT)
    assert written.returncode == 0, written.stderr
    proc = run("check-handoff", "--site", "sx40", str(tmp_path / "ws/checkpoints/20261201000000_x"))
    assert "node-local" in proc.stdout
    assert "--checkpoint-dir" not in proc.stdout
    assert bare_flags(proc.stdout) <= flags_of("check-handoff"), proc.stdout


@pytest.mark.parametrize("argv, usage", [
    (["probe", "--sight"], "usage: ari-jupyter probe "),
    (["emit", "--titel", "x"], "usage: ari-jupyter emit "),
    (["preview", "sbatch", "--repo-dir", ".", "--bogus"], "usage: ari-jupyter preview sbatch "),
    (["--bogus"], "usage: ari-jupyter [-h]"),
])
def test_a_misspelled_option_shows_the_usage_of_its_own_command(argv, usage, capsys):
    from ari_jupyter.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(argv)
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    assert err.startswith(usage), err
    assert f"error: unrecognized arguments: {argv[-1] if argv[-1] != 'x' else '--titel'}" in err


@pytest.mark.parametrize("flags, line_starts", [
    # a field with a flag is named by the flag the user typed (not the profile key)
    (("--site", "sx40", "--nodes", "2"), ["- --nodes: 2 nodes requested"]),
    (("--site", "sx40", "--max-nodes", "0", "--parallel", "-1", "--phase-model", "foo=bar"),
     ["- --phase-model: Phase 'foo'", "- --max-nodes: ", "- --parallel: "]),
    # a profile key emit has no flag for: named with the preset that set it (sx40's one node
    # cannot hold the preset's 2 nodes x 4 ranks)
    (("--site", "sx40", "--preset", "mpi"), ["- --preset mpi (min_ranks): "]),
    # ... and by the flag when the user typed one, on a preset or on the site's default profile
    (("--site", "sx40", "--preset", "mpi", "--ranks", "2", "--tasks-per-node", "64"),
     ["- --tasks-per-node: "]),
    (("--site", "sx40", "--ranks", "500"), ["- --ranks: "]),
    (("--site", "gres-cluster", "--gpus-per-node", "1", "--gpu-type", "h100"), ["- --gpu-type: "]),
    # a module the preset loads is the preset's, not --module's (the user gave another)
    (("--site", "gres-cluster", "--preset", "mpi_gpu", "--module", "openmpi/4.1.6"),
     ["- --preset mpi_gpu (gpu_type): ", "- --preset mpi_gpu (module_loads): Module 'openmpi/4.1'"]),
    # a module the user gave is theirs
    (("--site", "gres-cluster", "--module", "nosuch/1.0"), ["- --module: Module 'nosuch/1.0'"]),
])
def test_emit_names_what_the_user_changes_for_each_problem(tmp_path, flags, line_starts):
    env = {**os.environ, "JUPYTER_CONFIG_DIR": "/nonexistent", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "ari_jupyter", "emit", "--title", "t", "--goal",
                          "g", "--metric", "m", "--lang", "en", *flags], capture_output=True,
                         text=True, timeout=120, env=env)
    assert out.returncode == 1, out.stderr
    problems = [line for line in out.stderr.splitlines() if line.startswith("- ")]
    for start in line_starts:
        assert any(line.startswith(start) for line in problems), (start, problems)
    assert not any(line.split(":")[0] in ("- requested_nodes", "- run_settings.max_nodes",
                                          "- min_ranks", "- ntasks_per_node") for line in problems)


@pytest.mark.parametrize("flags, warning", [
    (("--llm-backend", "openai", "--llm-model", "nosuch-model"),
     "warning: --llm-model: Model 'nosuch-model' is not one ARI offers for openai"),
    (("--llm-backend", "foo", "--llm-model", "bar"), "warning: --llm-backend: "),
    # the time-fit warning names the scope flags the user set, never one they did not pass
    ((), "warning: --scope-preset (not given: standard, the default): The search may need up to 16 hours"),
    (("--max-nodes", "40"), "warning: --max-nodes: The search may need up to 20 hours"),
    (("--scope-preset", "deep", "--parallel", "24"),
     "warning: --scope-preset/--parallel: The search may need up to 96 hours"),
])
def test_emit_says_the_warnings_the_wizard_shows_and_still_writes(tmp_path, flags, warning):
    env = {**os.environ, "JUPYTER_CONFIG_DIR": "/nonexistent", "HOME": str(tmp_path)}
    for json_flag, stream in (((), "stdout"), (("--json",), "stderr")):
        out = subprocess.run([sys.executable, "-m", "ari_jupyter", "emit", "--site", "rccs-cloud",
                              "--title", "t", "--goal", "g", "--metric", "m", "--walltime",
                              "00:30:00", "--lang", "en", "--force", *json_flag, *flags],
                             capture_output=True, text=True, timeout=120, env=env)
        assert out.returncode == 0, out.stderr
        assert any(line.startswith(warning) for line in getattr(out, stream).splitlines()), out


@pytest.mark.parametrize("argv, said", [
    (("probe", "--site", "laptop", "--timeout", "0"),
     "ari-jupyter probe: error: --timeout must be more than 0 and at most 600 seconds, got 0"),
    (("emit", "--site", "laptop", "--probe-timeout", "700", "--title", "t"),  # before any probe
     "ari-jupyter emit: error: --probe-timeout must be more than 0 and at most 600 seconds, got 700"),
    (("doctor", "--nodes", "-1", "/etc/hostname"),
     "ari-jupyter doctor: error: --nodes must be 1 or more, or 0 to leave it to the profile, "
     "got -1"),
    (("emit", "--site", "laptop", "--ranks", "0", "--title", "t"),
     "ari-jupyter emit: error: --ranks must be at least 1, got 0"),
    (("emit", "--site", "laptop", "--gpus-per-node", "-2", "--title", "t"),
     "ari-jupyter emit: error: --gpus-per-node must be 0 or more, got -2"),
    (("status", "--interval", "-1", "/nonexistent"),
     "ari-jupyter status: error: --interval must be more than 0 seconds, got -1"),
])
def test_a_value_out_of_range_is_a_usage_error_that_says_the_range(argv, said):
    out = run("--lang", "en", *argv)
    assert out.returncode == 2 and out.stderr.strip() == said, out.stderr
    flag = said.split("error: ")[1].split()[0]
    ja = run("--lang", "ja", *argv)
    assert ja.returncode == 2 and ja.stderr.startswith(f"ari-jupyter {argv[0]}: エラー: {flag} は ")
    assert "してください" in ja.stderr, ja.stderr


@pytest.mark.parametrize("argv, english, japanese", [
    (("probe", "--site", "sx40", "--record-site", "{tmp}/site.json"),
     "--record-site records this machine; it cannot be used with --site",
     "--record-site はこのマシンを記録します。--site と一緒には使えません"),
    (("probe", "--record-site", "{tmp}/exists.json"),
     "{tmp}/exists.json exists; use --force to replace it",
     "{tmp}/exists.json は既にあります。置き換えるには --force を付けてください"),
    (("probe", "--site", "sx40", "--partition", "a b"),
     "--partition 'a b' is not a partition name",
     "--partition 'a b' はパーティション名ではありません"),
    (("doctor", "--profile", "{tmp}/missing.json", "/etc/hostname"),
     "cannot read --profile {tmp}/missing.json: No such file or directory",
     "--profile {tmp}/missing.json を読めません: "),
])
def test_usage_errors_of_our_own_speak_the_language_as_argparses_do(argv, english, japanese, tmp_path):
    """The line a usage error prints, its word "error" included, in English and in Japanese."""
    (tmp_path / "exists.json").write_text("{}")
    argv = [arg.format(tmp=tmp_path) for arg in argv]
    for lang, word, sentence in (("en", "error: ", english), ("ja", "エラー: ", japanese)):
        out = run("--lang", lang, *argv)
        expected = f"ari-jupyter {argv[0]}: {word}{sentence.format(tmp=tmp_path)}"
        assert out.returncode == 2 and out.stderr.strip().startswith(expected), out.stderr


def test_probe_takes_the_workspace_under_emits_name_too():
    """`probe --workspace DIR` judges the same folder as `probe --checkpoint-dir DIR` (emit and
    the wizard call it the workspace)."""
    answers = []
    for flag in ("--workspace", "--checkpoint-dir"):
        proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "probe", "--site", "rccs-cloud",
                               flag, "/work/u12345/ari", "--only", "shared_fs", "--json"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        answers.append(json.loads(proc.stdout)["probes"][0]["data"])
    assert answers[0] == answers[1] and "/work/u12345/ari" in json.dumps(answers[0])
