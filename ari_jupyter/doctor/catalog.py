"""Failure signatures of ARI runs on SLURM: a line of log text -> symptom, cause, fix.

Every pattern matches the stable part of a real message, case-insensitively and anywhere in
the line, so the program prefix (``sbatch: error:``, ``srun: error:``, ``salloc: error:``,
``RuntimeError:``, a bash ``line 5:``) and the wording around it may vary between SLURM and
ARI versions. The entries cover the failure-mode table of ARI's docs and of the multi-node
setup guide, plus SLURM's own refusals as a 22.05 cluster prints them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from ..ari.dashboard import DEFAULT_DASHBOARD_PORT, ssh_tunnel_command
from . import proposals
from ..base.verdict import Finding
from .paths import line_on_shared_path
from ..base.redact import redact
from ..ari.errors import NO_GRES_WAY
from ..i18n import message, t

DASHBOARD_COMMAND = f"ari viz <checkpoint> --port {DEFAULT_DASHBOARD_PORT}"
DASHBOARD_TUNNEL = ssh_tunnel_command("<node>", DEFAULT_DASHBOARD_PORT)
"""The hand-off checklist's dashboard command and tunnel, with placeholders for a log's reader."""

MPI_LAUNCH_FIX = ("load the MPI module in reproduce.sh (add it to the profile's module_loads, e.g. "
                  f"`{proposals.module_line(['openmpi/4.1'])}`) or launch with "
                  f"`{proposals.fanout_line('<program>')}` instead of mpirun")


@dataclass(frozen=True)
class Signature:
    rule: str
    severity: str
    patterns: tuple[str, ...]
    symptom: str
    cause: str
    fix: str
    generic: bool = False
    """A generic entry yields to any specific entry that matched the same line."""
    echo_of: tuple[str, ...] = ()
    """Rules whose message SLURM follows with this one (a consequence, not a second cause):
    a match right after one of them (within two lines) is dropped."""
    applies: Callable[[str, Mapping[str, str] | None], bool] | None = field(default=None, compare=False)
    """A further judgement of the matched line (e.g. where its path lives); None: always."""
    compiled: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled",
                           tuple(re.compile(p, re.IGNORECASE) for p in self.patterns))

    def search(self, line: str) -> re.Match[str] | None:
        for pattern in self.compiled:
            match = pattern.search(line)
            if match:
                return match
        return None


def _sig(rule, severity, patterns, symptom, cause, fix, generic=False, echo_of=(), applies=None) -> Signature:
    if isinstance(patterns, str):
        patterns = (patterns,)
    return Signature(rule, severity, tuple(patterns), symptom, cause, fix, generic, tuple(echo_of),
                     applies)


def _then(first: str, then: str) -> str:
    """A line holding ``first`` and, later, ``then`` (``first.*then``) in one pass: the first
    ``first`` is kept (an atomic group), so a line of ten thousand ``first`` without ``then``
    costs one scan, not one per occurrence (``first.*then`` is quadratic on such a line)."""
    return rf"^(?>.*?{first}).*{then}"


def _not_on_shared_path(line: str, env: Mapping[str, str] | None) -> bool:
    return not line_on_shared_path(line, env)


CATALOG: tuple[Signature, ...] = (
    # --- the seed guide's failure modes --------------------------------------------------------
    _sig("gres-invalid", "error",
         (r"invalid generic resource \(gres\) specification", r"invalid gres (?!specification)\S"),
         "SLURM rejected the GPU request (no GRES on this cluster or partition)",
         "GPU flags (--gres / --gpus*) were sent but the cluster has no GRES configured; "
         "`sinfo -h -o %G` prints (null)",
         t(NO_GRES_WAY, "en") + " Where another partition's `sinfo -o '%P %G'` shows gpu:..., choose "
         "that partition and SLURM grants the GPUs.",
         echo_of=("gpus-per-task-without-ntasks", "gres-typed-and-untyped")),
    _sig("mpirun-not-found", "error",
         r"\b(?:mpirun|mpiexec): (?:command )?not found",
         "mpirun is not on PATH on the compute node",
         "no MPI module is loaded in the batch job (the job does not inherit an interactive shell's modules)",
         MPI_LAUNCH_FIX),
    _sig("module-not-defined", "error",
         (r"\b(?:module|ml): (?:command )?not found",),
         "the `module` command is not defined in the job's shell",
         "reproduce.sh runs in a non-login bash, which does not read the profile scripts that define "
         "`module` (Lmod / Environment Modules)",
         "initialise it before the first `module load`; add at the top of reproduce.sh:\n"
         + proposals.module_init_block()),
    _sig("module-unknown", "error",
         (r"The following module\(s\) are unknown:",  # Lmod
          r"Unable to locate a modulefile for '"),  # Environment Modules
         "`module load` names a module this site does not have",
         "a name in module_loads (or a `module load` line) is not listed by `module avail` where the "
         "job runs: a typo, a version the site removed, or a module behind a compiler/MPI hierarchy "
         "that is not loaded first; Lmod then loads none of the listed modules",
         "pick the exact name from `module -t avail` in the terminal that runs `ari` (the wizard's "
         "module list comes from it) and update module_loads in the execution profile; with Lmod, "
         "`module spider <name>` shows what must be loaded before it"),
    _sig("permission-denied", "error",
         r"permission denied(?! \((?:publickey|gssapi))",
         "Permission denied (typically on rank > 0)",
         "the repo dir (the checkpoint's repro_sandbox) is on a node-local filesystem such as /tmp, so "
         "ranks on other nodes cannot see or write its files",
         "move the checkpoint to a shared filesystem ($HOME or /work/...) and export ARI_CHECKPOINT_DIR "
         "to the new path; look for ARI's warning \"repo_dir=... appears node-local\" in the run log",
         applies=_not_on_shared_path),
    _sig("permission-denied-shared", "error",
         r"permission denied(?! \((?:publickey|gssapi))",
         "Permission denied on a shared filesystem",
         "the path is on shared storage (every node sees it), so the file's mode or owner forbids the "
         "access: a program run as `./app` without its execute bit (a build step or a copy lost it), a "
         "script run directly instead of with `bash`, or a file owned by another user",
         "look at the file with `ls -l <path>`; give a program its execute bit in reproduce.sh right "
         "after building it (`chmod u+x ./app`), run scripts as `bash script.sh`, and fix ownership "
         "with the file's owner (`chmod`/`chgrp`) - moving the checkpoint will not help",
         applies=lambda line, env: line_on_shared_path(line, env)),
    _sig("repo-dir-node-local", "warning",
         r"appears node-local",
         "ARI warned that the reproduce repo dir looks node-local",
         "the checkpoint's resolved path is not under $HOME, /work, /scratch, /lustre, /home, /nfs or "
         "/data; tasks on other nodes may not see it",
         "put the checkpoint on a shared filesystem (e.g. /work/$USER/ari/checkpoints/<run id>) and "
         "export ARI_CHECKPOINT_DIR to it"),
    # --- ARI's own errors ------------------------------------------------------------------------
    _sig("experiment-file-not-found", "error",
         (r"(?:^|error:\s*|\]\s*)file not found: \S+", r"see docs/experiment_file\.md"),
         "`ari run` could not find the experiment file",
         "the argument of `ari run` is not an existing file",
         "pass the absolute path of experiment.md, e.g. `ari run \"$ARI_CHECKPOINT_DIR/experiment.md\"`"),
    _sig("checkpoint-not-found", "error",
         r"checkpoint not found: \S*tree\.json",
         "the checkpoint has no tree.json",
         "`ari resume`/`ari paper` was pointed at a directory where `ari run` never ran",
         "run `ari run` on the checkpoint first (or point resume at the directory that holds tree.json)"),
    _sig("no-pending-nodes", "info",
         r"\bno pending nodes\b",
         "`ari resume` found nothing to resume",
         "every node of the tree already finished",
         "run `ari paper <checkpoint>` to continue with the paper stage"),
    _sig("checkpoint-dir-not-set", "error",
         r"ari_checkpoint_dir is not set",
         "ARI_CHECKPOINT_DIR is not set",
         "the terminal running `ari` did not export ARI_CHECKPOINT_DIR",
         "export ARI_CHECKPOINT_DIR=<absolute checkpoint dir> (the hand-off script does this)"),
    _sig("llm-key-missing", "error",
         (r"missing credentials\. please pass (?:an |one of )?`api_key`",
          r"the api_key client option must be set",
          r"could not resolve authentication method\. expected either api_key or auth_token",
          r"missing (?:anthropic|openai|gemini|google) api key"),
         "ARI's LLM calls failed: no API key for the LLM backend",
         "the environment of `ari run` has no key for the backend (OPENAI_API_KEY for openai, "
         "ANTHROPIC_API_KEY for anthropic, ...): every node fails before it starts",
         "export the key in the terminal that runs the hand-off, or write it to ~/.env (chmod 600), "
         "then `ari resume <checkpoint>`; or pick a local backend (ollama) in step 4 and write "
         "again. `ari-jupyter check-handoff <checkpoint>` says whether the key is seen"),
    _sig("llm-key-rejected", "error",
         (r"incorrect api key provided", r"invalid x-api-key", r"\binvalid_api_key\b",
          r"api key not valid\. please pass a valid api key"),
         "ARI's LLM calls failed: the LLM backend refused the API key (HTTP 401)",
         "the key `ari run` sent is wrong, revoked or for another provider; ari reads the shell's "
         "variable first, then the checkpoint's .env, then ~/.env, so an old export in the "
         "shell's start-up files wins over a corrected .env",
         "put a key the provider shows as active where ari reads it first (unset an old export, "
         "or fix it in the checkpoint's .env or ~/.env, chmod 600), then `ari resume <checkpoint>`"),
    _sig("sbatch-not-on-path", "error",
         (r"sandbox_kind=slurm requested but .?sbatch.? is not on path", r"\bsbatch: (?:command )?not found"),
         "sbatch is not on PATH where ARI runs",
         "the terminal running `ari` has no SLURM client (module not loaded, or a login-less container)",
         "load the SLURM client (`module load slurm` or the site's equivalent) in that terminal, choose "
         "another sandbox_kind, or export ARI_PHASE1_ALLOW_FALLBACK=1 to run locally"),
    _sig("no-partition-resolved", "error",
         r"no partition could be resolved",
         "ARI could not choose a SLURM partition for the reproduce job",
         "sandbox_kind=slurm but the caller argument, ARI_SLURM_PARTITION and launch_config.json's "
         "partition are all empty",
         "export ARI_SLURM_PARTITION=<partition> before `ari run` (or write it to the checkpoint's .env)"),
    _sig("gpu-without-gres", "error",
         _then(r"gpu resources requested", r"no gres configured"),
         "ARI refused to submit: GPUs requested on a cluster without GRES",
         "the execution profile sets gpu_type or a GPU count and `sinfo -h -o %G` shows only (null)",
         t(NO_GRES_WAY, "en")),  # ARI's check is cluster-wide: no partition has GRES here
    _sig("sandbox-tool-missing", "error",
         (r"docker daemon is not reachable",
          r"sandbox_kind=(?:apptainer|singularity) requested but .{0,40}not on path"),
         "the requested container runtime is not available",
         "sandbox_kind (or ARI_PHASE1_SANDBOX) names docker/apptainer/singularity, which is missing here",
         "start or install it, switch to sandbox_kind=slurm (inside an allocation), or export "
         "ARI_PHASE1_ALLOW_FALLBACK=1"),
    _sig("stage1-sandbox-unsupported", "error",
         (r"unsupported sandbox kind", r"requires an apptainer sif image"),
         "the replicator stage rejected the sandbox kind",
         "ARI_PHASE1_SANDBOX=docker (unsupported by the replicator) or apptainer without an image",
         "export ARI_PHASE1_SANDBOX=slurm (or local/auto), or provide container_image"),
    _sig("viz-host-flag", "error",
         (_then(r"unrecognized arguments?:", r"--host\b"), _then(r"\bari\.viz\.server\b", r"\s--host\b"),
          _then(r"\bari viz\b", r"\s--host\b")),
         "ARI's dashboard rejects --host",
         "`python -m ari.viz.server` accepts only --checkpoint and --port (`ari viz` only the "
         "checkpoint and --port); it already binds every interface (HTTP on the port, WebSocket "
         "on port+1) and has no authentication",
         f"drop --host: `{DASHBOARD_COMMAND}` (`ari-jupyter check-handoff <checkpoint>` prints it "
         f"with a free port), and open it through an SSH tunnel from the laptop that forwards "
         f"both ports: `{DASHBOARD_TUNNEL}`; never expose it on a shared node"),
    _sig("viz-unreachable", "warning",
         r"cannot connect to ari viz",
         "the dashboard is not reachable",
         "the port is not reachable from the browser (firewall, different node), or only the HTTP "
         "port is forwarded and the WebSocket on port+1 is not",
         f"use an SSH tunnel that forwards both ports: `{DASHBOARD_TUNNEL}`, then open "
         f"http://localhost:{DEFAULT_DASHBOARD_PORT}/"),
    _sig("fake-bfts-nodes", "warning",
         r"metrics without (?:an )?async job",
         "BFTS marked nodes as fake",
         "SLURM mode is on (ARI_SLURM_PARTITION set) but the agent ran the experiment locally",
         "make slurm_submit work from this terminal (`sbatch --test-only ...`), or unset ARI_SLURM_PARTITION"),
    _sig("metric-too-low", "warning",
         r"metric too low: max=",
         "nodes failed the min_expected_metric threshold",
         "experiment.md sets min_expected_metric higher than the runs reach",
         "fix the experiment or lower min_expected_metric (an integer)"),
    _sig("paper-no-real-data", "error",
         r"no real data",
         "the paper pipeline stopped: no real data",
         "no node produced numeric results",
         "fix the experiments, or export ARI_FORCE_PAPER=1 to write the paper anyway"),
    _sig("empty-execution-profile", "warning",
         r"execution_profile[\"']?\s*[:=]\s*(?:\{\s*\}|null\b|none\b)",
         "the rubric has no execution_profile",
         "without it the replicator prompt gets no COMPUTE-NODE block: the agent may write CPU code for "
         "a GPU paper and run without srun",
         "check `jq '.reproduce_contract.execution_profile' <ckpt>/ors_rubric.json` and regenerate the "
         "rubric (or set the profile in the wizard)"),
    _sig("ors-score-zero", "warning",
         r"ors_score[\"']?\s*[:=]\s*0(?:\.0+)?(?![\d.])",
         "ORS score is exactly 0",
         "reproduce.sh or its artifacts are missing",
         "look in <ckpt>/repro_sandbox/ and at executed / exit_code / missing in ors_phase1.json"),
    _sig("no-reproduce-log", "warning",
         (r"no reproduce\.log", r"reproduce\.log.{0,20}(?:not found|missing)", r"code_only.{0,30}auto"),
         "stage 3 has no reproduce.log",
         "stage 2 did not run (or its log is missing), so grading fell back to code-only",
         "re-run stage 2 and do not combine code_only with paper_audit_mode"),
    _sig("reproduce-nested-submission", "warning",
         r"(?:^|[\s'\"])(?:\./)?src/\S*: no such file or directory",
         "reproduce.sh cannot find src/...",
         "the repository is nested under submission/ (older ARI resolves the wrong root)",
         "update ari-skill-paper-re (>= 0.8.0 resolves the nested root) or move the code to the repo root"),
    _sig("letta-unreachable", "error",
         (_then(r"(?:letta|:8283)", r"connection refused"), _then(r"connection refused", r"(?:letta|:8283)")),
         "the memory backend (Letta) refused the connection",
         "Letta is not running or LETTA_BASE_URL points elsewhere",
         "start Letta (`curl http://127.0.0.1:8283/healthz`) or export ARI_MEMORY_BACKEND=in_memory for "
         "smoke tests"),
    _sig("letta-embedding-missing", "error",
         r"letta_embedding_config is required",
         "LETTA_EMBEDDING_CONFIG is missing",
         "the Letta backend needs an embedding configuration",
         "set LETTA_EMBEDDING_CONFIG (setup_env's default is openai/text-embedding-3-small)"),
    _sig("llm-unreachable", "error",
         (r"\b\w+Exception - Connection error\b", r"litellm\.APIConnectionError\b"),
         "ARI cannot reach its LLM endpoint: the root node (and every node after it) fails",
         "nothing answers at the LLM URL from this node: ARI_LLM_API_BASE (or the provider's default "
         "URL for ARI_BACKEND) is wrong, the server is not running, or this node has no route to it "
         "(a proxy or firewall between compute nodes and the internet); ARI still adopts the "
         "checkpoint and writes its files",
         "from the same terminal, check the endpoint (`curl -sS \"$ARI_LLM_API_BASE/models\"` or the "
         "provider's URL); fix ARI_LLM_API_BASE / ARI_BACKEND / ARI_MODEL in the terminal or the "
         "checkpoint's .env, start the local server (e.g. `ollama serve`), or export the site's "
         "HTTPS_PROXY / NO_PROXY; then run the hand-off again"),
    _sig("llm-rate-limit", "warning",
         r"ratelimiterror",
         "the LLM provider rate-limited the run",
         "too many parallel requests for the provider's limit",
         "lower ARI_PARALLEL or use a cheaper judge model"),
    _sig("legacy-home-ari", "info",
         _then(r"deprecationwarning:", r"\.ari/"),
         "a legacy $HOME/.ari fallback was used",
         "ARI_REGISTRIES_FILE / ARI_REGISTRY_DATA / ARI_LETTA_PIDFILE are not set",
         "set ARI_REGISTRIES_FILE, ARI_REGISTRY_DATA and ARI_LETTA_PIDFILE"),
    _sig("ari-import-moved", "error",
         r"cannot import name '[^']+' from 'ari'",
         "a skill imports an ARI internal that moved",
         "the skill was written against an older ari-core",
         "import it from ari.public.<name> instead"),
    _sig("container-runtime-missing", "error",
         r"\b(?:singularity|apptainer)(?: exec)?: (?:command )?not found",
         "singularity/apptainer is not installed",
         "ARI_CONTAINER_IMAGE asks for a container but the runtime is missing",
         "install Apptainer (or module load it), or unset ARI_CONTAINER_IMAGE"),
    _sig("nproc-limit", "error",
         r"rlimit_nproc",
         "the coding sandbox hit its process limit",
         "a fork loop, or ARI_MAX_CHILD_PROCS (1024) is too low for the build",
         "fix the loop or raise ARI_MAX_CHILD_PROCS"),
    _sig("latex-missing", "error",
         r"\blatexmk: (?:command )?not found",
         "latexmk is not installed",
         "TeX Live is missing on the host running the paper stage",
         "install texlive-xetex and latexmk (and run report/setup_fonts.sh for CJK fonts)"),
    _sig("no-papers-registered", "info",
         r"no papers registered yet",
         "the paper registry is empty",
         "the registry is {workspace}/paper_registry, not ~/.ari/paper_registry",
         "register a paper, or point ARI_PAPER_REGISTRY_DIR at the registry you meant"),
    # --- SLURM's own messages (real text from a 22.05 test cluster) -------------------------------
    _sig("gpus-per-task-without-ntasks", "error",
         _then(r"--gpus-per-task\b", r"used without either --gpus or -n/--ntasks"),
         "sbatch refused --gpus-per-task without a task count",
         "--gpus-per-task was sent without --ntasks or --gpus (an old ARI, or a non-bridge path)",
         "add --ntasks 1 (or set min_ranks in the profile); current ARI pairs it automatically"),
    _sig("gres-typed-and-untyped", "error",
         r"with and without type identification",
         "sbatch refused a mix of typed and untyped GPU requests",
         "--gres=gpu:<type>:N was combined with --gpus-per-task/--gpus-per-node (or --gpus=N)",
         "use one form: with gpu_type set, request only --gres=gpu:<type>:N (current ARI does); "
         "remove untyped GPU flags from extra_sbatch_args"),
    _sig("bind-flag-unsupported", "warning",
         (r"unrecognized option '?--(?:cpu|mem)-bind", r"unrecognized option.{0,4}--(?:cpu|mem)-bind"),
         "sbatch does not know --cpu-bind/--mem-bind",
         "these are srun options on this SLURM version",
         "leave cpu_bind/mem_bind empty in the profile and put `srun --cpu-bind=...` in reproduce.sh"),
    _sig("memory-unsatisfiable", "error",
         (r"memory specification can not be satisfied", r"(?<!\S)(?>\S*?--mem=)\S++ exceeds"),
         "the memory request exceeds what the nodes have",
         "memory_gb_per_node (--mem) is larger than the partition's nodes",
         "lower memory_gb_per_node (see `sinfo -o '%P %m'` for MB per node) or leave it 0"),
    _sig("node-config-unavailable", "error",
         r"requested node configuration is not available",
         "no node can satisfy the request",
         "more GPUs/memory/CPUs per node than any node has, or a GRES type the nodes do not have",
         "compare the request with `sinfo -o '%P %c %m %G'` and reduce it or pick another partition",
         echo_of=("memory-unsatisfiable",)),
    _sig("invalid-partition", "error",
         (r"invalid partition specified: (?P<partition>\S+)", r"invalid partition name specified"),
         "SLURM does not know the partition",
         "the partition name is misspelt or not available to this account",
         "choose one listed by `sinfo -h -o %P` and export ARI_SLURM_PARTITION=<it>"),
    _sig("account-rejected", "error",
         (r"invalid account or account/partition combination", r"--account.{0,40}(?:rejected|invalid)"),
         "SLURM rejected the account",
         "an #SBATCH --account/-A line or extra_sbatch_args names an account not valid here",
         "remove --account from the script template and extra_sbatch_args (ARI strips it from BFTS jobs)"),
    _sig("time-limit-invalid", "error",
         r"requested time limit is invalid",
         "the walltime exceeds the partition's limit",
         "ARI_SLURM_WALLTIME (or max_runtime_sec) is above the partition's MaxTime",
         "lower the walltime (`sinfo -o '%P %l'` shows each partition's limit) or pick a longer partition"),
    _sig("node-count-invalid", "error",
         r"node count specification invalid",
         "more nodes requested than the partition has",
         "requested_nodes (--nodes) is larger than the partition",
         "lower requested_nodes to at most the partition's node count (`sinfo -o '%P %D'`)"),
    _sig("too-many-processors", "error",
         r"more processors requested than permitted",
         "more tasks requested than the partition's CPUs",
         "min_ranks (--ntasks) x cpus per task exceeds the partition",
         "lower min_ranks or ARI_SLURM_CPUS, or add nodes"),
    _sig("job-pending-rejected", "error",
         r"\((?:PartitionConfig|PartitionNodeLimit|PartitionTimeLimit|QOSMax\w+|AssocMax\w+|"
         r"AssocGrp\w+|QOSGrp\w+|ReqNodeNotAvail[^()]*|InvalidAccount|InvalidQOS)\)",
         "the job is pending for a reason that will not resolve by waiting",
         "the request exceeds a partition/QOS/association limit",
         "`scancel` it and reduce the request (nodes, time, GPUs) or pick another partition"),
    _sig("job-pending-queued", "info",
         (r"\((?:Resources|Priority)\)", r"queued and waiting for resources",
          r"requested partition configuration not available now"),
         "the job is queued",
         "the partition is busy; queue time counts against ARI's reproduce timeout (max_runtime + 60 s)",
         "check `squeue -u $USER` (REASON) and `sinfo -p <partition>`; choose an idle partition"),
    _sig("reproduce-timed-out", "warning",
         (r"[\"']?timed_out[\"']?\s*[:=]\s*true",),
         "ARI stopped waiting for the reproduce job",
         "queue wait plus run time exceeded max_runtime + 60 s; the job is NOT cancelled",
         "`squeue -u $USER` and `scancel <job id>` the orphan; pick an idle partition or raise max_runtime_sec"),
    _sig("job-time-limit", "error",
         r"cancelled at .{0,40}due to time limit",
         "SLURM killed the job at its time limit",
         "the walltime was too short for the run",
         "raise ARI_SLURM_WALLTIME / max_runtime_sec, or wrap long stages in `timeout` and reduce scale"),
    _sig("job-cancelled", "warning",
         r"^(?>.*\*\*\* job \d+ on \S+ cancelled at )(?!.*due to time limit)",
         "the job was cancelled",
         "someone (or ARI's cleanup) ran scancel, or the node went down",
         "to tell who or what cancelled the job: `sacct -j <id> -o JobID,State,Reason,End` (where the site "
         "keeps accounting), `scontrol show job <id>` (while SLURM still lists the job, minutes after it "
         "ends), the checkpoint's .ari-jupyter-cancels.json (written when ari-jupyter cancels a job); "
         "then resubmit"),
    _sig("step-without-environment", "error",
         r"execve\(\): [^:]+: no such file or directory",
         "a job step's task could not start its program: it was not found",
         "the step started with no environment (no PATH): in a job submitted with --export=NONE "
         "(ARI's BFTS jobs), SLURM_EXPORT_ENV=NONE is passed on to every srun inside it; or the "
         "program is not on the node",
         "export SLURM_EXPORT_ENV=ALL in the job before srun (the wizard's bfts_env.sh does; write the "
         "checkpoint again), or run `srun --export=ALL ...`; if the program is a path, check it exists on every node"),
    _sig("task-exit-nonzero", "warning",
         r"\btasks? (?P<tasks>[\d,\[\]-]+): exited with exit code (?P<code>[1-9]\d*)",
         "a task of the job step exited with an error",
         "the program failed on that rank (its node and rank are in the message)",
         "read that rank's output above; run `srun -N1 -n1 <command>` on the node to reproduce"),
    _sig("controller-unreachable", "error",
         r"unable to contact slurm controller",
         "SLURM's controller did not answer",
         "slurmctld is down or unreachable from this node (network, SLURM_CONF pointing elsewhere)",
         "run `scontrol ping`; check SLURM_CONF; retry later - this is not a verdict about the job"),
    _sig("controller-unresponsive", "warning",
         r"socket timed out on send/recv operation",
         "SLURM's controller accepted the connection but did not answer in time",
         "slurmctld is overloaded, paused or hung (MessageTimeout exceeded)",
         "retry in a minute and check `scontrol ping`; treat results as unknown, not as a verdict"),
    _sig("accounting-disabled", "info",
         r"accounting storage is disabled",
         "sacct is not available on this cluster",
         "the site runs without slurmdbd",
         "use `squeue -j <id>` and `scontrol show job <id>` instead of sacct"),
    _sig("mpi-run-as-root", "error",
         r"mpirun has detected an attempt to run as root",
         "OpenMPI refuses to run as root",
         "the job runs as root (containers, test clusters)",
         "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 or pass --allow-run-as-root"),
    _sig("pmix-unreachable", "error",
         r"pmix error: unreachable",
         "multi-node `srun --mpi=pmix` failed",
         "PMIx cannot reach the other node's step daemon",
         "launch with `mpirun` inside the allocation, or use the site's documented --mpi plugin"),
    _sig("mem-options-exclusive", "error",
         (_then(r"(?:SLURM_MEM_PER_\w+|--mem\S*)", r"mutually exclusive"), _then(r"mutually exclusive", r"--mem")),
         "srun/sbatch refused conflicting memory options",
         "--mem and --mem-per-cpu together, often from SLURM_MEM_PER_* inherited from the notebook's job",
         "set only one of memory_gb_per_node / memory_gb_per_cpu, and `unset SLURM_MEM_PER_CPU "
         "SLURM_MEM_PER_NODE SLURM_MEM_PER_GPU` before `ari run`"),
    _sig("step-memory-unavailable", "error",
         (r"unable to create step for job \d+: memory required by task is not available",
          r"^\s*(?:srun: error: )?memory required by task is not available"),
         "srun could not start a job step: the step asks for more memory than the job has",
         "srun inside the job read SLURM_MEM_PER_CPU / SLURM_MEM_PER_NODE / SLURM_MEM_PER_GPU "
         "inherited from the notebook's own allocation (sbatch --export ALL passes them on), so each "
         "step asks for that job's memory instead of this one's",
         "the hand-off script ari-jupyter writes already runs `unset SLURM_MEM_PER_CPU SLURM_MEM_PER_GPU "
         "SLURM_MEM_PER_NODE` before `ari run`: start ARI with it (`bash <workspace>/launch/<run id>.sh`), "
         "or run that unset in the terminal before a hand-typed `ari run`; if it still fails, lower "
         "memory_gb_per_node / memory_gb_per_cpu in the execution profile"),
    _sig("exec-format-error", "error",
         r"exec format error",
         "a binary built for another CPU architecture was run",
         "the submitter's venv leaked into PATH on compute nodes of another architecture",
         "keep ARI_SBATCH_EXPORT_MODE unset (default --export=NONE with a reset PATH)"),
    _sig("command-not-found", "error",
         (r"(?<![\w.+-])(?P<command>[\w.+-]+): (?:command )?not found\b", r"exit_code[\"']?\s*[:=]\s*127\b"),
         "a command is not on PATH in the job (exit 127)",
         "BFTS jobs run with PATH reset to /usr/bin:/bin:/usr/local/bin; compilers like mpicc/icc/aocc "
         "and tools from modules are missing unless loaded in the script",
         "use gcc or add `module load <module>` at the top of the script; declare the toolchain in "
         "experiment.md's ## Hardware Limits", generic=True),
)
"""Line signatures, specific ones first."""

RULES = tuple(sig.rule for sig in CATALOG)


FIX_PARAMS: Mapping[str, Mapping[str, str]] = {
    "mpirun-not-found": {"module_line": proposals.module_line(["openmpi/4.1"]),
                         "fanout_line": proposals.fanout_line("<program>")},
    "module-not-defined": {"module_init_block": proposals.module_init_block()},
    "viz-host-flag": {"dashboard_command": DASHBOARD_COMMAND, "tunnel": DASHBOARD_TUNNEL},
    "viz-unreachable": {"tunnel": DASHBOARD_TUNNEL, "port": str(DEFAULT_DASHBOARD_PORT)},
    "no-papers-registered": {"workspace": "{workspace}"},
    "gres-invalid": {"way": message(NO_GRES_WAY)},
}
"""The code a signature's texts quote (messages/doctor.json keeps it as placeholders)."""


