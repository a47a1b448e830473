"""Every doctor log signature speaks en/ja/zh: the English is today's text, rendered from the
catalog, and the translations keep every quoted command, path and log line verbatim."""
from __future__ import annotations
from repo_paths import TESTS

import re

import pytest

from ari_jupyter.cli import main
from ari_jupyter.doctor import CATALOG, diagnose_text
from ari_jupyter.doctor.catalog import FIX_PARAMS, message_ids
from ari_jupyter.i18n import LANGUAGES, messages, placeholders, t

from ari_jupyter.doctor.reproduce_lint import lint_reproduce

from unit.doctor.test_catalog import POSITIVE
from unit.doctor.test_reproduce_lint import SCRIPTS as REPRODUCE_SCRIPTS, TABLE as REPRODUCE_TABLE
from widget_text import english_sentences

FIXTURES = TESTS / "fixtures" / "doctor"
_CODE = re.compile(r"`[^`]*`")


def _findings(case):
    return [f for f in diagnose_text(case.text, kind="log") if f.rule == case.rule]


@pytest.mark.parametrize("case", POSITIVE, ids=lambda c: c.id)
def test_every_positive_case_yields_a_finding_that_renders_in_every_language(case):
    (finding,) = _findings(case)
    assert finding.message_id == "doctor.log_match"
    assert finding.fix_id == message_ids(case.rule)[2]
    assert finding.text("en") == finding.message and finding.fix_text("en") == finding.fix
    for lang in ("ja", "zh"):
        text, fix = finding.text(lang), finding.fix_text(lang)
        assert text != finding.message and fix != finding.fix
        assert finding.params["example"] in text  # the quoted log line, verbatim
        assert str(finding.line) in text


@pytest.mark.parametrize("sig", CATALOG, ids=lambda s: s.rule)
def test_every_signature_has_its_english_in_the_catalog_and_keeps_its_code(sig):
    params = dict(FIX_PARAMS.get(sig.rule, {}))
    for key, english in zip(message_ids(sig.rule), (sig.symptom, sig.cause, sig.fix)):
        entry = messages()[key]
        assert set(entry) == set(LANGUAGES)
        assert t(key, "en", **params) == english
        for lang in ("ja", "zh"):
            assert entry[lang] != entry["en"], key
            assert placeholders(entry[lang]) == placeholders(entry["en"]), key
            # commands stay untranslated inside the sentence
            assert sorted(_CODE.findall(entry[lang])) == sorted(_CODE.findall(entry["en"])), key


def test_json_keeps_english_and_the_ids():
    (finding,) = diagnose_text("sbatch: error: Invalid generic resource (gres) specification\n",
                               kind="log")
    data = finding.to_json()
    assert data["message"].startswith("SLURM rejected the GPU request")
    assert data["message_id"] == "doctor.log_match" and data["fix_id"] == "doctor.gres-invalid.fix"


def test_a_redacted_log_line_stays_redacted_in_every_language():
    secret = "sk-" + "a" * 40
    text = f"litellm.APIConnectionError: Connection error key={secret}\n"
    for finding in diagnose_text(text, kind="log", env={"OPENAI_API_KEY": secret}):
        for lang in LANGUAGES:
            assert secret not in finding.text(lang)


@pytest.mark.parametrize("lang, word", [("ja", "原因"), ("zh", "原因")])
def test_doctor_lang_prints_a_captured_log_translated(lang, word, capsys):
    main(["doctor", "--lang", lang, str(FIXTURES / "testbed_capture_nogres.txt")])
    out = capsys.readouterr().out
    assert "gres-invalid" in out and word in out
    assert "SLURM rejected the GPU request" not in out and "Cause:" not in out
    assert "Invalid generic resource (gres) specification" in out  # the quoted line stays


def test_doctor_json_with_lang_keeps_english(capsys):
    main(["doctor", "--json", "--lang", "ja", str(FIXTURES / "testbed_capture_nogres.txt")])
    out = capsys.readouterr().out
    assert "SLURM rejected the GPU request" in out


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_the_doctor_step_after_diagnose_shows_no_english_sentence(lang):
    from unit.widgets.test_doctor_panel import doctor_on, rows
    from widget_text import english_sentences, visible_strings

    wizard, panel = doctor_on(site="laptop")
    panel.text.value = (FIXTURES / "testbed_capture_nogres.txt").read_text(encoding="utf-8")
    panel.diagnose_button.click()
    assert len(rows(panel)) >= 3
    english = english_sentences(visible_strings(panel.findings_view))
    assert len(english) > 3  # the detector sees the English rows
    wizard.language.value = lang
    assert english_sentences(visible_strings(panel.findings_view)) == []


