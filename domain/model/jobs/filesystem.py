"""Which filesystems a record root may live on.

A job's lock is an flock, and the record is SQLite in WAL mode: both are sound only where one
kernel sees every access. On a filesystem served over the network (or shared between hosts by a
cluster filesystem) another host's process can hold "the same" lock unseen, so such a root is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

# Filesystem type names as the kernel reports them (/proc/self/mountinfo, statfs).
NETWORK_FILESYSTEMS: frozenset[str] = frozenset(
    {
        "nfs", "nfs4", "nfsd",
        "lustre", "lustre_lite",
        "gpfs", "mmfs",
        "beegfs", "fhgfs",
        "cifs", "smb", "smb2", "smb3", "smbfs",
        "ceph", "fuse.ceph", "fuse.ceph-fuse", "ceph-fuse",
        "9p", "v9fs",
        "afs", "openafs", "coda", "ncpfs", "ncp",
        "glusterfs", "fuse.glusterfs",
        "gfs", "gfs2", "ocfs2", "panfs", "orangefs", "pvfs2", "quobyte", "fuse.quobyte",
        "fuse.sshfs", "sshfs", "fuse.rclone", "fuse.s3fs", "fuse.gcsfuse", "fuse.juicefs", "juicefs",
        "fuse.weka", "wekafs", "fuse.moosefs", "fuse.mfs", "fuse.lizardfs", "davfs", "fuse.davfs2",
        "virtiofs", "fuse.cvmfs", "cvmfs", "fuse.beegfs", "fuse.lustre",
        "autofs",  # an automount point not mounted yet: what it mounts is almost always remote
    }
)


@dataclass(frozen=True, slots=True)
class Filesystem:
    """The filesystem a path lies on: its type name and whether its locks are only as good as a network's."""

    name: str
    is_network: bool


def classify_filesystem(name: str) -> Filesystem:
    """The verdict for a filesystem type name; unknown names count as local."""
    lowered = name.lower()
    return Filesystem(name=name, is_network=lowered in NETWORK_FILESYSTEMS)
