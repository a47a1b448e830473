"""experiment.md text, generated: the lints E1-E8 never raise, point at real lines, and keep
their promises (no E1/E2 error means ARI reads the intended partition, and so on). The
``lint`` command answers 0/1 with JSON, or 2 with a message, for any file."""
from __future__ import annotations

import contextlib
import io
import json
import re

from hypothesis import given
from hypothesis import strategies as st

from _hypothesis_profiles import settings
from ari_jupyter.ari.lint_experiment import VIRSCI_MARKER, lint_experiment, parse_experiment
from ari_jupyter.base.verdict import SEVERITIES
from ari_jupyter.cli import main as cli_main

from .figures import record

FRAGMENTS = [
    "Partition: small, Max CPUs: 4", "Partition: `small`", "partition=large", "We partition rows.",
    "Partition:\nsmall", "Partition: gpu.a100, Max CPUs: 8", "Max CPUs: 16", "max cpu 2",
    "Metrics: GFlops, GB/s", "Metric - runtime", "- Metrics: acc", "**Metrics:** acc", "Metrics:",
    "## Success Metrics", "- acc: measured by the harness", "## Evaluation Metric",
    "## Provided Files", "## Files", "### Provided Files", "## Input files", "## 提供ファイル",
    "- /work/data/matrix.mtx", "- /work/data/a#b.c", "- relative/path.c", "- `/work/x.c`",
    "1. /work/y.c", "- [x](/work/z.c)", "<!-- min_expected_metric: 5 -->", "min_expected_metric: 1.5",
    "metric_keyword: speedup", VIRSCI_MARKER, "## Required Workflow", "sbatch and srun", "#SLURM",
    "# Title", "", "```", "\r", "\u2028", "\x0b", "\x1c", "é分", "\t", "## Research Goal",
]
STRUCTURED = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=20)), max_size=25).map(
    "\n".join)
TEXT = st.one_of(STRUCTURED, st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
PARTITIONS = st.one_of(st.none(), st.sampled_from(["small", "large", "gpu.a100", "x-1", ""]))
CPUS = st.one_of(st.none(), st.integers(0, 128))


class Tally:
    def __init__(self) -> None:
        self.cases = self.findings = 0


def test_lints_never_raise_and_point_at_real_lines():
    tally = Tally()

    @settings()
    @given(TEXT, PARTITIONS, CPUS, st.sampled_from(["hpc", "laptop", "cloud", None]),
           st.dictionaries(st.sampled_from(["ARI_SLURM_PARTITION", "ARI_SLURM_CPUS"]),
                           st.sampled_from(["small", "4", " 8 ", "", "x"]), max_size=2))
    def prop(text, partition, cpus, profile, env):
        tally.cases += 1
        findings = lint_experiment(text, partition=partition, cpus=cpus, env=env,
                                   ari_profile=profile, check_files=False)
        newline_lines = text.count("\n") + 1
        for finding in findings:
            assert re.fullmatch(r"E(?:[1-9]|10)", finding.rule), finding
            assert finding.severity in SEVERITIES
            assert finding.message.strip()
            assert finding.line is None or 1 <= finding.line <= newline_lines, (finding, newline_lines)
            json.dumps(finding.to_json())
        tally.findings += len(findings)

    prop()
    record("Lints", "experiment.md lints E1-E8 on generated text", cases=tally.cases,
           survived=tally.cases, findings=tally.findings)


def test_no_partition_or_cpu_error_means_ari_reads_what_was_chosen():
    tally = Tally()

    @settings()
    @given(TEXT, st.sampled_from(["small", "large", "x-1"]), st.integers(1, 128))
    def prop(text, partition, cpus):
        tally.cases += 1
        findings = lint_experiment(text, partition=partition, cpus=cpus, check_files=False)
        errors = {f.rule for f in findings if f.severity == "error"}
        parsed = parse_experiment(text)
        if not {"E1", "E2"} & errors:
            assert parsed.partition == partition
        if "E3" not in errors:
            assert parsed.max_cpus in (None, cpus)
        if "E4" not in errors:
            assert parsed.primary_metric
        if "E7" not in errors:
            assert VIRSCI_MARKER not in text

    prop()
    record("Lints", "no E1/E2/E3/E4/E7 error ⇒ ARI reads the chosen values", cases=tally.cases,
           survived=tally.cases)


def test_lint_command_answers_for_any_file(tmp_path):
    tally = Tally()
    path = tmp_path / "experiment.md"

    @settings()
    @given(st.one_of(TEXT.map(lambda t: t.encode("utf-8")), st.binary(max_size=200)))
    def prop(data):
        tally.cases += 1
        path.write_bytes(data)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main(["lint", str(path), "--json", "--no-check-files", "--partition", "small"])
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            assert code == 2 and "cannot read" in err.getvalue()
            return
        assert code in (0, 1), err.getvalue()
        payload = json.loads(out.getvalue())
        assert code == (1 if any(f["severity"] == "error" for f in payload["findings"]) else 0)

    prop()
    record("Lints", "`ari-jupyter lint --json` on generated files (incl. invalid UTF-8)",
           cases=tally.cases, survived=tally.cases)
