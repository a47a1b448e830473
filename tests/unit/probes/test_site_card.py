"""The site card (``ari-jupyter site-card``) and the spawner form made from it.

Each demo site's card holds its partitions with their limits, GRES and modules, and nothing of
the user who made it; the form's ``options_from_form`` lets through only what the card allows,
since every value it returns ends up in an ``#SBATCH`` line of the user's server job.
"""
from __future__ import annotations
from repo_paths import REPO

import io
import json
from types import SimpleNamespace

import pytest
from traitlets.config import Config

from ari_jupyter.cli import build_parser
from ari_jupyter.cli import site_card as cli_site_card
from ari_jupyter.probes.site_card import (FormError, build_card, hub_config, options_form, options_from_form,
                                          profiles)
from golden_support import GOLDEN, assert_matches_golden

SITES = REPO / "ari_jupyter" / "hosts" / "sites"
CARD_SITES = ("gres-cluster", "rccs-cloud", "sx40")


def _cli(*argv: str) -> tuple[int, str, str]:
    args = build_parser().parse_args(["site-card", *argv])
    out, err = io.StringIO(), io.StringIO()
    return cli_site_card.run(args, stdout=out, stderr=err), out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def cards() -> dict[str, dict]:
    found = {}
    for site in CARD_SITES:
        code, out, err = _cli("--site", site, "--json")
        assert code == 0, err
        found[site] = json.loads(out)
    return found


@pytest.mark.parametrize("site", CARD_SITES)
def test_the_card_of_each_demo_site_matches_its_golden_file(cards, site):
    assert_matches_golden(GOLDEN / "site_card" / f"{site}.json",
                          json.dumps(cards[site], indent=2, ensure_ascii=False) + "\n")


def test_the_card_reads_limits_gres_and_modules_from_the_probes(cards):
    gres = {p["name"]: p for p in cards["gres-cluster"]["partitions"]}
    assert (gres["debug"]["max_time_minutes"], gres["debug"]["nodes"],
            gres["debug"]["cpus_per_node"]) == (30, 2, 64)
    assert gres["gpu"]["gpus_per_node"] == {"a100": 4} and gres["cpu"]["gpus_per_node"] == {}
    assert gres["cpu"]["default"] and not gres["gpu"]["default"]
    assert cards["gres-cluster"]["modules"]["mpi"] == ["openmpi/4.1.6", "openmpi/5.0.3"]
    rccs = {p["name"]: p for p in cards["rccs-cloud"]["partitions"]}
    assert rccs["large"]["max_time_minutes"] is None and rccs["small"]["max_time_minutes"] == 60
    assert cards["sx40"]["modules"]["system"] is None


@pytest.mark.parametrize("site", CARD_SITES)
def test_the_card_holds_nothing_of_the_user_or_the_job(cards, site):
    recorded = json.loads((SITES / f"{site}.json").read_text())
    env = recorded.get("env") or {}
    text = json.dumps(cards[site])
    for name in ("SLURM_JOB_ID", "USER", "LOGNAME", "HOME", "SLURM_SUBMIT_DIR"):
        value = env.get(name)
        if value and len(value) > 2:
            assert value not in text, f"{name}={value} reached the card of {site}"


def test_a_secret_in_what_sinfo_printed_is_redacted():
    leaky = SimpleNamespace(id="modules", data={
        "system": "lmod", "modules": ["tool/1 TOKEN=ghp_" + "a" * 36], "mpi_modules": [],
        "cuda_modules": []})
    card = build_card([leaky], {})
    assert "ghp_" not in json.dumps(card), card


def test_a_site_without_slurm_has_no_card():
    code, out, err = _cli("--site", "laptop")
    assert code == 1 and out == ""
    assert "no partition" in err


def test_the_human_card_names_each_partition_in_every_language():
    for lang, words in (("en", "up to 30:00 per job"), ("ja", "1 ジョブ最長 30:00"),
                        ("zh", "每个作业最长 30:00")):
        code, out, err = _cli("--site", "gres-cluster", "--lang", lang)
        assert code == 0, err
        assert words in out and "gpu:a100" not in out.split("\n")[1], out


FORM = {"partition": ["gpu"], "nodes": ["2"], "tasks_per_node": ["8"], "hours": ["3"], "gpus": ["2"]}


