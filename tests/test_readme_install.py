"""The README's install line, run as written with the distribution's Python in a fresh directory.

Debian 12's ``/usr/bin/python3`` is "externally managed" (PEP 668): a bare ``pip install .``
fails there, so the README's first command makes and activates a virtual environment. This test
takes that line from README.md, only swapping its last command ``ari-jupyter lab`` (which would
stay in JupyterLab) for ``ari-jupyter --help`` and ``ari-jupyter lab --print-command`` (the
same plan, nothing started), and runs it with ``bash -c`` in a copy of the source tree with a
fresh HOME, so ``~/.venvs`` is new and ``python3`` is ``/usr/bin/python3``. It needs PyPI (the
machine's pip settings are passed through). CI (``CI=true``) fails instead of skipping.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SYSTEM_PYTHON = Path("/usr/bin/python3")
LAUNCH = "ari-jupyter lab"
NOT_SOURCE = shutil.ignore_patterns(".git", "node_modules", "build", "dist", "*.egg-info",
                                    "__pycache__", ".pytest_cache", ".hypothesis",
                                    "test-artifacts", ".ipynb_checkpoints", ".venv")

pytestmark = pytest.mark.slow


def setup_commands(readme: str) -> list[str]:
    """The ```bash blocks of the README's "Two commands on a fresh machine" section."""
    section = readme.split("## Two commands on a fresh machine", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)]


def test_the_readme_keeps_two_setup_commands_the_first_in_a_venv():
    commands = setup_commands((REPO / "README.md").read_text(encoding="utf-8"))
    assert len(commands) == 2, commands
    install, tests = commands
    assert "\n" not in install and install.startswith("python3 -m venv ")
    assert install.endswith(" && " + LAUNCH), install
    assert tests == "bash tests/run"


def _skip_or_fail(reason: str):
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI runs the README install line, but {reason}")
    pytest.skip(reason)


def test_the_readme_install_line_works_on_the_distribution_python(tmp_path):
    if not SYSTEM_PYTHON.exists():
        _skip_or_fail(f"{SYSTEM_PYTHON} does not exist")
    has_venv = subprocess.run([str(SYSTEM_PYTHON), "-c", "import ensurepip, venv"],
                              capture_output=True).returncode == 0
    if not has_venv:
        _skip_or_fail(f"{SYSTEM_PYTHON} has no venv/ensurepip (apt install python3-venv)")
    install = setup_commands((REPO / "README.md").read_text(encoding="utf-8"))[0]
    line = install[: -len(LAUNCH)] + "ari-jupyter --help && ari-jupyter lab --print-command"

    source, home = tmp_path / "ari-jupyter", tmp_path / "home"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    home.mkdir()
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYENV_VERSION", "CONDA_PREFIX", "IPYTHONDIR")
    # a new user's shell: their HOME decides where things go (no session XDG/Jupyter folders)
    env = {k: v for k, v in os.environ.items()
           if k not in drop and not k.startswith(("SLURM_", "XDG_", "JUPYTER_"))}
    env.update(PATH="/usr/bin:/bin", HOME=str(home), USER="newcomer")
    done = subprocess.run(["bash", "-c", line], cwd=source, env=env, capture_output=True,
                          text=True, timeout=1500)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"$ {line}\n" + "\n".join(output.splitlines()[-40:])
    assert "usage: ari-jupyter" in done.stdout and "lab" in done.stdout
    venv_python = home / ".venvs" / "ari-jupyter" / "bin" / "python"
    assert venv_python.exists()
    base = subprocess.run([str(venv_python), "-c", "import sys; print(sys.base_prefix)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert base == "/usr", base  # the venv is the distribution's Python, not another one
    assert "ARI_JUPYTER_DEMO_SITE=rccs-cloud" in done.stdout
    assert f"--ServerApp.root_dir={home}/ari-demo/rccs-cloud" in done.stdout
    # The lessons are package data: a plain `pip install .` has them, and the lab opens the
    # learner's own copy of them, from any folder, never the clone's.
    lessons = subprocess.run([str(venv_python), "-m", "ari_jupyter", "lab", "--lessons", "--lang", "zh",
                              "--print-command"], cwd=home, env=env, capture_output=True, text=True)
    assert lessons.returncode == 0, lessons.stderr
    assert f"--ServerApp.root_dir={home}/.local/share/ari-jupyter/lessons/student/zh " in lessons.stdout
    exported = subprocess.run([str(venv_python), "-m", "ari_jupyter", "lessons", "export",
                               str(home / "handout")], cwd=home, env=env, capture_output=True, text=True)
    # every lesson in every language, as the package holds them (5 lessons x en/ja/zh)
    lessons_in_package = len([p for p in (REPO / "ari_jupyter" / "notebooks" / "teaching").rglob("*.ipynb")
                              if ".ipynb_checkpoints" not in p.parts])
    assert lessons_in_package == 15
    assert exported.returncode == 0 and len(list((home / "handout").rglob("*.ipynb"))) == lessons_in_package
