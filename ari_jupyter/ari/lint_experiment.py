"""What ARI reads out of an ``experiment.md``, and lints E1-E10 that catch silent misreads.

ARI never rejects an ``experiment.md``: every field it extracts is found with a first-match
regular expression over the whole text (spec §1.2, rules R1-R8), so a stray word changes the
partition, the metric or the provided files without any error. ``parse_experiment`` mirrors
those expressions; ``lint_experiment`` compares what they find with what the user meant and
reports each disagreement with a line number and a fix. Works on any text, including a file
the user pasted or wrote by hand.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from .fields import metric_problems, text_problems
from .expressions import (PARTITION_WORD, R1_METRICS, R2_INLINE, R2_METRIC_KEYWORD, R2_MIN_EXPECTED, R2_SECTION,
                          R2_SECTION_ITEM, R3_MIN_EXPECTED, R4_SLURM_TRIGGERS, R5_PARTITION, R6_MAX_CPUS,
                          R7_WORKFLOW, R8_SECTION, VIRSCI_MARKER)
from ..base.verdict import Finding, sort_findings
from ..base.numbers import count_of
from ..i18n import message
from .dashboard import goal_cut



# Headings that look like a provided-files section but which R8 does not accept.
_NEAR_R8_HEADING = re.compile(
    r"^\s*#{1,6}\s*(?:提供ファイル|提供文件|(?:provided|local|input)?\s*files?)\b.*$",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True)
class ParsedExperiment:
    """Every value ARI's parsers take from the text (None / empty when the rule finds nothing)."""

    partition: str | None = None  # R5
    partition_line: int | None = None
    max_cpus: int | None = None  # R6
    max_cpus_line: int | None = None
    primary_metric: str = ""  # R1
    primary_metric_line: int | None = None
    evaluator_metrics: tuple[str, ...] = ()  # R2 (section or inline)
    evaluator_metrics_source: str = ""  # "section", "inline", "keyword" or ""
    metric_keyword: str | None = None  # R2
    min_expected_metric: int | None = None  # R3 (agent)
    min_expected_metric_evaluator: float | None = None  # R2 (evaluator)
    slurm_text_trigger: bool = False  # R4 (text part only; ARI_SLURM_PARTITION also triggers)
    required_workflow: str | None = None  # R7
    provided_files: tuple[str, ...] = ()  # R8
    provided_files_line: int | None = None
    provided_files_lines: tuple[int, ...] = field(default=(), compare=False)


def line_of(text: str, pos: int) -> int:
    """1-based line number of character offset ``pos``."""
    return text.count("\n", 0, pos) + 1


def _r1_token(capture: str) -> str:
    first = re.split(r"[,\s]+", capture.strip(), maxsplit=1)[0]
    return first.strip(" .;")


def parse_experiment(text: str) -> ParsedExperiment:
    """What ARI extracts from ``text``, rule by rule (spec §1.2)."""
    values: dict[str, Any] = {}
    if m := R5_PARTITION.search(text):
        values["partition"] = m.group(1)
        values["partition_line"] = line_of(text, m.start())
    if m := R6_MAX_CPUS.search(text):
        values["max_cpus"] = int(m.group(1))
        values["max_cpus_line"] = line_of(text, m.start())
    if m := R1_METRICS.search(text):
        values["primary_metric"] = _r1_token(m.group(1))
        values["primary_metric_line"] = line_of(text, m.start(1))
    section = R2_SECTION.search(text)
    inline = R2_INLINE.search(text)
    keyword = R2_METRIC_KEYWORD.search(text)
    if section and (items := R2_SECTION_ITEM.findall(section.group(1))):
        values["evaluator_metrics"] = tuple(items)
        values["evaluator_metrics_source"] = "section"
    elif inline:
        items = [part.strip().strip("/") for part in re.split(r"[,;]", inline.group(1))]
        values["evaluator_metrics"] = tuple(item for item in items if item)
        values["evaluator_metrics_source"] = "inline"
    elif keyword:
        values["evaluator_metrics"] = (keyword.group(1),)
        values["evaluator_metrics_source"] = "keyword"
    if keyword:
        values["metric_keyword"] = keyword.group(1)
    if m := R3_MIN_EXPECTED.search(text):
        values["min_expected_metric"] = int(m.group(1))
    if m := R2_MIN_EXPECTED.search(text):
        try:
            values["min_expected_metric_evaluator"] = float(m.group(1))
        except ValueError:  # "1.2.3": the evaluator's float() fails and it ignores the value
            pass
    lowered = text.lower()
    values["slurm_text_trigger"] = any(t in lowered for t in R4_SLURM_TRIGGERS)
    if m := R7_WORKFLOW.search(text):
        values["required_workflow"] = m.group(1)
    if m := R8_SECTION.search(text):
        files, lines = [], []
        body_start = m.start(1)
        for offset, raw in _lines_with_offsets(m.group(1)):
            entry = _r8_entry(raw)
            if entry:
                files.append(entry)
                lines.append(line_of(text, body_start + offset))
        values["provided_files"] = tuple(files)
        values["provided_files_line"] = line_of(text, m.start())
        values["provided_files_lines"] = tuple(lines)
    return ParsedExperiment(**values)


