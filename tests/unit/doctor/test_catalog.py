"""The doctor's failure catalog: every entry has a positive and a negative case (table in
tests/fixtures/doctor/catalog_cases.txt); SLURM messages come from the real test bed."""
from __future__ import annotations
from repo_paths import TESTS

import re
from dataclasses import dataclass

import pytest

from ari_jupyter.doctor import CATALOG, RULES, diagnose_text
from ari_jupyter.doctor.catalog import scan

FIXTURES = TESTS / "fixtures"
CASES_FILE = FIXTURES / "doctor" / "catalog_cases.txt"
_HEADER = re.compile(r"^%%% (?P<sign>[+-]) (?P<rule>[\w-]+)(?: lines=(?P<lines>[\d,]+))?(?: real=(?P<real>\S+))?\s*$")


@dataclass
class Case:
    sign: str
    rule: str
    lines: tuple[int, ...]
    real: str | None
    text: str
    where: int

    @property
    def id(self) -> str:
        return f"{'pos' if self.sign == '+' else 'neg'}-{self.rule}-L{self.where}"


def load_cases() -> list[Case]:
    cases: list[Case] = []
    current: Case | None = None
    body: list[str] = []
    for number, raw in enumerate(CASES_FILE.read_text(encoding="utf-8").splitlines(), start=1):
        match = _HEADER.match(raw)
        if match:
            if current:
                current.text = "\n".join(body).rstrip("\n") + "\n"
                cases.append(current)
            lines = tuple(int(n) for n in match.group("lines").split(",")) if match.group("lines") else ()
            current = Case(match.group("sign"), match.group("rule"), lines, match.group("real"), "", number)
            body = []
        elif current is not None:
            body.append(raw)
        elif raw.startswith("%%%"):
            raise AssertionError(f"{CASES_FILE}:{number}: malformed header {raw!r}")
    if current:
        current.text = "\n".join(body).rstrip("\n") + "\n"
        cases.append(current)
    return cases


CASES = load_cases()
POSITIVE = [c for c in CASES if c.sign == "+"]
NEGATIVE = [c for c in CASES if c.sign == "-"]


def test_table_is_well_formed():
    assert POSITIVE and NEGATIVE
    for case in POSITIVE:
        assert case.lines, f"{case.id}: a positive case must name its lines"
    unknown = {c.rule for c in CASES} - set(RULES)
    assert not unknown, f"cases for rules not in the catalog: {unknown}"


@pytest.mark.parametrize("rule", RULES)
def test_every_entry_has_positive_and_negative_case(rule):
    assert any(c.rule == rule for c in POSITIVE), f"{rule}: no positive case"
    assert any(c.rule == rule for c in NEGATIVE), f"{rule}: no negative case"


@pytest.mark.parametrize("case", POSITIVE, ids=lambda c: c.id)
def test_positive_case_matches_at_its_lines(case):
    findings = [f for f in scan(case.text) if f.rule == case.rule]
    assert len(findings) == 1, f"{case.rule} not found in:\n{case.text}"
    assert findings[0].lines == case.lines
    assert findings[0].line == case.lines[0]
    assert findings[0].fix and findings[0].message


@pytest.mark.parametrize("case", NEGATIVE, ids=lambda c: c.id)
def test_negative_case_does_not_match(case):
    assert case.rule not in {f.rule for f in scan(case.text)}


def _captured(name: str) -> str:
    for folder in (FIXTURES / "doctor", FIXTURES / "slurm"):
        if (folder / name).is_file():
            return (folder / name).read_text(encoding="utf-8")
    raise AssertionError(f"captured file {name} is not in tests/fixtures/doctor or tests/fixtures/slurm")


@pytest.mark.parametrize("case", [c for c in POSITIVE if c.real], ids=lambda c: c.id)
def test_slurm_cases_use_real_captured_text(case):
    captured = _captured(case.real).splitlines()
    lines = case.text.splitlines()
    for number in case.lines:
        assert lines[number - 1] in captured, f"line {number} of {case.id} is not verbatim in {case.real}"


SLURM_MESSAGE_RULES = ("gres-invalid", "gpus-per-task-without-ntasks", "gres-typed-and-untyped",
                       "controller-unreachable", "controller-unresponsive", "invalid-partition",
                       "node-count-invalid", "too-many-processors", "time-limit-invalid",
                       "node-config-unavailable", "memory-unsatisfiable", "accounting-disabled",
                       "mpirun-not-found", "permission-denied", "task-exit-nonzero", "command-not-found",
                       "job-cancelled", "job-pending-queued", "mpi-run-as-root",
                       "step-memory-unavailable", "step-without-environment")


@pytest.mark.parametrize("rule", SLURM_MESSAGE_RULES)
def test_slurm_errors_have_a_real_captured_case(rule):
    assert any(c.rule == rule and c.real for c in POSITIVE), f"{rule}: no case from captured test-bed text"


