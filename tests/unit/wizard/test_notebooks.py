"""Where the launcher card's wizard notebook goes: the workspace, the per-user folder, the
browsed folder, or nowhere (a git work tree); copied once, never overwritten once edited."""
from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest

from ari_jupyter.cli.lab import plan_lab
from ari_jupyter.wizard.notebooks import NOTEBOOK_NAME, notebook_as_placed, packaged_notebook
from ari_jupyter.wizard.config import AriWizard
from ari_jupyter.wizard.notebooks import (PlacementRefused, api_path, browsed_folder,
                                         place_wizard_notebook)


def _setup(tmp: Path, layout: str):
    """A server root and an environment for one row of the table below."""
    root = tmp / "root"
    (root / "browsed").mkdir(parents=True)
    env = {"HOME": str(tmp / "home"), "USER": "u", "XDG_DATA_HOME": str(tmp / "xdg")}
    demo = str(tmp / "elsewhere" / "{site}")
    if layout == "workspace-below-root":
        demo = str(root / "ws" / "{site}")
    elif layout == "user-dir-below-root":
        env["XDG_DATA_HOME"] = str(root / "data")
    elif layout == "user-dir-hidden":
        env["XDG_DATA_HOME"] = str(root / ".local" / "share")
    elif layout == "browsed-in-git":
        (root / ".git").mkdir()
    elif layout == "workspace-is-root":  # as ``ari-jupyter lab`` starts it
        demo = str(root)
    return root, env, AriWizard(demo_workspace_template=demo)


@pytest.mark.parametrize("layout, path, folder", [
    ("workspace-below-root", f"ws/rccs-cloud/{NOTEBOOK_NAME}", "workspace"),
    ("workspace-is-root", NOTEBOOK_NAME, "workspace"),
    ("user-dir-below-root", f"data/ari-jupyter/{NOTEBOOK_NAME}", "user"),
    ("user-dir-hidden", f"browsed/{NOTEBOOK_NAME}", "browsed"),
    ("out-of-reach", f"browsed/{NOTEBOOK_NAME}", "browsed"),
])
def test_the_first_folder_the_lab_can_open_wins(tmp_path, layout, path, folder):
    root, env, config = _setup(tmp_path, layout)
    placed = place_wizard_notebook(root, "browsed", env, config=config)
    assert (placed.path, placed.folder, placed.created) == (path, folder, True)
    assert (root / path).read_bytes() == notebook_as_placed(packaged_notebook())
    leftovers = [p for p in (root / path).parent.iterdir() if p.name.startswith(f".{NOTEBOOK_NAME}")]
    assert leftovers == [], "the temporary copy must be gone"


def test_hidden_folders_count_when_the_server_allows_them(tmp_path):
    root, env, config = _setup(tmp_path, "user-dir-hidden")
    placed = place_wizard_notebook(root, "browsed", env, config=config, allow_hidden=True)
    assert placed.path == f".local/share/ari-jupyter/{NOTEBOOK_NAME}"


def test_a_git_work_tree_is_refused_and_left_untouched(tmp_path):
    root, env, config = _setup(tmp_path, "browsed-in-git")
    with pytest.raises(PlacementRefused, match="git work tree .*ari-jupyter lab"):
        place_wizard_notebook(root, "browsed", env, config=config)
    assert list((root / "browsed").iterdir()) == []


def test_an_existing_notebook_in_a_work_tree_is_opened_not_copied(tmp_path):
    root, env, config = _setup(tmp_path, "browsed-in-git")
    mine = root / "browsed" / NOTEBOOK_NAME
    mine.write_text('{"my": "edits"}')
    placed = place_wizard_notebook(root, "browsed", env, config=config)
    assert (placed.path, placed.created) == (f"browsed/{NOTEBOOK_NAME}", False)
    assert mine.read_text() == '{"my": "edits"}'


def test_a_second_placement_keeps_the_users_edits(tmp_path):
    root, env, config = _setup(tmp_path, "workspace-below-root")
    first = place_wizard_notebook(root, "browsed", env, config=config)
    (root / first.path).write_text('{"edited": true}')
    second = place_wizard_notebook(root, "browsed", env, config=config)
    assert (second.path, second.created) == (first.path, False)
    assert (root / first.path).read_text() == '{"edited": true}'


def _ran(notebook: Path) -> None:
    """What the card does to a placed notebook: run its cell and save (outputs, a count)."""
    data = json.loads(notebook.read_text(encoding="utf-8"))
    code = next(c for c in data["cells"] if c["cell_type"] == "code")
    code["execution_count"] = 1
    code["outputs"] = [{"output_type": "display_data", "data": {"text/plain": ["Wizard(...)"]},
                        "metadata": {}}]
    notebook.write_text(json.dumps(data), encoding="utf-8")