def _lines_with_offsets(body: str):
    offset = 0
    for raw in body.split("\n"):
        yield offset, raw
        offset += len(raw) + 1


def _r8_entry(raw: str) -> str:
    """ARI's per-line rule: strip, drop leading '-', '*', spaces, cut at '#', keep if it has '/'."""
    entry = raw.strip().lstrip("-* ")
    entry = entry.split("#", 1)[0].strip()
    return entry if os.sep in entry else ""


# -- the wizard's fields, read back --------------------------------------------------------------
# The layout ``render.render_experiment_md`` writes: an H1 title, a column-0 ``Metrics:`` line
# and a ``## Research Goal`` section. A file edited by hand is judged by the same rule that
# decides whether the wizard and ``emit`` write a state: its fields are read back and handed to
# that rule (``WizardState.field_problems``), so lint and emit cannot drift apart.
TITLE_LINE = re.compile(r"^#[ \t]+(.*)$", re.MULTILINE)
METRICS_LINE = re.compile(r"^Metrics?:(.*)$", re.MULTILINE | re.IGNORECASE)
GOAL_HEADING = re.compile(r"^##[ \t]*Research Goal[ \t]*$", re.MULTILINE)
NEXT_SECTION = re.compile(r"^##", re.MULTILINE)
TEXT_FIELDS = ("title", "metrics", "goal")
"""The wizard fields an experiment.md carries (the others live in .env and launch_config.json)."""


@dataclass(frozen=True)
class WizardFields:
    """The wizard fields a file states, each with its line (None: the file has no such part)."""

    title: str | None = None
    title_line: int | None = None
    metrics: tuple[str, ...] | None = None
    metrics_line: int | None = None
    goal: str | None = None
    goal_line: int | None = None

    def line_for(self, field_name: str) -> int | None:
        return getattr(self, f"{field_name}_line", None)


def read_fields(text: str) -> WizardFields:
    """What a user would have typed into the wizard to get ``text``: the H1 title, the items of
    the ``Metrics:`` line (comma-separated, as ``emit --metric`` takes them) and the body of the
    ``## Research Goal`` section."""
    values: dict[str, Any] = {}
    if m := TITLE_LINE.search(text):
        values.update(title=m.group(1).strip(), title_line=line_of(text, m.start()))
    if m := METRICS_LINE.search(text):
        items = tuple(item.strip() for item in m.group(1).split(","))
        values.update(metrics=tuple(item for item in items if item),
                      metrics_line=line_of(text, m.start()))
    if m := GOAL_HEADING.search(text):
        end = NEXT_SECTION.search(text, m.end())
        body = text[m.end():end.start() if end else len(text)]
        values.update(goal=body.strip("\n"), goal_line=line_of(text, m.start()))
    return WizardFields(**values)


def field_refusals(fields: WizardFields) -> list:
    """The errors the wizard's own field rules (what blocks Write and ``emit``) give these fields."""
    given = {name: getattr(fields, name) for name in TEXT_FIELDS if getattr(fields, name) is not None}
    if not given:
        return []
    found = [*text_problems(given.get("title", ""), given.get("goal", "")),
             *metric_problems(given.get("metrics", ()), None)]
    return [p for p in found if p.severity == "error" and p.field in given]


def _lint_fields(text: str) -> list[Finding]:
    fields = read_fields(text)

    out = []
    for problem in field_refusals(fields):
        detail = (message(problem.message_id, **problem.params) if problem.message_id
                  else problem.message)
        fix = message(problem.fix_id, **problem.params) if problem.fix_id else problem.fix or ""
        out.append(Finding.of("E9", "error", "lint.E9.refused", line=fields.line_for(problem.field),
                              fix_id="lint.E9.fix" if fix else "", field_name=problem.field,
                              detail=detail, fix=fix))
    return out