# Whole captured transcripts (slurm_22.05_error_strings.txt: the entries of Slurm 22.05.8's error
# table in libslurmfull.so that these rules read; the message part of "sbatch: error: ..."): which rules fire, at which lines (and nothing else).
TRANSCRIPTS = {
    # Slurm 22.05.8 client with SLURM_CONF pointing at a controller port where nothing listens.
    "controller_down.txt": {"controller-unreachable": (2, 6, 10, 14)},
    # bash 5.2 without Lmod initialised (env -i), as a non-login batch shell runs reproduce.sh.
    "module_undefined.txt": {"module-not-defined": (2,)},
    # Lmod 8.6 (the test bed's) and Environment Modules 5.2 (tests/testbed/environment-modules.sh)
    # asked to load a module that does not exist, in a non-interactive bash with BASH_ENV.
    "module_unknown.txt": {"module-unknown": (2, 16)},
    "slurm_22.05_error_strings.txt": {"gres-invalid": (1,), "account-rejected": (2,),
                                      "controller-unreachable": (3, 4, 5), "gres-typed-and-untyped": (6,),
                                      "step-memory-unavailable": (7,)},
    "samples_nogres.txt": {
        "gres-invalid": (105, 110, 114, 118),
        "invalid-partition": (127, 128),
        "node-count-invalid": (132, 140),
        "too-many-processors": (136,),
        "time-limit-invalid": (144,),
        "accounting-disabled": (152,),
    },
    "samples_gres.txt": {
        "node-config-unavailable": (110, 114),
        "invalid-partition": (127, 128),
        "node-count-invalid": (132, 140),
        "too-many-processors": (136,),
        "time-limit-invalid": (144,),
        "accounting-disabled": (152,),
    },
}


@pytest.mark.parametrize("name", sorted(TRANSCRIPTS))
def test_real_transcript(name):
    found = {f.rule: f.lines for f in scan(_captured(name))}
    assert found == TRANSCRIPTS[name]


@pytest.mark.parametrize("prefix", ["sbatch: error: ", "srun: error: ", "salloc: error: ", "",
                                    "SBATCH: ERROR: "])
def test_prefix_and_case_tolerant(prefix):
    line = prefix + "Invalid generic resource (gres) specification"
    assert [f.rule for f in scan(line)] == ["gres-invalid"]
    assert [f.rule for f in scan(line.upper())] == ["gres-invalid"]


def test_generic_entry_yields_to_specific_one_on_the_same_line():
    rules = {f.rule for f in scan("./reproduce.sh: line 7: mpirun: command not found\n")}
    assert rules == {"mpirun-not-found"}
    rules = {f.rule for f in scan("mpirun: command not found\nmake: icc: command not found\n")}
    assert rules == {"mpirun-not-found", "command-not-found"}


def test_findings_carry_symptom_cause_fix_and_severity():
    text = "ok\nsbatch: error: Invalid generic resource (gres) specification\n"
    (finding,) = diagnose_text(text, kind="log")
    assert finding.severity == "error"
    assert "line 2" in finding.message and "Cause:" in finding.message
    assert "ARI_SLURM_ALLOW_NO_GRES=1" in finding.fix
    assert finding.to_json() == {"rule": "gres-invalid", "field": "", "severity": "error",
                                 "line": 2, "message": finding.message, "fix": finding.fix,
                                 "message_id": finding.message_id, "fix_id": finding.fix_id,
                                 "params": dict(finding.params)}


