"""sbatch, partitions, gres and time_left probes: one row per verdict, over raw outputs
(accepted, refused, controller down or hung, unconfigured client, garbage)."""
from __future__ import annotations

import time

import pytest

from ari_jupyter.slurm.parsers import SINFO_FORMAT
from ari_jupyter.base.verdict import ProbeResult
from ari_jupyter.probes.slurm import ends_at_clock, time_left_until

from probe_support import ALLOCATION_ENV, OUTPUTS, cmd, output, probe, said_in_every_language, site

SINFO_PARTS = ("sinfo", "--noheader", "-o", SINFO_FORMAT)
SINFO_G = ("sinfo", "-h", "-o", "%G")
VERSION = cmd(["sbatch", "--version"], output("sbatch/version_debian.txt"))
HANG = 3600.0

CONTROLLER_DOWN = output("slurm-errors/controller_down.txt")
SOCKET_TIMEOUT = output("slurm-errors/socket_timed_out.txt")
UNCONFIGURED = output("slurm-errors/unconfigured.txt")


def env(**extra):
    return {"HOME": "/home/alice", **extra}


# --------------------------------------------------------------------------- sbatch


def test_sbatch_missing_fails_with_aris_own_words():
    result = probe(site(programs=["sinfo"]), "sbatch")
    assert result.status == "fail"
    assert "not on PATH" in result.summary and "sbatch` is" in result.fix
    assert result.data["path"] is None


def test_sbatch_without_partition_reports_version_only():
    result = probe(site(programs=["sbatch"], commands=[VERSION]), "sbatch")
    assert result.status == "ok"
    assert result.data["version"] == "22.05.8"
    assert result.data["test_only"] is None
    assert "no partition chosen" in result.summary


TEST_ONLY = ("sbatch", "--test-only", "-p", "small", "--wrap", "true")


@pytest.mark.parametrize(
    "stderr, rc, delay, status, words",
    [
        (output("sbatch/test_only_accepted.txt"), 0, 0, "ok", "Job 3 to start"),
        (output("sbatch/invalid_partition.txt"), 1, 0, "fail", "invalid partition specified"),
        (output("sbatch/permission_denied.txt"), 1, 0, "fail", "Access/permission denied"),
        (CONTROLLER_DOWN, 1, 0, "unknown", "did not answer"),
        (SOCKET_TIMEOUT, 1, 0, "unknown", "did not answer"),
        ("", 0, HANG, "unknown", "did not answer within"),
    ],
)
def test_sbatch_test_submission_reports_the_schedulers_answer(stderr, rc, delay, status, words):
    host = site(programs=["sbatch"], env=env(ARI_SLURM_PARTITION="small"),
                commands=[VERSION, cmd(TEST_ONLY, "", stderr, rc, delay)])
    started = time.monotonic()
    result = probe(host, "sbatch", timeout=0.5)
    assert time.monotonic() - started < 1.0
    assert result.status == status, result
    assert words in result.summary
    assert result.data["partition"] == "small"
    assert result.data["partition_source"] == "ARI_SLURM_PARTITION"
    said_in_every_language(result)


