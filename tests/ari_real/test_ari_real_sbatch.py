"""`ari-jupyter preview sbatch` against the argv ARI's own ``run_reproduce`` hands to sbatch.

A table of cases (caller args x execution_profile x environment x GRES yes/no x bind flags
yes/no) runs through ARI's real dispatcher (ari-skill-paper-re, sandbox_kind=slurm) in ARI's
venv, where only ``sbatch --wait`` is stood in for; ARI's GRES probe (``sinfo -h -o %G``) and
``sbatch --help`` probe run against recorded site outputs on PATH, and so do ours (elsewhere the
preview is told the same answers with --gres/--bind-flags, for speed). The preview
must give the same argv, or fail where ARI raises with ARI's message, and drop the same bind
flags with a warning.
"""
from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import re
import time
from pathlib import Path

import pytest

from ari_jupyter.ari.profile import PRESETS
from ari_jupyter.cli import main as cli_main

pytestmark = pytest.mark.ari

HERE = Path(__file__).parent
DRIVER = HERE / "drivers" / "reproduce_argv.py"
OUTPUTS = HERE.parent / "fixtures" / "outputs"

CALLER_ARGS = {
    "none": {},
    "nodes-cpus-time": {"nodes": 2, "cpus": 4, "walltime": "00:20:00"},
    "gpu-per-task": {"gpus_per_task": 1, "ntasks": 2},
    "bind-exclusive-extra": {"cpu_bind": "cores", "mem_bind": "local", "exclusive": True,
                             "extra_sbatch_args": ["--account=projX"]},
    "typed-gpu-partition": {"timeout_global_sec": 90, "gpu_type": "v100", "gpus_per_node": 2,
                            "partition": "large"},
}

# (execution_profile or None for no rubric, the rubric's max_runtime_sec or None)
PROFILES = {
    "no-rubric": (None, None),
    "empty": ({}, None),
    **{f"preset-{name}": (factory().to_json(), None)
       for name, factory in PRESETS.items() if name != "gpu_single_nogres"},
    "placement-memory-bind": ({"requested_nodes": 2, "ntasks_per_node": 2,
                               "requested_nodelist": "node1,node2", "exclude_nodes": "node3",
                               "memory_gb_per_cpu": 2, "hint": "compute_bound",
                               "mem_bind": "local", "extra_sbatch_args": ["--account=projY"]}, 1800),
    "runtime-float": ({"requested_nodes": 1}, 3600.0),
    "runtime-string": ({}, "7200"),
    "runtime-not-int": ({}, "3600.0"),
    "coerced-nodes-string": ({"requested_nodes": "4"}, None),
    "coerced-exclusive-string": ({"exclusive": "false"}, None),
    "coerced-unknown-kind": ({"kind": "warp_drive", "min_ranks": 2}, None),
    "coerced-float-and-string-gpus": ({"min_ranks": 4.5, "requested_gpus_per_node": "2"}, None),
    "coerced-nodes-word": ({"requested_nodes": "four"}, None),
}

# (environment, partition in the checkpoint's launch_config.json or None)
ENVIRONMENTS = {
    "ARI_SLURM_PARTITION": ({"ARI_SLURM_PARTITION": "small"}, None),
    "launch_config": ({}, "large"),
    "SLURM_PARTITION-cpus-walltime": ({"SLURM_PARTITION": "debug", "ARI_SLURM_CPUS": "2",
                                       "ARI_SLURM_WALLTIME": "00:05:00"}, "large"),
    "allow-no-gres": ({"ARI_SLURM_PARTITION": "small", "ARI_SLURM_ALLOW_NO_GRES": "1"}, None),
    "no-partition": ({}, None),
    "bad-cpus": ({"ARI_SLURM_PARTITION": "small", "ARI_SLURM_CPUS": "eight"}, None),
}

GRES = {"yes": "gres/testbed_gres.txt", "no": "gres/testbed_nogres.txt"}
# Debian's sbatch 22.05 --help advertises --mem-bind only (recorded); "both" is a newer sbatch.
BIND_HELP = {"both": None, "mem-only": "sbatch/help_debian_22.05_task_affinity.txt",
             "none": "sbatch/help_debian_22.05_task_none.txt"}
BOTH_HELP = ("Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]\n"
             "      --cpu-bind=...          CPU binding\n"
             "      --mem-bind=MAP_TYPE     bind memory to locality domains\n")


