"""ARI's real code for the tests: built once from a source snapshot into its own Python 3.13
venv, cached under a directory keyed by the snapshot's hash.

The tests check what ari-jupyter writes and previews against ARI itself (never a copy of it):
they run small driver scripts with the venv's python. Where ARI comes from, first found wins:

* ``$ARI_SRC``: an ARI checkout (a directory holding ``ari-core/``) or a snapshot tarball;
* ``<repo>/../shared/ari-snapshot/ARI-*.tar.gz`` (CI: the clean clone's parent holds it).

The build follows ARI's own setup (its setup.sh): ari-skill-memory and ari-core editable,
ari-skill-paper-re and ari-skill-evaluator editable without their dependencies (paper-re's
``chz`` comes from a git URL), plus what their servers import (``mcp<2``: mcp 2 dropped
``mcp.server.fastmcp``). A flock on ``<cache>/<key>.lock`` makes concurrent pytest sessions
share one build; ``ready.json`` is written last, so a half-built venv is never used.

    python3 tests/ari_env.py build     # build (or reuse) and print ready.json
    python3 tests/ari_env.py where     # where ARI would come from, or why there is none

Settings: ``ARI_SRC`` (above), ``ARI_SNAPSHOT_DIR`` (instead of ../shared/ari-snapshot),
``ARI_ENV_CACHE`` (cache root, default
``$XDG_CACHE_HOME/ari-jupyter/ari-env``), ``ARI_PYTHON313`` (the interpreter to build with,
default pyenv's 3.13 or ``python3.13`` on PATH).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAPSHOT_DIR = Path(os.environ.get("ARI_SNAPSHOT_DIR") or REPO.parent / "shared" / "ari-snapshot")
HOW_TO_POINT = ("set ARI_SRC=/path/to/ARI (an ARI checkout holding ari-core/, or an "
                "ARI-<commit>.tar.gz snapshot)")

# Installed editable, as ARI's setup.sh does (memory first: ari-core imports it).
EDITABLE = ("ari-skill-memory", "ari-core")
# Editable without dependencies: paper-re's chz is a git URL that cannot be fetched here.
EDITABLE_NO_DEPS = ("ari-skill-paper-re", "ari-skill-evaluator")
# What those servers import at module load (paper-re's list minus chz and pymupdf4llm).
EXTRA_REQUIREMENTS = ("mcp>=1.28.1,<2", "blobfile>=3.0.0", "structlog>=25.1.0",
                      "tiktoken>=0.9.0", "openai>=1.99.9", "tenacity>=9.0.0")
BUILD_TIMEOUT = 1800  # seconds for one pip step; a hung registry must not hang CI


class AriUnavailable(Exception):
    """No ARI source here (the message says why and how to point the tests at one)."""


class AriBuildError(Exception):
    """ARI's source is here but its venv could not be built (the message has pip's output)."""


@dataclass(frozen=True)
class Source:
    path: Path        # a checkout directory or a tarball
    is_tarball: bool
    key: str          # cache key: the tarball's sha256, or the checkout's path + pyprojects


@dataclass(frozen=True)
class AriEnv:
    """A built ARI. ``python``: the venv's interpreter; ``root``: ARI's source root (holding
    ari-core/, ari-skill-*); ``env``: the environment every ARI process of a test gets."""
    python: Path
    root: Path
    env: dict

    def run(self, script: str, *args: str, cwd: Path | None = None, timeout: float = 300,
            env: dict | None = None) -> subprocess.CompletedProcess:
        """Run a driver script (Python source) in ARI's venv; ``env`` adds to ``self.env``."""
        return subprocess.run([str(self.python), "-c", script, *map(str, args)],
                              cwd=cwd, env={**self.env, **(env or {})}, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                              start_new_session=True)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def locate() -> Source:
    """Where ARI comes from; raises AriUnavailable with the reason and the fix."""
    given = os.environ.get("ARI_SRC", "").strip()
    if given:
        path = Path(given).expanduser().resolve()
        if path.is_file() and path.name.endswith((".tar.gz", ".tgz")):
            return Source(path, True, _sha256(path)[:16])
        if path.is_dir():
            if (path / "ari-core" / "pyproject.toml").is_file():
                digest = hashlib.sha256(str(path).encode())
                for name in (*EDITABLE, *EDITABLE_NO_DEPS):
                    pyproject = path / name / "pyproject.toml"
                    digest.update(pyproject.read_bytes() if pyproject.is_file() else b"-")
                return Source(path, False, "src-" + digest.hexdigest()[:16])
            tarballs = sorted(path.glob("ARI-*.tar.gz"))
            if tarballs:
                return Source(tarballs[-1], True, _sha256(tarballs[-1])[:16])
        raise AriUnavailable(f"ARI_SRC={given} is neither an ARI checkout (no ari-core/pyproject.toml) "
                             f"nor an ARI snapshot tarball; {HOW_TO_POINT}")
    tarballs = sorted(SNAPSHOT_DIR.glob("ARI-*.tar.gz"))
    if tarballs:
        return Source(tarballs[-1], True, _sha256(tarballs[-1])[:16])
    raise AriUnavailable(f"ARI's source is not here (no ARI_SRC, no snapshot in {SNAPSHOT_DIR}); "
                         f"{HOW_TO_POINT}")


def snapshot_expected() -> bool:
    """True where the tests must run against ARI (CI's clone beside shared/ari-snapshot, or
    ARI_SRC given): there a missing ARI is a failure, not a skip."""
    return bool(os.environ.get("ARI_SRC")) or SNAPSHOT_DIR.is_dir()