# Each refusal the scheduler gives, recorded on the test bed for an unprivileged user
# (tests/testbed/test_sbatch_refusal_testbed.py), and the fix a researcher can act on.
@pytest.mark.parametrize(
    "fixture, kind, fix_words",
    [
        ("sbatch/test_only_group_denied.txt", "not_permitted", "ask the site's administrators"),
        ("sbatch/test_only_alloc_node_denied.txt", "node_may_not_submit", "from a login node"),
        ("sbatch/test_only_partition_inactive.txt", "not_accepting", "not accepting jobs"),
        ("sbatch/permission_denied.txt", "node_may_not_submit", "AllocNodes"),
        ("sbatch/invalid_partition.txt", "unknown_partition", "that `sinfo` lists"),
        ("slurm/time_limit_invalid.txt", "limits", "scontrol show partition small"),
        ("slurm/node_count_invalid.txt", "limits", "its limits"),
        ("sbatch: error: Batch job submission failed: Invalid account or account/partition "
         "combination specified\n", "not_permitted", "AllowAccounts"),
        ("sbatch: error: Batch job submission failed: Job violates accounting/QOS policy "
         "(job submit limit, user's size and/or time limits)\n", "limits", "its limits"),
        ("sbatch: error: Batch job submission failed: Something new\n", "other", "pick another partition"),
    ],
)
def test_sbatch_refusal_names_the_fix_for_its_reason(fixture, kind, fix_words):
    stderr = fixture if "\n" in fixture else (
        output(fixture) if not fixture.startswith("slurm/")
        else (OUTPUTS.parent / fixture).read_text())
    host = site(programs=["sbatch"], env=env(ARI_SLURM_PARTITION="small"),
                commands=[VERSION, cmd(TEST_ONLY, "", stderr, 1)])
    result = probe(host, "sbatch")
    assert result.status == "fail", result
    assert result.data["test_only"]["refusal"] == kind
    assert fix_words in result.fix
    assert result.summary.startswith("sbatch refuses a test job on partition small: ")
    assert stderr.splitlines()[0].split("error: ")[-1] in result.summary  # the scheduler's words
    for lang in ("ja", "zh"):  # the same verdict and fix in the user's language
        assert "small" in result.text(lang) and result.fix_text(lang) != result.fix
        assert "small" in result.fix_text(lang)


def test_sbatch_explicit_partition_beats_the_environment():
    host = site(programs=["sbatch"], env={**ALLOCATION_ENV, "ARI_SLURM_PARTITION": "large"},
                commands=[VERSION, cmd(["sbatch", "--test-only", "-p", "gpu", "--wrap", "true"],
                                       "", output("sbatch/invalid_partition.txt"), 1)])
    result = probe(host, "sbatch", partition="gpu")
    assert result.status == "fail"
    assert result.data["partition_source"] == "chosen"


def test_sbatch_uses_the_allocation_partition():
    host = site(programs=["sbatch"], env=ALLOCATION_ENV,
                commands=[VERSION, cmd(TEST_ONLY, "", output("sbatch/test_only_accepted.txt"))])
    result = probe(host, "sbatch")
    assert result.status == "ok" and result.data["partition_source"] == "SLURM_JOB_PARTITION"


def test_sbatch_without_configuration_fails():
    host = site(programs=["sbatch"], commands=[cmd(["sbatch", "--version"], "", UNCONFIGURED.replace("sinfo", "sbatch"), 1)])
    result = probe(host, "sbatch")
    assert result.status == "fail"
    assert "cannot find the cluster" in result.summary and "SLURM_CONF" in result.fix
    assert result.text("ja").startswith("/usr/bin/sbatch の sbatch がクラスタを見つけられません: ") \
        or "の sbatch がクラスタを見つけられません: " in result.text("ja"), result.text("ja")
    assert result.fix_text("zh").startswith("请把 SLURM_CONF 指向集群的 slurm.conf")


# what a user on a misconfigured or overloaded site meets: said in Japanese too, never English
UNANSWERED = [
    ("partitions", ["sinfo", "--noheader", "-o", "%P|%a|%l|%D|%c|%m|%G"], UNCONFIGURED,
     "ここの SLURM クライアントは設定されていません"),
    ("partitions", ["sinfo", "--noheader", "-o", "%P|%a|%l|%D|%c|%m|%G"],
     "sinfo: error: Unable to contact slurm controller (connect failure)",
     "SLURM コントローラーが応答しませんでした"),
]


