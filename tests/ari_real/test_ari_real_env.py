"""The ARI test environment itself: where ARI comes from, one build shared by concurrent
sessions, a clear skip (fatal in CI) without a snapshot, and a venv that really is ARI's."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
import ari_env  # noqa: E402


@pytest.fixture
def no_source(monkeypatch, tmp_path):
    monkeypatch.delenv("ARI_SRC", raising=False)
    monkeypatch.setattr(ari_env, "SNAPSHOT_DIR", tmp_path / "no-snapshot")


def _fake_snapshot(where: Path, content: bytes = b"[project]\nname='ari-core'\n") -> Path:
    tree = where / "tree" / "ARI" / "ari-core"
    tree.mkdir(parents=True)
    (tree / "pyproject.toml").write_bytes(content)
    tarball = where / "ARI-0000000.tar.gz"
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(where / "tree" / "ARI", arcname="ARI")
    return tarball


def test_no_source_says_why_and_how_to_point_at_ari(no_source):
    with pytest.raises(ari_env.AriUnavailable) as caught:
        ari_env.locate()
    assert "no-snapshot" in str(caught.value) and "ARI_SRC=" in str(caught.value)


@pytest.mark.parametrize("given, expect_error", [
    ("{tmp}/nothing-here", "neither an ARI checkout"),
    ("{tmp}", "neither an ARI checkout"),           # a directory without ari-core/
])
def test_a_bad_ari_src_is_named(monkeypatch, tmp_path, given, expect_error):
    monkeypatch.setenv("ARI_SRC", given.format(tmp=tmp_path))
    with pytest.raises(ari_env.AriUnavailable, match=expect_error) as caught:
        ari_env.locate()
    assert "ARI_SRC=" in str(caught.value)


def test_the_cache_key_is_the_snapshot_hash(monkeypatch, tmp_path):
    first = _fake_snapshot(tmp_path / "a")
    second = _fake_snapshot(tmp_path / "b", b"[project]\nname='ari-core'\nversion='2'\n")
    keys = []
    for tarball in (first, second, first):
        monkeypatch.setenv("ARI_SRC", str(tarball))
        keys.append(ari_env.locate().key)
    monkeypatch.setenv("ARI_SRC", str(first.parent))  # the directory holding the tarball
    keys.append(ari_env.locate().key)
    assert keys[0] == keys[2] == keys[3] != keys[1]


def test_a_checkout_is_used_in_place(monkeypatch, tmp_path):
    _fake_snapshot(tmp_path)
    checkout = tmp_path / "tree" / "ARI"
    monkeypatch.setenv("ARI_SRC", str(checkout))
    source = ari_env.locate()
    assert source.path == checkout and not source.is_tarball and source.key.startswith("src-")


_CONCURRENT_BUILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    import ari_env
    def fake_build(source, target):
        target.mkdir(parents=True)
        with open(sys.argv[2], "a") as count:
            count.write("built\\n")
        time.sleep(1.5)  # long enough for the other session to be waiting on the lock
        (target / "python").write_text("")
        return {"python": str(target / "python"), "root": str(target), "key": source.key,
                "source": str(source.path), "built_at": "now"}
    ari_env._build = fake_build
    print(ari_env.ensure().python)
""")


