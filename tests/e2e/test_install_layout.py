"""A plain ``pip install`` ships both extensions (setup.cfg ``[options.data_files]``).

Editable installs do not install data_files, so these tests skip there, unless
``ARI_E2E_EXPECT_INSTALLED=1`` (CI, which installs with ``pip install .``) makes them required.
"""
from __future__ import annotations

import filecmp
import json
import os
import subprocess
import sys

import pytest

from .jupyter_process import (BUILT_LABEXTENSION, LABEXTENSION_NAME, SERVER_CONFIG,
                              installed_labextension, installed_server_config)


@pytest.fixture
def installed():
    ext, config = installed_labextension(), installed_server_config()
    if ext is None or config is None:
        if os.environ.get("ARI_E2E_EXPECT_INSTALLED") == "1":
            pytest.fail(f"ari-jupyter is not pip-installed into {sys.prefix} "
                        f"(labextension: {ext}, server config: {config})")
        pytest.skip("editable install: data_files are not installed")
    return ext, config


def test_the_installed_labextension_is_the_committed_build(installed):
    ext, _ = installed
    compare = filecmp.dircmp(BUILT_LABEXTENSION, ext, ignore=["install.json"])
    assert not compare.left_only and not compare.right_only and not compare.diff_files
    assert not compare.subdirs["static"].diff_files
    assert not compare.subdirs["static"].left_only and not compare.subdirs["static"].right_only
    assert json.loads((ext / "install.json").read_text())["packageName"] == "ari-jupyter"


def test_the_installed_server_config_enables_the_extension(installed):
    _, config = installed
    assert config.read_text() == SERVER_CONFIG.read_text()


def test_jupyter_lists_both_extensions_enabled_and_ok(installed, tmp_path):
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path), "NO_COLOR": "1"}
    labext = subprocess.run([sys.executable, "-m", "jupyterlab.labextensions", "list"], env=env,
                            capture_output=True, text=True, timeout=120)
    line = next((l for l in (labext.stdout + labext.stderr).splitlines()
                 if LABEXTENSION_NAME in l), "")
    assert "enabled" in line and "OK" in line, labext.stdout + labext.stderr

    server = subprocess.run(
        [sys.executable, "-c", "from jupyter_server.extension.serverextension import "
         "ListServerExtensionsApp as A; A.launch_instance(argv=[])"],
        env=env, capture_output=True, text=True, timeout=120)
    text = server.stdout + server.stderr
    assert "ari_jupyter.server enabled" in text.replace("\x1b[32m", "").replace("\x1b[0m", "")
    assert "ari_jupyter.server  OK" in text.replace("\x1b[32m", "").replace("\x1b[0m", ""), text