@pytest.mark.parametrize("probe_id, argv, stderr, japanese", UNANSWERED)
def test_an_unanswered_question_is_told_in_the_users_language(probe_id, argv, stderr, japanese):
    host = site(programs=[argv[0]], commands=[cmd(argv, "", stderr, 1)])
    result = probe(host, probe_id)
    assert result.status == "unknown" and result.message_id, result
    assert japanese in result.text("ja") and "パーティションの一覧は不明です" in result.text("ja")
    assert result.fix_text("ja") and not result.fix_text("ja").isascii()


def test_sbatch_version_hang_is_unknown():
    host = site(programs=["sbatch"], commands=[cmd(["sbatch", "--version"], delay=HANG)])
    assert probe(host, "sbatch", timeout=0.3).status == "unknown"


def test_partition_with_shell_characters_never_reaches_sbatch():
    host = site(programs=["sbatch"], env=env(ARI_SLURM_PARTITION="-x;rm"), commands=[VERSION])
    result = probe(host, "sbatch")
    assert result.status == "ok" and result.data["partition"] is None


# --------------------------------------------------------------------------- sbatch --help

HELP = ("sbatch", "--help")
HELP_TASK_NONE = output("sbatch/help_debian_22.05_task_none.txt")  # 22.05, TaskPlugin=task/none
HELP_AFFINITY = output("sbatch/help_debian_22.05_task_affinity.txt")  # 22.05, task/affinity
BOTH_ADVERTISED = "      --cpu-bind=...          bind tasks to CPUs\n      --mem-bind=...          bind memory\n"


@pytest.mark.parametrize(
    "stdout, stderr, rc, delay, flags, note",
    [
        (HELP_TASK_NONE, "", 0, 0, [], "advertises neither --cpu-bind nor --mem-bind"),
        (HELP_AFFINITY, "", 0, 0, ["--mem-bind"], "advertises --mem-bind but not --cpu-bind"),
        (BOTH_ADVERTISED, "", 0, 0, ["--cpu-bind", "--mem-bind"], "ARI passes them on"),
        ("", BOTH_ADVERTISED, 0, 0, ["--cpu-bind", "--mem-bind"], "ARI passes them on"),  # ARI reads stderr too
        ("", UNCONFIGURED.replace("sinfo", "sbatch"), 1, 0, [], "advertises neither"),  # ARI: no flags
        ("", "", 0, HANG, None, "did not answer"),
    ],
)
@pytest.mark.parametrize("with_partition", [False, True])
def test_sbatch_help_decides_which_bind_flags_ari_keeps(stdout, stderr, rc, delay, flags, note,
                                                        with_partition):
    commands = [VERSION, cmd(HELP, stdout, stderr, rc, delay),
                cmd(TEST_ONLY, "", output("sbatch/test_only_accepted.txt"))]
    environment = env(ARI_SLURM_PARTITION="small") if with_partition else env()
    started = time.monotonic()
    result = probe(site(programs=["sbatch"], env=environment, commands=commands), "sbatch",
                   timeout=0.5)
    assert time.monotonic() - started < 1.0  # a hung --help costs the probe's budget, no more
    assert result.status == "ok", result  # the flags inform the profile; they never fail sbatch
    assert result.data["bind_flags"] == flags
    assert note in result.evidence
    assert (result.data["test_only"] is not None) is with_partition


def test_sbatch_help_is_not_asked_when_sbatch_does_not_run():
    host = site(programs=["sbatch"], commands=[
        cmd(["sbatch", "--version"], "", UNCONFIGURED.replace("sinfo", "sbatch"), 1),
        cmd(HELP, BOTH_ADVERTISED)])
    result = probe(host, "sbatch")
    assert result.status == "fail" and result.data["bind_flags"] is None
    assert "sbatch --help" not in result.evidence


# --------------------------------------------------------------------------- partitions


def partitions_site(stdout="", stderr="", rc=0, delay=0.0, environment=None):
    return site(programs=["sinfo"], env=environment or env(),
                commands=[cmd(SINFO_PARTS, stdout, stderr, rc, delay)])


