"""Shared fixtures: the real SLURM test bed (marker ``slurm``).

``testbed_gres`` / ``testbed_nogres`` bring the two-node cluster up in that variant (once,
switching only when needed: slurm tests are grouped by variant) and hold an exclusive lock on
/tmp/ari-testbed.lock for the rest of the session, so slurm tests of different pytest
processes never interleave. The cluster is stopped when the session ends. A test skips only
when the machine cannot run the cluster (no root, no apt-get, no unshare), with that reason;
skipped slurm tests are written to $ARI_TEST_REPORT_DIR/slurm-skips.json and, with CI=true,
fail the session.

Every session runs on its own HOME and XDG folders (``TEST_HOME``, made before anything reads
them): the suite never reads or writes the files of the user who runs it, and two sessions on
one machine cannot fail each other.

``ari_env`` (marker ``ari``) is ARI's real code, built from the source snapshot into its own
venv (tests/ari_env.py); without a snapshot those tests skip with the reason and how to set
``ARI_SRC``, and with CI=true (or where ../shared/ari-snapshot exists) that skip fails too.
"""
from __future__ import annotations

import atexit
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest


def _own_home() -> Path:
    """The session's own HOME and XDG folders, set before anything reads them: no test reads or
    writes the files of the user who runs the suite (their Runs panel's list of workspaces,
    their Jupyter config), and two sessions on one machine never see each other's.

    The HOME sits outside /tmp (``$ARI_TEST_HOME_ROOT``, default ``ari-jupyter-tests/`` in the
    running user's cache folder, removed at exit), as a user's does: a workspace under it is not
    node-local by ARI's prefix rule; and outside any git work tree, where the lessons' per-user
    copies refuse to go (a class's answers would end up in the clone).
    Only the package tools' settings are carried over, read-only (pip's config file, npm's
    user config), so an install in a test reaches the same package index.
    """
    real_home = Path(os.path.expanduser("~"))
    cache = Path(os.environ.get("XDG_CACHE_HOME") or real_home / ".cache")
    root = Path(os.environ.get("ARI_TEST_HOME_ROOT") or cache / "ari-jupyter-tests")
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    home = Path(tempfile.mkdtemp(prefix="home-", dir=root))
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    for tool_var, path in (("PIP_CONFIG_FILE", real_home / ".config" / "pip" / "pip.conf"),
                           ("NPM_CONFIG_USERCONFIG", real_home / ".npmrc")):
        if tool_var not in os.environ and path.is_file():
            os.environ[tool_var] = str(path)
    # ARI's venv for the `ari` tests is a build cache shared by sessions (flock'd), not a
    # user's file: kept per machine user, outside any HOME
    os.environ.setdefault("ARI_ENV_CACHE", f"/var/tmp/ari-jupyter-ari-env-{os.getuid()}")
    folders = {"HOME": home, "XDG_CONFIG_HOME": home / ".config", "XDG_DATA_HOME": home / ".local" / "share",
               "XDG_CACHE_HOME": home / ".cache", "XDG_STATE_HOME": home / ".local" / "state",
               "JUPYTER_CONFIG_DIR": home / ".jupyter", "JUPYTER_DATA_DIR": home / ".local" / "share" / "jupyter",
               "JUPYTER_RUNTIME_DIR": home / ".local" / "share" / "jupyter" / "runtime",
               "IPYTHONDIR": home / ".ipython"}
    for name, path in folders.items():
        path.mkdir(parents=True, exist_ok=True)
        os.environ[name] = str(path)
    os.environ.pop("JUPYTER_PATH", None)  # no config or data path of the user's
    os.environ.pop("JUPYTER_CONFIG_PATH", None)
    return home


TEST_HOME = _own_home()

sys.path.insert(0, str(Path(__file__).parent))
from testbed import VARIANTS, Testbed, can_run  # noqa: E402
from testbed.cluster import EXTRA_VARIANTS  # noqa: E402
import ari_env as _ari  # noqa: E402

_FIXTURE_VARIANT = {f"testbed_{v}": v for v in VARIANTS}
_ORDER = (*EXTRA_VARIANTS, *VARIANTS)
"""The order of the slurm tests' groups after the ones that name no variant."""

# Every checkpoint written records its workspace in a per-user list (runs.known_workspaces):
# the tests' lists are their own, never the user's, and each test starts with an empty one.
# (in the session's own HOME, removed with it: never a folder left behind in /tmp)
os.environ["ARI_JUPYTER_WORKSPACES_FILE"] = str(TEST_HOME / ".ari-known-workspaces" / "workspaces.json")


@pytest.fixture(autouse=True)
def _own_recorded_workspaces(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ARI_JUPYTER_WORKSPACES_FILE",
                       str(tmp_path_factory.mktemp("known-workspaces") / "workspaces.json"))


