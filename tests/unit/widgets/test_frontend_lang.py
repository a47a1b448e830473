"""The wizard speaks JupyterLab's language when its notebook names none; the lab extension's
strings are translated through its gettext domain (ja, zh)."""
from __future__ import annotations
from repo_paths import REPO

import json
import re

import pytest

from ari_jupyter.widgets.terminal_bridge import READY
from ari_jupyter.widgets.wizard import Wizard

from test_widgets_support import fake_bridge

REPO = REPO


@pytest.mark.parametrize("given, config_lang, locale, expected", [
    (None, "", "ja", "ja"),          # nothing named: JupyterLab's language
    (None, "", "zh", "zh"),
    (None, "", "", "en"),            # the frontend has no preference: the locale's default
    (None, "", "fr", "en"),          # a language the wizard does not speak
    ("zh", "", "ja", "zh"),          # Wizard(lang=...) wins
    (None, "ja", "zh", "ja"),        # so does c.AriWizard.language
])
def test_language_follows_the_frontend_when_none_is_given(given, config_lang, locale, expected):
    from ari_jupyter.wizard.config import AriWizard

    bridge, comms = fake_bridge()
    wizard = Wizard(site="rccs-cloud", lang=given, config=AriWizard(language=config_lang),
                    run_probes=False, bridge=bridge, env={"LANG": "C.UTF-8"})
    comms[0].reply({"type": READY, "protocol": 1, "locale": locale})
    assert wizard.ctx.lang == expected and wizard.language.value == expected
    assert wizard.state.lang == expected


@pytest.mark.parametrize("written_in, locale, given, expected", [
    ("en", "ja", None, "ja"),   # reopened from the Runs panel in a Japanese lab: Japanese
    ("ja", "", None, "ja"),     # the frontend has no preference: the run's own language
    ("ja", "zh", "en", "en"),   # Wizard.from_checkpoint(path, lang=...) still wins
])
def test_a_reopened_run_speaks_the_language_of_the_lab_it_is_reopened_in(written_in, locale, given,
                                                                          expected):
    from ari_jupyter.wizard.state import WizardState

    bridge, comms = fake_bridge()
    state = WizardState()
    state.lang = written_in
    wizard = Wizard(state=state, site="rccs-cloud", lang=given, run_probes=False, bridge=bridge,
                    env={"LANG": "C.UTF-8"})
    assert wizard.ctx.lang == (given or written_in)  # before the frontend answers
    comms[0].reply({"type": READY, "protocol": 1, "locale": locale})
    assert wizard.ctx.lang == expected and wizard.state.lang == expected


def _extension_strings() -> set[str]:
    strings = set()
    for source in (REPO / "labextension" / "src").glob("*.ts"):
        text = source.read_text(encoding="utf-8")
        strings |= set(re.findall(r"trans\.(?:__|_n)\(\s*'((?:[^'\\]|\\.)*)'", text))
    return strings


@pytest.mark.parametrize("locale", ["ja_JP", "zh_CN"])
def test_every_extension_string_is_translated(locale):
    path = REPO / "ari_jupyter" / "locale" / locale / "LC_MESSAGES" / "ari_jupyter.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    # the language tag as JupyterLab's own packs write it (ja-JP): Gettext looks messages up by it
    assert data[""]["domain"] == "ari_jupyter" and data[""]["language"] == locale.replace("_", "-")
    strings = _extension_strings()
    assert len(strings) > 10
    missing = sorted(s for s in strings if s not in data)
    assert missing == []
    for msgid in strings:
        assert data[msgid][0] and re.findall(r"%\d", data[msgid][0]) == re.findall(r"%\d", msgid)


def _schema_words() -> set[str]:
    """Every string of the settings schema a person reads in the Settings Editor."""
    schema = json.loads((REPO / "labextension" / "schema" / "plugin.json").read_text(encoding="utf-8"))
    read = ("title", "description", "jupyter.lab.setting-icon-label")
    nodes = [schema, *schema["properties"].values()]
    nodes += [choice for prop in schema["properties"].values() for choice in prop.get("oneOf", [])]
    return {node[key] for node in nodes for key in read if key in node}


@pytest.mark.parametrize("locale", ["ja_JP", "zh_CN"])
def test_every_settings_schema_word_is_translated(locale):
    """The extension translates its own schema when the registry fetches it (the server
    would look only in a language pack): every title and description needs its entry."""
    schema = json.loads((REPO / "labextension" / "schema" / "plugin.json").read_text(encoding="utf-8"))
    assert schema["jupyter.lab.transform"] is True
    path = REPO / "ari_jupyter" / "locale" / locale / "LC_MESSAGES" / "ari_jupyter.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    words = _schema_words()
    assert {"Wizard language", "Follow JupyterLab (Settings > Language)"} <= words
    assert sorted(word for word in words if word not in data) == []


