"""shared_fs: the real filesystem type of the checkpoint directory against ARI's prefix rule."""
from __future__ import annotations

import pytest

from ari_jupyter.base.mounts import parse_mountinfo
from ari_jupyter.base.mounts import Mount
from ari_jupyter.probes.filesystem import classify, network_mounts

from probe_support import output, probe, site

CLUSTER = parse_mountinfo(output("mountinfo/cluster_node.txt"))
LAPTOP = parse_mountinfo(output("mountinfo/laptop_overlay.txt"))


@pytest.mark.parametrize(
    "fstype, path, shared",
    [
        ("nfs4", "/home/a", True), ("nfs", "/x", True), ("lustre", "/work", True),
        ("fuse.lustre", "/x", True), ("gpfs", "/gpfs", True), ("beegfs", "/scratch", True),
        ("cephfs", "/x", True), ("ceph", "/x", True), ("ext4", "/x", False),
        ("xfs", "/x", False), ("tmpfs", "/x", False), ("overlay", "/", False),
        ("nfs4", "/tmp/x", False),  # node-local by convention even if something odd is mounted
        ("fuse", "/cvmfs/x", None), ("weirdfs", "/x", None),
        ("nfsd", "/proc/fs/nfsd", None),  # the NFS server's control filesystem, not a mount of it
    ],
)
def test_classify(fstype, path, shared):
    assert classify(fstype, path) is shared


@pytest.mark.parametrize(
    "mounts, checkpoint, home, status, fstype, shared, ari",
    [
        (CLUSTER, "/home/alice/ari", "/home/alice", "ok", "nfs4", True, True),
        (CLUSTER, "/work/alice/ari", "/home/alice", "ok", "lustre", True, True),
        (CLUSTER, "/work/projects/big data/run", "/home/alice", "ok", "nfs", True, True),
        (CLUSTER, "/scratch/run-42", "/home/alice", "ok", "beegfs", True, True),
        (CLUSTER, "/gpfs/work/alice", "/home/alice", "warn", "gpfs", True, False),
        (CLUSTER, "/mnt/ceph/alice", "/home/alice", "warn", "ceph", True, False),
        (CLUSTER, "/cvmfs/software.eessi.io/x", "/home/alice", "warn", "fuse", None, False),
        (CLUSTER, "/tmp/ckpt", "/home/alice", "fail", "xfs", False, False),
        (CLUSTER, "/local/ckpt", "/home/alice", "fail", "ext4", False, False),
        (CLUSTER, "/opt/ckpt", "/home/alice", "fail", "xfs", False, False),
        (LAPTOP, "/home/student/ari", "/home/student", "fail", "ext4", False, True),
        (LAPTOP, "/tmp/ari", "/home/student", "fail", "tmpfs", False, False),
        (LAPTOP, "/stacked/ari", "/home/student", "warn", "nfs4", True, False),  # top of the stack
    ],
)
def test_shared_fs(mounts, checkpoint, home, status, fstype, shared, ari):
    host = site(env={"HOME": home}, mounts=mounts)
    result = probe(host, "shared_fs", checkpoint_dir=checkpoint)
    assert result.status == status, result
    assert result.data["fstype"] == fstype
    assert result.data["shared"] is shared
    assert result.data["ari_thinks_shared"] is ari
    assert result.data["path_source"] == "checkpoint directory"


def _mount(point: str, fstype: str) -> Mount:
    return parse_mountinfo(f"1 1 0:1 / {point} rw - {fstype} src rw")[0]


@pytest.mark.parametrize("mounts, found", [
    ([("/", "ext4"), ("/home", "nfs4"), ("/work", "lustre")], ["/home", "/work"]),
    ([("/", "overlay"), ("/tmp", "tmpfs")], []),
    ([("/proc/fs/nfsd", "nfsd"), ("/home", "nfs")], ["/home"]),  # the NFS server's control fs
    ([("/tmp/nfs", "nfs4"), ("/data", "beegfs")], ["/data"]),  # under /tmp: node-local anyway
    ([("/home", "nfs4"), ("/home", "nfs4")], ["/home"]),  # mounted twice, said once
    ([(f"/n{i}", "nfs") for i in range(9)], [f"/n{i}" for i in range(5)]),  # at most five
])
def test_network_mounts_are_where_a_shared_workspace_can_go(mounts, found):
    assert network_mounts([_mount(point, fstype) for point, fstype in mounts]) == found


def test_a_node_local_verdict_lists_the_network_mounts_it_saw():
    result = probe(site(env={"HOME": "/home/alice"}, mounts=CLUSTER), "shared_fs",
                   checkpoint_dir="/tmp/ckpt")
    assert result.data["network_mounts"] == ["/home", "/work", "/work/projects/big data",
                                             "/gpfs", "/scratch"]
    assert result.evidence.endswith(
        "network filesystems mounted here: /home, /work, /work/projects/big data, /gpfs, /scratch")
    alone = probe(site(env={"HOME": "/root"}, mounts=[_mount("/", "ext4")]), "shared_fs",
                  checkpoint_dir="/work/root/ari")
    assert alone.status == "fail"
    assert alone.data["network_mounts"] == []
    assert alone.evidence.endswith("network filesystems mounted here: none")