@pytest.mark.parametrize(
    "stdout, stderr, rc, delay, status, words",
    [
        (output("sinfo/testbed_nogres.txt"), "", 0, 0, "ok", "2 partitions: small* (up, 2 nodes, 4 CPUs)"),
        (output("sinfo/mixed_nodes.txt"), "", 0, 0, "ok", "cpu* (up, 128 nodes, 64 CPUs)"),
        (output("sinfo/all_down.txt"), "", 0, 0, "warn", "no partition is up"),
        (output("sinfo/empty.txt"), "", 0, 0, "warn", "no partitions"),
        (output("sinfo/default_format.txt"), "", 0, 0, "unknown", "could not read"),
        (output("sinfo/garbage.txt"), "", 0, 0, "unknown", "could not read"),
        ("", CONTROLLER_DOWN, 1, 0, "unknown", "controller did not answer"),
        ("", SOCKET_TIMEOUT, 1, 0, "unknown", "controller did not answer"),
        ("", UNCONFIGURED, 1, 0, "unknown", "not configured"),
        ("", "sinfo: error: Invalid user for SlurmUser slurm, ignored", 1, 0, "unknown", "sinfo failed"),
        ("", "", 0, HANG, "unknown", "did not answer within"),
    ],
)
def test_partitions(stdout, stderr, rc, delay, status, words):
    result = probe(partitions_site(stdout, stderr, rc, delay), "partitions", timeout=0.4)
    assert result.status == status, result
    assert words in result.summary
    said_in_every_language(result)


def test_partitions_data_for_the_wizard():
    result = probe(partitions_site(output("sinfo/testbed_gres.txt")), "partitions")
    assert result.data["default"] == "small"
    assert [p["name"] for p in result.data["partitions"]] == ["small", "large"]
    assert result.data["partitions"][0]["gres"] == ["gpu:v100:4"]
    assert result.command == "sinfo --noheader -o '%P|%a|%l|%D|%c|%m|%G'"


def test_partitions_no_sinfo_is_skip():
    assert probe(site(), "partitions").status == "skip"


def test_chosen_partition_that_does_not_exist_fails():
    result = probe(partitions_site(output("sinfo/testbed_nogres.txt")), "partitions", partition="nope")
    assert result.status == "fail"
    assert "small, large" in result.fix


def test_environment_partition_that_does_not_exist_warns():
    host = partitions_site(output("sinfo/testbed_nogres.txt"), environment=env(ARI_SLURM_PARTITION="nope"))
    assert probe(host, "partitions").status == "warn"


def test_chosen_partition_drained_warns():
    host = partitions_site(output("sinfo/one_drained.txt"))
    assert probe(host, "partitions", partition="large").status == "warn"
    assert probe(host, "partitions", partition="small").status == "ok"


# --------------------------------------------------------------------------- gres


def partition_listing(per_partition: dict[str, str]) -> str:
    """The partition listing (``SINFO_FORMAT``, GRES last) of partitions with these GRES;
    the first one is the default."""
    return "".join(f"{name}{'*' if index == 0 else ''}|up|1:00:00|2|4|4000|{gres.strip() or '(null)'}\n"
                   for index, (name, gres) in enumerate(per_partition.items()))


def gres_site(cluster, per_partition=None, environment=None, rc=0, stderr="", delay=0.0):
    """ARI's ``sinfo -h -o %G`` answers ``cluster``; the partition listing, which carries each
    partition's GRES, is recorded only when ``per_partition`` is given."""
    commands = [cmd(SINFO_G, cluster, stderr, rc, delay)]
    if per_partition:
        commands.append(cmd(SINFO_PARTS, partition_listing(per_partition)))
    return site(programs=["sinfo"], env=environment or env(), commands=commands)


