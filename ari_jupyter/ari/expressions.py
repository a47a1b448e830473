"""ARI's own regular expressions over experiment.md (spec §1.2), one per rule, R1 to R11.

The linter checks a text against them, the renderer writes text they read as intended, and the
field rules refuse what would trip them; each is ARI's expression, from ARI's code.
"""
from __future__ import annotations

import re

# --------------------------------------------------
# R1 ari-core pipeline fallback: line start, optional spaces, Metric(s), optional spaces, ':' or '-'.
R1_METRICS = re.compile(r"^\s*Metrics?\s*[:\-]\s*(.*)$", re.MULTILINE | re.IGNORECASE)
# R2 evaluator: a "## Success Metrics" section wins, else an inline "Metrics:" at text/line start.
R2_SECTION = re.compile(r"##\s*Success Metrics[^\n]*\n(.*?)(?=\n##|\Z)", re.IGNORECASE | re.DOTALL)
R2_SECTION_ITEM = re.compile(r"-\s+(\w+)\s*:")
R2_INLINE = re.compile(r"(?:\A|\n)Metrics?:(.*)", re.IGNORECASE)
R2_MIN_EXPECTED = re.compile(r"min_expected_metric:\s*([\d.]+)")
R2_METRIC_KEYWORD = re.compile(r"metric_keyword:\s*(\w+)")
# R3 agent threshold: digits only.
R3_MIN_EXPECTED = re.compile(r"min_expected_metric:\s*([\d]+)")
# R4 substrings that switch the agent into SLURM mode (lower-cased text).
R4_SLURM_TRIGGERS = ("slurm_submit", "sbatch", "partition:", "srun", "#slurm", "slurm")
# R5 partition hint: case-sensitive P/p, then ':' or whitespace (newlines too), then [\w-]+.
R5_PARTITION = re.compile(r"(?:Partition|partition)[:\s]+([\w-]+)")
PARTITION_WORD = re.compile(r"[Pp]artition")
# R6 CPU hint.
R6_MAX_CPUS = re.compile(r"Max CPUs?[:\s]+(\d+)", re.IGNORECASE)
# R7 workflow section: exact heading, newline right after it.
R7_WORKFLOW = re.compile(r"## Required Workflow\n(.*?)(?=\n##|\Z)", re.DOTALL)
# R8 provided files: first matching section, heading without trailing text.
R8_SECTION = re.compile(
    r"##\s*(?:提供ファイル|提供文件|Provided Files?|Local Files?|Files?)\s*\n(.*?)(?=\n##|\Z)",
    re.IGNORECASE | re.DOTALL,
)
# R11: ARI appends its idea block only when this string is absent.
VIRSCI_MARKER = "AUTO-APPENDED BY VirSci"
