"""Every command of the command line, run in Japanese and Chinese: no English sentence is left.

One row per command (``preview sbatch`` is its own row), each run the way a user would on a
laptop with the rccs-cloud demo site: what it prints on stdout and stderr, commands, paths,
identifiers and quoted tool output aside (``widget_text.english_sentences``).
"""
from __future__ import annotations

import json
import re

import pytest

from ari_jupyter.cli import build_parser, main
from widget_text import english_sentences

CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
SHELL_LINE = re.compile(r"\s*(?:ari viz|ssh|bash|sbatch|srun|mpirun|\S*python3?)\s|\S+=\S*$|\s+ari-jupyter\s")


@pytest.fixture(scope="module")
def demo(demo_checkpoint):
    """conftest's demo checkpoint, its workspace, and a GPU profile for ``preview sbatch``."""
    home, checkpoint = demo_checkpoint
    profile = home / "gpu_profile.json"
    profile.write_text(json.dumps({"gpu_type": "a100", "gpus_per_node": 1, "cpu_bind": "cores"}))
    return {"home": home, "workspace": checkpoint.parent.parent, "checkpoint": checkpoint,
            "profile": profile}


def _rows(demo):
    ckpt = str(demo["checkpoint"])
    return {
        "allocation": (["allocation"], {}),
        "allocation (inside a job)": (["allocation"], {
            "SLURM_JOB_ID": "1027", "SLURM_JOB_NAME": "lab", "SLURM_CLUSTER_NAME": "rccs",
            "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_JOB_NUM_NODES": "2", "SLURM_NTASKS": "4",
            "SLURM_TASKS_PER_NODE": "2(x2)", "SLURM_JOB_CPUS_PER_NODE": "4(x2)",
            "SLURM_MEM_PER_NODE": "8000", "SLURM_JOB_PARTITION": "small"}),
        "allocation (malformed variables)": (["allocation"], {
            "SLURM_JOB_ID": "7", "SLURM_TASKS_PER_NODE": "2(x", "SLURM_JOB_NODELIST": "cn[1-3]",
            "SLURM_JOB_NUM_NODES": "2", "SLURM_NTASKS": "0", "SLURM_SUBMIT_DIR": "relative"}),
        "cancel": (["cancel", ckpt, "--yes"], {}),
        "cancel (not a checkpoint)": (["cancel", str(demo["home"]), "--yes"], {}),
        "doctor (missing file)": (["doctor", "/nonexistent/experiment.md"], {}),
        "lint (missing file)": (["lint", "/nonexistent/experiment.md"], {}),
        "probe (unknown site)": (["probe", "--site", "atlantis"], {}),
        "probe (unknown probe id)": (["probe", "--site", "sx40", "--only", "sbatch,foo"], {}),
        "emit (unknown preset)": (["emit", "--preset", "mpii", "--no-probes"], {}),
        "emit (missing state file)": (["emit", "--from-json", "/nonexistent/state.json"], {}),
        "emit --force (backup kept)": (["emit", "--site", "rccs-cloud", "--title", "t", "--goal", "g",
                                        "--metric", "m", "--walltime", "00:30:00", "--no-probes",
                                        "--force", "--run-id", "20261201130000_{lang}_forced"], {}),
        "check-handoff": (["check-handoff", ckpt, "--site", "rccs-cloud"], {}),
        "doctor": (["doctor", f"{ckpt}/experiment.md"], {}),
        "emit": (["emit", "--site", "rccs-cloud", "--title", "again", "--goal", "g", "--metric", "m",
                  "--walltime", "00:30:00", "--llm-backend", "ollama", "--no-probes",
                  "--run-id", "20261201120000_{lang}"], {}),
        "emit (checkpoint exists)": (["emit", "--site", "rccs-cloud", "--title", "t", "--goal", "g",
                                      "--metric", "m", "--walltime", "00:30:00", "--no-probes",
                                      "--run-id", demo["checkpoint"].name], {}),
        "guide": (["guide", "admin"], {}),
        "lab --print-command": (["lab", "--print-command"], {}),
        "lab (unknown site)": (["lab", "--site", "atlantis", "--print-command"], {}),
        "lessons reset": (["lessons", "reset"], {}),
        "lessons reset (unknown lesson)": (["lessons", "reset", "09"], {}),
        "lessons export": (["lessons", "export", str(demo["home"] / "handout")], {}),
        "lint": (["lint", f"{ckpt}/experiment.md"], {}),
        "preview sbatch": (["preview", "sbatch", "--repo-dir", "/tmp/repro_sandbox", "--profile",
                            str(demo["profile"]), "--gres", "no", "--bind-flags", "no",
                            "--sbatch", "yes"],
                           {"ARI_SLURM_PARTITION": "small", "ARI_SLURM_ALLOW_NO_GRES": "1"}),
        "preview sbatch (ARI refuses)": (["preview", "sbatch", "--repo-dir", "/tmp/r", "--profile",
                                          str(demo["profile"]), "--gres", "no", "--bind-flags",
                                          "no", "--sbatch", "yes"], {"ARI_SLURM_PARTITION": "small"}),
        "probe": (["probe", "--site", "rccs-cloud"], {}),
        "requeue (no queue to ask)": (["requeue", ckpt], {}),
        "follow-up (none approved)": (["follow-up", ckpt, "--after", "4242"], {}),
        "runs": (["runs", "--workspace", str(demo["workspace"])], {}),
        "site-card": (["site-card", "--site", "rccs-cloud"], {}),
        "site-card (no SLURM)": (["site-card", "--site", "laptop"], {}),
        "status": (["status", ckpt], {}),
    }


