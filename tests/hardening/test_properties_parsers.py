"""Raw command output, generated: the parsers never raise (except the documented ValueError of
the squeue/duration parsers), keep only well-formed values, and read well-formed output exactly.
A probe fed the same garbage through a demo site still ends in a verdict of its own (the
runner's catch-all "probe error" would mean an exception escaped the probe)."""
from __future__ import annotations

import asyncio
import re
import string

from hypothesis import given
from hypothesis import strategies as st

from _hypothesis_profiles import settings
from ari_jupyter.base.mounts import Mount, mount_for_path, parse_mountinfo
from ari_jupyter.hosts.recorded_site import RecordedSite
from ari_jupyter.probes import PROBE_IDS, STATUSES, ProbeContext, run_probes
from ari_jupyter.probes.parsers import parse_module_avail, parse_nvidia_smi, parse_version
from ari_jupyter.slurm.parsers import PARTITION_NAME, parse_gres_spec, parse_sinfo, parse_slurm_duration, parse_squeue_time, parse_srun_mpi_list, split_gres
from ari_jupyter.slurm.allocation import Allocation

from .figures import record

# Text that looks like command output: printable, control characters, non-ASCII, separators.
NOISE = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400)
SEPARATED = st.lists(
    st.text(alphabet=string.ascii_letters + string.digits + "|:,()*+-_./ \t[]()\x00é分",
            max_size=30), max_size=12).map("\n".join)
OUTPUT = st.one_of(NOISE, SEPARATED)


class Tally:
    def __init__(self) -> None:
        self.cases = 0


# -- sinfo ----------------------------------------------------------------------------------

NAMES = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.+\-]{0,11}", fullmatch=True)
GRES = st.sampled_from(["(null)", "gpu:v100:4", "gpu:4", "gpu:a100:8(S:0-1)", "mps:400",
                        "gpu:a100:4(S:0-1),mps:400", "shard:8"])


@st.composite
def sinfo_lines(draw):
    """Well-formed ``sinfo -o %P|%a|%l|%D|%c|%m|%G`` lines and what they must parse to."""
    lines, expected, default = [], {}, None
    for _ in range(draw(st.integers(1, 8))):
        name = draw(NAMES)
        star = draw(st.booleans())
        nodes, cpus, mem = draw(st.integers(0, 9999)), draw(st.integers(1, 512)), draw(st.integers(1, 10**6))
        plus = draw(st.sampled_from(["", "+"]))
        gres = draw(GRES)
        avail = draw(st.sampled_from(["up", "down", "drain", "inact"]))
        lines.append(f"{name}{'*' if star else ''}|{avail}|1-00:00:00|{nodes}|{cpus}{plus}|{mem}|{gres}")
        entry = expected.setdefault(name, {"nodes": 0, "cpus": cpus, "memory_mb": mem, "default": False})
        entry["nodes"] += nodes
        entry["cpus"] = min(entry["cpus"], cpus)
        entry["memory_mb"] = min(entry["memory_mb"], mem)
        entry["default"] = entry["default"] or star
        if star and default is None:
            default = name
    return "\n".join(lines), expected, default


def test_sinfo_reads_well_formed_output_exactly():
    tally = Tally()

    @settings()
    @given(sinfo_lines())
    def prop(case):
        text, expected, default = case
        tally.cases += 1
        parsed = parse_sinfo(text)
        assert parsed.rejected == []
        assert [p["name"] for p in parsed.partitions] == list(expected)
        for entry in parsed.partitions:
            want = expected[entry["name"]]
            assert (entry["nodes"], entry["cpus"], entry["memory_mb"], entry["default"]) == \
                (want["nodes"], want["cpus"], want["memory_mb"], want["default"])
        assert parsed.default == default

    prop()
    record("Parsers", "sinfo partitions: well-formed output read exactly", cases=tally.cases,
           survived=tally.cases)


def test_sinfo_never_raises_and_keeps_only_partition_names():
    tally = Tally()

    @settings()
    @given(OUTPUT)
    def prop(text):
        tally.cases += 1
        parsed = parse_sinfo(text)
        for entry in parsed.partitions:
            # these names reach `sbatch -p NAME` and `sinfo -p NAME`
            assert PARTITION_NAME.fullmatch(entry["name"]), entry
            assert isinstance(entry["nodes"], int) and entry["nodes"] >= 0
        lines = [line for line in text.splitlines() if line.strip()]
        assert len(parsed.rejected) <= len(lines)

    prop()
    record("Parsers", "sinfo partitions: arbitrary text", cases=tally.cases, survived=tally.cases)


def test_gres_parsers_never_raise():
    tally = Tally()

    @settings()
    @given(OUTPUT)
    def prop(text):
        tally.cases += 1
        for spec in split_gres(text):
            assert spec and spec == spec.strip() and spec != "(null)"
            parsed = parse_gres_spec(spec)
            if parsed is not None:
                assert parsed.count is None or parsed.count >= 0
                assert re.fullmatch(r"[A-Za-z][\w.\-]*", parsed.name)

    prop()
    record("Parsers", "GRES lists: arbitrary text", cases=tally.cases, survived=tally.cases)