CKPT = "/work/u/ari/checkpoints/20261129120000_demo"
SKILL_TRACE = ('Traceback (most recent call last):\n'
               '  File "/opt/ARI/ari-skill-{skill}/src/server.py", line 3, in <module>\n'
               '{error}\n')


@pytest.mark.parametrize("text, kind, options, message_id", [
    ("cd /tmp && ari run x\n/tmp/workspace/checkpoints/20261130000000_other/tree.json\n", "log",
     {"checkpoint_dir": CKPT}, "doctor.checkpoint-dir-ignored.elsewhere"),
    ("/tmp/workspace/checkpoints/20261130000000_other/tree.json\n", "log", {},
     "doctor.checkpoint-dir-ignored.default"),
    ("ARI_CHECKPOINT_DIR=\n", "log", {}, "doctor.checkpoint-dir-ignored.empty"),
    ("SLURM_JOB_NUM_NODES=2\nrank 0 on n1\nrank 1 on n1\n", "log", {}, "doctor.ranks-on-one-node"),
    ("#!/bin/bash\nari run /w/experiment.md\n", "handoff", {}, "doctor.handoff-without-checkpoint"),
    (SKILL_TRACE.format(skill="web", error="ModuleNotFoundError: No module named 'httpx'"), "log", {},
     "doctor.skill-import-failed.one"),
    (SKILL_TRACE.format(skill="web", error="ModuleNotFoundError: No module named 'httpx'")
     + SKILL_TRACE.format(skill="memory", error="AttributeError: 'Server' object has no attribute "
                                                "'list_tools'"), "log", {},
     "doctor.skill-import-failed.many"),
])
def test_the_multi_line_checks_render_in_every_language(text, kind, options, message_id):
    found = [f for f in diagnose_text(text, kind=kind, **options) if f.message_id == message_id]
    assert found, diagnose_text(text, kind=kind, **options)
    for finding in found:
        assert finding.text("en") == finding.message and finding.fix_text("en") == finding.fix
        for lang in ("ja", "zh"):
            assert finding.text(lang) != finding.message and finding.fix_text(lang) != finding.fix
            for value in finding.params.values():
                if isinstance(value, (str, int)) and str(value) in finding.message:
                    assert str(value) in finding.text(lang), (lang, value)


GPU_PROFILE = {"kind": "gpu_single", "gpu_type": "v100", "requested_gpus_per_node": 1}


