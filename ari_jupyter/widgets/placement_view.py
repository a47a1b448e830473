"""HTML for the placement picture: one box per node, its task slots and its GPUs.

Pure string building from a ``placement.Placement`` so it can be tested without a browser and
shown identically in JupyterLab, Notebook 7 and Voilà (inline styles, no CSS file, no script).
"""
from __future__ import annotations

import html
from typing import Callable

from ..placement import SHARED_GPU, Placement

MAX_SLOTS_DRAWN = 64
COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f")
WARN = "#d62728"
IDLE = "#bbbbbb"

Translate = Callable[..., str]


def _rank_color(rank: int) -> str:
    return COLORS[rank % len(COLORS)]


def _slot(label: str, color: str, title: str, width: int = 18) -> str:
    return (f'<span title="{html.escape(title)}" style="display:inline-block;width:{width}px;'
            f'height:18px;margin:1px;border-radius:3px;background:{color};color:#fff;'
            f'font:10px/18px monospace;text-align:center;overflow:hidden">{html.escape(label)}</span>')


def _node_box(node, placement: Placement, tr: Translate) -> str:
    busy = node.rank_count > 0
    overloaded = node.cpu_oversubscribed or (not placement.fan_out and placement.total_nodes > 1 and busy)
    border = WARN if overloaded else ("#444" if busy else IDLE)
    slots_total = max(node.cpus // max(node.cpus_per_task, 1), node.rank_count, 1)
    drawn = min(slots_total, MAX_SLOTS_DRAWN)
    slots = []
    for i in range(drawn):
        if i < node.rank_count:
            rank = node.first_rank + i
            color = WARN if i * node.cpus_per_task >= node.cpus > 0 else _rank_color(rank)
            slots.append(_slot(str(rank), color, tr("placement_rank_title", rank=rank)))
        else:
            slots.append(_slot("", "#e8e8e8", tr("placement_free_slot")))
    if slots_total > drawn:
        slots.append(f'<span style="font:11px sans-serif;color:#555"> +{slots_total - drawn}</span>')
    gpus = []
    for index, owner in enumerate(node.gpu_owner):
        if owner is None:
            gpus.append(_slot(f"G{index}", IDLE, tr("placement_gpu_idle", gpu=index), width=28))
        elif owner == SHARED_GPU:
            gpus.append(_slot(f"G{index}", "#333", tr("placement_gpu_job", gpu=index), width=28))
        else:
            gpus.append(_slot(f"G{index}", _rank_color(owner),
                              tr("placement_gpu_rank", gpu=index, rank=owner), width=28))
    status = (tr("placement_node_ranks", count=node.rank_count) if busy
              else tr("placement_node_idle"))
    header = (f'<div style="font:bold 12px sans-serif">{html.escape(node.name)}'
              f'<span style="font-weight:normal;color:#555"> · '
              f'{html.escape(tr("placement_node_shape", cpus=node.cpus, gpus=node.gpus))}</span></div>'
              f'<div style="font:11px sans-serif;color:{WARN if overloaded else "#333"}">'
              f'{html.escape(status)}</div>')
    gpu_row = f'<div style="margin-top:3px">{"".join(gpus)}</div>' if gpus else ""
    return (f'<div class="ari-node" data-node="{html.escape(node.name)}" data-ranks="{node.rank_count}" '
            f'style="border:2px solid {border};border-radius:6px;padding:6px;margin:4px;'
            f'width:220px;background:{"#fff" if busy else "#f6f6f6"}">'
            f'{header}<div style="margin-top:3px;line-height:0">{"".join(slots)}</div>{gpu_row}</div>')


def render_placement(placement: Placement, tr: Translate) -> str:
    """The whole picture plus a one-line summary; ``tr(key, **params)`` translates labels."""
    boxes = [_node_box(node, placement, tr) for node in placement.nodes]
    if placement.hidden_nodes:
        boxes.append(
            f'<div class="ari-node-more" style="border:2px dashed {IDLE};border-radius:6px;'
            f'padding:6px;margin:4px;width:160px;font:12px sans-serif;color:#555">'
            f'{html.escape(tr("placement_more_nodes", count=f"{placement.hidden_nodes:,}"))}</div>')
    summary = tr("placement_summary", ranks=placement.total_ranks, nodes=placement.total_nodes,
                 used=placement.nodes_with_ranks)
    launcher = tr("placement_launcher_srun") if placement.fan_out else tr("placement_launcher_none")
    return (f'<div class="ari-placement">'
            f'<div style="font:12px sans-serif;margin:2px 4px">{html.escape(summary)} '
            f'<span style="color:#555">({html.escape(launcher)})</span></div>'
            f'<div style="display:flex;flex-wrap:wrap;align-items:flex-start">{"".join(boxes)}</div>'
            f'</div>')


def render_findings(placement: Placement, tr: Translate) -> str:
    items = []
    for finding in placement.findings:
        color = WARN if finding.severity == "warn" else "#555"
        icon = "⚠" if finding.severity == "warn" else "ℹ"
        text = tr(f"placement_{finding.code}", **finding.params)
        items.append(f'<li class="ari-finding-{finding.code}" style="color:{color}">'
                     f'{icon} {html.escape(text)}</li>')
    if not items:
        return ""
    return f'<ul style="margin:4px 0;padding-left:18px;font:12px sans-serif">{"".join(items)}</ul>'
