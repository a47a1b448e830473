"""`ari-jupyter lab`: the notebook in the workspace (never the cwd), its URL, the demo site."""
from repo_paths import REPO
import json
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from ari_jupyter.cli.lab import plan_lab
from ari_jupyter.wizard.notebooks import NOTEBOOK_NAME, notebook_as_placed, packaged_notebook, user_data_dir
from ari_jupyter.cli import main
from ari_jupyter.wizard.config import AriWizard

REPO = REPO


def test_outside_an_allocation_a_demo_site_is_set(tmp_path):
    plan = plan_lab(str(tmp_path), None, [], {"HOME": "/h"}, euid=1000)
    assert plan.env_changes == {"ARI_JUPYTER_DEMO_SITE": "rccs-cloud"}
    assert plan.copy_from == packaged_notebook()
    assert plan.notebook == tmp_path / NOTEBOOK_NAME
    assert plan.argv[:3] == [sys.executable, "-m", "jupyterlab"]
    assert f"--ServerApp.root_dir={tmp_path}" in plan.argv
    assert f"--LabApp.default_url=/lab/tree/{NOTEBOOK_NAME}" in plan.argv


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_the_notebook_copied_explains_itself_in_the_commands_language(tmp_path, lang):
    plan = plan_lab(str(tmp_path), None, [], {"HOME": "/h"}, euid=1000, lang=lang)
    assert plan.copy_from == packaged_notebook(lang)
    assert plan.notebook == tmp_path / NOTEBOOK_NAME  # one name in every language