# -- mountinfo ------------------------------------------------------------------------------

PATH_PART = st.text(alphabet=string.ascii_letters + string.digits + " \t\\_-.é", min_size=1, max_size=8)


def _escape(path: str) -> str:
    return path.replace("\\", "\\134").replace(" ", "\\040").replace("\t", "\\011")


@st.composite
def mount_tables(draw):
    mounts = []
    for i in range(draw(st.integers(1, 10))):
        point = "/" + "/".join(draw(st.lists(PATH_PART, min_size=0, max_size=3)))
        fstype = draw(st.sampled_from(["ext4", "nfs4", "lustre", "tmpfs", "fuse.sshfs", "gpfs"]))
        source = draw(st.sampled_from(["/dev/vda", "srv:/export/home dir", "none"]))
        mounts.append(Mount(point, fstype, source))
    text = "\n".join(
        f"{20 + i} 1 0:{i} / {_escape(m.mountpoint)} rw,relatime {'shared:1 ' if i % 2 else ''}- "
        f"{m.fstype} {_escape(m.source)} rw" for i, m in enumerate(mounts))
    return text, mounts


def test_mountinfo_round_trips_escaped_paths():
    tally = Tally()

    @settings()
    @given(mount_tables(), st.lists(PATH_PART, max_size=3))
    def prop(table, below):
        text, mounts = table
        tally.cases += 1
        assert parse_mountinfo(text) == mounts
        path = mounts[-1].mountpoint.rstrip("/") + "/" + "/".join(below)
        found = mount_for_path(path.rstrip("/") or "/", mounts)
        assert found is not None and path.startswith(found.mountpoint.rstrip("/"))

    prop()
    record("Parsers", "mountinfo: escaped paths round-trip", cases=tally.cases, survived=tally.cases)


def test_mountinfo_never_raises():
    tally = Tally()

    @settings()
    @given(OUTPUT)
    def prop(text):
        tally.cases += 1
        for mount in parse_mountinfo(text):
            assert isinstance(mount, Mount) and mount.fstype

    prop()
    record("Parsers", "mountinfo: arbitrary text", cases=tally.cases, survived=tally.cases)


# -- module -t avail ------------------------------------------------------------------------

MODULE = st.from_regex(r"[A-Za-z0-9_+\-]{1,8}(/[A-Za-z0-9_.+\-]{1,6}){0,2}", fullmatch=True).filter(
    lambda m: not m.endswith("/"))


@st.composite
def module_listings(draw):
    names = draw(st.lists(MODULE, min_size=0, max_size=12, unique=True))
    lines = []
    for name in names:
        if draw(st.booleans()):
            lines.append(f"/opt/modulefiles/{draw(MODULE)}:")
        mark = draw(st.sampled_from(["", "(default)", " (D)", "<L>", " <aL>", "(D) <L>"]))
        lines.append(f"{name}{mark}")
        if draw(st.booleans()):
            lines.append(name.split("/")[0] + "/")
    return "\n".join(lines), names


def test_module_avail_reads_terse_listings_exactly():
    tally = Tally()

    @settings()
    @given(module_listings())
    def prop(case):
        text, names = case
        tally.cases += 1
        assert parse_module_avail(text) == names

    prop()
    record("Parsers", "module -t avail: terse listings read exactly", cases=tally.cases,
           survived=tally.cases)


def test_module_avail_never_raises_and_keeps_only_module_names():
    tally = Tally()

    @settings()
    @given(OUTPUT)
    def prop(text):
        tally.cases += 1
        names = parse_module_avail(text)
        assert len(names) == len(set(names))
        for name in names:  # these reach `module load NAME` in the hand-off script
            assert re.fullmatch(r"[A-Za-z0-9_.+\-]+(/[A-Za-z0-9_.+\-]+)*", name), name

    prop()
    record("Parsers", "module -t avail: arbitrary text", cases=tally.cases, survived=tally.cases)


# -- nvidia-smi, squeue, versions -----------------------------------------------------------

