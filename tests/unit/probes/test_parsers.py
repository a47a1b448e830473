"""Table tests of the pure parsers over raw command outputs (tests/fixtures/outputs/)."""
from __future__ import annotations

import pytest

from ari_jupyter.probes.parsers import mpi_flavour, mpi_modules, openmpi_modules, parse_module_avail, parse_nvidia_smi, parse_version
from ari_jupyter.slurm.parsers import GresSpec, _leading_int, ari_has_gres, gres_lines, parse_gres_spec, parse_sinfo, parse_slurm_duration, parse_squeue_time, parse_srun_mpi_list, split_gres

from probe_support import output


# --------------------------------------------------------------------------- sinfo


def test_parse_sinfo_testbed():
    parsed = parse_sinfo(output("sinfo/testbed_nogres.txt"))
    assert parsed.default == "small"
    assert parsed.rejected == []
    assert parsed.partitions == [
        {"name": "small", "default": True, "avail": "up", "timelimit": "1:00:00", "nodes": 2,
         "cpus": 4, "memory_mb": 4000, "gres": []},
        {"name": "large", "default": False, "avail": "up", "timelimit": "infinite", "nodes": 2,
         "cpus": 4, "memory_mb": 4000, "gres": []},
    ]


def test_parse_sinfo_merges_node_groups_of_one_partition():
    parsed = parse_sinfo(output("sinfo/mixed_nodes.txt"))
    by_name = {p["name"]: p for p in parsed.partitions}
    assert list(by_name) == ["cpu", "gpu", "debug"]
    assert by_name["cpu"]["nodes"] == 128 and by_name["cpu"]["cpus"] == 64
    assert by_name["cpu"]["memory_mb"] == 256000  # minimum over the groups
    assert by_name["gpu"]["nodes"] == 16
    assert by_name["gpu"]["gres"] == ["gpu:a100:4(S:0-1)", "mps:400"]
    assert parsed.default == "cpu"


@pytest.mark.parametrize(
    "fixture, names, rejected",
    [
        ("sinfo/testbed_gres.txt", ["small", "large"], 0),
        ("sinfo/all_down.txt", ["maint", "old"], 0),
        ("sinfo/default_format.txt", [], 3),  # someone's alias without -o: not our format
        ("sinfo/garbage.txt", [], 2),
        ("sinfo/empty.txt", [], 0),
        ("slurm-errors/controller_down.txt", [], 1),
    ],
)
def test_parse_sinfo_table(fixture, names, rejected):
    parsed = parse_sinfo(output(fixture))
    assert [p["name"] for p in parsed.partitions] == names
    assert len(parsed.rejected) == rejected


def test_parse_sinfo_rejects_names_that_could_be_options():
    parsed = parse_sinfo("-p*|up|1:00|2|4|4000|(null)\nok|up|1:00|x|4|4000|(null)\n")
    assert parsed.partitions == [] and len(parsed.rejected) == 2


# --------------------------------------------------------------------------- GRES


@pytest.mark.parametrize(
    "fixture, has_gres, specs",
    [
        ("gres/testbed_gres.txt", True, ["gpu:v100:4"]),
        ("gres/testbed_nogres.txt", False, []),
        ("gres/two_types.txt", True, ["gpu:v100:4", "gpu:a100:8"]),  # ARI's own test vector
        ("gres/null_null.txt", False, []),
        ("gres/mixed_partitions.txt", True, ["gpu:a100:4(S:0-1)"]),
        ("gres/mps_only.txt", True, ["mps:400"]),  # ARI counts any GRES, not only gpu
        ("gres/blank_lines.txt", False, []),
        ("sinfo/empty.txt", False, []),
    ],
)
def test_ari_has_gres(fixture, has_gres, specs):
    text = output(fixture)
    assert ari_has_gres(text) is has_gres
    assert gres_lines(text) == specs


@pytest.mark.parametrize(
    "text, specs",
    [
        ("gpu:a100:4(S:0-1),mps:400", ["gpu:a100:4(S:0-1)", "mps:400"]),
        ("gpu:tesla:2(S:0,1),gpu:k80:1", ["gpu:tesla:2(S:0,1)", "gpu:k80:1"]),  # comma inside ()
        ("(null)", []),
        ("", []),
    ],
)
def test_split_gres(text, specs):
    assert split_gres(text) == specs


