"""Run ARI's own ``run_reproduce`` (ari-skill-paper-re) with sandbox_kind=slurm over a list of
cases and report, per case, the argv it handed to ``sbatch --wait`` or the error it raised.

    python reproduce_argv.py <paper-re src dir> <cases.json> [--submit]

Only the ``sbatch --wait`` call is stood in for (it returns "Submitted batch job 1" and exit 0)
unless --submit is given (then it really runs; its argv is recorded either way); ARI's GRES probe (``sinfo -h -o %G``) and ``sbatch --help`` probe run
for real against whatever ``PATH`` the case sets. Each case gets exactly its own environment
and a fresh ``sbatch --help`` cache, as a fresh ARI process would.
Runs in ARI's venv; prints one JSON list on stdout.
"""
import asyncio
import json
import logging
import os
import subprocess
import sys

sys.path.insert(0, sys.argv[1])
import server  # noqa: E402  (ARI's paper-re MCP server module)

SUBMIT = "--submit" in sys.argv[3:]
REAL_RUN = subprocess.run
calls = []


def stand_in_run(cmd, *args, **kwargs):
    if isinstance(cmd, list) and cmd[:2] == ["sbatch", "--wait"]:
        calls.append([str(c) if isinstance(c, os.PathLike) else c for c in cmd])
        if not SUBMIT:
            return subprocess.CompletedProcess(cmd, 0, "Submitted batch job 1\n", "")
    return REAL_RUN(cmd, *args, **kwargs)


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


subprocess.run = stand_in_run
collect = Collect()
server.log.addHandler(collect)
server.log.propagate = False
base_env = dict(os.environ)
results = []
for case in json.load(open(sys.argv[2])):
    os.environ.clear()
    os.environ.update(case["env"])
    server._SBATCH_HELP_CACHE = None
    calls.clear()
    collect.messages.clear()
    out = {"id": case["id"]}
    try:
        result = asyncio.run(server.run_reproduce(rubric_path=case.get("rubric_path", ""),
                                                  repo_dir=case["repo_dir"], sandbox_kind="slurm",
                                                  **case.get("args", {})))
        out["argv"] = calls[0] if calls else None
        out["result"] = result
    except Exception as exc:  # ARI raising is an outcome to compare, not a driver failure
        out["error"] = str(exc)
        out["error_type"] = type(exc).__name__
    out["warnings"] = list(collect.messages)
    results.append(out)
os.environ.clear()
os.environ.update(base_env)
print(json.dumps(results))
