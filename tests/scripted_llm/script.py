"""What the scripted LLM answers, and how it names each request's stage.

Every answer is computed from the request alone (its tools, its prompts and, for ARI's ReAct
agent, the tool calls and tool results already in the conversation), so a run is repeatable.
Numbers in answers are never invented: the evaluator's metrics are the ``name: value`` lines the
job printed, copied from the tool output ARI put into the prompt.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

# The experiment the agent runs on every BFTS node: a SLURM job (through ARI's hpc skill) that
# shows its environment and modules, then measures a triad loop with the system's Python.
# Each node varies the array length, so child nodes write new artifacts.
JOB_SCRIPT = r"""
set -u
LINGER="${2:-0}"
echo "job ${SLURM_JOB_ID} on $(hostname) partition=${SLURM_JOB_PARTITION}"
mkdir -p evidence
# the job's environment, values of secret-looking names replaced (their names stay visible)
env | sort | sed -E 's/^([A-Za-z_0-9]*(KEY|TOKEN|SECRET|PASSWORD)[A-Za-z_0-9]*)=.*/\1=<redacted>/' \
  > "evidence/job_env_${SLURM_JOB_ID}.txt"
module list > "evidence/module_list_${SLURM_JOB_ID}.txt" 2>&1
echo "modules: $(tr '\n' ' ' < "evidence/module_list_${SLURM_JOB_ID}.txt")"
python3 - "$N" <<'PY'
import json, sys, time
n = int(sys.argv[1])
a = [0.0] * n; b = [1.0] * n; c = [2.0] * n
best = None
for _ in range(3):
    t = time.perf_counter()
    for i in range(n):
        a[i] = b[i] + 3.0 * c[i]
    dt = time.perf_counter() - t
    best = dt if best is None or dt < best else best
mbps = 3 * 8 * n / best / 1e6
print(f"array_length: {n}")
print(f"triad_mbps: {mbps:.3f}")
json.dump({"measurements": {"triad_mbps": round(mbps, 3)}, "params": {"array_length": n}},
          open("results.json", "w"))
PY
# every task of the allocation (one in a BFTS job, all of them in the reproduce job): srun's
# ranks, then Open MPI's launcher over the same tasks
srun --ntasks="${SLURM_NTASKS:-1}" sh -c 'echo "srun rank ${SLURM_PROCID} of ${SLURM_NTASKS} on ${SLURMD_NODENAME}"'
# a real MPI program over the same tasks, built with mpicc (Debian's libopenmpi-dev): each rank
# gives its rank to an allreduce; the sum is n(n-1)/2 only when every rank took part
cat > allreduce.c <<'C_EOF'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int rank, size, sum = -1;
  const char *host = getenv("SLURMD_NODENAME");
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("mpirun rank %d of %d on %s\n", rank, size, host ? host : "unknown");
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("mpi_ranks: %d\nmpi_rank_sum: %d\n", size, sum);
  }
  MPI_Finalize();
  return sum == size * (size - 1) / 2 ? 0 : 1;
}
C_EOF
mpicc -O2 -o allreduce allreduce.c
mpirun -np "${SLURM_NTASKS:-1}" ./allreduce
# an agent that overreaches (Options.greedy_depth): its BFTS job keeps the allocation after it
# measured. The reproduce job (ari-ors) runs the same command and stays 30 s (or
# SCRIPTED_REPRODUCE_HOLD_S: ARI submits it with the environment of `ari run`), time enough for
# a person (and the Runs panel's next poll) to see it running on its nodes.
if [ "${SLURM_JOB_NAME:-}" = ari-ors ]; then
  sleep "${SCRIPTED_REPRODUCE_HOLD_S:-30}"
elif [ "$LINGER" -gt 0 ]; then
  echo "holding the allocation for ${LINGER} s"
  sleep "$LINGER"