# -- lints --------------------------------------------------------------------------------------

def lint_experiment(
    text: str,
    *,
    partition: str | None = None,
    cpus: int | None = None,
    env: Mapping[str, str] | None = None,
    ari_profile: str | None = "hpc",
    expect_slurm: bool = True,
    check_files: bool = True,
) -> list[Finding]:
    """Lints E1-E8 (spec §1.4) on ``text``, and E9: the wizard's fields the file states
    (title, metrics, goal) pass the check that lets the wizard and ``emit`` write them.

    ``partition``/``cpus`` are what the user chose; when absent, ``ARI_SLURM_PARTITION`` /
    ``ARI_SLURM_CPUS`` from ``env`` (the environment ``ari run`` will see) stand in.
    ``ari_profile`` is the ``--profile`` given to ``ari run`` (``laptop``/``cloud`` disable
    HPC parsing). ``check_files`` looks on this machine for the provided files.
    """
    env = dict(env or {})
    parsed = parse_experiment(text)
    findings: list[Finding] = []
    findings += _lint_partition(text, parsed, partition or env.get("ARI_SLURM_PARTITION", "").strip())
    expected_cpus = cpus
    if expected_cpus is None:
        expected_cpus = count_of(env.get("ARI_SLURM_CPUS", ""))
    findings += _lint_cpus(parsed, expected_cpus)
    findings += _lint_metrics(text, parsed)
    findings += _lint_min_expected(text)
    findings += _lint_provided_files(text, parsed, check_files)
    findings += _lint_virsci(text)
    findings += _lint_slurm_mode(parsed, env, ari_profile, expect_slurm)
    findings += _lint_fields(text)
    findings += _lint_goal(text)
    return sort_findings(findings)


GOAL_FOLLOWERS = re.compile(r"^##[ \t]*(?:Hardware Limits|Evaluation Metrics?|Success Metrics|Required "
                            r"Workflow|提供ファイル|提供文件|Provided Files?|Local Files?|Files?)[ \t]*$",
                            re.IGNORECASE)
"""Sections that follow a goal by design (the wizard's, and those ARI reads): not a heading the
goal meant as its own."""


def _lint_goal(text: str) -> list[Finding]:
    """E10: the Research Goal as ARI's dashboard reads it (``dashboard.goal_cut``, the rule step
    4 applies to the goal field): a line of it that starts with '#' ends it there; a heading
    right after it that no one reads as a section of its own is, for ARI, the goal's end."""
    heading = GOAL_HEADING.search(text)
    if heading is None:
        return []
    start = heading.end() + 1
    end = NEXT_SECTION.search(text, start)
    body = text[start:end.start() if end else len(text)]
    cut = goal_cut(body)
    if cut is not None:
        said = {"number": cut.line, "line_text": cut.text, "dropped": cut.dropped,
                "words": cut.text.lstrip("#").strip()}
        rule = f"field.goal_{'cut_heading' if cut.heading else 'cut_hash'}"  # step 4's words
        return [Finding.of("E10", "warning", "lint.E10.cut", fix_id="lint.E10.cut.fix",
                           line=line_of(text, start) + cut.line - 1,
                           detail=message(rule, **said), fix=message(f"{rule}.fix", **said))]
    if end is not None:
        after = text[end.start():].split("\n", 1)[0].strip()
        if not GOAL_FOLLOWERS.match(after):
            return [Finding.of("E10", "info", "lint.E10.next_heading", fix_id="lint.E10.next_heading.fix",
                               line=line_of(text, end.start()), heading=after,
                               words=after.lstrip("#").strip())]
    return []