def _edited(notebook: Path) -> None:
    data = json.loads(notebook.read_text(encoding="utf-8"))
    data["cells"].append({"cell_type": "markdown", "metadata": {}, "source": ["my notes"]})
    notebook.write_text(json.dumps(data), encoding="utf-8")


def _placed_by_an_older_version(notebook: Path):
    """The notebook as an older version placed it: other explanations, its own fingerprint,
    then opened and run (JupyterLab saves sources as lists of lines, with outputs)."""
    from ari_jupyter.wizard.notebooks import _sources_of, cells_fingerprint

    data = json.loads(notebook.read_text(encoding="utf-8"))
    data["cells"][0]["source"] = "An older version's explanation.\n"
    data["metadata"]["ari_jupyter"]["placed_cells"] = cells_fingerprint(_sources_of(data))
    notebook.write_text(json.dumps(data), encoding="utf-8")
    _ran(notebook)


def _placed_by_an_older_version_then_edited(notebook: Path):
    _placed_by_an_older_version(notebook)
    _edited(notebook)


def _placed_before_fingerprints(notebook: Path):
    """An older version's text, placed before notebooks recorded a fingerprint: it cannot be
    told from an edited one."""
    data = json.loads(notebook.read_text(encoding="utf-8"))
    data["cells"][0]["source"] = "An older version's explanation.\n"
    del data["metadata"]["ari_jupyter"]
    notebook.write_text(json.dumps(data), encoding="utf-8")


# first placed in, then what happened to it, then asked for in: is it re-placed, and in which language
@pytest.mark.parametrize("first, change, then, replaced, ends_in", [
    ("en", _ran, "ja", True, "ja"),      # opened in English once, now the lab speaks Japanese
    ("ja", None, "zh", True, "zh"),
    ("ja", _ran, "ja", False, "ja"),     # the same language: opened as it is
    ("en", _edited, "ja", False, "en"),  # the user wrote in it: never replaced
    ("ja", _placed_by_an_older_version, "ja", True, "ja"),  # unedited: this version's text
    ("ja", _placed_by_an_older_version, "zh", True, "zh"),
    ("ja", _placed_by_an_older_version_then_edited, "ja", False, None),
    ("ja", _placed_before_fingerprints, "ja", False, None),
])
def test_an_unedited_notebook_follows_the_users_language(tmp_path, first, change, then, replaced,
                                                         ends_in):
    root, env, config = _setup(tmp_path, "workspace-below-root")
    placed = place_wizard_notebook(root, "browsed", env, config=config, lang=first)
    notebook = root / placed.path
    if change is not None:
        change(notebook)
    before = notebook.read_bytes()
    again = place_wizard_notebook(root, "browsed", env, config=config, lang=then)
    assert (again.path, again.created) == (placed.path, replaced)
    if replaced:
        assert notebook.read_bytes() == notebook_as_placed(packaged_notebook(ends_in))
    else:
        assert notebook.read_bytes() == before
    assert [p.name for p in notebook.parent.iterdir() if p.name.startswith(".")] == []
    # ``ari-jupyter lab`` decides the same way
    other = "zh" if ends_in == "ja" else "ja"
    plan = plan_lab(str(notebook.parent), "rccs-cloud", [], env, lang=other, config=config)
    assert plan.copy_from == (packaged_notebook(other) if replaced or change in (None, _ran)
                              else None)


@pytest.mark.parametrize("open_paths", ["{path}", "/{path}"])
def test_a_notebook_open_in_the_lab_is_never_rewritten(tmp_path, open_paths):
    """Unedited and in English, but open in a tab: JupyterLab would find it changed on disk
    under the tab and ask to overwrite or revert it. Left as it is; closed, it follows again."""
    root, env, config = _setup(tmp_path, "workspace-below-root")
    placed = place_wizard_notebook(root, "browsed", env, config=config, lang="en")
    notebook = root / placed.path
    _ran(notebook)
    before = notebook.read_bytes()
    opened = frozenset({open_paths.format(path=placed.path).strip("/")})
    again = place_wizard_notebook(root, "browsed", env, config=config, lang="ja", open_paths=opened)
    assert (again.path, again.created) == (placed.path, False)
    assert notebook.read_bytes() == before
    closed = place_wizard_notebook(root, "browsed", env, config=config, lang="ja")
    assert closed.created and notebook.read_bytes() == notebook_as_placed(packaged_notebook("ja"))