def test_every_command_has_a_row(demo):
    """A new command gets a row here, or this fails."""
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    covered = {name.split(" ")[0] for name in _rows(demo)}
    assert covered == set(commands)


@pytest.mark.parametrize("lang", ["ja", "zh"])
@pytest.mark.parametrize("row", ["allocation", "allocation (inside a job)",
                                 "allocation (malformed variables)", "cancel",
                                 "cancel (not a checkpoint)", "doctor (missing file)",
                                 "lint (missing file)", "probe (unknown site)",
                                 "probe (unknown probe id)", "emit (unknown preset)",
                                 "emit (missing state file)",
                                 "emit --force (backup kept)", "check-handoff",
                                 "doctor", "emit", "emit (checkpoint exists)", "lab --print-command", "lab (unknown site)",
                                 "lessons reset", "lessons reset (unknown lesson)",
                                 "lessons export", "lint", "preview sbatch",
                                 "preview sbatch (ARI refuses)", "probe", "requeue (no queue to ask)", "follow-up (none approved)", "runs",
                                 "site-card", "site-card (no SLURM)", "status"])
def test_the_command_prints_no_english_sentence(row, lang, demo, capsys, monkeypatch):
    argv, env = _rows(demo)[row]
    monkeypatch.setenv("HOME", str(demo["home"]))
    for name in [n for n in list(__import__("os").environ) if n.startswith(("SLURM_", "ARI_"))]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    argv = [arg.format(lang=lang) for arg in argv]
    if row.startswith("emit --force"):
        main(argv + ["--lang", lang])  # the first write; the second keeps a backup and says so
    main(argv + ["--lang", lang])
    out = capsys.readouterr()
    lines = [line for line in (out.out + out.err).splitlines()
             if line.strip() and not SHELL_LINE.match(line) and not line.startswith("    |")]
    assert not lines or any(CJK.search(line) for line in lines), (row, out)
    assert english_sentences(lines) == [], lines


@pytest.mark.parametrize("lang, first", [("en", "[ok  ] checkpoint: "), ("ja", "[OK] チェックポイント: "),
                                         ("zh", "[正常] 检查点：")])
def test_check_handoff_names_its_checks_in_the_language(lang, first, demo, capsys, monkeypatch):
    """The check names too ("api_key", "shared_fs" read as code in a Chinese report); English
    keeps the ids, which scripts grep."""
    monkeypatch.setenv("HOME", str(demo["home"]))
    main(["check-handoff", str(demo["checkpoint"]), "--site", "rccs-cloud", "--lang", lang])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")]
    assert lines[0].startswith(first), lines[0]
    if lang != "en":
        ids = r"(checkpoint|script|checkpoint_env|env_overrides|api_key|shared_fs|ari|modules)"
        assert not [line for line in lines if re.match(rf"\[[^]]+\] {ids}[:：] ", line)], lines


def test_lang_may_come_before_the_command(capsys):
    main(["--lang", "ja", "probe", "--site", "sx40"])
    assert capsys.readouterr().out.startswith("デモサイト sx40")
    main(["preview", "--lang", "ja", "sbatch", "--repo-dir", "/tmp/r", "--gres", "no",
          "--bind-flags", "no", "--sbatch", "yes"])
    assert CJK.search(capsys.readouterr().err)


@pytest.mark.parametrize("argv", [["probe", "--site", "sx40"], ["probe", "--site", "rccs-cloud"]])
@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_the_probe_columns_line_up_in_cjk(argv, lang, capsys):
    """スキップ is eight terminal columns, and the checks are named as the wizard names them
    (共有ファイルシステム is 20): every name, and every verdict, starts in the same column."""
    from ari_jupyter.cli._columns import columns
    from ari_jupyter.cli.probe import check_name
    from ari_jupyter.probes import PROBE_IDS as PROBES

    main(argv + ["--lang", lang])
    out = capsys.readouterr().out
    names = sorted((check_name(p, lang) for p in PROBES), key=len, reverse=True)
    rows = [line for line in out.splitlines()
            if not line.startswith(" ") and any(f" {name} " in line for name in names)]
    assert len(rows) >= 8
    name_starts, text_starts = set(), set()
    for line in rows:
        name = next(name for name in names if f" {name} " in line)
        at = line.index(f" {name} ") + 1
        after = line[at + len(name):]
        name_starts.add(columns(line[:at]))
        text_starts.add(columns(line[:at + len(name) + len(after) - len(after.lstrip())]))
    assert len(name_starts) == 1 and len(text_starts) == 1, rows
    assert "shared_fs" not in out and check_name("shared_fs", lang) in out