def cache_root() -> Path:
    given = os.environ.get("ARI_ENV_CACHE")
    if given:
        return Path(given).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ari-jupyter" / "ari-env"


def python313() -> str:
    """The interpreter ARI is built with (ari-skill-paper-re needs Python >= 3.13)."""
    given = os.environ.get("ARI_PYTHON313")
    if given:
        return given
    candidates = []
    try:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=20).stdout.strip()
        if root:
            candidates += sorted(Path(root, "versions").glob("3.13*/bin/python3.13"), reverse=True)
    except (OSError, subprocess.SubprocessError):
        pass
    found = shutil.which("python3.13")
    if found:
        candidates.append(Path(found))
    for candidate in candidates:
        if Path(candidate).is_file():
            return str(candidate)
    raise AriBuildError("no Python 3.13 found for ARI (ari-skill-paper-re needs >= 3.13): "
                        "install it (pyenv install 3.13) or set ARI_PYTHON313=/path/to/python3.13")


def test_environment(home: Path | None = None) -> dict:
    """What every ARI process of a test runs with: no network (litellm's cost map read from
    its package, memory in process, the LLM at 127.0.0.1 where nothing listens)."""
    keep = {k: v for k, v in os.environ.items()
            if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "LOGNAME", "TZ")
            or k.startswith("SLURM_CONF")}
    keep.update({
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "ARI_MEMORY_BACKEND": "in_memory",
        "ARI_LLM_API_BASE": "http://127.0.0.1:9/v1",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "OPENAI_API_BASE": "http://127.0.0.1:9/v1",
        "OPENAI_API_KEY": "sk-test-not-a-key",
        "NO_PROXY": "127.0.0.1,localhost",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    })
    if home is not None:
        keep["HOME"] = str(home)
    return keep


def _pip(python: Path, args: list[str], log) -> None:
    cmd = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args]
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=BUILD_TIMEOUT,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise AriBuildError(f"pip failed ({proc.returncode}): {' '.join(args)}")


def _extract(tarball: Path, into: Path) -> Path:
    with tarfile.open(tarball) as archive:
        archive.extractall(into, filter="data")
    roots = [p.parent.parent for p in into.glob("*/ari-core/pyproject.toml")]
    if len(roots) != 1:
        raise AriBuildError(f"{tarball} does not hold one ARI tree (ari-core/pyproject.toml)")
    return roots[0]


def _build(source: Source, target: Path) -> dict:
    """Build into ``target`` (empty); returns the ready record."""
    target.mkdir(parents=True)
    with (target / "build.log").open("w") as log:
        root = _extract(source.path, target / "src") if source.is_tarball else source.path
        venv = target / "venv"
        subprocess.run([python313(), "-m", "venv", str(venv)], check=True, timeout=300,
                       stdout=log, stderr=subprocess.STDOUT)
        python = venv / "bin" / "python"
        for name in EDITABLE:
            _pip(python, ["-e", str(root / name)], log)
        for name in EDITABLE_NO_DEPS:
            _pip(python, ["--no-deps", "-e", str(root / name)], log)
        _pip(python, list(EXTRA_REQUIREMENTS), log)
        check = subprocess.run([str(python), "-c", "import ari.cli, ari_skill_memory, mcp.server.fastmcp"],
                               env=test_environment(), capture_output=True, text=True, timeout=300)
        if check.returncode != 0:
            raise AriBuildError(f"ARI built but does not import: {check.stderr[-2000:]}")
    return {"python": str(python), "root": str(root), "key": source.key, "source": str(source.path),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def ensure(log_progress=None) -> AriEnv:
    """Build ARI's venv (or reuse the cached one); concurrent callers wait for one build.
    Raises AriUnavailable (no source) or AriBuildError (source here, build failed)."""
    source = locate()
    cache = cache_root()
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / source.key
    ready = target / "ready.json"
    with open(cache / f"{source.key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ready.is_file() or not Path(json.loads(ready.read_text())["python"]).is_file():
            if log_progress:
                log_progress(f"building ARI from {source.path} into {target} (once per snapshot)")
            shutil.rmtree(target, ignore_errors=True)
            try:
                record = _build(source, target)
            except (subprocess.SubprocessError, OSError) as exc:
                raise AriBuildError(f"building ARI failed: {exc}; see {target / 'build.log'}") from exc
            except AriBuildError as exc:
                raise AriBuildError(f"{exc}; see {target / 'build.log'}") from exc
            tmp = ready.with_suffix(".tmp")
            tmp.write_text(json.dumps(record, indent=2) + "\n")
            os.replace(tmp, ready)
        record = json.loads(ready.read_text())
    return AriEnv(Path(record["python"]), Path(record["root"]), test_environment())


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    command = args[0] if args else "build"
    try:
        if command == "where":
            source = locate()
            print(f"{source.path} (key {source.key}) -> {cache_root() / source.key}")
            return 0
        if command == "build":
            built = ensure(lambda m: print(m, file=sys.stderr, flush=True))
            print(json.dumps({"python": str(built.python), "root": str(built.root)}))
            return 0
    except AriUnavailable as exc:
        print(f"ARI unavailable: {exc}", file=sys.stderr)
        return 3 if snapshot_expected() else 0
    except AriBuildError as exc:
        print(f"ARI build failed: {exc}", file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