def _lint_partition(text: str, parsed: ParsedExperiment, expected: str) -> list[Finding]:
    out: list[Finding] = []
    fix_line = f"Partition: {expected or '<partition>'}, Max CPUs: <n>"
    if parsed.partition is None:
        first = PARTITION_WORD.search(text)
        out.append(Finding.of(
            "E1", "error", "lint.E1.no_partition", line=line_of(text, first.start()) if first else None,
            fix_id="lint.E1.no_partition.fix", fix_line=fix_line))
        return out
    matches = list(R5_PARTITION.finditer(text))
    first_word = PARTITION_WORD.search(text)
    first_match = matches[0]
    line = line_of(text, first_match.start())
    lines = text.splitlines()
    labels = [m for m in matches if _is_partition_label(lines[line_of(text, m.start()) - 1])]
    proper = labels[0] if labels else None
    if proper is not None:
        move = {"fix_id": "lint.E1.move.fix", "target": line_of(text, proper.start()),
                "target_text": repr(lines[line_of(text, proper.start()) - 1].strip()[:60])}
    else:
        move = {"fix_id": "lint.E1.put.fix", "fix_line": fix_line}
    if first_word and first_word.start() != first_match.start():
        out.append(Finding.of(
            "E1", "error", "lint.E1.first_unreadable", line=line_of(text, first_word.start()),
            partition=repr(parsed.partition), read_line=line, **move))
    elif proper is not first_match:
        out.append(Finding.of(
            "E1", "error", "lint.E1.prose", line=line, read_line=line,
            line_text=repr(lines[line - 1].strip()[:60]), partition=repr(parsed.partition), **move))
    else:
        for extra in matches[1:]:
            extra_line = line_of(text, extra.start())
            if extra_line == line:
                continue
            out.append(Finding.of(
                "E1", "info", "lint.E1.also_matches", line=extra_line, fix_id="lint.E1.also_matches.fix",
                extra_line=extra_line, value=repr(extra.group(1)), read_line=line))
    if expected and parsed.partition != expected:
        truncated = expected.startswith(parsed.partition)
        suffix = ".truncated" if truncated else ""
        out.append(Finding.of(
            "E2", "error", "lint.E2.differs" + suffix, line=line, fix_id="lint.E2.differs.fix" + suffix,
            partition=repr(parsed.partition), expected_repr=repr(expected), expected=expected))
    elif not expected:
        after = text[first_match.end():first_match.end() + 1]
        if after and after not in ", \n\t\r":
            out.append(Finding.of(
                "E2", "warning", "lint.E2.stops", line=line, fix_id="lint.E2.stops.fix",
                after=repr(after), partition=repr(parsed.partition)))
    return out


def _is_partition_label(line: str) -> bool:
    """A line that states the partition the way the template does (``Partition: <name>``)."""
    return bool(re.match(r"^\s*[Pp]artition:\s*[\w-]+", line))


def _lint_cpus(parsed: ParsedExperiment, expected: int | None) -> list[Finding]:
    if parsed.max_cpus is None:
        return [Finding.of("E3", "warning", "lint.E3.missing", line=parsed.partition_line,
                           fix_id="lint.E3.missing.fix")]
    if expected is not None and parsed.max_cpus != expected:
        return [Finding.of("E3", "error", "lint.E3.differs", line=parsed.max_cpus_line,
                           fix_id="lint.E3.differs.fix", max_cpus=parsed.max_cpus, expected=expected)]
    return []


def _lint_metrics(text: str, parsed: ParsedExperiment) -> list[Finding]:
    out: list[Finding] = []
    both = re.search(r"(?:\A|\n)(Metrics?:)", text, re.IGNORECASE)
    if both is None:
        near = re.search(r"^[ \t*\->]*\**Metrics?\**\s*[:\-]", text, re.IGNORECASE | re.MULTILINE)
        out.append(Finding.of(
            "E4", "error", "lint.E4.no_line_near" if near else "lint.E4.no_line",
            line=line_of(text, near.start()) if near else None, fix_id="lint.E4.no_line.fix"))
        return out
    both_line = line_of(text, both.start(1))
    r1 = R1_METRICS.search(text)
    # R1's leading ``^\s*`` may start the match on blank lines above: the line that matters is
    # the one holding the word Metrics.
    keyword_line = line_of(text, r1.start() + len(r1.group(0)) - len(r1.group(0).lstrip())) \
        if r1 is not None else None
    if r1 is not None and parsed.primary_metric and keyword_line != parsed.primary_metric_line:
        out.append(Finding.of(
            "E4", "error", "lint.E4.empty", line=keyword_line, fix_id="lint.E4.empty.fix",
            metric=repr(parsed.primary_metric), metric_line=parsed.primary_metric_line))
    if parsed.primary_metric_line is not None and parsed.primary_metric_line < both_line:
        out.append(Finding.of(
            "E4", "warning", "lint.E4.two_lines", line=parsed.primary_metric_line,
            fix_id="lint.E4.two_lines.fix", metric=repr(parsed.primary_metric),
            metric_line=parsed.primary_metric_line, evaluator_line=both_line))
    if parsed.evaluator_metrics_source == "section":
        out.append(Finding.of("E4", "info", "lint.E4.section", fix_id="lint.E4.section.fix",
                              metrics=", ".join(parsed.evaluator_metrics)))
    if not parsed.primary_metric:
        out.append(Finding.of("E4", "error", "lint.E4.no_metric", line=both_line,
                              fix_id="lint.E4.no_metric.fix"))
    return out