def test_concurrent_sessions_share_one_build(monkeypatch, tmp_path):
    tarball = _fake_snapshot(tmp_path)
    env = {**os.environ, "ARI_SRC": str(tarball), "ARI_ENV_CACHE": str(tmp_path / "cache")}
    builds = tmp_path / "builds.txt"
    procs = [subprocess.Popen([sys.executable, "-c", _CONCURRENT_BUILD, str(TESTS), str(builds)],
                              env=env, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0]
    assert builds.read_text().splitlines() == ["built"], "the lock must make the others wait"
    assert len(set(outputs)) == 1
    ready = json.loads(next((tmp_path / "cache").glob("*/ready.json")).read_text())
    assert ready["python"] == outputs[0] and Path(outputs[0]).parent.name == ready["key"]


def test_a_half_built_venv_is_rebuilt(monkeypatch, tmp_path):
    """No ready.json (a build that died) means build again, never use what is there."""
    tarball = _fake_snapshot(tmp_path)
    monkeypatch.setenv("ARI_SRC", str(tarball))
    monkeypatch.setenv("ARI_ENV_CACHE", str(tmp_path / "cache"))
    key = ari_env.locate().key
    (tmp_path / "cache" / key / "venv").mkdir(parents=True)  # leftovers, no ready.json
    calls = []

    def fake_build(source, target):
        calls.append(target)
        assert not target.exists(), "leftovers must be cleared first"
        target.mkdir(parents=True)
        (target / "python").write_text("")
        return {"python": str(target / "python"), "root": str(target)}

    monkeypatch.setattr(ari_env, "_build", fake_build)
    first = ari_env.ensure()
    second = ari_env.ensure()
    assert len(calls) == 1 and first == second


def test_without_ari_the_tests_skip_with_the_fix_and_ci_fails(tmp_path):
    """A test using ``ari_env`` in a nested pytest with no source: it skips naming ARI_SRC, and
    CI=true turns the skip into a failed run; the report check fails it too."""
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "ARI_SRC", "ARI_TEST_REPORT_DIR")}
    base["ARI_SNAPSHOT_DIR"] = str(tmp_path / "no-snapshot")
    argv = [sys.executable, "-m", "pytest", str(Path(__file__)), "-q", "-rs", "-p", "no:cacheprovider",
            "-k", "test_the_venv_runs_aris_own_editable_code", "--junitxml", str(tmp_path / "junit.xml")]
    local = subprocess.run(argv, env=base, capture_output=True, text=True, timeout=120)
    assert local.returncode == 0, local.stdout + local.stderr
    assert "ARI_SRC=" in local.stdout and "1 skipped" in local.stdout
    check = subprocess.run([sys.executable, str(TESTS / "testbed" / "check_no_slurm_skips.py"),
                            "--allow-missing-variant", str(tmp_path / "junit.xml")],
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 1 and "skipped ARI test" in check.stdout, check.stdout

    ci = subprocess.run(argv, env={**base, "CI": "true"}, capture_output=True, text=True, timeout=120)
    assert ci.returncode == 1, ci.stdout
    assert "CI=true: skipped ari tests fail the run" in ci.stdout


def _junit_case(name: str, body: str = "") -> str:
    return (f'<testcase classname="t" name="{name}"><properties>'
            f'<property name="ari_real" value="1"/></properties>{body}</testcase>')


@pytest.mark.parametrize("cases, flags, expected_rc", [
    (_junit_case("a"), ["--require-ari"], 0),
    (_junit_case("a") + _junit_case("b", '<skipped message="ARI unavailable"/>'), [], 1),
    ('<testcase classname="t" name="x"/>', ["--require-ari"], 1),  # no ARI test ran
    ('<testcase classname="t" name="x"/>', [], 0),
])
def test_report_check_counts_ari_tests(tmp_path, cases, flags, expected_rc):
    report = tmp_path / "junit.xml"
    report.write_text(f'<?xml version="1.0"?><testsuites><testsuite>{cases}</testsuite></testsuites>')
    proc = subprocess.run([sys.executable, str(TESTS / "testbed" / "check_no_slurm_skips.py"),
                           "--allow-missing-variant", *flags, str(report)],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == expected_rc, proc.stdout


@pytest.mark.ari
def test_the_venv_runs_aris_own_editable_code(ari_env):
    """ari-core and paper-re import from ARI's source tree (editable, as setup.sh installs)."""
    proc = ari_env.run(textwrap.dedent("""
        import json, sys, ari, ari_skill_memory
        sys.path.insert(0, sys.argv[1])
        import server
        print(json.dumps({"ari": ari.__file__, "server": server.__file__,
                          "py": list(sys.version_info[:2]), "run": hasattr(server, "run_reproduce")}))
    """), ari_env.root / "ari-skill-paper-re" / "src")
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["py"] == [3, 13] and found["run"]
    assert Path(found["ari"]).is_relative_to(ari_env.root / "ari-core")
    assert Path(found["server"]).is_relative_to(ari_env.root)
    assert ari_env.env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert ari_env.env["ARI_MEMORY_BACKEND"] == "in_memory"
    cli = subprocess.run([str(ari_env.python.parent / "ari"), "--help"], env=ari_env.env,
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0 and "run" in cli.stdout, cli.stderr
