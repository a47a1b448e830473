"""A run's own files and an option's file, made hostile by whoever can write them: JSON nested
200 KB deep, a log line of chained ``key=`` pairs, pid files and markers that are FIFOs or
links to /dev/zero, numbers that ``isdigit`` takes and ``int`` refuses, and one long line for
every pattern applied to logs, job output or tree.json.

Each reader runs in a fresh process (as the CLI and the server's poll run it) under a memory
limit and a time limit it must not come near: a FIFO that blocked the read, /dev/zero read
whole, a RecursionError or a quadratic pattern shows as a hang, a crash or a traceback.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .figures import record

LIMIT_S = 60.0
MEMORY = 1 << 30
RUN_ID = "20261201093000_hostile"


def _limits() -> None:  # the child's address space: /dev/zero read whole stops here
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _python(code: str, *args: str) -> tuple[subprocess.CompletedProcess | None, str]:
    """``code`` in a fresh interpreter; None when it outlived ``LIMIT_S`` (killed)."""
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                              capture_output=True, text=True, timeout=LIMIT_S,
                              preexec_fn=_limits, env={**os.environ, "LANG": "C.UTF-8"}, cwd="/")
    except subprocess.TimeoutExpired:
        return None, "hung"
    said = "crashed" if done.returncode or "Traceback" in done.stderr else ""
    return done, said


def _checkpoint(tmp: Path) -> Path:
    ckpt = tmp / "ws" / "checkpoints" / RUN_ID
    ckpt.mkdir(parents=True)
    (ckpt / "experiment.md").write_text("# Hostile files\n\n## Research Goal\nSurvive.\n")
    (ckpt / "ari.log").write_text('{"ts": "2026-12-01T09:30:00", "level": "INFO", "logger": "ari", '
                                  '"msg": "=== Stage [bfts] ===", "run_id": "x"}\n')
    return ckpt


STATUS = """
import asyncio, json, sys
from ari_jupyter.runs.service import runs_json, status_json
status = asyncio.run(status_json(sys.argv[1]))
listing = asyncio.run(runs_json([sys.argv[2]]))
print(json.dumps({"phase": status.get("phase"), "runs": len(listing.get("runs", []))}))
"""

# -- finding 2: JSON nested 200 KB deep, chained pairs in a log line ----------------------------

DEEP = "[" * 200_000
DEEP_FILES = ["tree.json", "nodes_tree.json", "launch_config.json", "evaluation_criteria.json",
              ".ari-jupyter-recording.json"]


@pytest.mark.parametrize("name", DEEP_FILES)
def test_json_nested_200_kb_deep_in_a_run_file_leaves_status_and_the_listing_standing(tmp_path, name):
    ckpt = _checkpoint(tmp_path)
    (ckpt / name).write_text(DEEP)
    done, said = _python(STATUS, str(ckpt), str(ckpt.parent.parent))
    record("Hostile run files", "JSON nested 200 KB deep in a run's file: status and the Runs listing",
           cases=1, survived=int(not said), lost=int(bool(said)), unit="files",
           crashed=int(said == "crashed"), hung=int(said == "hung"),
           note="A run's own files made hostile by whoever can write them (deep JSON, FIFOs, "
                "links to /dev/zero, chained pairs, numbers int() refuses), each reader in a fresh "
                "process under a 1 GB memory limit; \"lost\" counts hangs, crashes and tracebacks.")
    assert not said, done and done.stderr[-1500:]
    assert json.loads(done.stdout)["runs"] == 1


REDACT = """
import sys
from ari_jupyter.base.redact import redact
count = int(sys.argv[1])
line = "monkey=" * count + "x_token=abc123secret"
out = redact(line)
assert out == "monkey=" * count + "x_token=***", out[-80:]
print("ok")
"""


@pytest.mark.parametrize("count", [500, 5000, 36000])
def test_a_log_line_of_chained_pairs_is_masked_without_recursion(count):
    done, said = _python(REDACT, str(count))
    record("Hostile run files", "a log line of 500 to 36,000 (252 KB) chained key= pairs through the redactor",
           cases=1, survived=int(not said), lost=int(bool(said)), unit="lines",
           crashed=int(said == "crashed"), hung=int(said == "hung"))
    assert not said, done and done.stderr[-1500:]


OPTION_DEEP = """
import sys
from ari_jupyter.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _option_cases(tmp: Path, target: Path) -> dict[str, list[str]]:
    ckpt = tmp / "ckpt"
    ckpt.mkdir(exist_ok=True)
    config = ckpt / "launch_config.json"
    if config.exists() or config.is_symlink():
        config.unlink()
    config.symlink_to(target)
    (ckpt / "experiment.md").write_text("# x\n")
    return {
        "emit --from-json": ["emit", "--from-json", str(target), "--dry-run"],
        "emit --profile": ["emit", "--profile", str(target), "--dry-run"],
        "preview sbatch --args": ["preview", "sbatch", "--repo-dir", str(tmp), "--args", str(target)],
        "preview sbatch --profile": ["preview", "sbatch", "--repo-dir", str(tmp), "--profile", str(target)],
        "doctor --profile": ["doctor", "--profile", str(target), str(ckpt / "experiment.md")],
        "check-handoff (launch_config.json)": ["check-handoff", str(ckpt)],
    }