def _variant_of(item: pytest.Item) -> str | None:
    for name, variant in _FIXTURE_VARIANT.items():
        if name in getattr(item, "fixturenames", ()):
            return variant
    params = getattr(getattr(item, "callspec", None), "params", {})
    return next((v for v in params.values() if isinstance(v, str) and v in VARIANTS), None)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Run slurm tests last, grouped by variant: one start and at most one switch. A test that
    uses the test bed is a slurm test whether or not it says so: `bash tests/run` runs the slurm
    tests in a session of their own, the only one that takes the test bed's lock."""
    for item in items:
        uses_testbed = {"_testbed", "testbed_any"} & set(getattr(item, "fixturenames", ()))
        if uses_testbed and item.get_closest_marker("slurm") is None:
            item.add_marker(pytest.mark.slurm)

    def key(item: pytest.Item) -> tuple[int, int]:
        if item.get_closest_marker("slurm") is None:
            return (0, 0)
        # the variants started only by the tests that ask for them (acct, mem) are grouped too
        variant = _variant_of(item) or next(
            (v for v in EXTRA_VARIANTS if f"testbed_{v}" in getattr(item, "fixturenames", ())), None)
        return (1, _ORDER.index(variant) + 1 if variant else 0)

    items.sort(key=key)  # stable: the order inside each group is kept
    for item in items:
        if "ari_env" in getattr(item, "fixturenames", ()) and item.get_closest_marker("ari") is None:
            item.add_marker(pytest.mark.ari)
        if item.get_closest_marker("ari") is not None:
            item.user_properties.append(("ari_real", "1"))
    for item in items:
        if item.get_closest_marker("slurm") is not None:
            item.user_properties.append(("slurm_testbed", _variant_of(item) or "any"))


@pytest.fixture(scope="session")
def _testbed(pytestconfig: pytest.Config) -> Testbed:
    ok, reason = can_run()
    if not ok:
        pytest.skip(f"SLURM test bed unavailable: {reason}")
    bed = Testbed()
    pytestconfig.pluginmanager.get_plugin("ari-slurm-outcomes").testbed = bed
    yield bed
    try:
        bed.stop()
    finally:
        bed.release_lock()


SHARED_FS_SCRIPT = Path(__file__).parent / "testbed" / "shared-fs.sh"


@pytest.fixture(scope="session")
def shared_mount(_testbed: Testbed) -> Path:
    """A real network filesystem that both test-bed nodes see, as /work is on a cluster:
    fuse.sshfs from an sshd of our own on 127.0.0.1, mounted under $HOME. Unmounted when the
    session ends. A machine that runs the test bed must be able to run this too: no skip."""
    started = subprocess.run(["bash", str(SHARED_FS_SCRIPT), "start"], capture_output=True, text=True,
                             timeout=900, stdin=subprocess.DEVNULL)
    assert started.returncode == 0, f"shared filesystem did not start:\n{started.stderr}"
    try:
        yield Path(started.stdout.strip().splitlines()[-1])
    finally:
        subprocess.run(["bash", str(SHARED_FS_SCRIPT), "stop"], capture_output=True, timeout=120,
                       stdin=subprocess.DEVNULL)


ENVMODULES_SCRIPT = Path(__file__).parent / "testbed" / "environment-modules.sh"


@pytest.fixture(scope="session")
def envmodules() -> dict:
    """The variables a site's shell has once Environment Modules is set up (MODULES_CMD,
    MODULESHOME, MODULEPATH), on top of a minimal environment."""
    target = os.environ.get("ARI_ENVMODULES_DIR", "/tmp/ari-envmodules")
    proc = subprocess.run(["bash", str(ENVMODULES_SCRIPT), "setup", target], capture_output=True, text=True,
                          timeout=900, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        reason = f"Environment Modules could not be set up here: {proc.stderr.strip()[-600:]}"
        if _ci():
            pytest.fail(reason)  # CI must run these, like the SLURM tests
        pytest.skip(reason)
    exported = {}
    for line in proc.stdout.splitlines():
        if line.startswith("export "):
            name, _, value = line[len("export "):].partition("=")
            exported[name] = shlex.split(value)[0]
    assert {"MODULES_CMD", "MODULESHOME", "MODULEPATH"} <= set(exported), proc.stdout
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8",
            **{k: exported[k] for k in ("MODULES_CMD", "MODULESHOME", "MODULEPATH")}}


@pytest.fixture
def testbed_gres(_testbed: Testbed):
    """The cluster with gpu:v100:4 GRES per node (partitions small*, large)."""
    return _testbed.ensure("gres")


@pytest.fixture
def testbed_nogres(_testbed: Testbed):
    """The same cluster without any GRES configured."""
    return _testbed.ensure("nogres")


@pytest.fixture
def testbed_acct(_testbed: Testbed):
    """nogres with accounting (slurmdbd, MariaDB; sacct answers) and MinJobAge=2: an ended
    job leaves squeue within seconds, as it does on a site after 300 s."""
    return _testbed.ensure("acct")


@pytest.fixture(params=VARIANTS)
def testbed_any(request: pytest.FixtureRequest):
    """Runs the test once per variant (parametrised ``gres`` / ``nogres``)."""
    return request.getfixturevalue(f"testbed_{request.param}")


