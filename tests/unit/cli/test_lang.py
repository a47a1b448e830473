"""--lang on every command: the sentences in Japanese or Chinese, --json in English plus ids."""
import json
import re

import pytest

from ari_jupyter.cli import build_parser, main
from ari_jupyter.wizard.config import AriWizard, open_host
from ari_jupyter.slurm.allocation import Allocation
from ari_jupyter.hosts.host import list_sites
from ari_jupyter.probes import ProbeContext, run_probes_sync
from widget_text import english_sentences

CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def test_every_command_takes_lang():
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    assert len(subparsers.choices) >= 6
    for name, sub in subparsers.choices.items():
        assert any("--lang" in a.option_strings for a in sub._actions), name


@pytest.mark.parametrize("site", list_sites())
def test_every_probe_result_on_a_demo_site_has_its_english_text_from_the_catalog(site):
    host = open_host(site, AriWizard())
    ctx = ProbeContext(allocation=Allocation.from_env(host.env), timeout=20,
                       workspace=AriWizard().workspace_for_host(host))
    for result in run_probes_sync(host, ctx):
        assert result.message_id, (site, result.id, result.summary)
        assert result.text("en") == result.summary, (site, result.id)
        assert not result.fix or result.fix_text("en") == result.fix, (site, result.id)
        for lang in ("ja", "zh"):
            assert CJK.search(result.text(lang)), (site, result.id, lang)
            if result.fix:
                assert CJK.search(result.fix_text(lang)), (site, result.id, lang)


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_probe_prints_every_line_in_the_chosen_language(lang, capsys):
    main(["probe", "--site", "rccs-cloud", "--lang", lang])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(lines) >= 11
    for line in lines:
        assert CJK.search(line), line
    assert english_sentences(lines) == []  # no English clause left inside a translated line


def test_lang_defaults_to_the_locale(capsys, monkeypatch):
    monkeypatch.setenv("LC_ALL", "ja_JP.UTF-8")
    main(["probe", "--site", "sx40"])
    assert capsys.readouterr().out.startswith("デモサイト sx40")
    monkeypatch.setenv("LC_ALL", "C")
    main(["probe", "--site", "sx40"])
    assert capsys.readouterr().out.startswith("probing demo site sx40")


def test_json_keeps_english_and_adds_message_ids(capsys):
    main(["probe", "--site", "rccs-cloud", "--lang", "ja", "--json"])
    probes = json.loads(capsys.readouterr().out)["probes"]
    time_left = next(p for p in probes if p["id"] == "time_left")
    assert time_left["summary"] == "job 1027 has 3:12:45 left"
    assert time_left["message_id"] == "probe.time_left.ok"
    assert time_left["params"] == {"job": "1027", "left": "3:12:45"}


