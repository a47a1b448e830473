"""``ari-jupyter guide``: the messages that send a reader to a guide name this command, so it
must print a file that is there, in the reader's language where a translation exists."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ari_jupyter.base.guides import GUIDES
from ari_jupyter.cli import main
from ari_jupyter.i18n import LANGUAGES, t


@pytest.mark.parametrize("name, lang, file", [
    ("wizard", "en", "wizard.md"),
    ("wizard", "ja", "wizard.ja.md"),
    ("wizard", "zh", "wizard.zh.md"),
    ("runs", "zh", "runs.zh.md"),
    ("teaching", "ja", "teaching.ja.md"),
    ("admin", "zh", "admin.md"),    # not translated: the English one
])
def test_a_guide_is_printed_as_its_installed_file_in_the_language(name, lang, file, capsys):
    assert main(["guide", name, "--lang", lang]) == 0
    path, lab = capsys.readouterr().out.splitlines()
    assert Path(path).name == file and Path(path).is_file()
    assert lab.startswith(t("cli.guide.in_lab", lang, route="")[:8])
    assert f"/ari-jupyter/guides/{file}" in lab


def test_without_a_name_every_guide_is_listed_with_a_file_that_is_there(capsys):
    assert main(["guide"]) == 0
    rows = [line.split(None, 1) for line in capsys.readouterr().out.splitlines()]
    assert [name for name, _ in rows] == list(GUIDES)
    assert all(Path(path).is_file() for _, path in rows)


def test_an_unknown_guide_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["guide", "architecture"])
    assert exit_.value.code == 2


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_message_names_a_path_of_the_source_tree(lang):
    """docs/ exists only in a clone: a message names the guide command instead."""
    catalogs = Path(__file__).resolve().parents[3] / "ari_jupyter" / "i18n"
    for path in [*catalogs.glob("*.json"), *catalogs.glob("messages/*.json")]:
        for key, value in json.loads(path.read_text(encoding="utf-8")).items():
            text = value.get(lang, "") if isinstance(value, dict) else (value if path.stem == lang else "")
            assert "docs/" not in str(text), (path.name, key)
