"""HTML for the placement picture: one box per node, its task slots and its GPUs.

Pure string building from a ``placement.Placement`` so it can be tested without a browser and
shown identically in JupyterLab, Notebook 7 and Voilà (classes of wizard.css, no script).
"""
from __future__ import annotations

import html
from dataclasses import replace
from typing import Callable

from ..ari.placement import SHARED_GPU, Placement
from ..base.verdict import MARKS
from ..i18n import t
from ._base import findings_html
from .style import css

MAX_SLOTS_DRAWN = 64
RANK_COLOURS = 8  # .ari-rank-0 ... .ari-rank-7 in wizard.css

Translate = Callable[..., str]


def _rank_color(rank: int) -> str:
    return f"ari-rank-{rank % RANK_COLOURS}"


def _slot(label: str, colour_class: str, title: str, gpu: bool = False) -> str:
    kind = " ari-slot-gpu" if gpu else ""
    return (f'<span title="{html.escape(title)}" class="ari-slot{kind} {colour_class}">'
            f'{html.escape(label)}</span>')


def _node_box(node, placement: Placement, tr: Translate) -> str:
    busy = node.rank_count > 0
    overloaded = node.cpu_oversubscribed or (not placement.fan_out and placement.total_nodes > 1 and busy)
    look = " ari-node-overloaded" if overloaded else (" ari-node-busy" if busy else "")
    slots_total = max(node.cpus // max(node.cpus_per_task, 1), node.rank_count, 1)
    drawn = min(slots_total, MAX_SLOTS_DRAWN)
    slots = []
    for i in range(drawn):
        if i < node.rank_count:
            rank = node.first_rank + i
            color = "ari-slot-over" if i * node.cpus_per_task >= node.cpus > 0 else _rank_color(rank)
            slots.append(_slot(str(rank), color, tr("placement_rank_title", rank=rank)))
        else:
            slots.append(_slot("", "ari-slot-free", tr("placement_free_slot")))
    if slots_total > drawn:
        slots.append(f'<span class="ari-muted ari-small"> +{slots_total - drawn}</span>')
    gpus = []
    for index, owner in enumerate(node.gpu_owner):
        if owner is None:
            gpus.append(_slot(f"G{index}", "ari-slot-idle", tr("placement_gpu_idle", gpu=index), gpu=True))
        elif owner == SHARED_GPU:
            gpus.append(_slot(f"G{index}", "ari-slot-shared", tr("placement_gpu_job", gpu=index), gpu=True))
        else:
            gpus.append(_slot(f"G{index}", _rank_color(owner),
                              tr("placement_gpu_rank", gpu=index, rank=owner), gpu=True))
    status = (tr("placement_node_ranks", count=node.rank_count) if busy
              else tr("placement_node_idle"))
    over = " ari-overloaded" if overloaded else ""
    header = (f'<div class="ari-node-name">{html.escape(node.name)}'
              f'<span class="ari-muted"> · '
              f'{html.escape(tr("placement_node_shape", cpus=node.cpus, gpus=node.gpus))}</span></div>'
              f'<div class="ari-small ari-node-status{over}">{html.escape(status)}</div>')
    gpu_row = f'<div class="ari-slots">{"".join(gpus)}</div>' if gpus else ""
    return (f'<div class="ari-node{look}" data-node="{html.escape(node.name)}" '
            f'data-ranks="{node.rank_count}">'
            f'{header}<div class="ari-slots">{"".join(slots)}</div>{gpu_row}</div>')


def render_placement(placement: Placement, tr: Translate) -> str:
    """The whole picture plus a one-line summary; ``tr(key, **params)`` translates labels."""
    boxes = [_node_box(node, placement, tr) for node in placement.nodes]
    if placement.hidden_nodes:
        boxes.append(
            f'<div class="ari-node-more ari-text">'
            f'{html.escape(tr("placement_more_nodes", count=f"{placement.hidden_nodes:,}"))}</div>')
    summary = tr("placement_summary", ranks=placement.total_ranks, nodes=placement.total_nodes,
                 used=placement.nodes_with_ranks)
    launcher = tr("placement_launcher_srun") if placement.fan_out else tr("placement_launcher_none")
    return (f'<div class="ari-placement ari-text">'
            f'<div>{html.escape(summary)} '
            f'<span class="ari-muted">{html.escape(tr("placement_aside", text=launcher))}</span></div>'
            f'<div class="ari-node-boxes">{"".join(boxes)}</div>'
            f'</div>')


LESSON_WORDS = {"placement_all_ranks_on_first_node": "teaching.placement_all_ranks_on_first_node"}
"""Findings a lesson words its own way: the wizard's point to its step 3, which a lesson has not."""


def placement_figure(placement: Placement, tr: Translate, *, lesson: bool = False) -> str:
    """The picture and its findings as one HTML block that stands alone in a notebook's output
    (the lessons): the wizard's stylesheet comes along, since outside the wizard nothing brings
    it, and MathJax is told to skip the block, since its srun lines hold ``$SLURM_...`` that
    JupyterLab would otherwise typeset as maths."""
    words = (lambda key, **params: tr(LESSON_WORDS.get(key, key), **params)) if lesson else tr
    return (f'<div class="ari-wizard ari-figure mathjax_ignore tex2jax_ignore"><style>{css()}</style>'
            f'{render_placement(placement, tr)}{render_findings(placement, words)}</div>')


def render_findings(placement: Placement, tr: Translate) -> str:
    items = []
    for finding in placement.findings:
        look = "ari-sev-warning" if finding.severity == "warning" else "ari-muted"
        icon = MARKS[finding.severity]
        text = tr(f"placement_{finding.code}", **finding.params)
        items.append(f'<li class="ari-finding-{finding.code} {look}">'
                     f'{icon} {html.escape(text)}</li>')
    if not items:
        return ""
    return f'<ul class="ari-findings ari-list ari-text">{"".join(items)}</ul>'


def verdict_figure(verdict, lang: str) -> str:
    """Step 1 as a notebook output (the lessons): the picture of ``verdict.placement`` and,
    under it, the findings step 1 lists (``judge.placement_verdict``), in ``lang``, worded for
    a lesson (``LESSON_WORDS``)."""
    def tr(key: str, **params) -> str:
        return t(key, lang, **params)

    picture = render_placement(verdict.placement, tr) if verdict.placement is not None else ""
    findings = [replace(f, message_id=LESSON_WORDS[f.message_id]) if f.message_id in LESSON_WORDS
                else f for f in (*verdict.findings, *verdict.kind_findings)]
    return (f'<div class="ari-wizard ari-figure mathjax_ignore tex2jax_ignore"><style>{css()}</style>'
            f'{picture}{findings_html(findings, lang)}</div>')
