"""``ari-jupyter lessons reset`` says which lesson a running JupyterLab has open: that tab
still holds the old cells and would save them over the restored lesson. A real ``jupyter
server`` with a real kernel session on one lesson."""
from __future__ import annotations

import json
import urllib.request

import pytest

from e2e.jupyter_process import start_jupyter

from ari_jupyter.cli import main
from ari_jupyter.wizard.lesson_copies import place_lessons

LESSON = "01_allocation_and_hostlists.ipynb"


@pytest.fixture(scope="module")
def lab_with_a_lesson_open(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("open-lesson")
    server = start_jupyter(tmp)
    place_lessons("en", folder=server.root_dir)
    body = json.dumps({"path": LESSON, "type": "notebook", "name": LESSON,
                       "kernel": {"name": "python3"}}).encode()
    request = urllib.request.Request(server.url("/api/sessions"), data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        assert answer.status == 201
    yield server, tmp / "runtime"
    server.stop()


@pytest.mark.parametrize("names, warned", [
    (["01"], [LESSON]),
    ([], [LESSON]),                     # all of them: the open one is named
    (["02"], []),                       # not the open one: nothing to say
])
def test_reset_names_the_lesson_a_running_lab_has_open(lab_with_a_lesson_open, names, warned,
                                                       monkeypatch, capsys):
    server, runtime = lab_with_a_lesson_open
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    assert main(["lessons", "reset", *names, "--dir", str(server.root_dir), "--lang", "en"]) == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "is open in the JupyterLab at" in line]
    assert [line.split(": ", 1)[1].split(" ")[0] for line in said] == warned, err
    assert all(f"127.0.0.1:{server.port}" in line for line in said)


def test_no_running_lab_means_no_warning(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    place_lessons("en", folder=tmp_path / "copies")
    assert main(["lessons", "reset", "01", "--dir", str(tmp_path / "copies")]) == 0
    assert "is open" not in capsys.readouterr().err