def test_node_local_failure_names_the_seed_symptom_and_the_fix():
    host = site(env={"HOME": "/home/alice"}, mounts=CLUSTER)
    result = probe(host, "shared_fs", checkpoint_dir="/tmp/ckpt")
    assert "Permission denied" in result.fix and "/work" in result.fix


@pytest.mark.parametrize("mounts, home, fix_id, example", [
    # home on a network filesystem: the example is under $HOME
    ([("/", "ext4"), ("/home", "nfs4"), ("/work", "lustre")], "/home/alice",
     "probe.shared_fs.node_local.fix", "e.g. --checkpoint-dir $HOME/ari."),
    # home node-local: the first network mount, never a guessed /work
    ([("/", "ext4"), ("/lustre", "lustre")], "/root",
     "probe.shared_fs.node_local.fix", "(this node mounts /lustre), e.g. --checkpoint-dir /lustre/$USER/ari."),
    # the node mounts nothing shared: ask the site, with no made-up path
    ([("/", "ext4"), ("/tmp", "tmpfs")], "/home/alice",
     "probe.shared_fs.node_local.fix_ask", "ask the site where its shared storage is"),
])
def test_node_local_fix_points_at_a_network_mount_of_this_node(mounts, home, fix_id, example):
    host = site(env={"HOME": home}, mounts=[_mount(point, fstype) for point, fstype in mounts])
    result = probe(host, "shared_fs", checkpoint_dir="/tmp/ckpt")
    assert result.status == "fail"
    assert result.fix_id == fix_id
    assert example in result.fix
    assert "/work/$USER" not in result.fix
    for lang in ("ja", "zh"):  # the same facts in every language
        translated = result.fix_text(lang)
        assert "--checkpoint-dir" in translated
        assert all(point in translated for point in result.data["network_mounts"])


def test_symlinked_work_is_judged_by_its_target_like_ari_does():
    host = site(env={"HOME": "/home/bob"}, mounts=CLUSTER,
                symlinks={"/work": "/gpfs/work", "/home": "/gpfs/home"})
    result = probe(host, "shared_fs", checkpoint_dir="/work/bob/ari")
    assert result.data["resolved"] == "/gpfs/work/bob/ari"
    assert result.status == "warn" and result.data["ari_thinks_shared"] is False
    assert "-> /gpfs/work/bob/ari" in result.summary
    under_home = probe(host, "shared_fs", checkpoint_dir="/home/bob/ari")
    assert under_home.status == "ok"  # resolved home counts for ARI


@pytest.mark.parametrize(
    "context, environment, path, source",
    [
        ({"checkpoint_dir": "/work/a", "workspace": "/scratch/w"}, {}, "/work/a", "checkpoint directory"),
        ({"workspace": "/scratch/w"}, {"ARI_CHECKPOINT_DIR": "/work/c"}, "/scratch/w", "configured workspace"),
        ({}, {"ARI_CHECKPOINT_DIR": "/work/c"}, "/work/c", "ARI_CHECKPOINT_DIR"),
        ({}, {}, "/home/alice", "$HOME"),
    ],
)
def test_which_directory_is_judged(context, environment, path, source):
    host = site(env={"HOME": "/home/alice", **environment}, mounts=CLUSTER)
    result = probe(host, "shared_fs", **context)
    assert (result.data["path"], result.data["path_source"]) == (path, source)


def test_relative_checkpoint_dir_is_resolved_from_the_working_directory():
    host = site(env={"HOME": "/home/alice", "PWD": "/work/alice"}, mounts=CLUSTER)
    result = probe(host, "shared_fs", checkpoint_dir="runs/../ckpt")
    assert result.data["resolved"] == "/work/alice/ckpt"


def test_without_home_only_aris_prefixes_decide():
    on_work = probe(site(env={}, mounts=CLUSTER), "shared_fs", checkpoint_dir="/work/alice/ari")
    on_gpfs = probe(site(env={}, mounts=CLUSTER), "shared_fs", checkpoint_dir="/gpfs/work/alice")
    assert (on_work.status, on_work.data["ari_thinks_shared"]) == ("ok", True)
    assert (on_gpfs.status, on_gpfs.data["ari_thinks_shared"]) == ("warn", False)


def test_unreadable_mount_table_is_unknown():
    result = probe(site(env={"HOME": "/home/alice"}, mounts=[]), "shared_fs")
    assert result.status == "unknown"


def test_nothing_to_judge_is_unknown():
    assert probe(site(env={}), "shared_fs").status == "unknown"


def test_local_machine_probe_runs(tmp_path):
    from ari_jupyter.hosts.host import LocalHost

    result = probe(LocalHost(), "shared_fs", checkpoint_dir=str(tmp_path))
    assert result.data["resolved"] == str(tmp_path.resolve())
    assert result.data["mountpoint"] is not None
    assert result.status == "fail"  # pytest's tmp_path is under /tmp: node-local