@pytest.mark.parametrize("change, expected", [
    ({}, {"partition": "gpu", "runtime": "03:00:00", "gres": "gpu:a100:2",
          "options": "--nodes=2 --ntasks-per-node=8"}),
    ({"gpus": ["0"]}, {"partition": "gpu", "runtime": "03:00:00",
                       "options": "--nodes=2 --ntasks-per-node=8"}),
    # the debug partition's 30 minutes cap "1 hour"
    ({"partition": ["debug"], "hours": ["1"], "gpus": []},
     {"partition": "debug", "runtime": "00:30:00", "options": "--nodes=2 --ntasks-per-node=8"}),
    ({"partition": ["cpu"], "nodes": ["128"], "tasks_per_node": ["64"], "hours": ["48"], "gpus": ["0"]},
     {"partition": "cpu", "runtime": "48:00:00", "options": "--nodes=128 --ntasks-per-node=64"}),
])
def test_the_form_turns_allowed_values_into_batchspawner_options(cards, change, expected):
    assert options_from_form(cards["gres-cluster"], {**FORM, **change}) == expected


@pytest.mark.parametrize("change, says", [
    ({"partition": ["gpu\n#SBATCH --uid=0"]}, "is not a partition this hub offers"),
    ({"partition": ["nope"]}, "choose one of: cpu, gpu, gpu-long, debug"),
    ({"nodes": ["17"]}, "Nodes: 17 is not a whole number from 1 to 16, which is what gpu allows"),
    ({"nodes": ["2 --exclusive"]}, "Nodes: 2 --exclusive is not a whole number"),
    ({"nodes": ["0"]}, "from 1 to 16"),
    ({"tasks_per_node": ["65"]}, "Tasks per node: 65"),
    ({"hours": ["25"]}, "Hours: 25 is not a whole number from 1 to 24"),
    ({"gpus": ["5"]}, "GPUs per node: 5"),
    ({"partition": ["cpu"], "gpus": ["1"]}, "from 0 to 0, which is what cpu allows"),
])
def test_the_form_refuses_what_the_card_does_not_allow(cards, change, says):
    with pytest.raises(FormError) as raised:
        options_from_form(cards["gres-cluster"], {**FORM, **change})
    assert says in str(raised.value)


def test_a_refusal_is_said_in_the_form_language(cards):
    with pytest.raises(FormError, match="ノード数: 99"):
        options_from_form(cards["gres-cluster"], {**FORM, "nodes": ["99"]}, "ja")


def test_the_form_offers_every_partition_that_is_up_and_escapes_their_names(cards):
    card = json.loads(json.dumps(cards["rccs-cloud"]))
    card["partitions"].append({**card["partitions"][0], "name": 'x"><script>', "default": False})
    card["partitions"].append({**card["partitions"][0], "name": "drained", "state": "down",
                               "default": False})
    form = options_form(card)
    assert '<option value="small" selected>' in form and '<option value="large">' in form
    assert "<script>" not in form and "x&quot;&gt;&lt;script&gt;" in form
    assert "drained" not in form
    assert 'name="gpus"' not in form, "no partition of rccs-cloud has GPUs"
    assert 'name="gpus"' in options_form(cards["gres-cluster"])


def test_the_hub_config_fragment_sets_the_form_and_checks_what_comes_back(cards):
    config = Config()
    exec(hub_config(cards["rccs-cloud"], "form"), {"c": config})  # noqa: S102 - our own text
    spawner = config.BatchSpawnerBase
    assert spawner.options_form == options_form(cards["rccs-cloud"])
    assert spawner.options_from_form({"partition": ["large"], "nodes": ["2"], "tasks_per_node": ["2"],
                                      "hours": ["1"]}) == {
        "partition": "large", "runtime": "01:00:00", "options": "--nodes=2 --ntasks-per-node=2"}
    with pytest.raises(FormError):
        spawner.options_from_form({"partition": ["small"], "nodes": ["2"], "tasks_per_node": ["2"],
                                   "hours": ["2"]})


def test_the_profiles_are_one_whole_node_per_partition(cards):
    config = Config()
    exec(hub_config(cards["gres-cluster"], "profiles"), {"c": config})  # noqa: S102 - our own text
    listed = config.ProfilesSpawner.profiles
    assert listed == profiles(cards["gres-cluster"])
    by_key = {key: settings for _, key, _, settings in listed}
    assert by_key["ari-gpu"] == {"req_partition": "gpu", "req_runtime": "01:00:00",
                                 "req_options": "--nodes=1 --ntasks-per-node=64",
                                 "req_gres": "gpu:a100:4"}
    assert by_key["ari-debug"]["req_runtime"] == "00:30:00"
    assert "req_gres" not in by_key["ari-cpu"]
