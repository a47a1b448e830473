"""``ari-jupyter lab``: open JupyterLab on the wizard notebook, with a demo site off-cluster.

The notebook lives in the workspace (the one the wizard writes checkpoints to: the site's
``workspace_template`` inside an allocation, the demo workspace outside one), or in a per-user
folder when the workspace cannot be created; never in the current directory, so starting it
from a git work tree leaves nothing behind. It is copied there when absent (never overwritten
once edited, so a user's edits survive; an unedited one in another language is replaced).
JupyterLab is rooted at that folder and its URL (printed and opened) is the notebook itself. Outside a SLURM allocation the demo site is handed to the kernel through
``ARI_JUPYTER_DEMO_SITE`` so the wizard has something real to show.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from ..wizard.notebooks import (DEFAULT_DEMO_SITE, NOTEBOOK_NAME, default_directory, demo_site_for,
                               packaged_notebook, replace_atomically, should_refresh, user_data_dir)
from ..i18n import error_text, t
from . import output_lang
from .lab_settings import lab_language
from ._localized import error_line
from ..slurm.allocation import Allocation
from ..wizard.lessons import FIRST_LESSON, LESSONS_DIR, lessons_folder
from ..wizard.config import wizard_config
from ..hosts.recorded_site import RecordedSite
from ..hosts.host import SiteError
from ..wizard.lesson_copies import LessonsRefused, copies_folder, lessons_home, place_lessons

LESSONS_WORKSPACE = "ari-lessons"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "lab",
        help="open JupyterLab on the ARI multi-node wizard notebook",
        description="Open JupyterLab on the wizard notebook, kept in the workspace (copied there "
        "if absent; never into the current directory). Outside a SLURM allocation the wizard "
        "starts on a recorded demo site and the workspace is the demo workspace.",
    )
    parser.add_argument("--dir", default=None,
                        help="folder for the notebook and JupyterLab's root (default: the "
                        "workspace, or ~/.local/share/ari-jupyter when it cannot be created)")
    # --site as every other command names it; --demo-site, its first name, still works.
    parser.add_argument("--site", "--demo-site", dest="demo_site", default=None, metavar="NAME|FILE",
                        help="demo site to use when not inside an allocation "
                        f"(default: $ARI_JUPYTER_DEMO_SITE, c.AriWizard.demo_site, or {DEFAULT_DEMO_SITE})")
    parser.add_argument("--lessons", action="store_true",
                        help="open the teaching lessons instead of the wizard: your own copy of the "
                        "student version, in ~/.local/share/ari-jupyter/lessons (placed on first "
                        "open, kept once edited; `ari-jupyter lessons reset` restores them)")
    parser.add_argument("--teacher", action="store_true",
                        help="with --lessons: the teacher's version, with the solutions")
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


def plan_lab(directory: str | None, demo_site: str | None, extra: Sequence[str],
             env: Mapping[str, str], *, euid: int | None = None,
             configured_demo_site: str = "", config=None, lang: str = "en") -> LabPlan:
    """Everything ``run`` will do, computed without side effects (tested directly)."""

    inside = Allocation.from_env(env).inside_allocation
    env_changes: dict[str, str] = {}
    site = demo_site_for(demo_site, env, configured_demo_site)
    if not inside:
        env_changes["ARI_JUPYTER_DEMO_SITE"] = site
    folder = Path(directory) if directory else default_directory(inside, site, env, config)
    folder = Path(os.path.abspath(os.path.expanduser(str(folder))))
    notebook = folder / NOTEBOOK_NAME
    copy_from = packaged_notebook(lang) if not notebook.exists() or should_refresh(notebook, lang) \
        else None
    # This interpreter's JupyterLab, beside the lab extension installed with this package:
    # `jupyter lab` would run whichever jupyter-lab comes first on PATH (a site's module, a
    # system install), which does not load it.
    argv = [sys.executable, "-m", "jupyterlab",
            f"--ServerApp.root_dir={folder}",
            # The printed URL and the browser open the notebook, not the launcher.
            f"--LabApp.default_url=/lab/tree/{NOTEBOOK_NAME}"]
    if (os.geteuid() if euid is None else euid) == 0:
        argv.append("--allow-root")  # jupyter_server refuses to start as root otherwise
    extra = list(extra)
    if extra and extra[0] == "--":
        extra = extra[1:]
    argv.extend(extra)
    return LabPlan(argv=argv, env_changes=env_changes, notebook=notebook,
                   copy_from=copy_from, inside_allocation=inside)


def plan_lessons(folder: Path, extra: Sequence[str], *, teacher: bool = False,
                 env: Mapping[str, str] | None = None, euid: int | None = None) -> LabPlan:
    """JupyterLab rooted at the lessons, on the first one; nothing to copy, no demo site (each
    lesson names the sites it uses)."""

    # A workspace of their own: the wizard's lab, also open, keeps its layout (two labs of one
    # user share the "default" workspace, and each would save its tabs over the other's). The
    # teacher's lab and the student's have one each, in folders of their own: a teacher trying
    # both would otherwise get the other lab's tabs back, each with its kernel started again.
    role = "teacher" if teacher else "student"
    workspace = LESSONS_WORKSPACE + ("-teacher" if teacher else "")
    workspaces_dir = lessons_home(env) / "workspaces" / role
    argv = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={folder}",
            f"--LabApp.workspaces_dir={workspaces_dir}",
            f"--LabApp.default_url=/lab/workspaces/{workspace}/tree/{FIRST_LESSON}"]
    if (os.geteuid() if euid is None else euid) == 0:
        argv.append("--allow-root")
    extra = list(extra)
    argv.extend(extra[1:] if extra and extra[0] == "--" else extra)
    return LabPlan(argv=argv, env_changes={}, notebook=folder / FIRST_LESSON, copy_from=None,
                   inside_allocation=False)


def _place_notebook(plan: LabPlan, lang: str = "en") -> None:
    plan.notebook.parent.mkdir(parents=True, exist_ok=True)
    if plan.copy_from is not None:
        replace_atomically(plan.copy_from, plan.notebook)
        print(t("cli.lab.copied", lang, path=str(plan.notebook)), file=sys.stderr)


def run(args) -> int:
    lang = output_lang(args)
    # the notebook is read in the lab: in the language it is set to, unless --lang says
    notebook_lang = getattr(args, "lang", None) or lab_language(os.environ) or lang
    if args.lessons:
        return _open_lessons(args, notebook_lang, lang)
    config = wizard_config()
    configured = config.demo_site
    plan = plan_lab(args.dir, args.demo_site, args.jupyter_args, os.environ,
                    configured_demo_site=configured, config=config, lang=notebook_lang)
    site = plan.env_changes.get("ARI_JUPYTER_DEMO_SITE")
    demo = None
    if site:
        try:
            demo = RecordedSite.load(site)  # the wizard's own check: unknown, missing or malformed
        except SiteError as exc:
            print(error_line("lab", error_text(exc, lang), lang), file=sys.stderr)
            return 2
    if args.print_command:
        for key, value in plan.env_changes.items():
            print(f"{key}={value}")
        print(" ".join(plan.argv))
        return 0
    try:
        _place_notebook(plan, lang)
    except OSError as exc:
        if args.dir:
            print("ari-jupyter lab: " + t("cli.lab.cannot_place", lang, directory=str(plan.notebook.parent),
                                            error=str(exc)), file=sys.stderr)
            return 1
        fallback = user_data_dir(os.environ)
        print("ari-jupyter lab: " + t("cli.lab.fallback", lang, directory=str(plan.notebook.parent),
                                        error=str(exc.strerror or exc), fallback=str(fallback)),
              file=sys.stderr)
        plan = plan_lab(str(fallback), args.demo_site, args.jupyter_args, os.environ,
                        configured_demo_site=configured, config=config, lang=notebook_lang)
        try:
            _place_notebook(plan, lang)
        except OSError as exc2:
            print("ari-jupyter lab: " + t("cli.lab.cannot_place", lang, directory=str(fallback),
                                            error=str(exc2)), file=sys.stderr)
            return 1
    if not plan.inside_allocation and demo is not None:
        print(t("cli.lab.demo_site", lang, site=repr(site),
                workspace=config.demo_workspace_for(demo.name)), file=sys.stderr)
    return _become_jupyterlab(plan)


def _open_lessons(args, notebook_lang: str, lang: str) -> int:
    if lessons_folder(notebook_lang) is None:
        print("ari-jupyter lab: " + t("cli.lab.no_lessons", lang, folder=str(LESSONS_DIR)),
              file=sys.stderr)
        return 1
    teacher = bool(getattr(args, "teacher", False))
    folder = Path(args.dir) if args.dir else copies_folder(notebook_lang, teacher)
    plan = plan_lessons(folder, args.jupyter_args, teacher=teacher)
    if args.print_command:
        print(" ".join(plan.argv))
        return 0
    try:
        placed = place_lessons(notebook_lang, teacher, folder=folder)
    except LessonsRefused as exc:
        print("ari-jupyter lab: " + t("cli.lab.lessons_in_git", lang, folder=str(exc.folder),
                                        tree=str(exc.tree)), file=sys.stderr)
        return 1
    except OSError as exc:
        print("ari-jupyter lab: " + t("cli.lab.cannot_place", lang, directory=str(folder),
                                        error=str(exc.strerror or exc)), file=sys.stderr)
        return 1
    key = "cli.lab.lessons_teacher" if teacher else "cli.lab.lessons_student"
    print(t(key, lang, folder=str(placed.folder), written=len(placed.written),
            kept=len(placed.kept)), file=sys.stderr)
    return _become_jupyterlab(plan)


def _become_jupyterlab(plan: LabPlan) -> int:
    env = {**os.environ, **plan.env_changes}
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(plan.notebook.parent)
    # Become JupyterLab (no parent left behind): signals and the exit code are its own.
    os.execve(plan.argv[0], plan.argv, env)
    return 0  # not reached
