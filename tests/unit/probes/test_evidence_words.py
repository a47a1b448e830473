"""Evidence is kept in English (the record); the wizard shows ari-jupyter's own lines of it in
the reader's language and the commands' output verbatim."""
import pytest

from ari_jupyter.probes.evidence_words import evidence_in, shared_fs_evidence
from ari_jupyter.probes.filesystem import ARI_SHARED_PREFIXES
from ari_jupyter.base.verdict import ProbeResult

ENDINGS = [
    # recorded line,                        ja,                        zh
    ("[exit 0]", "[終了コード 0]", "[退出码 0]"),
    ("[exit -9]", "[終了コード -9]", "[退出码 -9]"),
    ("[timed out after 5.0s]", "[5.0 秒でタイムアウト]", "[5.0 秒后超时]"),
    ("[not found on PATH]", "[PATH に見つかりません]", "[PATH 中找不到]"),
    ("[... 1200 more characters]", "[… ほか 1200 文字]", "[… 还有 1200 个字符]"),
    # command output that merely resembles an ending stays as printed
    ("[exit 0] and more", "[exit 0] and more", "[exit 0] and more"),
    ("  [exit 0]", "  [exit 0]", "  [exit 0]"),
    ("exit 0", "exit 0", "exit 0"),
]


@pytest.mark.parametrize("line, ja, zh", ENDINGS)
def test_how_a_command_ended_reads_in_the_language(line, ja, zh):
    result = ProbeResult("mpi", "ok", "s", evidence=f"$ mpirun --version\nOpen MPI 4.1\n{line}")
    for lang, expected in (("ja", ja), ("zh", zh), ("en", line)):
        assert evidence_in(result, lang) == f"$ mpirun --version\nOpen MPI 4.1\n{expected}"


DATA = {"path": "/tmp/ari", "path_source": "configured workspace", "resolved": "/tmp/ari",
        "mountpoint": "/tmp", "fstype": "tmpfs", "source": "tmpfs", "shared": False,
        "ari_thinks_shared": False, "network_mounts": ["/home", "/work"], "home": "/home/u1"}


def test_the_shared_fs_record_keeps_its_english_form():
    """The record (results files, probe --json) reads as it always has."""
    assert shared_fs_evidence(DATA, ARI_SHARED_PREFIXES) == (
        "configured workspace: /tmp/ari\n"
        "mount: /tmp type tmpfs from tmpfs\n"
        "ARI's prefix rule (/work, /scratch, /lustre, /home, /nfs, /data or $HOME=/home/u1): "
        "not shared\n"
        "network filesystems mounted here: /home, /work")


@pytest.mark.parametrize("lang, expected", [
    ("ja", "設定されたワークスペース: /tmp/ari\n"
           "マウント: /tmp（種類 tmpfs、マウント元 tmpfs）\n"
           "ARI の接頭辞の規則（/work, /scratch, /lustre, /home, /nfs, /data または $HOME=/home/u1）: "
           "共有ではない\n"
           "このノードがマウントしているネットワークファイルシステム: /home、/work"),
    ("zh", "配置的工作区：/tmp/ari\n"
           "挂载：/tmp（类型 tmpfs，来源 tmpfs）\n"
           "ARI 的前缀规则（/work, /scratch, /lustre, /home, /nfs, /data 或 $HOME=/home/u1）：非共享\n"
           "本节点挂载的网络文件系统：/home、/work"),
])
def test_the_shared_fs_evidence_reads_in_the_language(lang, expected):
    result = ProbeResult("shared_fs", "fail", "s", evidence=shared_fs_evidence(DATA, ARI_SHARED_PREFIXES),
                         data=DATA)
    assert evidence_in(result, lang) == expected


@pytest.mark.parametrize("changes, ja_line", [
    ({"mountpoint": None}, "マウント表に該当するマウントがありません"),
    ({"network_mounts": []}, "このノードがマウントしているネットワークファイルシステム: なし"),
    ({"path_source": "ARI_WORKSPACE"}, "ARI_WORKSPACE: /tmp/ari"),
    ({"resolved": "/scratch/ari"}, "設定されたワークスペース: /tmp/ari (-> /scratch/ari)"),
])
def test_each_shared_fs_line_has_its_words(changes, ja_line):
    data = {**DATA, **changes}
    result = ProbeResult("shared_fs", "fail", "s", evidence="recorded", data=data)
    assert ja_line in evidence_in(result, "ja").splitlines()


def test_a_result_written_before_home_was_recorded_keeps_its_english():
    data = {k: v for k, v in DATA.items() if k != "home"}
    result = ProbeResult("shared_fs", "fail", "s", evidence="configured workspace: /tmp/ari", data=data)
    assert evidence_in(result, "ja") == "configured workspace: /tmp/ari"


@pytest.mark.parametrize("flags, ja", [
    (None, "`sbatch --help` が応答しませんでした。"),
    ([], "`sbatch --help` は --cpu-bind も --mem-bind も案内していません。"),
    (["--cpu-bind"], "`sbatch --help` は --cpu-bind を案内していますが --mem-bind は案内していません。"),
    (["--cpu-bind", "--mem-bind"], "`sbatch --help` は --cpu-bind と --mem-bind を案内しています。"),
])
def test_the_bind_flags_note_reads_in_the_language(flags, ja):
    from ari_jupyter.probes.evidence_words import bind_flags_note

    record = f"$ sbatch --version\nslurm 23.02\n[exit 0]\n\n{bind_flags_note(flags)}"
    result = ProbeResult("sbatch", "ok", "s", evidence=record, data={"bind_flags": flags})
    shown = evidence_in(result, "ja")
    assert shown.startswith("$ sbatch --version\nslurm 23.02\n[終了コード 0]\n\n" + ja)
    assert "advertises" not in shown and "ARI drops" not in shown


@pytest.mark.parametrize("site", ["rccs-cloud", "gres-cluster", "sx40", "laptop"])
def test_no_english_line_of_ours_is_left_in_japanese(site):
    """Every probe on every demo site: the lines ari-jupyter writes read in Japanese."""
    from ari_jupyter.slurm.allocation import Allocation
    from ari_jupyter.hosts.recorded_site import RecordedSite
    from ari_jupyter.probes import ProbeContext, run_probes_sync

    host = RecordedSite.load(site)
    ours = ("configured workspace", "network filesystems mounted here", "ARI's prefix rule",
            "mount: ", "[exit ", "timed out after", "not found on PATH", "more characters]",
            "`sbatch --help` advertises", "`sbatch --help` did not answer")
    for result in run_probes_sync(host, ProbeContext(allocation=Allocation.from_env(host.env))):
        shown = evidence_in(result, "ja")
        assert evidence_in(result, "en") == result.evidence
        for english in ours:
            assert english not in shown, (site, result.id, english)
