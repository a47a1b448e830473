"""``ari-jupyter lab``: open JupyterLab on the wizard notebook, with a demo site off-cluster.

The notebook is copied into the working directory when absent (never overwritten, so a user's
edits survive), and when the current process is not inside a SLURM allocation the demo site is
handed to the kernel through ``ARI_JUPYTER_DEMO_SITE`` so the wizard has something real to show.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

NOTEBOOK_NAME = "ari_multinode_wizard.ipynb"
DEFAULT_DEMO_SITE = "rccs-cloud"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "lab",
        help="open JupyterLab on the ARI multi-node wizard notebook",
        description="Copy the wizard notebook into DIR if absent and open JupyterLab on it. "
        "Outside a SLURM allocation the wizard starts on a recorded demo site.",
    )
    parser.add_argument("--dir", default=".", help="where the notebook lives (default: .)")
    parser.add_argument("--demo-site", default=None,
                        help="demo site to use when not inside an allocation "
                        f"(default: $ARI_JUPYTER_DEMO_SITE, c.AriWizard.demo_site, or {DEFAULT_DEMO_SITE})")
    parser.add_argument("--print-command", action="store_true",
                        help="print the command and environment changes instead of starting JupyterLab")
    parser.add_argument("jupyter_args", nargs=argparse.REMAINDER,
                        help="extra arguments for `jupyter lab` (after --)")
    parser.set_defaults(handler=run)


@dataclass(frozen=True)
class LabPlan:
    argv: list[str]
    env_changes: dict[str, str]
    notebook: Path
    copy_from: Path | None
    inside_allocation: bool


def packaged_notebook() -> Path:
    return Path(__file__).resolve().parent.parent / "notebooks" / NOTEBOOK_NAME


def plan_lab(directory: str, demo_site: str | None, extra: Sequence[str],
             env: Mapping[str, str], *, euid: int | None = None,
             configured_demo_site: str = "") -> LabPlan:
    """Everything ``run`` will do, computed without side effects (tested directly)."""
    from ..allocation import Allocation

    notebook = Path(directory).resolve() / NOTEBOOK_NAME
    copy_from = None if notebook.exists() else packaged_notebook()
    inside = Allocation.from_env(env).inside_allocation
    env_changes: dict[str, str] = {}
    if not inside:
        env_changes["ARI_JUPYTER_DEMO_SITE"] = (
            demo_site or env.get("ARI_JUPYTER_DEMO_SITE") or configured_demo_site or DEFAULT_DEMO_SITE
        )
    argv = [sys.executable, "-m", "jupyter", "lab", str(notebook)]
    if (os.geteuid() if euid is None else euid) == 0:
        argv.append("--allow-root")  # jupyter_server refuses to start as root otherwise
    extra = list(extra)
    if extra and extra[0] == "--":
        extra = extra[1:]
    argv.extend(extra)
    return LabPlan(argv=argv, env_changes=env_changes, notebook=notebook,
                   copy_from=copy_from, inside_allocation=inside)


def demo_site_problem(site: str) -> str:
    """Why ``site`` cannot be opened as a demo site, or "" (a bundled name or a site file)."""
    from ..host import list_sites

    if site in list_sites() or (site.endswith(".json") and Path(site).is_file()):
        return ""
    return f"unknown demo site {site!r}; available: {', '.join(list_sites())} or a site .json file"


def run(args) -> int:
    from ..config import wizard_config
    from ..host import RecordedSite

    config = wizard_config()
    configured = config.demo_site
    plan = plan_lab(args.dir, args.demo_site, args.jupyter_args, os.environ,
                    configured_demo_site=configured)
    site = plan.env_changes.get("ARI_JUPYTER_DEMO_SITE")
    if site and demo_site_problem(site):
        print(f"ari-jupyter lab: {demo_site_problem(site)}", file=sys.stderr)
        return 2
    if args.print_command:
        for key, value in plan.env_changes.items():
            print(f"{key}={value}")
        print(" ".join(plan.argv))
        return 0
    if plan.copy_from is not None:
        plan.notebook.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(plan.copy_from, plan.notebook)
        print(f"Copied the wizard notebook to {plan.notebook}", file=sys.stderr)
    if not plan.inside_allocation:
        print("Not inside a SLURM allocation: the wizard starts on demo site "
              f"{plan.env_changes['ARI_JUPYTER_DEMO_SITE']!r}; Write puts its checkpoints under "
              f"{config.demo_workspace_for(RecordedSite.load(site).name)} "
              "(c.AriWizard.demo_workspace_template).",
              file=sys.stderr)
    env = {**os.environ, **plan.env_changes}
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(plan.notebook.parent)
    # Become JupyterLab (no parent left behind): signals and the exit code are its own.
    os.execve(plan.argv[0], plan.argv, env)
    return 0  # not reached