@pytest.mark.parametrize("text, options, message_id", [
    ("#!/bin/bash\n./app\n", {"profile": GPU_PROFILE}, "doctor.L3.unknown"),
    ("#!/bin/bash\n./app\n", {"profile": GPU_PROFILE, "has_gres": False, "allow_no_gres": True},
     "doctor.L3.dropped"),
    ("#!/bin/bash\n./app\n", {"profile": GPU_PROFILE, "has_gres": False}, "doctor.L3.no_gres"),
    ("#!/bin/bash\nconda activate env\n./app\n", {}, "doctor.L4.conda"),
    ("#!/bin/bash\nmake\n./app --long\n", {}, "doctor.L7.timeout"),
    ("#!/bin/bash\n./app\n", {"profile": GPU_PROFILE}, "doctor.G1.cuda"),
    ("#!/bin/bash\nsrun ./app\n", {"profile": {"kind": "mpi"}}, "doctor.G1.cuda_mpi"),
    ("#!/bin/bash\n#SBATCH -N 2\n./app\n", {}, "doctor.S2.sbatch.one"),
    ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH -t 5\n./app\n", {}, "doctor.S2.sbatch.many"),
    ("#!/bin/bash\nsrun ./app\n", {"nodes": 2}, "doctor.L6.srun"),
    ("#!/bin/bash\nmodule load openmpi\nmpirun ./app\n", {"nodes": 2}, "doctor.L6.mpirun"),
    ("#!/bin/bash\nmake\n", {"nodes": 2}, "doctor.L6.none"),
    ("#!/bin/bash\n./app\n", {"nodes": 2}, "doctor.L6.one_task"),
    ("#!/bin/bash\n./app\n", {"profile": {"kind": "mpi", "module_loads": ["openmpi/4.1"]}},
     "doctor.L5.missing"),
    ("#!/bin/bash\nmake\nmodule load openmpi/4.1\nsrun ./app\n",
     {"profile": {"kind": "mpi", "module_loads": ["openmpi/4.1"]}}, "doctor.L5.late"),
    ("#!/usr/bin/env bash\nmodule load openmpi/4.1\nsrun ./app\n", {}, "doctor.L5.init"),
    ("#!/bin/bash\n./app\n", {"profile": {"kind": "mpi"}}, "doctor.L2.none_direct"),
    ("#!/bin/bash\nmake\n", {"profile": {"kind": "mpi"}}, "doctor.L2.none"),
    ("#!/bin/bash\nmpirun -np 4 ./app\n", {"profile": {"kind": "mpi"}}, "doctor.L2.no_module"),
    ("#!/bin/bash\nmpirun -np 4 ./app\n", {}, "doctor.L2b.hard_coded"),
    ("#!/bin/bash\nsrun ./app\n", {"profile": {"kind": "mpi"}}, "doctor.G2.no_csv"),
    ("#!/bin/bash\nsrun ./app\n", {"profile": {"kind": "mpi", "metric_columns": ["n", "gflops"]}},
     "doctor.G2.no_csv_header"),
    ("#!/bin/bash\necho 'n,time' > submission/results/x.csv\nsrun ./app\n",
     {"profile": {"kind": "mpi", "metric_columns": ["n", "gflops"]}}, "doctor.G2.header"),
    ("#!/bin/bash\n: ${SLURM_NTASKS:=2}\n./app\n", {"nodes": 2}, "doctor.L6.one_task"),
])
def test_the_translated_reproduce_rules_render_in_every_language(text, options, message_id):
    found = diagnose_text(text, kind="reproduce", **options)
    found = [f for f in found if f.message_id == message_id]
    assert found, [(f.rule, f.message) for f in diagnose_text(text, kind="reproduce", **options)]
    for finding in found:
        assert finding.text("en") == finding.message and finding.fix_text("en") == finding.fix
        for lang in ("ja", "zh"):
            assert finding.text(lang) != finding.message and finding.fix_text(lang) != finding.fix


@pytest.mark.parametrize("case", REPRODUCE_TABLE, ids=[row[0] for row in REPRODUCE_TABLE])
def test_every_reproduce_finding_of_the_lint_table_has_a_message_id(case):
    """Each rule of the lint table (L1-L7, G1-G3, S2) renders in ja/zh, not only in English."""
    _id, script, profile, nodes, kwargs, _expected = case
    text = (REPRODUCE_SCRIPTS / script).read_text()
    for finding in lint_reproduce(text, profile=profile, nodes=nodes, **kwargs):
        assert finding.message_id and finding.fix_id, (finding.rule, finding.message)
        assert finding.text("en") == finding.message and finding.fix_text("en") == finding.fix
        for lang in ("ja", "zh"):
            fix = finding.fix_text(lang).replace(finding.suggestion or "\0", " ")  # code stays code
            assert english_sentences([finding.text(lang), fix]) == [], lang


@pytest.mark.parametrize("script, message_id", [
    ("#!/bin/bash\n./app > /tmp/out.txt\ncp $TMPDIR/x .\nd=$(mktemp -d)\n", "doctor.L1"),
])
def test_the_node_local_path_list_is_translated_item_by_item(script, message_id):
    (finding,) = [f for f in lint_reproduce(script, nodes=2) if f.rule == "L1"]
    assert finding.message_id == message_id
    assert "line 2: /tmp/out.txt, line 3: $TMPDIR, line 4: mktemp (defaults to /tmp)" in finding.message
    ja = finding.text("ja")
    assert "2 行目: /tmp/out.txt、3 行目: $TMPDIR、4 行目: mktemp（既定は /tmp）" in ja
    assert "line" not in ja and "defaults" not in ja