@pytest.mark.parametrize("cwd", ["../outside", "/etc", "browsed/../../x", "missing", "a\0b"])
def test_the_browsed_folder_must_be_a_folder_below_the_root(tmp_path, cwd):
    root, _, _ = _setup(tmp_path, "out-of-reach")
    (tmp_path / "outside").mkdir()
    with pytest.raises(PlacementRefused, match="not a folder of this JupyterLab"):
        browsed_folder(root, cwd)


def test_a_symlink_out_of_the_root_is_not_below_it(tmp_path):
    root, _, _ = _setup(tmp_path, "out-of-reach")
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", root / "link")
    assert api_path(root / "link", root) is None


def test_the_endpoint_places_and_answers_the_path(tmp_path):
    """A real ``jupyter server`` with the shipped config: POST needs the token and XSRF."""
    from e2e.jupyter_process import start_jupyter

    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "ari_jupyter_config.json").write_text(json.dumps(
        {"AriWizard": {"demo_workspace_template": str(tmp_path / "root" / "ws" / "{site}")}}))
    server = start_jupyter(tmp_path)
    try:
        def post(body: bytes, token: bool = True):
            request = urllib.request.Request(server.url("/ari-jupyter/wizard-notebook",
                                                        token=token), data=body, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    return response.status, json.loads(response.read())
            except urllib.error.HTTPError as exc:
                return exc.code, exc.read().decode()

        assert post(b'{"cwd": "", "lang": 3}')[0] == 400
        status, answer = post(b'{"cwd": "", "lang": "ja"}')  # JupyterLab in Japanese
        assert status == 200, answer
        assert answer == {"path": f"ws/rccs-cloud/{NOTEBOOK_NAME}", "folder": "workspace",
                          "created": True}
        placed = server.root_dir / answer["path"]
        assert placed.read_bytes() == notebook_as_placed(packaged_notebook("ja"))
        assert post(b'{"cwd": "", "lang": "ja"}')[1]["created"] is False  # opened as it is
        assert post(b'{"cwd": ""}')[1]["created"] is True  # no language named: English, unedited
        assert placed.read_bytes() == notebook_as_placed(packaged_notebook("en"))
        # open in the lab: never rewritten in another language
        opened = json.dumps({"cwd": "", "lang": "ja", "open": [answer["path"]]}).encode()
        assert post(opened)[1]["created"] is False
        assert placed.read_bytes() == notebook_as_placed(packaged_notebook("en"))
        assert post(b'{"cwd": "", "open": "ws"}')[0] == 400
        assert post(b'{"cwd": "", "open": [3]}')[0] == 400
        assert post(b'{"cwd": 3}')[0] == 400
        assert post(b'not json')[0] == 400
        assert post(b'{}', token=False)[0] in (401, 403)
    finally:
        server.stop()


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_the_notebook_explains_itself_in_the_users_language(lang):
    """The same cells as the English notebook (the same code but for a printed sentence),
    with every explanation translated."""
    import re

    from widget_text import english_sentences

    english = json.loads(packaged_notebook("en").read_text())["cells"]
    translated = json.loads(packaged_notebook(lang).read_text())["cells"]
    assert packaged_notebook(lang).name == NOTEBOOK_NAME.replace(".ipynb", f".{lang}.ipynb")
    assert [c["cell_type"] for c in translated] == [c["cell_type"] for c in english]
    for en_cell, cell in zip(english, translated):
        source = "".join(cell["source"])
        if cell["cell_type"] == "code":
            def code(text):  # a comment is explanation, in the notebook's language too
                return {line.split("  # ")[0] for line in text.splitlines()}

            differing = code("".join(en_cell["source"])) ^ code(source)
            assert all(line.lstrip().startswith("print(f\"") and "{len(problems)}" in line
                       for line in differing), differing
            comments = [line.split("  # ", 1)[1] for line in source.splitlines() if "  # " in line]
            assert english_sentences(comments) == [], comments
        else:
            prose = re.sub(r"```.*?```|`[^`]*`|\[ARI\]\([^)]*\)", " ", source, flags=re.S)
            assert english_sentences(prose.splitlines()) == [], prose
    assert packaged_notebook("fr") == packaged_notebook("en")


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_the_packaged_notebook_has_no_headings(lang):
    """JupyterLab 4.0's table of contents throws "Cannot read properties of undefined (reading
    'type')" when a cell with a heading scrolls into view before its headings are indexed,
    which happens as the card opens the notebook; the title is bold text for that reason."""
    import re

    cells = json.loads(packaged_notebook(lang).read_text())["cells"]
    headings = [line for cell in cells if cell["cell_type"] == "markdown"
                for line in "".join(cell["source"]).splitlines()
                if re.match(r"\s{0,3}#{1,6}\s", line) or re.search(r"<h[1-6]\b", line)
                or re.match(r"\s{0,3}(=+|-{2,})\s*$", line)]
    assert headings == []