def _plural_strings() -> set[tuple[str, str]]:
    """(singular, plural) of each ``trans._n(singular, plural, n)`` (the singular is the key)."""
    quoted = r"'((?:[^'\\]|\\.)*)'"
    strings = set()
    for source in (REPO / "labextension" / "src").glob("*.ts"):
        strings |= set(re.findall(rf"trans\._n\(\s*{quoted},\s*{quoted}",
                                  source.read_text(encoding="utf-8")))
    return strings


def jupyterlab_gettext(data: dict, msgid: str, plural: str | None, n: int) -> str:
    """What @jupyterlab/translation's Gettext.dcnpgettext shows: a plural call uses an entry
    only when it has more than one form, a singular call only one with exactly one form;
    otherwise the English msgid comes back (nplurals=1 languages included)."""
    forms = data.get(msgid)
    usable = bool(forms) and (len(forms) > 1 if plural is not None else len(forms) == 1)
    if not usable:
        return msgid if plural is None or n == 1 else plural
    match = re.search(r"plural\s*=\s*([^;]+);", data[""]["plural_forms"])
    index = int(eval(match.group(1), {"n": n}))  # noqa: S307 - the catalog's own header
    return forms[index if index < len(forms) else 0]


@pytest.mark.parametrize("locale", ["ja_JP", "zh_CN"])
def test_every_plural_is_translated_as_jupyterlab_reads_it(locale):
    path = REPO / "ari_jupyter" / "locale" / locale / "LC_MESSAGES" / "ari_jupyter.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    plurals = _plural_strings()
    assert plurals  # the status bar's "%1 node"
    for msgid, plural in plurals:
        for n in (1, 2, 5):
            shown = jupyterlab_gettext(data, msgid, plural, n)
            assert shown not in (msgid, plural), (msgid, n)  # English in a translated lab
            assert re.findall(r"%\d", shown) == re.findall(r"%\d", msgid)


@pytest.mark.parametrize("forms, plural, n, expected", [
    (["%1 ノード"], "%1 nodes", 2, "%1 nodes"),           # one form: Gettext falls back to English
    (["%1 ノード", "%1 ノード"], "%1 nodes", 2, "%1 ノード"),
    (["%1 ノード", "%1 ノード"], None, 1, "%1 node"),     # a singular call needs exactly one form
    (["%1 ノード"], None, 1, "%1 ノード"),
])
def test_the_gettext_model_falls_back_as_jupyterlab_does(forms, plural, n, expected):
    data = {"": {"plural_forms": "nplurals=1; plural=0;"}, "%1 node": forms}
    assert jupyterlab_gettext(data, "%1 node", plural, n) == expected


# A literal a person reads (an element's text, a button, a label, a title, a dialog body, a
# notification, an aria-label) that does not go through trans.__: English in every language.
_SHOWN_LITERAL = re.compile(
    r"(?:\bel\(\s*'\w+',\s*\{[^{}]*\},\s*|\bbutton\(\s*|\b(?:label|title|caption|body):\s*"
    r"|renderError\(\s*|Notification\.\w+\(\s*|'aria-label',\s*|'aria-label':\s*"
    r"|\.caption\s*=\s*|textContent\s*=\s*)([`'])((?:(?!\1).)*?)\1", re.S)
_WORD = re.compile(r"\b(?![A-Z0-9]+\b)[A-Za-z]{3,}\b")  # a word, not an acronym (ARI, SLURM)


def untranslated_literals(source: str) -> list[str]:
    found = []
    for match in _SHOWN_LITERAL.finditer(source):
        text = re.sub(r"\$\{[^}]*\}", " ", match.group(2))
        if _WORD.search(text):
            found.append(match.group(2))
    return found


@pytest.mark.parametrize("source", sorted((REPO / "labextension" / "src").glob("*.ts")),
                         ids=lambda p: p.name)
def test_no_shown_literal_bypasses_the_translator(source):
    assert untranslated_literals(source.read_text(encoding="utf-8")) == []


def test_the_literal_detector_sees_an_untranslated_runs_panel():
    old = ("this.button('Refresh', () => void this.refreshList()),\n"
           "el('p', { class: 'ari-RunsPanel-workspace' }, `Workspace: ${list.workspace}`)\n"
           "el('td', { title: run.run_id }, run.title || run.run_id)\n"
           "el('h2', {}, trans.__('ARI runs'))")
    assert untranslated_literals(old) == ["Refresh", "Workspace: ${list.workspace}"]