@pytest.mark.parametrize("kind", ["deep", "fifo", "zero"])
def test_option_files_deep_fifo_or_dev_zero_are_refused_with_a_message(tmp_path, kind):
    target = tmp_path / f"option-{kind}.json"
    if kind == "deep":
        target.write_text(DEEP)
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero")
    wrong = {}
    cases = _option_cases(tmp_path, target)
    for name, argv in cases.items():
        done, said = _python(OPTION_DEEP, *argv)
        if said == "hung" or (done is not None and "Traceback" in done.stderr):
            wrong[name] = said or done.stderr[-600:]
    record("Hostile run files", "option files (--profile, --args, --from-json, launch_config.json) "
           "nested 200 KB deep, a FIFO or /dev/zero", cases=len(cases),
           survived=len(cases) - len(wrong), lost=len(wrong), unit="commands",
           hung=sum(1 for v in wrong.values() if v == "hung"),
           crashed=sum(1 for v in wrong.values() if v != "hung"))
    assert wrong == {}


# -- finding 3: pid files, the recording marker, experiment.md and .env as FIFOs or /dev/zero ---

SPECIAL = [(".ari_pid", "fifo"), (".ari_pid", "zero"), (".ari_handoff_pid", "fifo"),
           (".ari_handoff_pid", "zero"), (".ari-jupyter-recording.json", "fifo"),
           (".ari-jupyter-recording.json", "zero"), ("experiment.md", "fifo"), (".env", "fifo"),
           (".env", "zero"), ("tree.json", "fifo"), ("tree.json", "zero")]


@pytest.mark.parametrize("name, kind", SPECIAL)
def test_a_run_file_that_is_a_fifo_or_dev_zero_never_blocks_or_grows_the_poll(tmp_path, name, kind):
    ckpt = _checkpoint(tmp_path)
    path = ckpt / name
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    done, said = _python(STATUS, str(ckpt), str(ckpt.parent.parent))
    record("Hostile run files", "a run's pid file, marker, experiment.md, .env or tree.json as a "
           "FIFO or a link to /dev/zero: status and the Runs listing", cases=1,
           survived=int(not said), lost=int(bool(said)), unit="files",
           crashed=int(said == "crashed"), hung=int(said == "hung"))
    assert not said, done and done.stderr[-1500:]


# -- finding 11: numbers isdigit() takes and int() refuses --------------------------------------

NUMBERS = """
import json, sys
from ari_jupyter.ari.resume_rule import bfts_scope
from ari_jupyter.slurm.parsers import parse_gres_spec
from ari_jupyter.runs.jobs import parse_squeue
from ari_jupyter.ari.placement import request_from_sbatch_argv
value = sys.argv[1]
out = {}
out["scope"] = bfts_scope({"ARI_MAX_NODES": value, "ARI_MAX_DEPTH": value, "ARI_PARALLEL": "4"})
spec = parse_gres_spec("gpu:" + value)
out["gres"] = spec.count if spec else None
out["placement"] = request_from_sbatch_argv(["--gres", "gpu:" + value]).gpus_per_node
row = "\\x1f".join([value, "ari", "RUNNING", "0:10", "1", "n1", "me", "/w"])
out["squeue"] = len(parse_squeue(row + "\\n" + row.replace(value, "7", 1)))
print(json.dumps(out))
"""


@pytest.mark.parametrize("value", ["²", "9" * 5000, "١٢"], ids=["superscript-two", "5000-digits", "arabic-indic"])
def test_numbers_isdigit_takes_and_int_refuses_are_no_traceback(value):
    done, said = _python(NUMBERS, value)
    record("Hostile run files", "ARI_MAX_NODES/ARI_MAX_DEPTH, a GRES count, a job id: '²', "
           "5,000 digits, Arabic-Indic digits", cases=1, survived=int(not said),
           lost=int(bool(said)), unit="values", crashed=int(said == "crashed"))
    assert not said, done and done.stderr[-1500:]
    out = json.loads(done.stdout)
    assert out["scope"] == {"max_parallel_nodes": 4}, out


# -- finding 4: every pattern applied to logs, job output or tree.json on one 256 KB line -------

