"""Catalogs: complete in every language, same placeholders, and every key the code uses exists."""
import ast
import json
import re
from pathlib import Path

import pytest

from ari_jupyter import i18n
from ari_jupyter.ari.profile import PRESETS, PROFILE_KEYS
from ari_jupyter.probes import PROBE_IDS, STATUSES

PACKAGE = Path(i18n.__file__).resolve().parent.parent
EN = i18n.catalog("en")


@pytest.mark.parametrize("lang", [lang for lang in i18n.LANGUAGES if lang != "en"])
def test_every_catalog_has_exactly_the_english_keys(lang):
    other = i18n.catalog(lang)
    missing = sorted(set(EN) - set(other))
    extra = sorted(set(other) - set(EN))
    assert not missing, f"{lang}.json misses {missing}"
    assert not extra, f"{lang}.json has keys English lacks: {extra}"


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_placeholders_match_english(lang):
    other = i18n.catalog(lang)
    for key, text in EN.items():
        assert i18n.placeholders(other[key]) == i18n.placeholders(text), (lang, key)
        assert other[key].strip(), (lang, key)


def test_catalog_files_are_valid_json_objects_of_strings():
    for lang in i18n.LANGUAGES:
        data = json.loads((PACKAGE / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in data.items())


def _literal_keys_used_in_widgets() -> set[str]:
    """Every string literal passed to tr()/t()/label() in the widget layer."""
    keys = set()
    for path in (PACKAGE / "widgets").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            args = node.args
            if name in ("tr", "t") and args and isinstance(args[0], ast.Constant) \
                    and isinstance(args[0].value, str):
                keys.add(args[0].value)
            if name == "label" and len(args) >= 3 and isinstance(args[2], ast.Constant):
                keys.add(args[2].value)
    return keys


def test_every_literal_key_used_by_the_widgets_exists():
    used = _literal_keys_used_in_widgets()
    assert len(used) > 80
    assert sorted(used - set(EN)) == []


def test_every_computed_key_exists():
    """Keys built from core values: probe ids, statuses, profile keys, presets, findings."""
    from ari_jupyter.ari.partition import SOURCES
    from ari_jupyter.widgets.wizard import STEP_KEYS

    computed = {f"probe_{p}" for p in PROBE_IDS}
    computed |= {f"status_{s}" for s in (*STATUSES, "running", "pending")}
    computed |= {f"status_count_{s}" for s in STATUSES}
    computed |= {f"field_{k}" for k in PROFILE_KEYS}
    computed |= {f"preset_{p}" for p in PRESETS}
    computed |= {f"source_{s.replace('.', '_')}" for s in (*SOURCES, "c.AriWizard.default_partition")}
    computed |= {f"placement_{c}" for c in ("all_ranks_on_first_node", "single_process_many_ranks",
                                            "nodes_exceed_allocation", "cpu_oversubscribed",
                                            "gpus_not_visible", "gpu_oversubscribed")}
    computed |= set(STEP_KEYS)
    from ari_jupyter.checkpoint.handoff import ChecklistItem  # noqa: F401  (ids below are handoff_checklist's)
    computed |= {f"checklist_{i}" for i in ("dashboard", "handoff", "reproduce")}
    computed |= {f"checklist_state_{s}" for s in ("ready", "written", "env_only", "not_written")}
    computed |= {"site_reason_given", "site_reason_allocation", "site_reason_demo", "site_reason_outside"}
    computed |= {f"alloc_{k}" for k in ("job", "cluster", "partition", "account", "nodes",
                                        "tasks_per_node", "cpus", "gpus", "memory", "time_left")}
    assert sorted(computed - set(EN)) == []


def test_placement_finding_codes_are_the_ones_the_core_emits():
    src = (PACKAGE / "ari" / "placement.py").read_text(encoding="utf-8")
    codes = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "PlacementFinding":
            codes.add(node.args[0].value)
    assert codes, "no PlacementFinding(...) calls found: the scan no longer sees placement.py"
    assert {f"placement_{c}" for c in codes} <= set(EN)


@pytest.mark.parametrize("env, expected", [
    ({"LANG": "ja_JP.UTF-8"}, "ja"),
    ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LC_ALL": "zh_TW.UTF-8", "LANG": "ja_JP.UTF-8"}, "zh"),  # LC_ALL wins
    ({"LC_ALL": "C", "LANG": "ja_JP.UTF-8"}, "en"),            # set LC_ALL decides, even C
    ({"LC_MESSAGES": "ja_JP", "LANG": "en_US.UTF-8"}, "ja"),
    ({"LANG": "de_DE.UTF-8"}, "en"),
    ({}, "en"),
])
def test_default_language_from_the_locale(env, expected):
    assert i18n.default_lang(env) == expected


@pytest.mark.parametrize("before, sep, expected", [
    ("The title is empty.", " ", " "),
    ("The title is empty.", " — ", " — "),
    ("タイトルが空です。", " ", ""),
    ("タイトルが空です。", " — ", ""),
    ("ARI の既定（英語）", " ", ""),       # a closing fullwidth bracket ends it too
    ("「論文の言語」", " ", ""),
    ("标题为空。 ", " ", ""),              # trailing space of the sentence itself
    ("GRES (gpu:2)", " ", " "),           # an ASCII bracket is English punctuation
])
def test_sentence_gap(before, sep, expected):
    assert i18n.sentence_gap(before, sep) == expected


def test_t_formats_and_falls_back_and_rejects_unknown_keys():
    assert i18n.t("placement_node_ranks", "en", count=3) == "ranks: 3"
    assert i18n.t("nav_next", "ja-JP") == i18n.catalog("ja")["nav_next"]
    with pytest.raises(KeyError):
        i18n.t("no_such_key", "en")
    with pytest.raises(ValueError):
        i18n.catalog("fr")


def test_every_message_id_has_english_japanese_and_chinese_with_the_same_placeholders():
    """messages/*.json: one entry per id holds all three languages (adding one is one edit)."""
    messages = i18n.messages()
    assert len(messages) > 100
    for key, texts in messages.items():
        assert set(texts) == set(i18n.LANGUAGES), (key, sorted(texts))
        for lang in i18n.LANGUAGES:
            assert texts[lang].strip(), (key, lang)
            assert i18n.placeholders(texts[lang]) == i18n.placeholders(texts["en"]), (key, lang)
        words = re.sub(r"\{[^}]*\}", "", texts["en"])
        for lang in ("ja", "zh"):
            if re.search(r"[A-Za-z]{3}", words):  # a sentence, not just a placeholder
                assert texts[lang] != texts["en"], (key, lang)


def test_message_ids_are_unique_across_files_and_layouts():
    flat = json.loads((PACKAGE / "i18n" / "en.json").read_text(encoding="utf-8"))
    assert not set(flat) & set(i18n.messages())
    seen: dict[str, str] = {}
    for path in sorted((PACKAGE / "i18n" / "messages").glob("*.json")):
        for key in json.loads(path.read_text(encoding="utf-8")):
            assert key not in seen, (key, path.name, seen.get(key))
            seen[key] = path.name


def test_a_sentence_parameter_is_rendered_in_the_same_language():
    inner = i18n.message("validate.this_site")
    assert i18n.t("validate.modules_no_system", "ja", site=inner, modules="x").startswith("このサイト")
    assert i18n.t("validate.modules_no_system", "en", site=inner, modules="x").startswith("this site")


def test_message_keys_named_like_translate_arguments_are_allowed():
    assert "'k'" in i18n.t("validate.profile_key_unknown", "en", key="k")
    assert "'xx'" in i18n.t("field.lang_bad", "en", lang="xx")


def _probe_results_without_catalog_text() -> list[str]:
    """Every ``ProbeResult(...)`` the package builds by hand whose summary (or fix) has no
    catalog id: a verdict that would stay English in a Japanese or Chinese session."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "ProbeResult"):
                continue
            keywords = {k.arg for k in node.keywords}
            if None in keywords:  # ProbeResult(**fields): a copy of a result made elsewhere
                continue
            where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
            if "message_id" not in keywords:
                found.append(f"{where} has no message_id")
            if "fix" in keywords and "fix_id" not in keywords:
                found.append(f"{where} has a fix without fix_id")
    return found


def test_every_probe_verdict_has_its_text_in_the_catalogs():
    assert _probe_results_without_catalog_text() == []
