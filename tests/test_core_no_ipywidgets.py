"""The core works where ipywidgets cannot be imported: every module outside widgets/,
server/ and hubservice/ (a front end run in the hub's environment, with jupyterhub) imports,
and the command line probes a demo site (checked in a fresh interpreter
whose import system refuses ipywidgets)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from env_support import env_without

CHECK = textwrap.dedent(
    """
    import importlib, json, pkgutil, sys

    class RefuseIpywidgets:
        def find_spec(self, name, path=None, target=None):
            if name == "ipywidgets" or name.startswith("ipywidgets."):
                raise ImportError("ipywidgets is unavailable in this test")
            return None

    sys.meta_path.insert(0, RefuseIpywidgets())
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        pass
    else:
        raise SystemExit("the blocker did not work")

    import ari_jupyter

    NOT_CORE = ("ari_jupyter.widgets", "ari_jupyter.server", "ari_jupyter.hubservice")
    imported = []

    def walk(package):
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            if info.name.startswith(NOT_CORE) or info.name.endswith(".__main__"):
                continue  # __main__ runs the CLI on import
            module = importlib.import_module(info.name)
            imported.append(info.name)
            if info.ispkg:
                walk(module)

    walk(ari_jupyter)

    from ari_jupyter.cli import main
    code = main(["probe", "--site", "laptop", "--json"])
    print(json.dumps({"imported": imported, "code": code,
                      "ipywidgets_loaded": "ipywidgets" in sys.modules}))
    """
)


def test_core_and_cli_without_ipywidgets():
    env = env_without("ARI_")
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    *probe_json, summary_line = done.stdout.strip().splitlines()
    summary = json.loads(summary_line)
    probes = {p["id"]: p["status"] for p in json.loads("\n".join(probe_json))["probes"]}
    assert summary["code"] == 1  # the laptop has no sbatch: a failed probe, not a crash
    assert probes["sbatch"] == "fail" and probes["time_left"] == "skip"
    assert summary["ipywidgets_loaded"] is False
    for module in ("ari_jupyter.hosts.host", "ari_jupyter.base.redact", "ari_jupyter.slurm.allocation",
                   "ari_jupyter.probes", "ari_jupyter.probes.runner", "ari_jupyter.probes.parsers",
                   "ari_jupyter.cli.probe"):
        assert module in summary["imported"]