fi
"""


@dataclass(frozen=True)
class Options:
    """How the scripted agent behaves beyond the plain run. ``greedy_depth``: the BFTS node at
    this depth submits its job on ``greedy_nodes`` nodes for ``greedy_walltime`` and holds the
    allocation ``linger_s`` seconds after it printed its metric, as an agent that spends more than
    the user approved."""

    greedy_depth: int | None = None
    greedy_nodes: int = 2
    greedy_walltime: str = "01:00:00"
    linger_s: int = 900
    status_wait_s: float = 0.0
    """Seconds the agent thinks before it asks a running job's status again: a real model takes
    seconds per answer, and every ask is one of the node's ReAct steps (``--max-react``)."""


PLAIN = Options()


@dataclass
class Request:
    model: str
    messages: list
    tool_names: list = field(default_factory=list)
    tool_choice: object = None

    @classmethod
    def from_body(cls, body: dict) -> "Request":
        names = [t.get("function", {}).get("name", "") for t in body.get("tools") or []]
        return cls(str(body.get("model") or ""), list(body.get("messages") or []), names,
                   body.get("tool_choice"))

    def text(self, role: str | None = None) -> str:
        out = []
        for m in self.messages:
            if role is None or m.get("role") == role:
                c = m.get("content")
                if isinstance(c, list):
                    c = " ".join(p.get("text", "") for p in c if isinstance(p, dict))
                out.append(str(c or ""))
        return "\n".join(out)

    @property
    def system(self) -> str:
        return self.text("system")

    def calls(self) -> list[tuple[str, dict, str]]:
        """The agent's earlier tool calls: (name, arguments, result text), in order."""
        results = {m.get("tool_call_id"): str(m.get("content") or "")
                   for m in self.messages if m.get("role") == "tool"}
        out = []
        for m in self.messages:
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") or {}
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    args = {}
                out.append((fn.get("name", ""), args, results.get(tc.get("id"), "")))
        return out

    def stage(self) -> str:
        for label, test in STAGES:
            if test(self):
                return label
        return "other"


STAGES = [
    ("bfts.react", lambda r: "slurm_submit" in r.tool_names or "run_bash" in r.tool_names),
    ("bfts.evaluate", lambda r: "research data extractor" in r.system),
    ("bfts.expand", lambda r: r.text("user").startswith("You are expanding a BFTS research tree node")),
    ("bfts.select", lambda r: r.text("user").startswith("You are selecting which completed research node")),
    ("paper.references", lambda r: r.system.startswith("You are an academic research librarian")),
    ("paper.figures", lambda r: "matplotlib" in r.system[:200] or "visualization expert" in r.system[:200]),
    ("paper.write", lambda r: r.system.startswith(("You are an expert academic writer", "You are a scientific paper writer"))),
    ("review.semantic", lambda r: "EVIDENCE-GROUNDED SEMANTIC review" in r.system),
    ("reproduce.rubric", lambda r: "grading rubric" in r.text("user")[:400]),
    ("idea.gap", lambda r: r.system.startswith("Identify research gaps")),
    ("idea.discussion", lambda r: "multi-agent scientific research team" in r.system),
    ("idea.metric", lambda r: r.system.startswith("Select evaluation metric")),
]


def _tool_call(seq: int, name: str, args: dict) -> dict:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": f"call_{seq}_{name}", "type": "function",
                            "function": {"name": name, "arguments": json.dumps(args)}}]}


def _text(content: str) -> dict:
    return {"role": "assistant", "content": content}


def _work_dir(request: Request) -> str:
    m = re.search(r"Work directory \(REQUIRED\): (\S+)", request.system)
    return m.group(1) if m else ""


def _partition(request: Request) -> str:
    m = re.search(r"SLURM partition: (\S+)", request.system)
    return m.group(1) if m else ""


def _node_depth(request: Request) -> int:
    m = re.search(r"depth=(\d+)", request.text("user"))
    return int(m.group(1)) if m else 0