def _stand_ins(root: Path, gres: str, bind: str) -> Path:
    """A PATH directory whose sinfo/sbatch answer only ARI's two probes, from recorded output."""
    bin_dir = root / f"bin-gres-{gres}-bind-{bind}"
    bin_dir.mkdir(parents=True)
    (bin_dir / "gres.txt").write_bytes((OUTPUTS / GRES[gres]).read_bytes())
    help_text = BOTH_HELP.encode() if BIND_HELP[bind] is None else (OUTPUTS / BIND_HELP[bind]).read_bytes()
    (bin_dir / "help.txt").write_bytes(help_text)
    scripts = {
        "sinfo": f'[ "$*" = "-h -o %G" ] && exec cat {bin_dir}/gres.txt\n'
                 'echo "stand-in sinfo: unexpected call: $*" >&2; exit 97\n',
        "sbatch": f'[ "$*" = "--help" ] && exec cat {bin_dir}/help.txt\n'
                  'echo "stand-in sbatch: only --help may run here: $*" >&2; exit 97\n',
    }
    for name, body in scripts.items():
        (bin_dir / name).write_text("#!/bin/sh\n" + body)
        (bin_dir / name).chmod(0o755)
    return bin_dir


def _checkpoint(root: Path, env_name: str, launch_partition: str | None) -> Path:
    ckpt = root / "checkpoints" / f"20261201093000_{env_name.replace('_', '-').lower()}"
    repo = ckpt / "repro_sandbox"
    repo.mkdir(parents=True)
    (repo / "reproduce.sh").write_text("#!/usr/bin/env bash\necho reproduce\n")
    if launch_partition:
        (ckpt / "launch_config.json").write_text(json.dumps({"partition": launch_partition}))
    return repo


def build_cases(root: Path) -> list[dict]:
    bins = {(g, b): _stand_ins(root, g, b) for g in GRES for b in BIND_HELP}
    repos = {name: _checkpoint(root, name, lc) for name, (_, lc) in ENVIRONMENTS.items()}
    inputs = root / "inputs"
    inputs.mkdir()
    rubrics, args_files = {}, {}
    for name, (profile, runtime) in PROFILES.items():
        if profile is None and runtime is None:
            rubrics[name] = ""
            continue
        contract: dict = {"script_path": "reproduce.sh"}
        if profile is not None:
            contract["execution_profile"] = profile
        if runtime is not None:
            contract["max_runtime_sec"] = runtime
        rubrics[name] = str(inputs / f"rubric-{name}.json")
        Path(rubrics[name]).write_text(json.dumps({"reproduce_contract": contract}))
    for name, args in CALLER_ARGS.items():
        args_files[name] = str(inputs / f"args-{name}.json")
        Path(args_files[name]).write_text(json.dumps(args))
    cases = []
    for caller, profile, env_name, gres, bind in itertools.product(
            CALLER_ARGS, PROFILES, ENVIRONMENTS, GRES, BIND_HELP):
        env = {"PATH": f"{bins[gres, bind]}:/usr/bin:/bin", "HOME": str(root / "home"),
               "LANG": "C.UTF-8", **ENVIRONMENTS[env_name][0]}
        cases.append({"id": f"args={caller} profile={profile} env={env_name} gres={gres} bind={bind}",
                      "repo_dir": str(repos[env_name]), "rubric_path": rubrics[profile],
                      "args": CALLER_ARGS[caller], "args_file": args_files[caller], "env": env,
                      # Debian's recorded help (one bind flag) only our own probe can read
                      "probe": bind == "mem-only" or caller == "gpu-per-task",
                      "gres": gres, "bind": bind})
    return cases


@contextlib.contextmanager
def _environment(env: dict):
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def preview(case: dict) -> dict:
    """Our answer for one case: `ari-jupyter preview sbatch --json`, probing the same PATH."""
    argv = ["preview", "sbatch", "--json", "--repo-dir", case["repo_dir"], "--args", case["args_file"]]
    if not case["probe"]:  # the answers ARI's probes get from the same stand-ins (faster)
        argv += ["--gres", case["gres"], "--bind-flags", "yes" if case["bind"] == "both" else "no"]
    if case["rubric_path"]:
        argv += ["--profile", case["rubric_path"]]
    out = io.StringIO()
    with _environment(case["env"]), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(io.StringIO()):
        code = cli_main(argv)
    result = json.loads(out.getvalue())
    result["exit"] = code
    return result


