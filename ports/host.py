"""The machine this process runs on, and the filesystems under its paths."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from dunscaith.domain.model.jobs.filesystem import Filesystem
from dunscaith.domain.model.jobs.record import HostIdentity


class HostInfo(Protocol):
    def identity(self) -> HostIdentity:
        """This machine's id and hostname."""
        ...

    def filesystem(self, path: Path) -> Filesystem:
        """The filesystem ``path`` (or, if it does not exist yet, its nearest existing parent) lies on."""
        ...
