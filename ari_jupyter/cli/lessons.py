"""``ari-jupyter lessons``: the learner's copies of the teaching lessons.

``reset`` puts the packaged lessons back over a learner's edited copies (each edited copy is
moved to ``.reset/`` beside them first) and says which of them a running JupyterLab of this
user has open (a kernel session on it: that tab still holds the old cells); ``path`` prints the folder ``ari-jupyter lab
--lessons`` opens; ``export DIR`` writes a version of every lesson, in every language, to
``DIR`` (to hand out: an LMS, a shared folder, an nbgitpuller repository).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.request
from pathlib import Path

from .lab_settings import lab_language
from ..i18n import t
from ..wizard.lesson_copies import (
    ExportRefused, LessonsRefused, copies_folder, export_lessons, place_lessons, reset_lessons,
)
from . import output_lang
from ..wizard.lessons import packaged_lessons


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "lessons", help="the teaching lessons: reset your copies, show where they are, export them",
        description="Your copies of the teaching lessons, which `ari-jupyter lab --lessons` opens "
        "(student version; --teacher: the teacher's version, with the solutions).")
    actions = parser.add_subparsers(dest="lessons_action", metavar="ACTION")
    reset = actions.add_parser(
        "reset", help="restore the lessons (all, or those named) as they were first placed",
        description="Put the packaged lessons back over your copies. An edited copy is moved to "
        "the .reset folder beside them first, so nothing you wrote is lost.")
    reset.add_argument("names", nargs="*", metavar="LESSON",
                       help="lessons to restore: 01, 01_allocation_and_hostlists or the file "
                       "name (default: all)")
    path = actions.add_parser("path", help="print the folder of your copies of the lessons",
                              description="Print the folder `ari-jupyter lab --lessons` opens.")
    export = actions.add_parser(
        "export", help="write every lesson, in every language, to a folder",
        description="Write the student version (or, with --teacher, the teacher's) of every "
        "lesson in English, Japanese and Chinese to DIR (English at the top, ja/ and zh/ beside): "
        "copies to hand out. Files already in DIR are replaced.")
    export.add_argument("directory", metavar="DIR", help="the folder to write to")
    for sub in (reset, path, export):
        sub.add_argument("--teacher", action="store_true",
                         help="the teacher's version (with the solutions), not the student's")
    path.add_argument("--place", action="store_true",
                      help="put the copies in place first, as `ari-jupyter lab --lessons` does "
                      "on first open (a hub's spawner command runs this before the server)")
    for sub in (reset, path):
        sub.add_argument("--dir", default=None, help="the folder of the copies (default: "
                         "$XDG_DATA_HOME/ari-jupyter/lessons/<student|teacher>/<language>)")
    parser.set_defaults(handler=run)
    parser.set_defaults(_print_help=parser.print_help)


def _notebook_lang(args: argparse.Namespace, lang: str) -> str:
    return getattr(args, "lang", None) or lab_language(os.environ) or lang


def run(args: argparse.Namespace) -> int:
    lang = output_lang(args)
    action = getattr(args, "lessons_action", None)
    if action is None:
        args._print_help(sys.stderr)
        return 2
    if action == "export":
        return _export(Path(args.directory), args.teacher, lang)
    notebook_lang = _notebook_lang(args, lang)
    folder = Path(args.dir) if args.dir else copies_folder(notebook_lang, args.teacher)
    try:
        if action == "path":
            if args.place:
                place_lessons(notebook_lang, args.teacher, folder=folder)
            print(os.path.abspath(folder))
            return 0
        done = reset_lessons(notebook_lang, args.teacher, names=args.names, folder=folder)
    except KeyError as exc:
        names = ", ".join(p.stem for p in packaged_lessons(notebook_lang))
        print("ari-jupyter lessons: " + t("cli.lessons.unknown", lang, name=repr(exc.args[0]),
                                            lessons=names), file=sys.stderr)
        return 2
    except LessonsRefused as exc:
        print("ari-jupyter lessons: " + t("cli.lab.lessons_in_git", lang, folder=str(exc.folder),
                                            tree=str(exc.tree)), file=sys.stderr)
        return 1
    for lesson, kept in done:
        if kept is None:
            print(t("cli.lessons.reset_one", lang, lesson=str(lesson)))
        else:
            print(t("cli.lessons.reset_kept", lang, lesson=str(lesson), kept=str(kept)))
    for lesson, url in open_in_a_lab([lesson for lesson, _ in done]):
        print("ari-jupyter lessons: " + t("cli.lessons.open_in_lab", lang, lesson=lesson.name,
                                            url=url), file=sys.stderr)
    return 0


def open_in_a_lab(lessons: list[Path], timeout: float = 2.0) -> list[tuple[Path, str]]:
    """(lesson, server URL) for each of ``lessons`` a running Jupyter server of this user has a
    kernel session on (the servers its runtime folder lists, asked with their own token)."""
    # cold start: jupyter_server's list of running servers, only once something was reset
    from jupyter_server.serverapp import list_running_servers

    wanted = {os.path.realpath(lesson): lesson for lesson in lessons}
    found: list[tuple[Path, str]] = []
    for server in list_running_servers():
        url, root = server.get("url", ""), server.get("root_dir") or server.get("notebook_dir", "")
        request = urllib.request.Request(url.rstrip("/") + "/api/sessions",
                                         headers={"Authorization": f"token {server.get('token', '')}"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                sessions = json.loads(answer.read())
        except (OSError, ValueError):
            continue  # a server that does not answer (gone, another user's) has nothing open
        for session in sessions if isinstance(sessions, list) else ():
            path = session.get("path") or (session.get("notebook") or {}).get("path") or ""
            lesson = wanted.get(os.path.realpath(os.path.join(root, path)))
            if lesson is not None and (lesson, url) not in found:
                found.append((lesson, url))
    return found


def _export(directory, teacher: bool, lang: str) -> int:
    try:
        count = export_lessons(directory, teacher)
    except LessonsRefused as exc:
        print("ari-jupyter lessons: " + t("cli.lab.lessons_in_git", lang, folder=str(exc.folder),
                                            tree=str(exc.tree)), file=sys.stderr)
        return 1
    except ExportRefused as exc:
        print("ari-jupyter lessons: " + t(f"cli.lessons.export_refused.{exc.why}", lang,
                                            folder=str(exc.folder), owner=exc.owner), file=sys.stderr)
        return 1
    version = t("cli.lessons.version_teacher" if teacher else "cli.lessons.version_student", lang)
    print(t("cli.lessons.exported", lang, count=count, version=version, folder=str(directory)))
    return 0
