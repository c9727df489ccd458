"""A host tests describe: another machine id, or "this path is on NFS", without touching the system."""

from __future__ import annotations

from pathlib import Path

from dunscaith.domain.model.jobs.filesystem import Filesystem, classify_filesystem
from dunscaith.domain.model.jobs.record import HostIdentity


class FakeHost:
    def __init__(
        self,
        machine_id: str = "0" * 32,
        hostname: str = "login1",
        filesystems: dict[Path, str] | None = None,
        default_filesystem: str = "ext4",
    ) -> None:
        self.machine_id = machine_id
        self.hostname = hostname
        self.filesystems = dict(filesystems or {})  # path prefix -> filesystem type name
        self.default_filesystem = default_filesystem

    def identity(self) -> HostIdentity:
        return HostIdentity(machine_id=self.machine_id, hostname=self.hostname)

    def filesystem(self, path: Path) -> Filesystem:
        best: Path | None = None
        for prefix in self.filesystems:
            if (path == prefix or prefix in path.parents) and (best is None or len(prefix.parts) > len(best.parts)):
                best = prefix
        return classify_filesystem(self.filesystems[best] if best is not None else self.default_filesystem)
