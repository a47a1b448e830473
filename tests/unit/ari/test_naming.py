"""Run ids (R10) and the workspace rule of spec §2.1."""
from __future__ import annotations

import hashlib
from datetime import datetime

import pytest

from ari_jupyter.ari.naming import (
    DASHBOARD_RE, WorkspaceError, check_run_id, check_workspace, checkpoint_dir, display_name,
    infer_workspace_root, make_run_id, slug_for_title, slug_is_hashed, slug_names_nothing, slugify,
)

NOW = datetime(2026, 11, 29, 16, 5, 9)


@pytest.mark.parametrize("title, slug", [
    ("SpGEMM scaling on 4 nodes", "spgemm_scaling_on_4_nodes"),
    ("# Heading: GPU vs. CPU!", "heading_gpu_vs_cpu"),
    ("  trailing   spaces  ", "trailing_spaces"),
    ("keep-dashes_and_underscores", "keep-dashes_and_underscores"),
    ("Café résumé", "cafe_resume"),
    ("ＧＰＵ ベンチマーク", "gpu"),
    ("GPU 性能 test", "gpu_test"),
    ("a;b$(rm -rf ~)`x`", "a_b_rm_-rf_x"),
    ("x" * 100, "x" * 40),
    ("word " * 20, ("word_" * 8).rstrip("_")),
    ("\n\n## \nsecond line wins\n", "second_line_wins"),
    ("", "experiment"),
])
def test_slug_for_title(title, slug):
    assert slug_for_title(title) == slug


def test_cjk_only_titles_fall_back_deterministically():
    first = slug_for_title("並列疎行列積の再現")
    assert first == slug_for_title("並列疎行列積の再現")
    assert first == "experiment_" + hashlib.sha256("並列疎行列積の再現".encode()).hexdigest()[:8]
    assert first != slug_for_title("別の実験")


@pytest.mark.parametrize("title, slug, partial", [
    ("ステンシル計算の2ノードスケーリング", "2", True),   # one digit is all that survives
    ("並列疎行列積 v2", "v2", True),                      # no word that names it
    ("GPU性能評価", "gpu", False),                        # a word survives and names it
    ("並列疎行列積 spmv", "spmv", False),
    # the hint followed ("add a few ASCII words"): not told again
    ("ステンシルの 2 ノード スケーリング stencil-2node", "2_stencil-2node", False),
    ("並列疎行列積の再現", "experiment_", False),          # nothing survives: hashed, not partial
    ("ＧＰＵ ベンチマーク", "gpu", False),                  # full-width GPU has an ASCII form
    ("Café scaling", "cafe_scaling", False),                # an accent has an ASCII form
    ("Sparse GEMM scaling (2 nodes)", "sparse_gemm_scaling_2_nodes", False),
    ("", "experiment", False),
])
def test_a_title_losing_letters_to_the_slug_is_told(title, slug, partial):
    assert slug_names_nothing(title) == partial
    assert slug_for_title(title).startswith(slug)


@pytest.mark.parametrize("title, hashed", [
    ("並列疎行列積の再現", True),
    ("## 並列疎行列積\n", True),
    ("—— · ——", True),
    ("並列疎行列積 spmv", False),
    ("ＧＰＵ ベンチマーク", False),  # full-width letters survive as "gpu"
    ("Experiment 1", False),  # a slug that merely starts with "experiment"
    ("", False),  # no title: "experiment", which the title's own error tells
])
def test_slug_is_hashed_exactly_when_nothing_of_the_title_survives(title, hashed):
    assert slug_is_hashed(title) == hashed
    assert slug_for_title(title).startswith("experiment_" if hashed else "") and \
        (slug_for_title(title) == "experiment_" + hashlib.sha256(
            title.strip().lstrip("#").strip().encode()).hexdigest()[:8]) == hashed


def test_slugify_is_aris_character_rule_and_idempotent():
    for title in ("a b", "Ünïcödé & co", "--x--", "日本", "a__b"):
        slug = slugify(title)
        assert slugify(slug) == slug
        assert all(c.isascii() and (c.isalnum() or c in "_-") for c in slug)


def test_run_id_shape_matches_ari():
    run_id = make_run_id("SpGEMM scaling", NOW)
    assert run_id == "20261129160509_spgemm_scaling"
    assert check_run_id(run_id) == run_id and DASHBOARD_RE.match(run_id)
    assert display_name(run_id) == "spgemm_scaling"
    assert check_run_id(make_run_id("並列", NOW))


@pytest.mark.parametrize("bad", ["spgemm", "2026112916_x", "20261129160509_", "20261129160509_a b",
                                 "20261129160509_a/b", "../20261129160509_x"])
def test_bad_run_ids_are_refused(bad):
    with pytest.raises(WorkspaceError, match="YYYYmmddHHMMSS"):
        check_run_id(bad)


@pytest.mark.parametrize("ckpt, root", [
    ("/home/u/ws/checkpoints/RUN", "/home/u/ws"),
    ("/home/u/checkpoints/proj/checkpoints/RUN", "/home/u"),
    ("/home/u/ws/checkpoints/checkpoints/RUN", "/home/u/ws"),
    ("/home/u/ws/RUN", "/home/u/ws"),
])
def test_infer_workspace_root_mirrors_ari(ckpt, root):
    assert str(infer_workspace_root(ckpt)) == root


def test_check_workspace_accepts_a_plain_path(tmp_path):
    ws = tmp_path / "ari-ws"
    assert check_workspace(ws) == ws.resolve()
    assert checkpoint_dir(ws, "20261129160509_x") == ws.resolve() / "checkpoints" / "20261129160509_x"


@pytest.mark.parametrize("rel", ["checkpoints/proj", "checkpoints", "a/checkpoints/b/c"])
def test_check_workspace_refuses_a_checkpoints_ancestor(tmp_path, rel):
    with pytest.raises(WorkspaceError) as info:
        check_workspace(tmp_path / rel)
    message = str(info.value)
    assert "'checkpoints'" in message and "experiments" in message
    assert str(tmp_path / rel.split("checkpoints")[0] / "checkpoints").rstrip("/") in message


def test_check_workspace_judges_the_resolved_path(tmp_path):
    real = tmp_path / "checkpoints" / "inner"
    real.mkdir(parents=True)
    link = tmp_path / "innocent"
    link.symlink_to(real)
    with pytest.raises(WorkspaceError):
        check_workspace(link)
    assert check_workspace(link, resolve=False) == link


def test_relative_workspace_without_resolve_is_refused():
    with pytest.raises(WorkspaceError, match="absolute"):
        check_workspace("ws", resolve=False)