def test_split_gres_hands_out_a_fresh_list_each_time():
    """Results are remembered per string; a caller changing its list must not change the next."""
    first = split_gres("gpu:a100:4,mps:400")
    first.append("changed")
    assert split_gres("gpu:a100:4,mps:400") == ["gpu:a100:4", "mps:400"]


@pytest.mark.parametrize(
    "text, value",
    [("48", 48), ("4+", 4), (" 12", 12), ("1-2", 1), ("N/A", None), ("", None),
     ("\u00b2", None),  # superscript two: a digit to str.isdigit, not a number to SLURM
     ("\u0663", 3)],  # Arabic-Indic three: what \d and int() both accept
)
def test_leading_int_of_sinfo_numbers(text, value):
    assert _leading_int(text) == value


@pytest.mark.parametrize(
    "spec, parsed",
    [
        ("gpu:v100:4", GresSpec("gpu", "v100", 4, "gpu:v100:4")),
        ("gpu:4", GresSpec("gpu", None, 4, "gpu:4")),
        ("gpu", GresSpec("gpu", None, None, "gpu")),
        ("gpu:a100:4(S:0-1)", GresSpec("gpu", "a100", 4, "gpu:a100:4(S:0-1)")),
        ("gpu:a100_3g.20gb:2", GresSpec("gpu", "a100_3g.20gb", 2, "gpu:a100_3g.20gb:2")),
        ("mps:1K", GresSpec("mps", None, 1024, "mps:1K")),
        ("<html>", None),
        ("gpu:v100:", None),
    ],
)
def test_parse_gres_spec(spec, parsed):
    assert parse_gres_spec(spec) == parsed


# --------------------------------------------------------------------------- modules


@pytest.mark.parametrize(
    "fixture, modules",
    [
        ("module-avail/lmod_8.6_terse.txt",
         ["cuda/12.4", "openmpi/4.1", "Core/lmod", "Core/settarg"]),
        ("module-avail/lmod_annotated.txt",
         ["gcc/12.3.0", "gcc/13.2.0", "OpenMPI/4.1.5-GCC-12.3.0", "python/3.11.9", "cuda/11.8",
          "cuda/12.4", "nvhpc/24.3"]),
        ("module-avail/env_modules_5.txt",
         ["dot", "module-git", "module-info", "modules", "null", "use.own", "mpich/4.1.2",
          "gcc/12.2.0"]),
        ("module-avail/lmod_8.6_python_stdout.txt", []),  # Lmod's stdout is code, not the list
        ("module-avail/module_not_found.txt", []),
        ("module-avail/lmod_error.txt", []),
        ("module-avail/empty.txt", []),
    ],
)
def test_parse_module_avail(fixture, modules):
    assert parse_module_avail(output(fixture)) == modules


def test_mpi_module_detection():
    modules = ["OpenMPI/4.1.5-GCC-12.3.0", "openmpi/5.0.3", "mpich/4.1.2", "openmpi-tools/1",
               "intel-mpi/2021.11", "cuda/12.4", "ompio/1"]
    assert openmpi_modules(modules) == ["OpenMPI/4.1.5-GCC-12.3.0", "openmpi/5.0.3"]
    assert mpi_modules(modules) == ["OpenMPI/4.1.5-GCC-12.3.0", "openmpi/5.0.3", "mpich/4.1.2",
                                    "intel-mpi/2021.11"]


def test_duplicate_modules_from_two_trees_are_listed_once():
    assert parse_module_avail("/a:\ncuda/12.4\n/b:\ncuda/12.4\n") == ["cuda/12.4"]


# --------------------------------------------------------------------------- nvidia-smi


@pytest.mark.parametrize(
    "fixture, count, models",
    [
        ("nvidia-smi/v100x4.txt", 4, {"Tesla V100-SXM2-16GB"}),
        ("nvidia-smi/a100_mig.txt", 2, {"NVIDIA A100-SXM4-40GB"}),  # MIG lines are not GPUs
        ("nvidia-smi/h100x1.txt", 1, {"NVIDIA H100 80GB HBM3"}),
        ("nvidia-smi/no_devices.txt", 0, set()),
        ("nvidia-smi/driver_failure.txt", 0, set()),
        ("nvidia-smi/garbage.txt", 0, set()),
    ],
)
def test_parse_nvidia_smi(fixture, count, models):
    gpus = parse_nvidia_smi(output(fixture))
    assert len(gpus) == count
    assert {g["model"] for g in gpus} == models
    assert [g["index"] for g in gpus] == list(range(count))


