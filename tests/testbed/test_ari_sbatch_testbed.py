"""The preview against real SLURM: the validator's verdict must match the scheduler's.

For each scenario and each test-bed variant: the site is probed for real (partitions, GRES,
MPI, modules), ``ari-jupyter preview sbatch`` computes ARI's argv (probing GRES and
``sbatch --help`` itself), ``--wait`` is swapped for ``--test-only`` and real ``sbatch``
answers. sbatch must accept exactly when the validator found no error; where ARI raises (GPUs
without GRES) the validator must have said so too. For GPU scenarios the argv ARI *would*
build without its GRES check is also submitted: on the no-GRES cluster sbatch must refuse it
exactly when the validator flagged the GPU request.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ari_jupyter.ari.profile import ExecutionProfile
from ari_jupyter.ari.sbatch import ReproduceArgs, build_sbatch_argv, wrapper_script
from ari_jupyter.ari.validate import blocking, validate

pytestmark = pytest.mark.slurm

GPU_FIELDS = {"gpu_type", "requested_gpus_per_task", "requested_gpus_per_node"}

# id, execution_profile, run_reproduce args, environment (ARI_SLURM_PARTITION etc.)
OK_ENV = {"ARI_SLURM_PARTITION": "small", "ARI_SLURM_CPUS": "2",
          "ARI_SLURM_WALLTIME": "00:10:00"}
# Expected answer per variant (gres, nogres): "ok" accepted by sbatch --test-only,
# "refused" refused by sbatch, "raises" ARI raises before sbatch runs.
SCENARIOS = [
    ("cpu-single", {"kind": "cpu_single"}, {}, {}, ("ok", "ok")),
    ("ari-default-8-cpus", {"kind": "cpu_single"}, {}, {"ARI_SLURM_CPUS": None},
     ("refused", "refused")),
    ("ari-default-6h-walltime", {}, {}, {"ARI_SLURM_WALLTIME": None}, ("refused", "refused")),
    ("large-partition-6h", {}, {}, {"ARI_SLURM_WALLTIME": None, "ARI_SLURM_PARTITION": "large"},
     ("ok", "ok")),
    ("bad-walltime-syntax", {}, {"walltime": "10min"}, {}, ("refused", "refused")),
    ("unknown-partition", {}, {"partition": "nope"}, {}, ("refused", "refused")),
    ("mpi-2x2", {"kind": "mpi", "requested_nodes": 2, "ntasks_per_node": 2, "min_ranks": 4},
     {}, {"ARI_SLURM_CPUS": "1"}, ("ok", "ok")),
    ("three-nodes", {"requested_nodes": 3}, {}, {}, ("refused", "refused")),
    ("ranks-exceed-slots", {"requested_nodes": 2, "ntasks_per_node": 1, "min_ranks": 4}, {},
     {"ARI_SLURM_CPUS": "1"}, ("refused", "refused")),
    ("tasks-per-node-times-cpus", {"requested_nodes": 2, "ntasks_per_node": 4, "min_ranks": 8},
     {}, {}, ("refused", "refused")),
    ("ranks-times-cpus", {"min_ranks": 6}, {}, {}, ("refused", "refused")),
    ("exclusive-two-nodes", {"requested_nodes": 2, "exclusive": True}, {}, {}, ("ok", "ok")),
    ("memory-fits", {"memory_gb_per_node": 3}, {}, {}, ("ok", "ok")),
    ("memory-too-much", {"memory_gb_per_node": 8}, {}, {}, ("refused", "refused")),
    ("mem-and-mem-per-cpu", {"memory_gb_per_node": 1, "memory_gb_per_cpu": 1}, {}, {},
     ("refused", "refused")),
    ("cpu-bind", {"cpu_bind": "cores"}, {}, {}, ("ok", "ok")),
    ("gpu-typed-v100", {"kind": "gpu_single", "gpu_type": "v100",
                        "requested_gpus_per_task": 1}, {}, {}, ("ok", "raises")),
    ("gpu-typed-a100", {"kind": "gpu_single", "gpu_type": "a100",
                        "requested_gpus_per_task": 1}, {}, {}, ("refused", "raises")),
    ("gpu-untyped-per-node", {"kind": "gpu_multi", "requested_gpus_per_node": 2}, {}, {},
     ("ok", "raises")),
    ("gpu-five-per-node", {"kind": "gpu_multi", "requested_gpus_per_node": 5}, {}, {},
     ("refused", "raises")),
    ("gpu-per-task-auto-ntasks", {"kind": "gpu_single", "requested_gpus_per_task": 1}, {}, {},
     ("ok", "raises")),
    ("gpu-allow-no-gres", {"kind": "gpu_single", "gpu_type": "v100",
                           "requested_gpus_per_task": 1}, {}, {"ARI_SLURM_ALLOW_NO_GRES": "1"},
     ("ok", "ok")),
    ("sx40-preset", {"kind": "gpu_single"}, {}, {}, ("ok", "ok")),
]


def scenario_env(bed, overrides: dict) -> dict[str, str]:
    env = {k: v for k, v in bed.env.items()
           if not k.startswith(("ARI_SLURM_", "ARI_PHASE1_")) and k != "SLURM_PARTITION"}
    env.update(OK_ENV)
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


_SITE: dict[str, tuple] = {}


def site_facts(bed) -> tuple[list, frozenset]:
    """Real probe results and sbatch's bind flags, once per variant."""
    if bed.variant not in _SITE:
        from ari_jupyter.slurm.allocation import Allocation
        from ari_jupyter.cli.preview import probe_bind_flags
        from ari_jupyter.hosts.host import LocalHost
        from ari_jupyter.probes import ProbeContext, run_probes_sync

        host = LocalHost(bed.env)
        ctx = ProbeContext(allocation=Allocation.from_env({}), partition="small", timeout=30,
                           only=("sbatch", "partitions", "gres", "mpi", "modules"))
        _SITE[bed.variant] = (run_probes_sync(host, ctx), probe_bind_flags(host))
    return _SITE[bed.variant]


