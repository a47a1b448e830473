"""Is the checkpoint directory on a filesystem every node sees at the same path?

Two answers are compared: the real filesystem type of the mount holding the directory, and
ARI's own path-prefix rule (which only warns, and which judges ``/work -> /gpfs/work`` by its
target). A node-local checkpoint fails: ranks on other nodes get ``Permission denied`` or
missing files.
"""
from __future__ import annotations

from ..ari.sbatch import SHARED_FS_PREFIXES as ARI_SHARED_PREFIXES  # ARI's rule lives there
from ..ari.sbatch import ari_thinks_shared
from ..hosts.host import Host
from ..base.mounts import NODE_LOCAL_PREFIXES, mount_for_path
from .context import ProbeContext
from .evidence_words import shared_fs_evidence
from ..base.verdict import ProbeResult

SHARED_FSTYPES = frozenset({
    "nfs", "nfs4", "lustre", "fuse.lustre", "gpfs", "beegfs", "fhgfs", "cephfs", "ceph",
    "fuse.ceph", "fuse.cephfs", "glusterfs", "fuse.glusterfs", "panfs", "wekafs", "pvfs2",
    "orangefs", "cifs", "smb3", "afs", "openafs", "gfs2", "ocfs2", "fuse.juicefs", "quobyte",
    "fuse.quobyte", "fuse.gcsfuse", "davfs", "fuse.sshfs",
})
"""Filesystem types that are network or cluster filesystems."""

NODE_LOCAL_FSTYPES = frozenset({
    "tmpfs", "ramfs", "overlay", "aufs", "squashfs", "devtmpfs", "ext2", "ext3", "ext4", "xfs",
    "btrfs", "zfs", "f2fs", "vfat", "exfat", "ntfs", "ntfs3", "fuse.squashfuse", "iso9660",
    "apfs", "hfs", "hfsplus",
})
"""Local disks and memory filesystems: another node has its own, different copy."""


def _under(path: str, prefix: str) -> bool:
    prefix = prefix.rstrip("/") or "/"
    return path == prefix or path.startswith(prefix + "/") or prefix == "/"


def classify(fstype: str, resolved: str) -> bool | None:
    """True shared, False node-local, None unknown type."""
    if any(_under(resolved, prefix) for prefix in NODE_LOCAL_PREFIXES):
        return False
    if fstype in SHARED_FSTYPES or (fstype.startswith("nfs") and fstype != "nfsd"):
        return True  # nfsd: the NFS server's control filesystem, not an NFS mount
    if fstype in NODE_LOCAL_FSTYPES:
        return False
    return None


def network_mounts(mounts, limit: int = 5) -> list[str]:
    """Mount points of network filesystems on this node, each once: where a workspace every
    node sees can go (told with a node-local verdict; a guess like /work may be the very mount
    that failed)."""
    found: list[str] = []
    for mount in mounts:
        if classify(mount.fstype, mount.mountpoint) and mount.mountpoint not in found:
            found.append(mount.mountpoint)
    return found[:limit]


def _move_fix(shared_here: list[str], home: str | None) -> tuple[str, dict[str, str]]:
    """The fix of a node-local workspace: a folder on a network filesystem this node really
    mounts (a guess like /work may be the very mount that failed), else ask the site."""
    if not shared_here:
        return "probe.shared_fs.node_local.fix_ask", {}
    first = shared_here[0]
    example = ("$HOME/ari" if home and _under(home, first)
               else f"{first.rstrip('/')}/$USER/ari")
    return "probe.shared_fs.node_local.fix", {"mounts": ", ".join(shared_here), "example": example}


def _target(host: Host, ctx: ProbeContext) -> tuple[str | None, str]:
    for value, source in (
        (ctx.checkpoint_dir, "checkpoint directory"),
        (ctx.workspace, "configured workspace"),
        (host.env.get("ARI_CHECKPOINT_DIR"), "ARI_CHECKPOINT_DIR"),
        (host.env.get("ARI_WORKSPACE"), "ARI_WORKSPACE"),
        (host.home, "$HOME"),
    ):
        if value:
            return str(value), source
    return None, ""


async def probe_shared_fs(host: Host, ctx: ProbeContext) -> ProbeResult:
    path, source = _target(host, ctx)
    if path is None:
        return ProbeResult.of("shared_fs", "unknown", "probe.shared_fs.nothing_to_judge")
    resolved = host.realpath(path)
    home = host.realpath(host.home) if host.home else None
    ari_view = ari_thinks_shared(path, host.home, realpath=host.realpath)  # resolved as ARI does
    mounts = host.mounts()
    mount = mount_for_path(resolved, mounts)
    shared_here = network_mounts(mounts)
    data = {
        "path": path, "path_source": source, "resolved": resolved,
        "mountpoint": mount.mountpoint if mount else None,
        "fstype": mount.fstype if mount else None,
        "source": mount.source if mount else None,
        "shared": None, "ari_thinks_shared": ari_view, "network_mounts": shared_here,
    }
    data["home"] = home
    evidence = shared_fs_evidence(data, ARI_SHARED_PREFIXES)
    shown = path if resolved == path else f"{path} (-> {resolved})"
    if mount is None:
        return ProbeResult.of("shared_fs", "unknown", "probe.shared_fs.no_mount_table",
                              params={"path": shown},
                              command="/proc/self/mountinfo", evidence=evidence, data=data)
    shared = classify(mount.fstype, resolved)
    data["shared"] = shared
    where = f"{shown} is on {mount.fstype} ({mount.mountpoint})"
    place = {"path": shown, "fstype": mount.fstype, "mountpoint": mount.mountpoint}
    if shared is False:
        fix_id, fix_params = _move_fix(shared_here, home)
        return ProbeResult.of(
            "shared_fs", "fail",
            "probe.shared_fs.node_local_silent" if ari_view else "probe.shared_fs.node_local",
            fix_id=fix_id, params={**place, **fix_params},
            command="/proc/self/mountinfo", evidence=evidence, data=data,
        )
    if shared is None:
        return ProbeResult.of(
            "shared_fs", "warn",
            "probe.shared_fs.unknown_type_assumed" if ari_view else "probe.shared_fs.unknown_type",
            fix_id="probe.shared_fs.unknown_type.fix", params=place,
            command="/proc/self/mountinfo", evidence=evidence, data=data,
        )
    if not ari_view:
        return ProbeResult(
            "shared_fs", "warn",
            f"{where}: shared, but ARI's prefix rule does not know {resolved} and will warn "
            "that the checkpoint looks node-local (harmless)",
            command="/proc/self/mountinfo", evidence=evidence, data=data,
            message_id="probe.shared_fs.prefix_unknown", fix_id="probe.shared_fs.prefix_unknown.fix",
            params={**place, "resolved": resolved, "home": home,
                    "prefixes": ", ".join(ARI_SHARED_PREFIXES)},
            fix="Harmless: ARI only logs a warning. To silence it use a directory whose resolved "
                f"path is under $HOME ({home}) or starts with one of {', '.join(ARI_SHARED_PREFIXES)}.",
        )
    return ProbeResult("shared_fs", "ok", f"{where}: shared, and ARI agrees",
                       command="/proc/self/mountinfo", evidence=evidence, data=data,
                       message_id="probe.shared_fs.ok", params=place)