def test_parse_nvidia_smi_keeps_uuid():
    (gpu,) = parse_nvidia_smi(output("nvidia-smi/h100x1.txt"))
    assert gpu["uuid"] == "GPU-0f0e0d0c-aaaa-bbbb-cccc-ddddeeeeffff"


# --------------------------------------------------------------------------- squeue / durations


@pytest.mark.parametrize(
    "fixture, seconds, unlimited",
    [
        ("squeue/hours.txt", 5025, False),
        ("squeue/days.txt", 2 * 86400 + 3 * 3600 + 4 * 60 + 5, False),
        ("squeue/minutes.txt", 45 * 60 + 12, False),
        ("squeue/unlimited.txt", None, True),
    ],
)
def test_parse_squeue_time(fixture, seconds, unlimited):
    left = parse_squeue_time(output(fixture))
    assert (left.seconds, left.unlimited) == (seconds, unlimited)


@pytest.mark.parametrize(
    "fixture",
    ["squeue/invalid.txt", "squeue/not_set.txt", "squeue/invalid_job_id.txt",
     "squeue/two_lines.txt", "sinfo/empty.txt", "sinfo/garbage.txt"],
)
def test_parse_squeue_time_refuses_non_times(fixture):
    with pytest.raises(ValueError):
        parse_squeue_time(output(fixture))


@pytest.mark.parametrize(
    "text, seconds",
    [("5", 300), ("5:30", 330), ("1:00:00", 3600), ("1-0", 86400), ("1-2:30", 95400),
     ("0-00:00:59", 59), ("10-00:00:00", 864000)],
)
def test_parse_slurm_duration(text, seconds):
    assert parse_slurm_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "1:2:3:4", "-1", "1-", "abc", "1h"])
def test_parse_slurm_duration_garbage(text):
    with pytest.raises(ValueError):
        parse_slurm_duration(text)


# --------------------------------------------------------------------------- versions, srun


@pytest.mark.parametrize(
    "fixture, version, flavour",
    [
        ("sbatch/version_debian.txt", "22.05.8", None),
        ("sbatch/version_upstream.txt", "23.02.7", None),
        ("mpirun/openmpi_4.1.4.txt", "4.1.4", "Open MPI"),
        ("mpirun/mpiexec_openrte_4.1.4.txt", "4.1.4", "Open MPI"),
        ("mpirun/mpich_4.1.2.txt", "4.1.2", "MPICH"),
        ("mpirun/intel_2021.11.txt", "2021.11", "Intel MPI"),
        ("nvidia-smi/garbage.txt", None, None),
    ],
)
def test_versions_and_mpi_flavour(fixture, version, flavour):
    text = output(fixture)
    assert parse_version(text) == version
    assert mpi_flavour(text) == flavour


@pytest.mark.parametrize(
    "fixture, plugins",
    [
        ("srun/mpi_list_22.05.txt", ["cray_shasta", "none", "pmi2"]),
        ("srun/mpi_list_23.02.txt", ["none", "cray_shasta", "pmi2", "pmix", "pmix_v4"]),
        ("slurm-errors/unconfigured.txt", []),
    ],
)
def test_parse_srun_mpi_list(fixture, plugins):
    assert parse_srun_mpi_list(output(fixture)) == plugins


@pytest.mark.parametrize("text, plugins", [
    ("specific pmix plugin versions available: pmix_v4, pmix_v5", ["pmix_v4", "pmix_v5"]),
    ("versions available", []),  # cut before its colon: no names, no crash
    ("srun: versions available:", []),
])
def test_parse_srun_mpi_list_versions_line(text, plugins):
    assert parse_srun_mpi_list(text) == plugins


def test_slurm_durations_are_ascii_digits_only():
    with pytest.raises(ValueError):
        parse_slurm_duration("\uff10\uff11:\uff10\uff10:\uff10\uff10")  # what int() would take
    assert parse_slurm_duration("1-02:00:00") == 26 * 3600