@pytest.mark.parametrize(
    "fixture, status, has_gres, gpu_types",
    [
        ("gres/testbed_gres.txt", "ok", True, ["v100"]),
        ("gres/two_types.txt", "ok", True, ["v100", "a100"]),
        ("gres/untyped.txt", "ok", True, []),
        ("gres/testbed_nogres.txt", "ok", False, []),  # fine without a GPU request
        ("gres/null_null.txt", "ok", False, []),
        ("gres/blank_lines.txt", "ok", False, []),
        ("gres/mps_only.txt", "warn", True, []),
        ("sinfo/garbage.txt", "warn", True, []),  # ARI would count it as GRES
    ],
)
def test_gres_cluster_wide(fixture, status, has_gres, gpu_types):
    result = probe(gres_site(output(fixture)), "gres")
    assert result.status == status, result
    assert result.data["has_gres"] is has_gres
    assert result.data["gpu_types"] == gpu_types
    assert result.command == "sinfo -h -o %G"
    said_in_every_language(result)


def test_no_gres_fix_says_what_ari_does():
    result = probe(gres_site(output("gres/testbed_nogres.txt")), "gres")
    assert "rely on --gpus-per-task" not in result.fix  # SLURM rejects it without GRES too
    assert "ARI_SLURM_ALLOW_NO_GRES=1" in result.fix and "drops every GPU flag" in result.fix
    assert "--gpus-per-task" in result.fix


def test_gres_falls_back_to_the_sinfo_default_partition():
    result = probe(gres_site(output("gres/testbed_gres.txt"), {"small": "gpu:v100:4\n"}), "gres")
    assert result.data["partition"] == "small"
    assert result.data["partition_source"] == "sinfo default"
    assert result.data["partition_has_gres"] is True


@pytest.mark.parametrize("partition, status", [("cpu", "warn"), ("gpu", "ok")])
def test_gres_cpu_only_partition_on_a_gres_cluster(partition, status):
    host = gres_site(output("gres/mixed_partitions.txt"),
                     {"cpu": "(null)\n", "gpu": "gpu:a100:4(S:0-1)\n"})
    result = probe(host, "gres", partition=partition)
    assert result.status == status
    assert result.data["has_gres"] is True
    assert result.data["partition_has_gres"] is (partition == "gpu")
    said_in_every_language(result)


@pytest.mark.parametrize(
    "stderr, rc, delay, words",
    [
        (CONTROLLER_DOWN, 1, 0, "controller did not answer"),
        (UNCONFIGURED, 1, 0, "not configured"),
        ("", 0, HANG, "did not answer within"),
        ("sinfo: error: something else", 1, 0, "ARI would treat this as no GRES"),
    ],
)
def test_gres_unanswered_is_unknown(stderr, rc, delay, words):
    result = probe(gres_site("", stderr=stderr, rc=rc, delay=delay), "gres", timeout=0.3)
    assert result.status == "unknown"
    assert result.data["has_gres"] is None
    assert words in result.summary
    said_in_every_language(result)


@pytest.mark.parametrize("stderr, rc, delay, words", [
    (CONTROLLER_DOWN, 1, 0, "controller did not answer"),
    ("", 0, HANG, "did not answer within"),
])
def test_gres_partition_question_unanswered_is_unknown(stderr, rc, delay, words):
    """The controller answers the cluster-wide question but not the partition listing: the
    partition's GRES is unknown, not silently 'ok'."""
    host = site(programs=["sinfo"], env=env(), commands=[
        cmd(SINFO_G, output("gres/testbed_gres.txt")),
        cmd(SINFO_PARTS, "", stderr, rc, delay),
    ])
    result = probe(host, "gres", partition="small", timeout=0.3)
    assert result.status == "unknown"
    assert words in result.summary and "partition small" in result.summary
    assert result.data["has_gres"] is True and result.data["partition_has_gres"] is None
    said_in_every_language(result)


def test_gres_without_sinfo_is_skip():
    assert probe(site(), "gres").status == "skip"


# --------------------------------------------------------------------------- time_left