@st.composite
def smi_listings(draw):
    count = draw(st.integers(0, 8))
    lines = []
    for i in range(count):
        model = draw(st.sampled_from(["Tesla V100-SXM2-32GB", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 PCIe"]))
        lines.append(f"GPU {i}: {model} (UUID: GPU-{draw(st.uuids())})")
        for j in range(draw(st.integers(0, 2))):
            lines.append(f"  MIG 1g.10gb     Device  {j}: (UUID: MIG-{draw(st.uuids())})")
    return "\n".join(lines), count


def test_nvidia_smi_counts_gpus_not_mig_instances():
    tally = Tally()

    @settings()
    @given(smi_listings())
    def prop(case):
        text, count = case
        tally.cases += 1
        gpus = parse_nvidia_smi(text)
        assert [g["index"] for g in gpus] == list(range(count))

    prop()
    record("Parsers", "nvidia-smi -L: listings read exactly", cases=tally.cases, survived=tally.cases)


def test_nvidia_smi_srun_and_version_parsers_never_raise():
    tally = Tally()

    @settings()
    @given(OUTPUT)
    def prop(text):
        tally.cases += 1
        for gpu in parse_nvidia_smi(text):
            assert isinstance(gpu["index"], int)
        for plugin in parse_srun_mpi_list(text):
            assert re.fullmatch(r"[a-z][a-z0-9_]*", plugin)
        version = parse_version(text)
        assert version is None or re.match(r"\d+\.\d+", version)

    prop()
    record("Parsers", "nvidia-smi / srun --mpi=list / --version: arbitrary text",
           cases=tally.cases, survived=tally.cases)


@st.composite
def durations(draw):
    days = draw(st.one_of(st.none(), st.integers(0, 400)))
    hours, minutes, seconds = draw(st.integers(0, 23)), draw(st.integers(0, 59)), draw(st.integers(0, 59))
    if days is not None:
        form = draw(st.sampled_from(["D-HH", "D-HH:MM", "D-HH:MM:SS"]))
        text = {"D-HH": f"{days}-{hours:02d}", "D-HH:MM": f"{days}-{hours:02d}:{minutes:02d}",
                "D-HH:MM:SS": f"{days}-{hours:02d}:{minutes:02d}:{seconds:02d}"}[form]
        total = days * 86400 + hours * 3600 + (minutes * 60 if form != "D-HH" else 0) \
            + (seconds if form == "D-HH:MM:SS" else 0)
    else:
        form = draw(st.sampled_from(["MM", "MM:SS", "HH:MM:SS"]))
        text = {"MM": f"{minutes}", "MM:SS": f"{minutes}:{seconds:02d}",
                "HH:MM:SS": f"{hours}:{minutes:02d}:{seconds:02d}"}[form]
        total = {"MM": minutes * 60, "MM:SS": minutes * 60 + seconds,
                 "HH:MM:SS": hours * 3600 + minutes * 60 + seconds}[form]
    return text, total


def test_squeue_time_left_reads_every_slurm_duration_form():
    tally = Tally()

    @settings()
    @given(durations(), st.sampled_from(["", "\n", "  \n\n"]))
    def prop(case, padding):
        text, total = case
        tally.cases += 1
        assert parse_slurm_duration(text) == total
        left = parse_squeue_time(padding + text + padding)
        assert left.seconds == total and not left.unlimited

    prop()
    record("Parsers", "squeue %L: every duration form read exactly", cases=tally.cases,
           survived=tally.cases)


def test_squeue_time_left_raises_only_value_error():
    tally = Tally()
    refused = 0

    @settings()
    @given(OUTPUT)
    def prop(text):
        nonlocal refused
        tally.cases += 1
        try:
            left = parse_squeue_time(text)
        except ValueError as exc:
            refused += 1
            assert str(exc)
            return
        assert left.unlimited or (isinstance(left.seconds, int) and left.seconds >= 0)

    prop()
    record("Parsers", "squeue %L: arbitrary text (ValueError or a time)", cases=tally.cases,
           survived=tally.cases, refused=refused)


# -- the probes themselves, on a demo site printing garbage ---------------------------------

_SITE = RecordedSite.load("rccs-cloud")


@st.composite
def garbage_sites(draw):
    """rccs-cloud with every recorded command printing drawn output and exit codes."""
    data = {"name": "garbage", "env": dict(_SITE.env),
            "mounts": [{"mountpoint": m.mountpoint, "fstype": m.fstype, "source": m.source}
                       for m in _SITE.mount_table],
            "which": dict(_SITE.programs), "commands": []}
    for command in _SITE.commands:
        data["commands"].append({
            "argv": list(command.argv), "stdout": draw(OUTPUT), "stderr": draw(OUTPUT),
            "returncode": draw(st.sampled_from([0, 0, 1, 2, 127, 255]))})
    return RecordedSite.from_dict(data)


async def _all_verdicts(site):
    ctx = ProbeContext(allocation=Allocation.from_env(site.env), timeout=5.0, workspace="/work/u12345/ari")
    return [r async for r in run_probes(site, ctx)]


def test_every_probe_gives_its_own_verdict_on_garbage_output():
    tally = Tally()

    @settings()
    @given(garbage_sites())
    def prop(site):
        tally.cases += 1
        results = asyncio.run(_all_verdicts(site))
        assert sorted(r.id for r in results) == sorted(PROBE_IDS)
        for result in results:
            assert result.status in STATUSES
            assert not result.summary.startswith("probe error"), (result.id, result.summary)
            assert result.summary.strip()

    prop()
    record("Parsers", "all 9 probes on a demo site printing garbage", cases=tally.cases,
           survived=tally.cases, unit="sites")