# Every row of the failure-mode table in ARI's docs (spec §6) and the seed guide, and which
# doctor rule answers it (catalog entry, multi-line log check, or reproduce.sh lint rule).
SPEC_ROWS = {
    "File not found: <path>": "experiment-file-not-found",
    "run lands in $PWD/workspace/checkpoints/<new id>": "checkpoint-dir-ignored",
    "Checkpoint not found: <ckpt>/tree.json": "checkpoint-not-found",
    "No pending nodes.": "no-pending-nodes",
    "ARI_CHECKPOINT_DIR is not set": "checkpoint-dir-not-set",
    "RuntimeError: sbatch is not on PATH": "sbatch-not-on-path",
    "RuntimeError: no partition could be resolved": "no-partition-resolved",
    "RuntimeError: GPU resources requested but no GRES": "gpu-without-gres",
    "RuntimeError: docker daemon is not reachable / apptainer not on PATH": "sandbox-tool-missing",
    "ValueError: unsupported sandbox kind / requires an Apptainer SIF image": "stage1-sandbox-unsupported",
    "Invalid GRES gpu:v100:1 / Invalid generic resource (gres) specification": "gres-invalid",
    "--gpus-per-task ... used without either --gpus or -n/--ntasks": "gpus-per-task-without-ntasks",
    "Invalid GRES specification (with and without type identification)": "gres-typed-and-untyped",
    "unrecognized option '--cpu-bind=cores'": "bind-flag-unsupported",
    "--mem=256G exceeds partition limit": "memory-unsatisfiable",
    "job PENDING forever": "job-pending-queued",
    "reproduce timed_out while job still queued": "reproduce-timed-out",
    "PartitionConfig/QOSMaxJobsPerUserLimit reasons": "job-pending-rejected",
    "exit_code=127 in a build step": "command-not-found",
    "--account rejected": "account-rejected",
    "Exec format error on compute node": "exec-format-error",
    "mpirun: command not found on compute node": "mpirun-not-found",
    "all ranks on node 1 / single-node run": "ranks-on-one-node",
    "Permission denied / files missing on rank > 0": "permission-denied",
    "Agent submitted CPU code for GPU paper": "empty-execution-profile",
    "Agent did not use srun": "L6",
    "ors_score exactly 0.0": "ors-score-zero",
    "src/...: No such file or directory": "reproduce-nested-submission",
    "Stage 3 grades all 0": "no-reproduce-log",
    "connection refused to Letta": "letta-unreachable",
    "LETTA_EMBEDDING_CONFIG is required": "letta-embedding-missing",
    "litellm.exceptions.RateLimitError": "llm-rate-limit",
    "Cannot connect to ari viz": "viz-unreachable",
    "unrecognized arguments: --host 0.0.0.0": "viz-host-flag",
    "BFTS nodes marked fake": "fake-bfts-nodes",
    "Metric too low": "metric-too-low",
    "Paper pipeline aborts no real data": "paper-no-real-data",
    "DeprecationWarning: $HOME/.ari/...": "legacy-home-ari",
    "ImportError: cannot import name from 'ari'": "ari-import-moved",
    "singularity exec: command not found": "container-runtime-missing",
    "RLIMIT_NPROC": "nproc-limit",
    "latexmk: command not found": "latex-missing",
    "No papers registered yet": "no-papers-registered",
    "Unable to contact slurm controller": "controller-unreachable",
}
CONTEXT_RULES = {"checkpoint-dir-ignored", "ranks-on-one-node"}
LINT_RULES = {"L1", "L2", "L2b", "L3", "L4", "L5", "L6", "L7", "G1", "G2", "G3", "S2"}


@pytest.mark.parametrize("row", sorted(SPEC_ROWS))
def test_every_failure_mode_row_has_a_rule(row):
    rule = SPEC_ROWS[row]
    assert rule in RULES or rule in CONTEXT_RULES or rule in LINT_RULES


def test_catalog_rules_are_unique_and_severities_valid():
    assert len(RULES) == len(set(RULES))
    for sig in CATALOG:
        assert sig.severity in ("error", "warning", "info")
        assert sig.symptom and sig.cause and sig.fix


def test_gres_echo_after_gpus_per_task_error_is_not_a_second_cause():
    """SLURM 22.05 prints "Invalid generic resource" right after the --gpus-per-task refusal
    (captured on the GRES test bed); the GRES is fine there, so only the first cause counts."""
    text = _captured("gpus_per_task_without_ntasks.txt")
    assert [f.rule for f in scan(text)] == ["gpus-per-task-without-ntasks"]


# tests/fixtures/slurm/: single failures captured from the test bed (stderr of one command each).
# Every captured file must be listed here with exactly the rules it produces.
SLURM_FIXTURE_RULES = {
    "controller_down_sbatch.txt": {"controller-unreachable"},
    "controller_down_sinfo.txt": {"controller-unreachable"},
    "controller_down_squeue.txt": {"controller-unreachable"},
    "controller_down_srun.txt": {"controller-unreachable"},
    "controller_hung_sinfo.txt": {"controller-unresponsive"},
    "gpus_per_task_without_ntasks.txt": {"gpus-per-task-without-ntasks"},
    "gres_count_unavailable.txt": {"node-config-unavailable"},
    "gres_type_unavailable.txt": {"node-config-unavailable"},
    "invalid_partition.txt": {"invalid-partition"},
    "memory_unsatisfiable.txt": {"memory-unsatisfiable"},
    "node_count_invalid.txt": {"node-count-invalid"},
    "srun_node_count_invalid.txt": {"node-count-invalid"},
    "nogres_gpus_request.txt": {"gres-invalid"},
    "nogres_gres_request.txt": {"gres-invalid"},
    "srun_more_processors.txt": {"too-many-processors"},
    "time_limit_invalid.txt": {"time-limit-invalid"},
    "test_only_accepted.txt": set(),
}
SLURM_FIXTURES = sorted(p.name for p in (FIXTURES / "slurm").glob("*.txt")) if (FIXTURES / "slurm").is_dir() else []


@pytest.mark.parametrize("name", SLURM_FIXTURES)
def test_captured_slurm_fixture(name):
    assert name in SLURM_FIXTURE_RULES, f"new captured fixture {name}: add its expected rules to the table"
    text = (FIXTURES / "slurm" / name).read_text(encoding="utf-8")
    assert {f.rule for f in scan(text)} == SLURM_FIXTURE_RULES[name]
