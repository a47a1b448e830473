"""The suite runs on its own HOME and XDG folders: it never reads or writes the files of the
user who runs it, and two sessions on one machine cannot fail each other."""
import os
import pwd
import subprocess
import sys
from pathlib import Path

from conftest import TEST_HOME

REAL_HOME = Path(pwd.getpwuid(os.getuid()).pw_dir)


def _inside(path, folder) -> bool:
    return Path(path).resolve().is_relative_to(Path(folder).resolve())


def test_home_and_xdg_folders_are_the_sessions_own():
    assert Path.home() == TEST_HOME != REAL_HOME
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME",
                 "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR"):
        assert _inside(os.environ[name], TEST_HOME), name
    # outside /tmp, as a user's HOME is: a workspace under it is not node-local
    from ari_jupyter.probes.filesystem import NODE_LOCAL_PREFIXES

    assert not any(_inside(TEST_HOME, prefix) for prefix in NODE_LOCAL_PREFIXES if Path(prefix).exists())


def test_the_users_runs_list_and_jupyter_config_are_never_looked_at():
    from jupyter_core.paths import jupyter_config_dir, jupyter_config_path, jupyter_data_dir

    from ari_jupyter.checkpoint.known_workspaces import FILE_ENV, recorded_workspaces_file

    # a command that drops our ARI_JUPYTER_WORKSPACES_FILE still writes into the session's HOME
    without = {k: v for k, v in os.environ.items() if k != FILE_ENV}
    assert _inside(recorded_workspaces_file(without), TEST_HOME)
    assert _inside(jupyter_config_dir(), TEST_HOME) and _inside(jupyter_data_dir(), TEST_HOME)
    real_jupyter = (REAL_HOME / ".jupyter", REAL_HOME / ".local" / "share" / "jupyter")
    assert not any(_inside(p, r) for p in jupyter_config_path() for r in real_jupyter)


def test_two_sessions_get_two_homes():
    """Another session started now (as another engineer's run on this machine) gets a HOME of
    its own: nothing one writes there can fail the other."""
    env = {**os.environ, "HOME": str(REAL_HOME)}
    tests = Path(__file__).parent
    code = f"import sys; sys.path.insert(0, {str(tests)!r}); import conftest; print(conftest.TEST_HOME)"
    other = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           timeout=120, cwd=tests.parent)
    assert other.returncode == 0, other.stderr
    home = Path(other.stdout.strip().splitlines()[-1])
    assert home != TEST_HOME and home != REAL_HOME and "ari-jupyter-tests" in home.parts


def test_the_session_home_is_in_no_git_work_tree():
    """A learner's lesson copies refuse a git work tree (the clone): the session's HOME, where
    the tests' copies go, is outside the repository."""
    inside = subprocess.run(["git", "-C", str(TEST_HOME), "rev-parse", "--is-inside-work-tree"],
                            capture_output=True, text=True)
    assert inside.stdout.strip() != "true", inside.stdout
