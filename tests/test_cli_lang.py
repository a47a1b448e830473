"""--lang on every command: the sentences in Japanese or Chinese, --json in English plus ids."""
import json
import re

import pytest

from ari_jupyter.cli import build_parser, main
from ari_jupyter.config import AriWizard, open_host
from ari_jupyter.allocation import Allocation
from ari_jupyter.host import list_sites
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