_ARI_DROPPED = re.compile(r"^(cpu_bind|mem_bind)=.*flag dropped")
_OUR_DROPPED = re.compile(r"^(cpu_bind|mem_bind)=.* dropped")


def compare(ari: dict, ours: dict) -> str:
    """"" when the preview matches what ARI did, else what differs."""
    if "error" in ari:
        if ours["exit"] != 1 or ari["error"] not in ours.get("error", ""):
            return f"ARI raised {ari['error_type']}: {ari['error'][:160]!r}; preview gave {ours}"
        return ""
    if ari.get("argv") is None:
        return f"ARI ran no sbatch ({ari.get('result')}); preview gave {ours}"
    if ours["exit"] != 0:
        return f"ARI ran {ari['argv']}; preview failed: {ours.get('error')}"
    if ours["argv"] != ari["argv"]:
        return f"argv differs:\n  ARI:     {ari['argv']}\n  preview: {ours['argv']}"
    ari_dropped = {m.group(1) for m in map(_ARI_DROPPED.match, ari["warnings"]) if m}
    our_dropped = {m.group(1) for m in map(_OUR_DROPPED.match, ours["warnings"]) if m}
    if ari_dropped != our_dropped:
        return f"dropped bind flags differ: ARI {sorted(ari_dropped)}, preview {sorted(our_dropped)}"
    ari_gres_drop = any("ARI_SLURM_ALLOW_NO_GRES=1" in w for w in ari["warnings"])
    our_gres_drop = any("ARI_SLURM_ALLOW_NO_GRES=1" in w for w in ours["warnings"])
    if ari_gres_drop != our_gres_drop:
        return f"GPU-flag drop warning differs: ARI {ari_gres_drop}, preview {our_gres_drop}"
    return ""


def _first_per_profile(disagreements: list[str]) -> list[str]:
    """One example per profile row (the table is a product: the rest repeat it)."""
    seen, out = set(), []
    for line in disagreements:
        profile = line.split(" profile=", 1)[1].split(" ", 1)[0]
        if profile not in seen:
            seen.add(profile)
            out.append(line)
    return out


def record_counts(category: str, counts: dict) -> None:
    """Per-category case counts for the CI report ($ARI_TEST_REPORT_DIR/ari-real-counts.json)."""
    report_dir = os.environ.get("ARI_TEST_REPORT_DIR")
    if not report_dir:
        return
    path = Path(report_dir) / "ari-real-counts.json"
    data = json.loads(path.read_text()) if path.is_file() else {}
    data[category] = counts
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def test_preview_gives_the_argv_aris_run_reproduce_builds(ari_env, tmp_path):
    cases = build_cases(tmp_path)
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    started = time.monotonic()
    proc = ari_env.run(DRIVER.read_text(), ari_env.root / "ari-skill-paper-re" / "src",
                       tmp_path / "cases.json", cwd=tmp_path, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ari_results = {r["id"]: r for r in json.loads(proc.stdout.strip().splitlines()[-1])}
    assert set(ari_results) == {c["id"] for c in cases}
    ari_seconds, started = time.monotonic() - started, time.monotonic()

    disagreements, outcomes = [], {"argv": 0, "error": 0}
    for case in cases:
        ari = ari_results[case["id"]]
        outcomes["error" if "error" in ari else "argv"] += 1
        problem = compare(ari, preview(case))
        if problem:
            disagreements.append(f"{case['id']}: {problem}".replace(str(tmp_path), "<tmp>"))
    record_counts("sbatch argv (run_reproduce vs preview sbatch)",
                  {"cases": len(cases), **outcomes, "disagreements": len(disagreements)})
    print(f"{len(cases)} cases: {outcomes['argv']} argv, {outcomes['error']} ARI errors, "
          f"{len(disagreements)} disagreements (ARI {ari_seconds:.0f} s, preview "
          f"{time.monotonic() - started:.0f} s)")
    assert not disagreements, f"{len(disagreements)} of {len(cases)} cases disagree:\n" + \
        "\n".join(_first_per_profile(disagreements))
    # the table must really exercise both outcomes and both probes
    assert outcomes["argv"] > 100 and outcomes["error"] > 100
    assert any(any("flag dropped" in w for w in r["warnings"]) for r in ari_results.values())
    assert any("--cpu-bind=cores" in (r.get("argv") or []) for r in ari_results.values())
    assert any("--gres=gpu:v100:2" in (r.get("argv") or []) for r in ari_results.values())