def _lint_min_expected(text: str) -> list[Finding]:
    m = R2_MIN_EXPECTED.search(text)
    if m and not re.fullmatch(r"\d+", m.group(1)):
        agent = R3_MIN_EXPECTED.search(text)

        agent_value = agent.group(1) if agent else message("lint.E5.nothing")
        return [Finding.of("E5", "error", "lint.E5.not_integer", line=line_of(text, m.start()),
                           fix_id="lint.E5.not_integer.fix", value_repr=repr(m.group(1)),
                           value=m.group(1), agent_value=agent_value)]
    return []


def _lint_provided_files(text: str, parsed: ParsedExperiment, check_files: bool) -> list[Finding]:
    out: list[Finding] = []
    if parsed.provided_files_line is None:
        for near in _NEAR_R8_HEADING.finditer(text):
            out.append(Finding.of(
                "E6", "error", "lint.E6.heading", line=line_of(text, near.start()),
                fix_id="lint.E6.heading.fix", heading=repr(near.group(0).strip())))
        return out
    section = R8_SECTION.search(text)
    assert section is not None
    body_start = section.start(1)
    seen: dict[str, int] = {}
    for offset, raw in _lines_with_offsets(section.group(1)):
        stripped = raw.strip()
        if not stripped or stripped.startswith(("<!--", "# ")):
            continue  # ARI cuts every line at '#': a '# heading' (the title) is read as nothing
        line = line_of(text, body_start + offset)
        entry = _r8_entry(raw)
        if not entry:
            out.append(Finding.of("E6", "warning", "lint.E6.not_path", line=line,
                                  fix_id="lint.E6.not_path.fix", text=repr(stripped[:60])))
            continue
        bare = stripped.lstrip("-* ")
        if "#" in bare and not bare.startswith("#"):
            out.append(Finding.of("E6", "error", "lint.E6.hash", line=line, fix_id="lint.E6.hash.fix",
                                  entry=repr(entry)))
        if entry.startswith(("`", "[", "<")) or "](" in entry or re.match(r"^\d+[.)]\s", bare):
            out.append(Finding.of("E6", "error", "lint.E6.decorated", line=line,
                                  fix_id="lint.E6.decorated.fix", entry=repr(entry)))
            continue
        if not os.path.isabs(entry):
            out.append(Finding.of("E6", "error", "lint.E6.relative", line=line,
                                  fix_id="lint.E6.relative.fix", entry=repr(entry)))
        elif check_files and not os.path.isfile(entry):
            what = "lint.E6.directory" if os.path.isdir(entry) else "lint.E6.missing"
            out.append(Finding.of("E6", "error", what, line=line, fix_id="lint.E6.missing.fix",
                                  entry=entry))
        base = os.path.basename(entry)
        if base in seen:
            out.append(Finding.of("E6", "error", "lint.E6.basename", line=line,
                                  fix_id="lint.E6.basename.fix", base=repr(base), other_line=seen[base]))
        else:
            seen[base] = line
    return out


def _lint_virsci(text: str) -> list[Finding]:
    pos = text.find(VIRSCI_MARKER)
    if pos < 0:
        return []
    return [Finding.of("E7", "error", "lint.E7.marker", line=line_of(text, pos),
                       fix_id="lint.E7.marker.fix", marker=repr(VIRSCI_MARKER))]


def _lint_slurm_mode(parsed: ParsedExperiment, env: Mapping[str, str], ari_profile: str | None,
                     expect_slurm: bool) -> list[Finding]:
    exported = bool(env.get("ARI_SLURM_PARTITION", "").strip())
    if ari_profile in ("laptop", "cloud"):
        if parsed.slurm_text_trigger or exported:
            return [Finding.of("E8", "warning", "lint.E8.profile", line=parsed.partition_line,
                               fix_id="lint.E8.profile.fix", profile=ari_profile)]
        return []
    if expect_slurm and not exported:
        if not parsed.slurm_text_trigger:
            return [Finding.of("E8", "warning", "lint.E8.nothing", fix_id="lint.E8.export.fix")]
        return [Finding.of("E8", "warning", "lint.E8.not_exported", fix_id="lint.E8.export.fix")]
    return []
