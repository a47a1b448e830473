"""Partition precedence: ARI's order (spec §3.2, vectors 5-8) plus the wizard-only defaults."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ari_jupyter.ari.partition import SOURCES, resolve_partition

BESIDE = "beside"   # <ckpt>/launch_config.json, the parent of the repo dir
INSIDE = "inside"   # <ckpt>/repro_sandbox/launch_config.json


def make_repo(tmp_path: Path, launch: dict[str, object]) -> Path:
    ckpt = tmp_path / "ckpt"
    repo = ckpt / "repro_sandbox"
    repo.mkdir(parents=True)
    for where, content in launch.items():
        target = ckpt if where == BESIDE else repo
        text = content if isinstance(content, str) else json.dumps(content)
        (target / "launch_config.json").write_text(text)
    return repo


CASES = [
    # id, explicit, env, launch configs, wizard, sinfo default -> partition, source
    ("v05-arg-beats-env", "from-arg", {"ARI_SLURM_PARTITION": "from-env"}, {}, False, None,
     "from-arg", "explicit"),
    ("v06-env-beats-launch-config", "", {"ARI_SLURM_PARTITION": "from-env"},
     {BESIDE: {"partition": "from-launch"}}, False, None, "from-env", "ARI_SLURM_PARTITION"),
    ("v07-launch-config-beside-repo", "", {}, {BESIDE: {"partition": "sx40"}}, False, None,
     "sx40", "launch_config.json"),
    ("v08-nothing", "", {}, {}, False, None, "", "none"),
    ("slurm-partition-beats-launch-config", "", {"SLURM_PARTITION": "spart"},
     {BESIDE: {"partition": "lc"}}, False, None, "spart", "SLURM_PARTITION"),
    ("ari-env-beats-slurm-partition", "", {"ARI_SLURM_PARTITION": "a", "SLURM_PARTITION": "s"},
     {}, False, None, "a", "ARI_SLURM_PARTITION"),
    ("empty-env-falls-through", "", {"ARI_SLURM_PARTITION": "", "SLURM_PARTITION": ""},
     {INSIDE: {"partition": "in"}}, False, None, "in", "launch_config.json"),
    ("whitespace-env-used-raw", "", {"ARI_SLURM_PARTITION": " "}, {}, False, None, " ",
     "ARI_SLURM_PARTITION"),
    ("beside-beats-inside", "", {}, {BESIDE: {"partition": "b"}, INSIDE: {"partition": "i"}},
     False, None, "b", "launch_config.json"),
    ("empty-beside-falls-to-inside", "", {}, {BESIDE: {"partition": ""},
                                              INSIDE: {"partition": "i"}},
     False, None, "i", "launch_config.json"),
    ("malformed-json-skipped", "", {}, {BESIDE: "{not json", INSIDE: {"partition": "i"}},
     False, None, "i", "launch_config.json"),
    ("non-object-json-skipped", "", {}, {BESIDE: ["sx40"]}, False, None, "", "none"),
    ("number-partition-stringified", "", {}, {BESIDE: {"partition": 7}}, False, None, "7",
     "launch_config.json"),
    ("job-partition-ignored-for-ari", "", {"SLURM_JOB_PARTITION": "small"}, {}, False, "large",
     "", "none"),
    ("wizard-job-partition", "", {"SLURM_JOB_PARTITION": "small"}, {}, True, "large",
     "small", "SLURM_JOB_PARTITION"),
    ("wizard-sinfo-default", "", {}, {}, True, "large*", "large", "sinfo_default"),
    ("wizard-launch-config-before-job-partition", "", {"SLURM_JOB_PARTITION": "small"},
     {BESIDE: {"partition": "sx40"}}, True, None, "sx40", "launch_config.json"),
    ("wizard-nothing", "", {}, {}, True, None, "", "none"),
]


@pytest.mark.parametrize("explicit, env, launch, wizard, sinfo, partition, source",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_resolve_partition(tmp_path, explicit, env, launch, wizard, sinfo, partition, source):
    repo = make_repo(tmp_path, launch)
    choice = resolve_partition(explicit, env, repo, for_wizard=wizard, sinfo_default=sinfo)
    assert (choice.partition, choice.source) == (partition, source)
    assert choice.source in SOURCES
    assert choice.ari_sees_it == (source in ("explicit", "ARI_SLURM_PARTITION",
                                             "SLURM_PARTITION", "launch_config.json"))


def test_launch_config_source_names_the_file(tmp_path):
    repo = make_repo(tmp_path, {INSIDE: {"partition": "i"}})
    choice = resolve_partition(None, {}, repo)
    assert choice.detail == str(repo / "launch_config.json")
    assert choice.to_json() == {"partition": "i", "source": "launch_config.json",
                                "detail": str(repo / "launch_config.json")}


def test_no_repo_dir_skips_launch_config():
    assert resolve_partition(None, {}, None, for_wizard=True, sinfo_default="p").source == \
        "sinfo_default"


def test_unreadable_launch_config_is_skipped(tmp_path):
    repo = make_repo(tmp_path, {})
    (repo.parent / "launch_config.json").mkdir()  # a directory, not a file
    assert resolve_partition("", {}, repo).source == "none"