SHARED_FIXES: Mapping[str, str] = {"gpu-without-gres": NO_GRES_WAY}
"""Signatures whose fix is a sentence other views say in the same words."""


def message_ids(rule: str) -> tuple[str, str, str]:
    """The catalog ids of a signature's symptom, cause and fix (messages/doctor.json; a shared
    fix's own id)."""
    return f"doctor.{rule}.symptom", f"doctor.{rule}.cause", SHARED_FIXES.get(rule, f"doctor.{rule}.fix")


def _format_lines(lines: Iterable[int]) -> str:
    lines = list(lines)
    shown = ", ".join(str(n) for n in lines[:8])
    if len(lines) > 8:
        shown += f", ... ({len(lines)} lines)"
    return ("line " if len(lines) == 1 else "lines ") + shown


def _where(lines: Iterable[int]) -> dict:
    """``_format_lines`` as a sentence of the catalogs (the numbers stay verbatim)."""
    lines = list(lines)
    shown = ", ".join(str(n) for n in lines[:8])
    if len(lines) == 1:
        return message("doctor.where.one", lines=shown)
    if len(lines) > 8:
        return message("doctor.where.more", lines=shown, count=len(lines))
    return message("doctor.where.many", lines=shown)


def scan(text: str, env: Mapping[str, str] | None = None) -> list[Finding]:
    """Match every catalog signature against every line; one finding per signature. ``env``
    ($HOME) helps judge where a path in a line lives (default: this process's environment)."""
    hits: dict[str, list[tuple[int, str]]] = {}
    specific_lines: set[int] = set()
    generic_hits: list[tuple[Signature, int, str]] = []
    last_line_of: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        for sig in CATALOG:
            match = sig.search(line)
            if not match or (sig.applies is not None and not sig.applies(line, env)):
                continue
            if any(number - last_line_of.get(rule, -10) <= 2 for rule in sig.echo_of):
                continue
            last_line_of[sig.rule] = number
            if sig.generic:
                generic_hits.append((sig, number, line))
            else:
                hits.setdefault(sig.rule, []).append((number, line))
                specific_lines.add(number)
    for sig, number, line in generic_hits:
        if number not in specific_lines:
            hits.setdefault(sig.rule, []).append((number, line))
    by_rule = {sig.rule: sig for sig in CATALOG}
    findings = []
    for rule, matched in hits.items():
        sig = by_rule[rule]
        lines = tuple(n for n, _ in matched)
        example = redact(matched[0][1]).strip()  # before the cut: a cut secret is not found whole
        if len(example) > 160:
            example = example[:157] + "..."
        findings.append(_finding(sig, lines, example))
    return findings


def _finding(sig: Signature, lines: tuple[int, ...], example: str) -> Finding:
    """The finding of one signature: English as always, plus the ids that translate it."""
    symptom_id, cause_id, fix_id = message_ids(sig.rule)
    fix_params = dict(FIX_PARAMS.get(sig.rule, {}))
    params = {"symptom": message(symptom_id, **fix_params), "where": _where(lines),
              "example": repr(example), "cause": message(cause_id, **fix_params), **fix_params}
    return Finding(
        rule=sig.rule, severity=sig.severity, line=lines[0], lines=lines, cause=sig.cause,
        message=f"{sig.symptom} ({_format_lines(lines)}: {example!r}). Cause: {sig.cause}.",
        fix=sig.fix, message_id="doctor.log_match", params=params, fix_id=fix_id)
