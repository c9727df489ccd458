"""An instance directory on disk: the lock probe, the reverse-order reading, the request publisher."""

from __future__ import annotations

import os
from pathlib import Path

from adapters.durable.lock import is_held
from adapters.durable.publish import STAGING_PREFIX, publish
from domain.model.remote.control import (
    FAILURE,
    INSTANCE,
    KILLED,
    LAUNCHING,
    LOCK,
    OUTCOME,
    REQUEST,
    TERMINATED,
    InstanceRecords,
    TerminateRequest,
    decode_files,
    encode,
    refused_number,
)

MAX_CONTROL_FILE = 1 << 20


class NotAnInstance(Exception):
    """The path is not an instance directory (missing, not a directory, or holding neither lock nor launch)."""


def _read(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None  # removed before it was read: absent
    try:
        return os.read(fd, MAX_CONTROL_FILE)
    finally:
        os.close(fd)


class DirectoryInstanceFiles:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def location(self) -> str:
        return str(self.directory.absolute())

    def read(self) -> tuple[bool, InstanceRecords]:
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            raise NotAnInstance(f"{self.directory}: no such directory") from None
        except NotADirectoryError:
            raise NotAnInstance(f"{self.directory}: not a directory") from None
        used = [n for n in names if not n.startswith(STAGING_PREFIX)]
        if used and LOCK not in used and LAUNCHING not in used:  # an empty directory is an instance not yet begun
            raise NotAnInstance(f"{self.directory}: not an instance directory (no lock, no launching.json)")
        # The lock is released last of all, so it is observed first; then each file before the ones
        # written ahead of it, so a file seen implies every file written before it is seen too.
        live = is_held(self.directory / LOCK)
        refused = sorted((n for n in names if refused_number(n) is not None), key=lambda n: -(refused_number(n) or 0))
        order = [OUTCOME, KILLED, TERMINATED, *refused, REQUEST, FAILURE, INSTANCE, LAUNCHING]
        files: dict[str, bytes] = {}
        for name in order:
            data = _read(self.directory / name)
            if data is not None:
                files[name] = data
        return live, decode_files(files)

    def publish_request(self, request: TerminateRequest) -> bool:
        return publish(self.directory, REQUEST, encode(request))