@pytest.fixture(scope="session")
def ari_env() -> "_ari.AriEnv":
    """ARI's real code (marker ``ari``): built once per snapshot, shared by concurrent sessions.

    Gives ``.python`` (ARI's venv interpreter), ``.root`` (ARI's source root: ari-core/,
    ari-skill-*), ``.env`` (the environment for every ARI process: LITELLM_LOCAL_MODEL_COST_MAP,
    ARI_MEMORY_BACKEND=in_memory, the LLM at 127.0.0.1 where nothing listens) and
    ``.run(script, *args, cwd=, env=, timeout=)`` (a Python driver in ARI's venv). Drive ARI's
    own functions through it; never re-implement them. Skips (with the reason and ARI_SRC)
    where no ARI source exists; that skip fails CI.
    """
    try:
        return _ari.ensure()
    except _ari.AriUnavailable as exc:
        reason = f"ARI's real code unavailable: {exc}"
        if _ari.snapshot_expected():
            pytest.fail(reason)  # the snapshot is meant to be here: a missing ARI is a failure
        pytest.skip(reason)
    except _ari.AriBuildError as exc:
        pytest.fail(f"ARI could not be built: {exc}")


class AriOutcomes:
    """Counts tests of ARI's real code; their skips are listed and, with CI=true, fatal."""

    def __init__(self) -> None:
        self.ran = 0
        self.skipped: list[dict[str, str]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if dict(report.user_properties).get("ari_real") is None:
            return
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            self.skipped.append({"nodeid": report.nodeid, "reason": reason})
        elif report.when == "call":
            self.ran += 1

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if _ci() and self.skipped and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.ran and not self.skipped:
            return
        terminalreporter.write_sep("-", "ARI's real code")
        terminalreporter.write_line(f"ari tests: {self.ran} ran, {len(self.skipped)} skipped")
        for entry in self.skipped[:5]:
            terminalreporter.write_line(f"  skipped {entry['nodeid']}: {entry['reason']}")
        if self.skipped and _ci():
            terminalreporter.write_line("CI=true: skipped ari tests fail the run", red=True)


# -- skipped slurm tests: reported, and fatal under CI=true --------------------------------------
def _ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


class SlurmOutcomes:
    """Counts slurm tests that ran and lists those that skipped (with their reasons)."""

    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0
        self.skipped: list[dict[str, str]] = []
        self.variants: dict[str, int] = {}
        self.testbed: Testbed | None = None  # set by the _testbed fixture when it starts

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        variant = dict(report.user_properties).get("slurm_testbed")
        if variant is None:
            return
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            self.skipped.append({"nodeid": report.nodeid, "reason": reason})
        elif report.when == "call":
            self.variants[variant] = self.variants.get(variant, 0) + 1
            if report.passed:
                self.passed += 1
            else:
                self.failed += 1
        elif report.failed:
            self.failed += 1

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        ran = self.passed + self.failed
        report_dir = os.environ.get("ARI_TEST_REPORT_DIR")
        if report_dir and (ran or self.skipped):
            path = Path(report_dir) / "slurm-skips.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"ran": ran, "passed": self.passed, "failed": self.failed,
                                        "variants": self.variants, "skipped": self.skipped},
                                       indent=2) + "\n")
        if _ci() and self.skipped and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter) -> None:
        ran = self.passed + self.failed
        if not ran and not self.skipped:
            return
        terminalreporter.write_sep("-", "SLURM test bed")
        per_variant = ", ".join(f"{v} {n}" for v, n in sorted(self.variants.items()))
        terminalreporter.write_line(f"slurm tests: {ran} ran ({per_variant or 'none'}), "
                                    f"{len(self.skipped)} skipped")
        if self.testbed is not None:
            terminalreporter.write_line(f"test bed: {self.testbed.switches} variant switch(es); "
                                        + "; ".join(self.testbed.log_summary()))
        for entry in self.skipped:
            terminalreporter.write_line(f"  skipped {entry['nodeid']}: {entry['reason']}")
        if self.skipped and _ci():
            terminalreporter.write_line("CI=true: skipped slurm tests fail the run", red=True)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(SlurmOutcomes(), "ari-slurm-outcomes")
    config.pluginmanager.register(AriOutcomes(), "ari-real-outcomes")


@pytest.fixture(scope="module")
def demo_checkpoint(tmp_path_factory):
    """A checkpoint written by `emit --site rccs-cloud` into a HOME of its own (module-wide):
    the checkpoint the language tests run every command on."""
    from ari_jupyter.cli import main

    home = tmp_path_factory.mktemp("home")
    patch = pytest.MonkeyPatch()
    patch.setenv("HOME", str(home))
    try:
        assert main(["emit", "--site", "rccs-cloud", "--title", "lang check", "--goal", "g",
                     "--metric", "m", "--walltime", "00:30:00", "--llm-backend", "ollama",
                     "--json"]) == 0
        yield home, next((home / "ari-demo" / "rccs-cloud" / "checkpoints").iterdir())
    finally:
        patch.undo()