@pytest.mark.parametrize("env, expected", [
    ({"HOME": "/h", "USER": "ann"}, "/h/ari-demo/rccs-cloud"),
    ({"HOME": "/h", "USER": "ann", "ARI_JUPYTER_DEMO_SITE": "laptop"}, "/h/ari-demo/laptop"),
    ({"HOME": "/h", "USER": "ann", "SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": "n1",
      "SLURM_JOB_NUM_NODES": "1"}, "/work/ann/ari"),
])
def test_the_default_folder_is_the_workspace_never_the_cwd(env, expected, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = AriWizard(workspace_template="/work/{user}/ari")
    plan = plan_lab(None, None, [], env, euid=1000, config=config)
    assert plan.notebook == Path(expected) / NOTEBOOK_NAME
    assert f"--ServerApp.root_dir={expected}" in plan.argv


def test_the_per_user_fallback_folder():
    assert user_data_dir({"HOME": "/h"}) == Path("/h/.local/share/ari-jupyter")
    assert user_data_dir({"HOME": "/h", "XDG_DATA_HOME": "/x"}) == Path("/x/ari-jupyter")


def test_precedence_of_the_demo_site(tmp_path):
    env = {"ARI_JUPYTER_DEMO_SITE": "sx40"}
    assert plan_lab(str(tmp_path), "laptop", [], env, euid=1000).env_changes["ARI_JUPYTER_DEMO_SITE"] == "laptop"
    assert plan_lab(str(tmp_path), None, [], env, euid=1000).env_changes["ARI_JUPYTER_DEMO_SITE"] == "sx40"
    assert plan_lab(str(tmp_path), None, [], {}, euid=1000,
                    configured_demo_site="gres-cluster").env_changes["ARI_JUPYTER_DEMO_SITE"] == "gres-cluster"


def test_inside_an_allocation_no_demo_site_and_an_existing_notebook_is_kept(tmp_path):
    (tmp_path / NOTEBOOK_NAME).write_text("{}")
    env = {"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": "n1", "SLURM_JOB_NUM_NODES": "1"}
    plan = plan_lab(str(tmp_path), "sx40", ["--", "--port=9999"], env, euid=0)
    assert plan.env_changes == {} and plan.inside_allocation
    assert plan.copy_from is None
    assert plan.argv[-2:] == ["--allow-root", "--port=9999"]
    assert plan.notebook == tmp_path / NOTEBOOK_NAME


def test_print_command_does_not_start_anything(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "lab", "--dir", str(tmp_path),
                           "--print-command"], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert "ARI_JUPYTER_DEMO_SITE=rccs-cloud" in proc.stdout
    assert not (tmp_path / NOTEBOOK_NAME).exists()
    named = subprocess.run([sys.executable, "-m", "ari_jupyter", "lab", "--dir", str(tmp_path),
                            "--site", "sx40", "--print-command"], capture_output=True, text=True,
                           timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert named.returncode == 0 and "ARI_JUPYTER_DEMO_SITE=sx40" in named.stdout, named.stderr


def test_the_lab_started_is_this_interpreters_not_the_first_on_path(tmp_path):
    """Another jupyter-lab first on PATH (a site's module, a system install) would run without
    the extension installed beside this package: the command runs this Python's JupyterLab."""
    other = tmp_path / "bin"
    other.mkdir()
    for name in ("jupyter-lab", "jupyter"):
        (other / name).write_text("#!/bin/sh\necho another-jupyterlab\n")
        (other / name).chmod(0o755)
    proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "lab", "--dir", str(tmp_path / "w"),
                           "--", "--version"], capture_output=True, text=True, timeout=120,
                          env={"PATH": f"{other}:/usr/bin:/bin", "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert "another-jupyterlab" not in proc.stdout
    from jupyterlab import __version__

    assert proc.stdout.strip().splitlines()[-1] == __version__


def test_the_packaged_notebook_is_the_repository_notebook_without_outputs():
    packaged = json.loads(packaged_notebook().read_text(encoding="utf-8"))
    repo = json.loads((REPO / "notebooks" / NOTEBOOK_NAME).read_text(encoding="utf-8"))
    assert packaged == repo
    for cell in repo["cells"]:
        assert cell.get("outputs", []) == [] and cell.get("execution_count") is None


@pytest.mark.parametrize("flag", ["--site", "--demo-site"])  # every command's name; lab's first
def test_an_unknown_demo_site_is_refused_before_jupyterlab_starts(tmp_path, flag):
    proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "lab", "--dir", str(tmp_path),
                           flag, "atlantis", "--print-command"], capture_output=True,
                          text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert proc.returncode == 2
    assert "unknown demo site 'atlantis'" in proc.stderr and "rccs-cloud" in proc.stderr


def _lab_url(proc, deadline):
    """The first URL JupyterLab prints (stderr), or "" at the deadline."""
    selector = selectors.DefaultSelector()
    selector.register(proc.stderr, selectors.EVENT_READ)
    buffer = ""
    while time.monotonic() < deadline:
        if not selector.select(timeout=1):
            continue
        chunk = os.read(proc.stderr.fileno(), 65536).decode(errors="replace")
        if not chunk:
            break
        buffer += chunk
        match = re.search(r"(http://127\.0\.0\.1:\d+/\S+)", buffer)
        if match:
            return match.group(1), buffer
    return "", buffer


def _get_json(url, deadline):
    """GET ``url``; the server may print its URL a moment before it accepts connections."""
    while True:
        try:
            with urllib.request.urlopen(url, timeout=30) as answer:
                return json.loads(answer.read())
        except urllib.error.URLError as exc:
            if not isinstance(exc.reason, ConnectionRefusedError) or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@pytest.mark.slow
def test_lab_opens_the_notebook_from_the_workspace_and_leaves_the_cwd_clean(tmp_path):
    home, cwd = tmp_path / "home", tmp_path / "repo"
    home.mkdir(), cwd.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "USER": "ann",
           "JUPYTER_CONFIG_DIR": str(home / ".jupyter")}
    with socket.socket() as probe:  # a free port, so the printed URL names the port asked for
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "ari_jupyter", "lab", "--", "--no-browser",
                             f"--port={port}", "--ip=127.0.0.1"], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        url, log = _lab_url(proc, time.monotonic() + 90)
        assert url, log
        assert f"/lab/tree/{NOTEBOOK_NAME}?token=" in url
        notebook = home / "ari-demo" / "rccs-cloud" / NOTEBOOK_NAME
        assert notebook.is_file()
        base = url.split("/lab/")[0]
        token = url.split("token=")[1]
        assert _get_json(f"{base}/api/contents/{NOTEBOOK_NAME}?content=0&token={token}",
                         time.monotonic() + 60)["type"] == "notebook"
        assert list(cwd.iterdir()) == []
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


LAB_LOCALE_FILE = ("// Language\n// @jupyterlab/translation-extension:plugin\n"
                   "// Language settings.\n// *************************************\n"
                   '{\n    // Language locale\n    "locale": "%s", /* JSON5: a trailing comma */\n}\n')


@pytest.mark.parametrize("ours, lab_locale, expected", [
    (None, None, None),                      # nothing set: the caller keeps the terminal's locale
    (None, "ja_JP", "ja"),                   # Settings > Language, as JupyterLab writes it
    (None, "zh_CN", "zh"),
    (None, "en", "en"),
    (None, "default", None),                 # JupyterLab's "default": not a language we name
    (None, "fr_FR", None),                   # a language the wizard does not speak
    ("zh", "ja_JP", "zh"),                   # Wizard language (ours) comes first
    ("", "ja_JP", "ja"),                     # ours empty: "follow Settings > Language"
    ("{broken", "ja_JP", "ja"),              # a damaged file of ours is read as empty
])
def test_the_lab_language_is_read_from_jupyterlabs_settings(tmp_path, ours, lab_locale, expected):
    from ari_jupyter.cli.lab_settings import LAB_LANGUAGE_SETTINGS, OUR_SETTINGS, lab_language

    if ours is not None:
        path = tmp_path / OUR_SETTINGS
        path.parent.mkdir(parents=True)
        path.write_text(ours if ours.startswith("{") else json.dumps({"wizardLanguage": ours}))
    if lab_locale is not None:
        path = tmp_path / LAB_LANGUAGE_SETTINGS
        path.parent.mkdir(parents=True)
        path.write_text(LAB_LOCALE_FILE % lab_locale)
    assert lab_language({"JUPYTERLAB_SETTINGS_DIR": str(tmp_path)}) == expected
    # the default folder: <JUPYTER_CONFIG_DIR>/lab/user-settings
    config = tmp_path / "config"
    (config / "lab").mkdir(parents=True)
    (config / "lab" / "user-settings").symlink_to(tmp_path)
    assert lab_language({"JUPYTER_CONFIG_DIR": str(config)}) == expected


