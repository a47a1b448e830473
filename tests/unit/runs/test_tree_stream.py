"""tree.json read and rewritten node by node (``runs/tree_stream``): the nodes as ``json.loads``
gives them, many decoded at a time, and the rewritten file byte for byte the file's own text but
for the nodes changed, in the file's layout (table-driven over layouts and buffer sizes)."""
from __future__ import annotations

import json

import pytest

from ari_jupyter.base.bounded_read import TooDeep
from ari_jupyter.runs import tree_stream
from ari_jupyter.runs.tree_stream import BadTree, events, rewritten

NODES = [{"id": f"n{i}", "status": "running" if i % 9 == 4 else "success",
          "metrics": {"GFlops": i / 7}, "summary": text, "children": [{"a": [i]}] if i % 5 == 0 else []}
         for i, text in enumerate(["plain", "}, {", '},{"id":"x"}', "é" * 300, "[{]}", "x" * 3000] * 20)]
TREE = {"run_id": "r", "created_at": "2026-12-01T09:30:00", "nodes": [*NODES, 3, "a node?"],
        "after": {"k": [1, 2]}}


def _marked(node):
    if isinstance(node, dict) and node.get("status") == "running":
        return {**node, "status": "failed"}
    return node


EXPECTED = {**TREE, "nodes": [_marked(n) for n in TREE["nodes"]]}


@pytest.fixture(params=[(1 << 20, 64 * 1024), (4096, 1500), (700, 300)], ids=["chunk 1 MB", "4 KB", "700 B"])
def small_buffers(request, monkeypatch):
    """Big and small buffers: nodes read in batches, cut across reads, one by one."""
    chunk, batch = request.param
    monkeypatch.setattr(tree_stream, "CHUNK", chunk)
    monkeypatch.setattr(tree_stream, "BATCH", batch)


@pytest.mark.parametrize("layout,written,rewritten_as", [
    ("ARI's indent=2", lambda t: json.dumps(t, indent=2, ensure_ascii=False),
     lambda t: json.dumps(t, indent=2, ensure_ascii=False)),
    ("compact", lambda t: json.dumps(t, separators=(",", ":"), ensure_ascii=False),
     lambda t: json.dumps(t, separators=(",", ":"), ensure_ascii=False)),
    ("spaced, ASCII", lambda t: json.dumps(t), None),
])
def test_the_rewrite_is_the_files_own_text_but_for_the_nodes_changed(tmp_path, small_buffers,
                                                                     layout, written, rewritten_as):
    path = tmp_path / "tree.json"
    path.write_text(written(TREE), encoding="utf-8")
    assert [v for kind, v in events(path, 1 << 24) if kind == "node"] == TREE["nodes"]
    out = b"".join(rewritten(path, 1 << 24, _marked)).decode("utf-8")
    assert json.loads(out) == EXPECTED
    if rewritten_as:
        assert out == rewritten_as(EXPECTED)
    unchanged = b"".join(rewritten(path, 1 << 24, lambda node: node))
    assert unchanged == path.read_bytes()


@pytest.mark.parametrize("text,error", [
    ('{"nodes":[{"id":"a"},{"id":"b"},{"id":"c" "d"},{"id":"e"}]}', BadTree),   # not JSON mid-list
    ('{"nodes":[{"id":"a"},' + '{"x":' * 70 + "1" + "}" * 70 + ',{"id":"c"}]}', TooDeep),
    ('{"nodes":[{"id":"a"},{"id":"b"}]', BadTree),                               # cut
    ('{"nodes":[{"id":"a"},{"id":"b"}]} {}', BadTree),                            # text after
])
def test_a_batch_of_nodes_is_held_to_what_one_node_is(tmp_path, small_buffers, text, error):
    path = tmp_path / "tree.json"
    path.write_text(text)
    with pytest.raises(error):
        list(events(path, 1 << 20))
    with pytest.raises(error):
        list(rewritten(path, 1 << 20, _marked))