PATTERNS = r'''
import json, re, sre_parse, sys, time, warnings
warnings.simplefilter("ignore")
from ari_jupyter.doctor import catalog, log_checks, detect, paths
from ari_jupyter.base import redact
from ari_jupyter.runs import tree, findings, jobs, workspace, cancel_request
from ari_jupyter.ari import markers
found = []
for sig in catalog.CATALOG:
    found += [(f"catalog:{sig.rule}", p) for p in sig.compiled]
for module in (log_checks, detect, paths, redact, tree, findings, jobs, workspace, cancel_request, markers):
    for name, value in vars(module).items():
        values = value if isinstance(value, tuple) else (value,)
        for item in values:
            for p in (item if isinstance(item, tuple) else (item,)):
                if isinstance(p, re.Pattern):
                    found.append((f"{module.__name__.rsplit('.', 1)[-1]}:{name}", p))
UNITS = ["a", ".", "-", " ", "1", ":", "/", "=", '"', "'", "(", "[", "{", "_", "a.", "a-", "a ",
         "a=", "a:", "key.", "key=", "-a ", "rank 1 ", "x: ", "\t", "eyJ-"]
def prefix(p):
    out = []
    for op, av in sre_parse.parse(p.pattern, p.flags):
        if op is sre_parse.LITERAL:
            out.append(chr(av))
        elif op is not sre_parse.AT:
            break
    return "".join(out)
size = int(sys.argv[1])
worst = {}
for name, p in found:
    units = list(UNITS)
    if prefix(p):
        units += [prefix(p) + tail for tail in ("", " ", "a", "-", ".", "_", "1", ":", "/", "=")]
    for unit in units:
        line = (unit * (size // len(unit) + 1))[:size]
        start = time.perf_counter()
        p.search(line)
        for _ in p.finditer(line):
            pass
        seconds = time.perf_counter() - start
        if seconds > worst.get(name, (0, ""))[0]:
            worst[name] = (seconds, unit)
print(json.dumps({"patterns": len(found), "worst": worst}))
'''


def test_every_log_pattern_takes_a_256_kb_line_in_one_pass():
    """Each pattern of the doctor's catalog and checks, the redactor, the Runs readers and
    ARI's markers, against 256 KB single lines built to make a backtracking pattern retry at
    every position (runs of one character class, the pattern's own literal start repeated).
    A linear pattern takes milliseconds; the quadratic ones took minutes (command-not-found:
    65.8 s at 128 KB). The bound per pattern is generous (2 s): speed is in benchmarks/."""
    done, said = _python(PATTERNS, str(256 * 1024))
    slow = {}
    if done is not None and not said:
        out = json.loads(done.stdout)
        slow = {name: value for name, value in out["worst"].items() if value[0] > 2.0}
        tried = out["patterns"]
    else:
        tried = 0
    record("Hostile run files", "every log, job-output and tree.json pattern on 256 KB single lines",
           cases=tried, survived=tried - len(slow), lost=len(slow), unit="patterns",
           hung=int(said == "hung") + len(slow))
    assert not said, done and done.stderr[-1500:]
    assert slow == {}, slow


def test_a_crafted_tree_json_is_read_in_one_pass(tmp_path):
    """A tree.json in ARI's layout whose nodes each open a metrics block that never closes:
    the metrics pattern read the rest of the file once per node (937 KB: 23.8 s)."""
    ckpt = _checkpoint(tmp_path)
    (ckpt / "tree.json").write_text("{\n" + '\n    {\n      "metrics": {\n      x' * 40000 + "\n]\n}")
    done, said = _python(STATUS, str(ckpt), str(ckpt.parent.parent))
    record("Hostile run files", "a crafted 1 MB tree.json against the layout reader",
           cases=1, survived=int(not said), lost=int(bool(said)), unit="files",
           hung=int(said == "hung"), crashed=int(said == "crashed"))
    assert not said, done and done.stderr[-1500:]


# -- finding 11: requeue on another user's folder, and on a large compact tree.json -------------

def _fake_queue(tmp: Path) -> dict[str, str]:
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("squeue", "sacct"):
        (bin_dir / name).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / name).chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}


REQUEUE_MB = 150
"""Peak resident memory of requeue on that tree (the interpreter, a chunk, a node; wait4)."""
MEASURED = """
import json, os, subprocess, sys
child = subprocess.Popen([sys.executable, "-m", "ari_jupyter", "requeue", sys.argv[1], "--json", "--force"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
out, err = child.stdout.read(), child.stderr.read()
_, status, usage = os.wait4(child.pid, 0)
print(json.dumps({"exit": os.waitstatus_to_exitcode(status), "peak_mb": usage.ru_maxrss / 1024,
                  "stdout": out.decode(), "stderr": err.decode()}))
"""


