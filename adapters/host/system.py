"""This machine as the kernel describes it: machine id, hostname, and the filesystem under a path."""

from __future__ import annotations

import os
import re
from pathlib import Path

from dunscaith.domain.model.jobs.filesystem import Filesystem, classify_filesystem
from dunscaith.domain.model.jobs.record import HostIdentity

MACHINE_ID_FILES = (Path("/etc/machine-id"), Path("/var/lib/dbus/machine-id"))
MOUNTINFO = Path("/proc/self/mountinfo")


class SystemHost:
    def __init__(self, machine_id_files: tuple[Path, ...] = MACHINE_ID_FILES, mountinfo: Path = MOUNTINFO) -> None:
        self._machine_id_files = machine_id_files
        self._mountinfo = mountinfo

    def identity(self) -> HostIdentity:
        # os.uname().nodename is what gethostname(3) returns, without socket's import on every routed command
        return HostIdentity(machine_id=read_machine_id(self._machine_id_files), hostname=os.uname().nodename)

    def filesystem(self, path: Path) -> Filesystem:
        target = nearest_existing(path)
        try:
            text = self._mountinfo.read_text()
        except OSError:
            return Filesystem(name="unknown", is_network=False)  # no /proc (macOS): nothing to go on
        return classify_filesystem(fstype_of(os.path.realpath(target), text))


def read_machine_id(files: tuple[Path, ...]) -> str:
    """The first well-formed machine id among ``files``; empty when none (the hostname must then do)."""
    for path in files:
        try:
            value = path.read_text().strip()
        except OSError:
            continue
        if re.fullmatch(r"[0-9a-fA-F]{32}", value):
            return value.lower()
    return ""


def nearest_existing(path: Path) -> Path:
    path = Path(os.path.abspath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _unescape(field: str) -> str:
    # mountinfo writes space, tab, newline and backslash in paths as \040, \011, \012, \134.
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def fstype_of(real_path: str, mountinfo: str) -> str:
    """The filesystem type of the mount that holds ``real_path`` (the last, longest mount point wins)."""
    best_point, best_type = "", "unknown"
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 5 or not right.split():
            continue
        point = _unescape(fields[4])
        inside = real_path == point or real_path.startswith(point.rstrip("/") + "/")
        # Later lines are later mounts: one mounted over another at the same point hides it.
        if inside and len(point) >= len(best_point):
            best_point, best_type = point, right.split()[0]
    return best_type