def _result(text: str) -> dict:
    """A tool result as ARI puts it into the conversation (JSON, often nested in "result")."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    for _ in range(3):
        if isinstance(data, dict) and isinstance(data.get("result"), (str, dict)) and len(data) == 1:
            inner = data["result"]
            try:
                data = json.loads(inner) if isinstance(inner, str) else inner
            except ValueError:
                return {"text": inner}
    return data if isinstance(data, dict) else {}


def _job_id(result: str) -> str:
    return str(_result(result).get("job_id") or "")


def react(request: Request, nth: int, options: Options = PLAIN) -> tuple[dict, str]:
    calls = request.calls()
    called = [c[0] for c in calls]
    offered = set(request.tool_names)
    greedy = options.greedy_depth is not None and _node_depth(request) == options.greedy_depth
    if "generate_ideas" in offered and "generate_ideas" not in called and _node_depth(request) == 0:
        topic = request.text("user").split("\n", 2)[1] if "\n" in request.text("user") else "triad"
        return _tool_call(nth, "generate_ideas", {"topic": topic[:200], "papers": [], "n_ideas": 1,
                                                   "n_agents": 2, "max_discussion_rounds": 1}), "generate_ideas"
    if "make_metric_spec" in offered and "make_metric_spec" not in called and _node_depth(request) == 0:
        goal = request.text("user")[:1500]
        return _tool_call(nth, "make_metric_spec", {"experiment_text": goal}), "make_metric_spec"
    submits = [c for c in calls if c[0] == "slurm_submit"]
    wd = _work_dir(request)
    if not submits and "run_bash" in offered and not any(c[0] == "run_bash" for c in calls):
        # the experiment as scripts in the node's work dir: run_job.sh, whose first command ARI
        # records as the node's run command (node_report.json; ARI skips lines that start with
        # an assignment, so the array length is an argument), and the measurement itself;
        # ARI's EAR bundles them as code/ and writes reproduce.sh from that run command
        n = 20000 * (2 ** _node_depth(request))
        args = f"{n} {options.linger_s}" if greedy else f"{n}"
        return _tool_call(nth, "run_bash", {"command": (
            f"cd {wd} && cat > triad_job.sh <<'ARI_EOF'\n#!/bin/bash\nN=\"${{1:-20000}}\"\n{JOB_SCRIPT}ARI_EOF\n"
            f"printf '#!/bin/bash\\nbash triad_job.sh {args}\\n' > run_job.sh && chmod +x run_job.sh triad_job.sh"
            " && cat run_job.sh")}), "write_run_job"
    if not submits or not _job_id(submits[-1][2]):
        if "slurm_submit" not in offered:
            return _text("slurm_submit is not offered"), "no_submit"
        return _tool_call(nth, "slurm_submit", {
            "script": "#!/bin/bash\nbash run_job.sh\n", "job_name": "triad", "partition": _partition(request),
            "nodes": options.greedy_nodes if greedy else 1, "walltime": options.greedy_walltime if greedy else "00:05:00",
            "work_dir": wd}), "slurm_submit"
    job = _job_id(submits[-1][2])
    statuses = [_result(c[2]).get("status") for c in calls if c[0] == "job_status"]
    # the test bed has no accounting (sacct): a job that left the queue reads UNKNOWN
    if statuses and statuses[-1] in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING") and "job_status" in offered:
        return _tool_call(nth, "job_status", {"job_id": job}), "job_status"
    reads = [c for c in calls[calls.index(submits[-1]):] if c[0] == "run_bash"]
    if not reads and "run_bash" in offered:
        wd = _work_dir(request)
        return _tool_call(nth, "run_bash", {"command": f"cd {wd} && cat ../../../slurm_logs/slurm_job_{job}.out"}), "read_job_output"
    # final answer: the job's output as the run_bash call returned it, nothing added
    output = _result(reads[-1][2]) if reads else {}
    stdout = str(output.get("stdout") or output.get("output") or output.get("text") or reads[-1][2] if reads else "")
    return _text(json.dumps({"status": "success", "artifacts": [{"type": "result", "stdout": stdout}],
                             "summary": f"triad measured in SLURM job {job}"})), "final"


def evaluate(request: Request, nth: int) -> tuple[dict, str]:
    """The metrics are the ``name: number`` lines found in the artifacts ARI sent."""
    user = request.text("user").replace("\\n", "\n")
    found = {}
    for name, value in re.findall(r"(?m)^\s*([A-Za-z_][A-Za-z0-9_]*): ([0-9]+(?:\.[0-9]+)?)\s*$", user):
        found.setdefault(name, float(value))
    params = {k: v for k, v in found.items() if k == "array_length"}
    measurements = {k: v for k, v in found.items() if k not in params}
    axes = dict.fromkeys(("measurement_validity", "comparative_rigor", "novelty", "reproducibility",
                          "clarity_of_contribution"), 0.5 if measurements else 0.0)
    return _text(json.dumps({
        "has_real_data": bool(measurements), "params": params, "measurements": measurements,
        "metrics": {**params, **measurements}, "reason": "triad bandwidth read from the job output",
        "axis_scores": axes, "axis_rationales": dict.fromkeys(axes, "scripted"),
        "comparison_found": False})), "metrics_from_artifacts"


def idea_discussion(request: Request, nth: int) -> tuple[dict, str]:
    idea = {"Title": "Triad bandwidth versus array length", "Idea": "Measure the triad loop for growing arrays.",
            "Experiment": "Run the triad as a SLURM job for several array lengths.",
            "Novelty": 5, "Feasibility": 9, "Clarity": 8}
    return _text("Thought: a small, feasible measurement.\n```json\n" + json.dumps(idea) + "\n```"), "idea"


def _uuid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def rubric_skeleton(request: Request, nth: int) -> tuple[dict, str]:
    """The replication rubric's skeleton: the run's MPI reproduce on both test-bed nodes."""
    children = [{"id": _uuid(10 + i), "requirements": text, "weight": 1, "target_subtree_leaves": leaves,
                 "sub_tasks": []}
                for i, (text, leaves) in enumerate([("Triad bandwidth measured on every rank", 17),
                                                    ("Ranks spread over two nodes", 17),
                                                    ("Bandwidth reported per array length", 16)])]
    return _text(json.dumps({
        "version": "3",
        "reproduce_contract": {
            "script_path": "reproduce.sh", "max_runtime_sec": 600,
            "expected_artifacts": ["reproduce.log"],
            "execution_profile": {"kind": "mpi", "requested_nodes": 2, "ntasks_per_node": 2,
                                  "min_ranks": 4, "module_loads": ["openmpi/4.1"]}},
        "rubric": {"id": _uuid(1), "requirements": "The core contributions of the paper have been reproduced.",
                   "weight": 1, "sub_tasks": children}})), "rubric_skeleton"


def answer(request: Request, nth: int, options: Options = PLAIN) -> tuple[dict, str]:
    """The message to send back and the name of the rule that made it."""
    stage = request.stage()
    if stage == "bfts.react":
        return react(request, nth, options)
    if stage == "bfts.evaluate":
        return evaluate(request, nth)
    if stage == "bfts.expand":
        return _text(json.dumps([{"label": "improve", "direction": "Repeat the triad with a longer array."}])), "expand"
    if stage == "bfts.select":
        return _text("0"), "select_first"
    if stage == "idea.gap":
        return _text("Triad bandwidth on small clusters is rarely measured per node."), "gap"
    if stage == "idea.discussion":
        return idea_discussion(request, nth)
    if stage == "idea.metric":
        return _text(json.dumps({"primary_metric": "triad_mbps", "higher_is_better": True,
                                 "metric_rationale": "bandwidth of the triad loop"})), "metric"
    if stage == "reproduce.rubric":
        return rubric_skeleton(request, nth)
    return _text("{}"), "default"