@pytest.mark.parametrize("argv, expected", [([], "ja"), (["--lang", "zh"], "zh")])
def test_lab_places_the_notebook_in_the_labs_language_not_the_terminals(tmp_path, argv, expected):
    """A terminal with LANG=C and a lab set to Japanese: the notebook placed is the Japanese
    one (the user reads it in the lab); --lang still decides when given."""
    from ari_jupyter.cli.lab_settings import LAB_LANGUAGE_SETTINGS

    settings = tmp_path / "settings"
    (settings / LAB_LANGUAGE_SETTINGS).parent.mkdir(parents=True)
    (settings / LAB_LANGUAGE_SETTINGS).write_text(LAB_LOCALE_FILE % "ja_JP")
    folder = tmp_path / "ws"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C",
           "JUPYTERLAB_SETTINGS_DIR": str(settings)}
    # the exec into JupyterLab is replaced by an exit: only the placing is run
    proc = subprocess.run([sys.executable, "-c", "import os, sys\n"
                           "os.execve = lambda *a: sys.exit(0)\n"
                           "from ari_jupyter.cli import main\n"
                           f"sys.exit(main(['lab', '--dir', {str(folder)!r}] + {argv!r}))"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert (folder / NOTEBOOK_NAME).read_bytes() == notebook_as_placed(packaged_notebook(expected))


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_the_notebooks_list_of_steps_names_them_as_the_wizard_does(lang):
    """The notebook explains the five steps by the names on the wizard's step buttons."""
    from ari_jupyter.i18n import t
    from ari_jupyter.widgets.wizard import STEP_KEYS

    text = "".join("".join(cell["source"]) for cell in
                   json.loads(packaged_notebook(lang).read_text(encoding="utf-8"))["cells"])
    listed = re.findall(r"^([1-5])\. \*\*(.+?)\*\*", text, flags=re.M)
    assert listed == [(str(i + 1), t(key, lang)) for i, key in enumerate(STEP_KEYS)]


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_lab_lessons_opens_the_lessons_in_the_language(lang, capsys, monkeypatch, tmp_path):
    """`ari-jupyter lab --lessons`: JupyterLab rooted at the learner's own copy of the lessons
    (student version, per user, per language), on the first one, from any folder (a teacher's
    `ari-jupyter lab` shows the demo workspace, not the lessons)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path / "settings"))
    assert main(["lab", "--lessons", "--lang", lang, "--print-command", "--", "--no-browser"]) == 0
    argv = capsys.readouterr().out.split()
    folder = tmp_path / "home" / ".local" / "share" / "ari-jupyter" / "lessons" / "student" / lang
    assert f"--ServerApp.root_dir={folder}" in argv
    assert "--LabApp.default_url=/lab/workspaces/ari-lessons/tree/01_allocation_and_hostlists.ipynb" in argv
    assert argv[-1] == "--no-browser" and not any("DEMO_SITE" in a for a in argv)


@pytest.mark.parametrize("flags, workspace, folder", [
    ([], "ari-lessons", "student"),
    (["--teacher"], "ari-lessons-teacher", "teacher"),
])
def test_the_teachers_lab_and_the_students_keep_their_own_workspace(flags, workspace, folder,
                                                                    capsys, monkeypatch, tmp_path):
    """The teacher's lab reopened the student's five tabs (five kernels at once): each lab has
    a workspace of its own, in a folder of its own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path / "settings"))
    assert main(["lab", "--lessons", *flags, "--lang", "en", "--print-command"]) == 0
    argv = capsys.readouterr().out.split()
    home = tmp_path / "home" / ".local" / "share" / "ari-jupyter" / "lessons"
    assert f"--LabApp.default_url=/lab/workspaces/{workspace}/tree/01_allocation_and_hostlists.ipynb" in argv
    assert f"--LabApp.workspaces_dir={home / 'workspaces' / folder}" in argv


def test_lab_lessons_without_lessons_in_the_install_says_so(capsys, monkeypatch):
    from ari_jupyter.cli import lab

    monkeypatch.setattr(lab, "lessons_folder", lambda lang: None)  # the name the command calls
    assert main(["lab", "--lessons", "--lang", "en", "--print-command"]) == 1
    assert "this install of ari-jupyter has no lessons in it" in capsys.readouterr().err
