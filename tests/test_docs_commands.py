"""Every command block in README.md and docs/*.md runs, so an example cannot rot.

The fenced blocks are taken from the Markdown itself:

- ``bash`` blocks run in order, per page, in one sandbox (a fresh HOME and working directory
  with the repository's notebooks/ linked in, a Jupyter config dir of its own, no ``SLURM_*``),
  as ``bash -e -o pipefail``; they must exit 0.
- ``python`` and ``json`` blocks that set ``c.AriWizard`` / ``{"AriWizard": ...}`` are site
  config files: loaded as one, every value they set must survive validation.
- other ``python`` blocks run as scripts, off-cluster (the wizard then opens a demo site).

A comment on the line before a block changes that:

- ``<!-- docs-test: cluster SITE -->``: the block needs a cluster; it runs with SITE's recorded
  ``SLURM_*`` (as if inside that allocation) and may report failed checks off-cluster (exit 1),
  but never a usage error (2) or a traceback.
- ``<!-- docs-test: covered-by PATH -->``: the block starts something long-running (JupyterLab,
  Voilà, the whole test suite); PATH is the test that runs it, and must exist and name it.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL = {"bash", "sh", "shell", "console"}
MARKER = re.compile(r"<!--\s*docs-test:\s*(?P<kind>cluster|covered-by)\s+(?P<arg>\S+)\s*-->")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*$")
BLOCK_TIMEOUT = 240


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    text: str
    marker: tuple[str, str] | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"

    @property
    def is_config(self) -> bool:
        return (self.lang == "python" and re.search(r"^\s*c\.AriWizard\.", self.text, re.M) is not None) \
            or (self.lang == "json" and '"AriWizard"' in self.text)


def blocks_of(page: Path) -> list[Block]:
    """The fenced blocks of ``page`` with the docs-test marker just above each, if any."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        start, lang = i, match.group("lang")
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        previous = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        marker = MARKER.search(previous)
        found.append(Block(page, start + 1, lang, "\n".join(lines[start + 1:j]) + "\n",
                           (marker["kind"], marker["arg"]) if marker else None))
        i = j + 1
    return found


ALL = [block for page in PAGES for block in blocks_of(page)]
SHELL_PAGES = sorted({b.page for b in ALL if b.lang in SHELL}, key=str)


def _sandbox_env(root: Path, slurm: dict[str, str] | None = None) -> dict[str, str]:
    home, config = root / "home", root / "jupyter-config"
    home.mkdir(exist_ok=True)
    config.mkdir(exist_ok=True)
    # Short probe timeouts: a block that meets a missing controller answers in seconds.
    (config / "ari_jupyter_config.py").write_text("c.AriWizard.probe_timeout = 5.0\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "ARI_", "PYTHON", "JUPYTER_")) and k != "VIRTUAL_ENV"}
    scripts = sysconfig.get_path("scripts")
    env.update(HOME=str(home), USER="newcomer", JUPYTER_CONFIG_DIR=str(config),
               PATH=os.pathsep.join([scripts, str(Path(sys.executable).parent), env.get("PATH", "")]),
               LANG="C.UTF-8", LC_ALL="C.UTF-8")
    env.update(slurm or {})
    return env


def _site_slurm_env(site: str) -> dict[str, str]:
    from ari_jupyter.hosts.recorded_site import RecordedSite

    return {k: v for k, v in RecordedSite.load(site).env.items() if k.startswith("SLURM_")}


def test_the_pages_have_command_blocks_and_markers_parse():
    assert any(b.lang in SHELL for b in ALL) and any(b.lang == "python" for b in ALL)
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for comment in re.findall(r"<!--\s*docs-test:.*?-->", text):
            assert MARKER.search(comment), f"{page.name}: malformed marker {comment}"


@pytest.mark.parametrize("page", SHELL_PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_shell_blocks_run(page, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "notebooks").symlink_to(REPO / "notebooks")  # blocks that read the lessons
    ran = 0
    for block in [b for b in ALL if b.page == page and b.lang in SHELL]:
        kind, arg = block.marker or ("", "")
        if kind == "covered-by":
            _check_covered(block, arg)
            continue
        env = _sandbox_env(tmp_path, _site_slurm_env(arg) if kind == "cluster" else None)
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=work,
                              env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
        output = done.stdout + done.stderr
        allowed = {0, 1} if kind == "cluster" else {0}
        assert done.returncode in allowed and "Traceback" not in output, (
            f"{block.where}: exit {done.returncode}\n{block.text}\n{output[-3000:]}")
        ran += 1
    assert ran or all(b.marker for b in ALL if b.page == page and b.lang in SHELL)


def _programs(script: str) -> list[str]:
    """The program each command line of ``script`` starts (after any VAR=value words)."""
    programs = []
    for line in script.replace("\\\n", " ").splitlines():
        words = [w for w in line.split("#", 1)[0].split() if not re.match(r"^\w+=", w)]
        if words:
            programs.append(words[0])
    return programs


def _check_covered(block: Block, test_path: str) -> None:
    target = REPO / test_path
    assert target.is_file(), f"{block.where}: covered-by {test_path}, which does not exist"
    text = target.read_text(encoding="utf-8")
    for program in _programs(block.text):
        assert program in text or block.page.name in text, (
            f"{block.where}: {test_path} neither runs {program!r} nor reads {block.page.name}")


@pytest.mark.parametrize("block", [b for b in ALL if b.is_config], ids=lambda b: b.where)
def test_config_blocks_load_and_every_value_is_kept(block, tmp_path):
    from ari_jupyter.wizard.config import AriWizard, load_config

    name = "ari_jupyter_config.py" if block.lang == "python" else "ari_jupyter_config.json"
    (tmp_path / name).write_text(block.text, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = load_config([tmp_path])
    values = dict(config.AriWizard)
    assert values, f"{block.where}: nothing loaded"
    wizard = AriWizard(config=config)
    for key, value in values.items():
        assert getattr(wizard, key) == value, f"{block.where}: {key} was not kept"


@pytest.mark.parametrize("block", [b for b in ALL if b.lang == "python" and not b.is_config
                                   and (b.marker or ("",))[0] != "covered-by"],
                         ids=lambda b: b.where)
def test_python_blocks_run(block, tmp_path):
    env = _sandbox_env(tmp_path)
    done = subprocess.run([sys.executable, "-c", block.text], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
    assert done.returncode == 0, f"{block.where}\n{block.text}\n{done.stderr[-3000:]}"