def test_emit_refusal_is_printed_in_the_chosen_language(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    code = main(["emit", "--site", "rccs-cloud", "--title", "t", "--goal", "g", "--metric", "m",
                 "--walltime", "06:00:00", "--lang", "ja"])
    err = capsys.readouterr().err
    assert code == 1
    assert "チェックポイントを書き出せません" in err and "「制限時間」を 01:00:00 以下に" in err


@pytest.mark.parametrize("lang, said", [
    ("ja", "シンボリックリンクです"), ("zh", "是符号链接"), ("en", "is a symbolic link"),
])
def test_emit_refusing_a_link_in_the_workspace_says_so_in_the_chosen_language(
        lang, said, capsys, tmp_path):
    """A refusal deep in the writer (a link where a folder belongs) speaks as the rest does."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "checkpoints").symlink_to(tmp_path)
    code = main(["emit", "--site", "sx40", "--workspace", str(workspace), "--force", "--title",
                 "t", "--goal", "g", "--metric", "m", "--walltime", "00:10:00", "--max-cpus",
                 "1", "--no-probes", "--run-id", "20261201000000_t", "--lang", lang])
    err = capsys.readouterr().err
    assert code == 1
    assert said in err and str(workspace / "checkpoints") in err, err
    assert not (tmp_path / "20261201000000_t").exists()  # nothing written through the link


def _translated_lines(out: str) -> list[str]:
    """The printed lines a person reads: commands (indented shell lines) left out."""
    return [line for line in out.splitlines()
            if line.strip() and not re.match(r"\s+(ari viz|ssh|bash) ", line)]


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_check_handoff_prints_every_check_and_step_in_the_chosen_language(
        lang, demo_checkpoint, capsys, monkeypatch):
    home, checkpoint = demo_checkpoint
    monkeypatch.setenv("HOME", str(home))
    capsys.readouterr()
    assert main(["check-handoff", str(checkpoint), "--site", "rccs-cloud", "--lang", lang]) == 0
    lines = _translated_lines(capsys.readouterr().out)
    assert len(lines) >= 9 + 3 + 5  # nine checks, three step titles, their texts
    for line in lines:
        assert CJK.search(line), line
    assert english_sentences(lines) == []


def test_check_handoff_json_keeps_english_with_message_ids(demo_checkpoint, capsys, monkeypatch):
    home, checkpoint = demo_checkpoint
    monkeypatch.setenv("HOME", str(home))
    capsys.readouterr()
    main(["check-handoff", str(checkpoint), "--site", "rccs-cloud", "--lang", "ja", "--json"])
    answer = json.loads(capsys.readouterr().out)
    for check in answer["checks"]:
        assert check["message_id"] and not CJK.search(check["summary"]), check
    dashboard = answer["steps"][-1]
    assert dashboard["title"] == "Start ARI's dashboard from the notebook (optional)"
    assert dashboard["messages"]["title"] == {"message_id": "handoff.step.dashboard", "params": {}}
    assert dashboard["messages"]["warning"]["message_id"] == "handoff.dashboard.warning"


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_check_handoff_of_a_non_checkpoint_says_so_in_the_chosen_language(lang, tmp_path, capsys):
    assert main(["check-handoff", str(tmp_path), "--lang", lang]) == 1
    err = capsys.readouterr().err.strip()
    assert CJK.search(err) and english_sentences([err]) == [], err


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_the_rarer_hand_off_verdicts_render_in_the_chosen_language(lang, demo_checkpoint,
                                                                    monkeypatch, tmp_path):
    """Damaged files and exported overrides: their sentences and fixes come from the catalog."""
    import shutil

    from ari_jupyter.cli.check_handoff import report
    from ari_jupyter.checkpoint.handoff import check_handoff

    home, checkpoint = demo_checkpoint
    monkeypatch.setenv("HOME", str(home))
    copy = tmp_path / "checkpoints" / checkpoint.name
    shutil.copytree(checkpoint, copy)
    (copy / "experiment.md").write_text("edited\n", encoding="utf-8")
    env = {"ARI_PHASE1_SANDBOX": "local", "SBATCH_ACCOUNT": "other", "PATH": "/usr/bin"}
    checks = {c.id: c for c in check_handoff(copy, env=env, timeout=5)}
    rare = [checks[i] for i in ("checkpoint", "script", "env_overrides")]
    assert [c.status for c in rare] == ["fail", "fail", "warn"], [c.summary for c in rare]
    for check in rare:
        assert check.message_id and check.fix_id, check
        lines = report([check], [], lang).splitlines()
        for line in lines:
            assert CJK.search(line), line
        assert english_sentences(lines) == [], lines
    assert checks["env_overrides"].message_id == "handoff.check.env_overrides.both"


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_runs_prints_its_header_and_empty_state_in_the_chosen_language(
        lang, demo_checkpoint, capsys, tmp_path):
    home, checkpoint = demo_checkpoint
    capsys.readouterr()
    main(["runs", "--workspace", str(checkpoint.parent.parent), "--lang", lang])
    header, row = capsys.readouterr().out.splitlines()[:2]
    assert CJK.search(header) and english_sentences([header]) == [], header
    assert row.startswith(checkpoint.name)
    main(["runs", "--workspace", str(tmp_path), "--lang", lang])
    empty = capsys.readouterr().out.strip()
    assert CJK.search(empty) and english_sentences([empty]) == [], empty


@pytest.mark.parametrize("lang", ["ja", "zh"])
@pytest.mark.parametrize("case", ["failed", "interrupted-paper", "exploring"])
def test_run_findings_and_process_render_in_the_chosen_language(lang, case, tmp_path):
    """The findings `status` and the Runs panel show: catalog sentences, tool output quoted."""
    import asyncio

    from ari_jupyter.cli._runs_text import findings_text
    from ari_jupyter.i18n import render
    from ari_jupyter.runs.localize import status_in_language
    from ari_jupyter.ari.markers import ari_process
    from ari_jupyter.runs.service import status_json
    from runs_support import copy_case

    checkpoint = copy_case(case, tmp_path)
    status = asyncio.run(status_json(checkpoint))
    assert status["findings"], case
    lines = findings_text(status["findings"], lang)
    for line in lines:
        assert CJK.search(line), line
    assert english_sentences(lines) == [], lines
    process = render(ari_process(checkpoint).why, lang)
    assert CJK.search(process) and english_sentences([process]) == [], process
    # The Runs panel gets the answer through JSON: nested sentences keep their ids on the way.
    served = status_in_language(json.loads(json.dumps(status)), lang)
    shown = [f["message"] for f in served["findings"]] + [f["fix"] for f in served["findings"]]
    shown += [served["process"], *served["notes"], served["jobs"]["problem"]]
    assert english_sentences([s for s in shown if s]) == [], shown


@pytest.mark.parametrize("lang", ["ja", "zh"])
@pytest.mark.parametrize("fix_id, params, command", [
    ("probe.shared_fs.node_local.fix", {"mounts": "/home, /work", "example": "/work/$USER/ari"},
     "`ari-jupyter emit --workspace /work/$USER/ari ...`"),
    ("probe.shared_fs.node_local.fix_ask", {}, "`ari-jupyter emit --workspace <"),
])
def test_check_handoff_names_emit_in_a_translated_shared_fs_fix(lang, fix_id, params, command):
    """The probe's fixes say --checkpoint-dir (a probe flag) in every language; check-handoff
    points at emit instead, as it does in English."""
    from ari_jupyter.cli._flags import speak
    from ari_jupyter.i18n import t

    spoken = speak("check-handoff", t(fix_id, lang, **params))
    assert "--checkpoint-dir" not in spoken, spoken
    assert command in spoken, spoken


def _renamed(checkpoint):
    """A copied run: tree.json still names the old run id."""
    return checkpoint.rename(checkpoint.with_name("20261201090000_copied_run"))


def _tree_cut(checkpoint):
    """tree.json cut in half (ARI writing it): the nodes come from nodes_tree.json."""
    text = (checkpoint / "tree.json").read_text()
    (checkpoint / "tree.json").write_text(text[: len(text) // 2])
    return checkpoint


DAMAGE = {"failed": _renamed, "exploring": _tree_cut}


@pytest.mark.parametrize("lang", ["ja", "zh"])
@pytest.mark.parametrize("case", ["failed", "interrupted-paper", "exploring", "not-started"])
def test_status_prints_labels_and_notes_in_the_chosen_language(lang, case, tmp_path, capsys,
                                                               monkeypatch):
    """Every line of `status` a person reads is translated; the log tail stays as ARI wrote it."""
    from runs_support import copy_case

    monkeypatch.setenv("PATH", "/nonexistent")  # no squeue: the jobs line says so
    checkpoint = DAMAGE.get(case, lambda c: c)(copy_case(case, tmp_path))
    main(["status", str(checkpoint), "--lang", lang])
    out = capsys.readouterr().out.splitlines()
    log_at = next((i for i, line in enumerate(out) if line.startswith(("ログ（", "日志（"))), len(out))
    lines = [line for line in out[:log_at + 1] if line.strip()]
    assert len(lines) >= 6, out
    for line in lines:
        assert CJK.search(line), line
    assert english_sentences(lines) == [], lines
    assert sum(line.startswith(("注記", "注：")) for line in lines) == (case in DAMAGE), lines


def test_status_json_keeps_english_notes_with_message_ids(tmp_path, capsys, monkeypatch):
    from runs_support import copy_case

    monkeypatch.setenv("PATH", "/nonexistent")
    checkpoint = _renamed(copy_case("failed", tmp_path))
    main(["status", str(checkpoint), "--lang", "ja", "--json"])
    status = json.loads(capsys.readouterr().out)
    assert [m["message_id"] for m in status["note_messages"]] == ["runs.note.renamed"]
    assert status["notes"][0].startswith("tree.json names run ") and not CJK.search(status["notes"][0])
    assert status["note_messages"][0]["params"]["run_id"] == "20261201090000_copied_run"


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_status_of_a_non_checkpoint_says_so_in_the_chosen_language(lang, tmp_path, capsys):
    for target in (tmp_path, tmp_path / "missing"):
        assert main(["status", str(target), "--lang", lang]) == 1
        err = capsys.readouterr().err.strip()
        assert CJK.search(err) and english_sentences([err]) == [], err


@pytest.mark.parametrize("lang, hint", [
    ("en", "JupyterLab's own options go after --: ari-jupyter lab -- --no-browser --port 9999"),
    ("zh", "JupyterLab 自己的选项请写在 -- 之后：ari-jupyter lab -- --no-browser --port 9999"),
])
def test_a_jupyterlab_option_before_the_dashes_gets_the_line_that_works(lang, hint, capsys):
    """`ari-jupyter lab --no-browser` is the mistake to expect: the error says where it goes."""
    with pytest.raises(SystemExit) as exited:
        main(["lab", "--lang", lang, "--no-browser", "--port", "9999"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == hint


def test_other_commands_get_no_jupyterlab_hint(capsys):
    with pytest.raises(SystemExit):
        main(["probe", "--no-browser"])
    assert "JupyterLab" not in capsys.readouterr().err