def squeue_site(stdout="", stderr="", rc=0, delay=0.0, environment=ALLOCATION_ENV):
    return site(programs=["squeue"], env=environment,
                commands=[cmd(["squeue", "-h", "-j", "77", "-o", "%L"], stdout, stderr, rc, delay)])


@pytest.mark.parametrize(
    "fixture, rc, status, seconds",
    [
        ("squeue/hours.txt", 0, "ok", 5025),
        ("squeue/days.txt", 0, "ok", 183845),
        ("squeue/unlimited.txt", 0, "ok", None),
        ("squeue/minutes.txt", 0, "warn", 2712),
        ("squeue/invalid.txt", 0, "unknown", None),
        ("squeue/not_set.txt", 0, "unknown", None),
        ("squeue/two_lines.txt", 0, "unknown", None),
        ("sinfo/empty.txt", 0, "unknown", None),
        ("sinfo/garbage.txt", 0, "unknown", None),
    ],
)
def test_time_left(fixture, rc, status, seconds):
    result = probe(squeue_site(output(fixture), rc=rc), "time_left")
    assert result.status == status, result
    assert result.data["seconds"] == seconds
    assert result.data["job_id"] == "77"


@pytest.mark.parametrize(
    "stderr, delay, words",
    [
        (output("squeue/invalid_job_id.txt"), 0, "does not know job 77"),
        (CONTROLLER_DOWN.replace("slurm_load_partitions", "slurm_load_jobs error"), 0, "controller"),
        ("", HANG, "did not answer within"),
    ],
)
def test_time_left_errors_are_unknown(stderr, delay, words):
    result = probe(squeue_site("", stderr, 1 if stderr else 0, delay), "time_left", timeout=0.3)
    assert result.status == "unknown"
    assert words in result.summary
    said_in_every_language(result)


# 2026-12-05 09:00 UTC
NOW = 1796461200


@pytest.mark.parametrize(
    "zone, seconds_left, shown",
    [
        ("UTC0", 5025, "10:23 UTC"),                      # the same day: the clock alone
        ("UTC0", 15 * 3600, "2026-12-06 00:00 UTC"),      # past midnight: with the date
        ("JST-9", 5025, "19:23 JST"),                     # the machine's own zone
        ("JST-9", 14 * 3600, "2026-12-06 08:00 JST"),     # tomorrow there, today in UTC
        ("UTC0", 0, "09:00 UTC"),
    ],
)
def test_ends_at_clock(monkeypatch, zone, seconds_left, shown):
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        assert ends_at_clock(NOW + seconds_left, NOW) == shown
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("fixture, until", [
    ("squeue/hours.txt", "（{} ごろまで）"),
    ("squeue/minutes.txt", "（{} ごろまで）"),
    ("squeue/unlimited.txt", ""),
    ("squeue/invalid.txt", ""),
])
def test_time_left_until_names_the_end_of_a_limited_allocation(fixture, until):
    result = probe(squeue_site(output(fixture)), "time_left")
    seconds = result.data["seconds"]
    clock = ends_at_clock(NOW + seconds, NOW) if seconds else ""
    assert time_left_until(result, NOW, "ja") == until.format(clock)
    if until:
        assert time_left_until(result, NOW, "en") == f" (until about {clock})"
        assert time_left_until(result, NOW, "zh") == f"（约到 {clock}）"


def test_time_left_until_says_nothing_outside_an_allocation():
    result = probe(squeue_site(environment=env()), "time_left")
    assert time_left_until(result, NOW, "en") == ""
    assert time_left_until(ProbeResult("sbatch", "ok", "x", data={"seconds": 5}), NOW, "en") == ""


def test_time_left_outside_an_allocation_is_skip():
    assert probe(squeue_site(environment=env()), "time_left").status == "skip"


def test_time_left_without_squeue_is_unknown():
    assert probe(site(env=ALLOCATION_ENV), "time_left").status == "unknown"