def test_requeue_of_a_large_compact_tree_json_keeps_its_memory_small(tmp_path, monkeypatch):
    """Parsed whole and written back with indent, a compact tree took tens of times its size
    (a 60 MB tree.json: over 3 GB; this 27 MB one over 350 MB). Node by node it is a chunk and a node
    (peak memory measured with wait4); the rewritten tree is the file's own text but for the
    nodes marked."""
    from ari_jupyter.ari.resume_rule import mark_left_running_failed

    ckpt = _checkpoint(tmp_path)
    nodes = [{"id": f"node_{n:06d}", "parent_id": None, "depth": 1,
              "status": "running" if n % 500 == 0 else "success", "metrics": {"GFlops": n / 7},
              "error_log": None, "summary": "é", "scores": [0.5] * 200} for n in range(30_000)]
    tree = {"run_id": RUN_ID, "created_at": "2026-12-01T09:30:00", "nodes": nodes}
    original = json.dumps(tree, separators=(",", ":"), ensure_ascii=False).encode()
    (ckpt / "tree.json").write_bytes(original)
    for name, value in _fake_queue(tmp_path).items():
        monkeypatch.setenv(name, value)
    done, said = _python(MEASURED, str(ckpt))  # from a small process: a child's peak counts
    assert not said, done and done.stderr[-1500:]  # its parent's memory at exec (wait4)
    measured = json.loads(done.stdout)
    stdout, stderr, peak_mb = measured["stdout"], measured["stderr"], measured["peak_mb"]
    ok = (measured["exit"] == 0 and json.loads(stdout)["result"] == "requeued"
          and peak_mb <= REQUEUE_MB)
    record("Hostile run files", f"requeue of a {len(original) >> 20} MB compact tree.json: peak "
           f"memory <= {REQUEUE_MB} MB", cases=1, survived=int(ok), lost=int(not ok), unit="runs",
           crashed=int("Traceback" in stderr))
    assert ok, (peak_mb, stdout[-500:], stderr[-1500:])
    assert (ckpt / "tree.json.before-requeue").read_bytes() == original
    stamp = json.loads((ckpt / "tree.json").read_text())["nodes"][0]["completed_at"]
    from datetime import datetime
    expected = mark_left_running_failed(tree, datetime.fromisoformat(stamp))
    # the file's own text but for the nodes marked, each in the file's (compact) layout
    assert (ckpt / "tree.json").read_text() == json.dumps(expected, separators=(",", ":"),
                                                          ensure_ascii=False)


OTHER_USER = """
import os, sys, json
uid, gid = int(sys.argv[2]), int(sys.argv[3])
from ari_jupyter.cli import main, _localized
_localized.catalog(), _localized._templates()
from ari_jupyter import i18n
i18n.labels("en"), i18n.messages()  # read now: the package's folder may be root's alone
import ari_jupyter.runs.requeue, ari_jupyter.cli.requeue
os.setgroups([]); os.setgid(gid); os.setuid(uid)
sys.exit(main(["requeue", sys.argv[1]]))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root and useradd")
def test_requeue_of_another_users_0750_run_is_a_message_not_a_traceback(tmp_path):
    import pwd
    import shutil

    if not shutil.which("useradd"):
        pytest.skip("needs useradd")
    tag = f"{os.getpid() % 100000}"
    names = [f"arirqown{tag}", f"arirqoth{tag}"]
    for name in names:
        subprocess.run(["useradd", "-M", "-N", "-d", "/nonexistent", "-s", "/usr/sbin/nologin", name],
                       check=True, capture_output=True)
    try:
        owner, other = (pwd.getpwnam(n) for n in names)
        tmp_path.chmod(0o755)
        ckpt = _checkpoint(tmp_path)
        for path in [tmp_path / "ws", *(tmp_path / "ws").rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        (ckpt / "tree.json").write_text('{"nodes": []}')
        for path in [ckpt, *ckpt.iterdir()]:
            os.chown(path, owner.pw_uid, owner.pw_gid)
        ckpt.chmod(0o750)
        done, said = _python(OTHER_USER, str(ckpt), str(other.pw_uid), str(other.pw_gid))
    finally:
        for name in names:
            subprocess.run(["userdel", name], capture_output=True)
    refused = done is not None and "Traceback" not in done.stderr and done.returncode not in (0, None)
    record("Hostile run files", "requeue of another user's 0750 run", cases=1,
           survived=int(refused), lost=int(not refused), unit="runs",
           crashed=int(done is not None and "Traceback" in done.stderr))
    assert refused, done and done.stderr[-1500:]
    assert str(ckpt) in done.stderr