def submit_test_only(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    assert argv[:2] == ["sbatch", "--wait"]
    Path(argv[-1]).parent.mkdir(parents=True, exist_ok=True)
    Path(argv[-1]).write_text(wrapper_script(Path(argv[-1]).parent))
    return subprocess.run(["sbatch", "--test-only", *argv[2:]], capture_output=True, text=True,
                          env=env, timeout=60)


@pytest.mark.parametrize("profile, args, env_over, expected", [s[1:] for s in SCENARIOS],
                         ids=[s[0] for s in SCENARIOS])
def test_validator_agrees_with_real_sbatch(testbed_any, tmp_path, profile, args, env_over,
                                           expected):
    bed = testbed_any
    env = scenario_env(bed, env_over)
    repo = tmp_path / "ckpt" / "repro_sandbox"
    repo.mkdir(parents=True)
    (repo / "reproduce.sh").write_text("#!/usr/bin/env bash\ntrue\n")
    (tmp_path / "profile.json").write_text(json.dumps(profile))
    (tmp_path / "args.json").write_text(json.dumps(args))
    preview = subprocess.run(
        [sys.executable, "-m", "ari_jupyter", "preview", "sbatch", "--json", "--repo-dir",
         str(repo), "--profile", str(tmp_path / "profile.json"), "--args",
         str(tmp_path / "args.json")], capture_output=True, text=True, env=env, timeout=120)
    answer = json.loads(preview.stdout)

    probes, bind_flags = site_facts(bed)
    problems = validate(ExecutionProfile.from_json(profile), ReproduceArgs(**args),
                        probes=probes, env=env, partition=env.get("ARI_SLURM_PARTITION"),
                        bind_flags=bind_flags)
    errors = blocking(problems)
    outcome = expected[0] if bed.has_gres else expected[1]
    if preview.returncode != 0:
        # ARI raises: only its GRES refusal can happen here (sbatch and a partition exist).
        assert "no GRES configured" in answer["error"], answer
        assert not bed.has_gres
        assert {p.field for p in errors} & GPU_FIELDS, problems
        assert outcome == "raises"
        return
    submitted = submit_test_only(answer["argv"], env)
    accepted = submitted.returncode == 0
    detail = f"sbatch said: {submitted.stderr.strip()!r}; validator: {problems}"
    assert accepted == (not errors), detail
    assert ("ok" if accepted else "refused") == outcome, detail


@pytest.mark.parametrize("mem_gb", [3, 8])
def test_bfts_memory_is_refused_by_real_sbatch_exactly_when_flagged(testbed_any, mem_gb):
    """ARI_SLURM_MEM_GB reaches no reproduce job: the HPC skill puts --mem=<v>G in the header
    of every BFTS job (spec §3.3). The test bed's nodes have less than 8 GB."""
    bed = testbed_any
    env = scenario_env(bed, {"ARI_SLURM_MEM_GB": str(mem_gb)})
    probes, bind_flags = site_facts(bed)
    problems = validate(ExecutionProfile(), ReproduceArgs(), probes=probes, env=env,
                        partition="small", bind_flags=bind_flags)
    flagged = [p for p in problems if p.rule == "bfts_mem_over_node"]
    header = ["--partition=small", "--nodes=1", "--time=00:10:00", "--cpus-per-task=2",
              f"--mem={mem_gb}G"]
    submitted = subprocess.run(["sbatch", "--test-only", *header, "--wrap", "true"],
                               capture_output=True, text=True, env=env, timeout=60)
    detail = f"sbatch said: {submitted.stderr.strip()!r}; validator: {problems}"
    assert (submitted.returncode != 0) == bool(flagged), detail
    assert bool(flagged) == (mem_gb == 8), detail
    assert not [p for p in blocking(problems) if p.rule != "bfts_mem_over_node"], detail


GPU_SCENARIOS = [s[:4] for s in SCENARIOS if any(k in s[1] for k in ("gpu_type",
                                                                  "requested_gpus_per_task",
                                                                  "requested_gpus_per_node"))
                 and "ARI_SLURM_ALLOW_NO_GRES" not in s[3]]


@pytest.mark.parametrize("profile, args, env_over", [s[1:] for s in GPU_SCENARIOS],
                         ids=[s[0] for s in GPU_SCENARIOS])
def test_gres_request_refused_without_gres_exactly_when_flagged(testbed_nogres, tmp_path,
                                                                profile, args, env_over):
    """Without ARI's guard the typed/untyped GPU flags reach sbatch; the no-GRES cluster must
    refuse them, and the validator must have flagged the GPU request."""
    bed = testbed_nogres
    env = scenario_env(bed, env_over)
    repo = tmp_path / "repro_sandbox"
    argv = build_sbatch_argv(ReproduceArgs(**args), env, repo, has_gres=True, bind_flags=False,
                             profile=profile)
    submitted = submit_test_only(argv, env)
    probes, bind_flags = site_facts(bed)
    problems = validate(ExecutionProfile.from_json(profile), ReproduceArgs(**args), probes=probes,
                        env=env, partition="small", bind_flags=bind_flags)
    gpu_errors = {p.field for p in blocking(problems)} & GPU_FIELDS
    assert submitted.returncode != 0, submitted.stdout
    assert "gres" in submitted.stderr.lower() or "generic resource" in submitted.stderr.lower()
    assert gpu_errors, problems


def test_probed_site_facts_match_the_variant(testbed_any):
    probes, _ = site_facts(testbed_any)
    by_id = {p.id: p for p in probes}
    assert by_id["gres"].data["has_gres"] is testbed_any.has_gres
    names = [p["name"] for p in by_id["partitions"].data["partitions"]]
    assert names == ["small", "large"]
