"""Pointers as files: ``~/.config/dunscaith/jobs/<job>``, 0600 in 0700 directories, replaced whole.

The home directory is usually NFS and seen from every login node; each write is one atomic replace,
so a reader on another node sees the old pointer or the new one, never a mix.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from adapters.durable.config_dir import config_home, ensure_dunscaith_dir
from adapters.durable.private_dir import UnsafeDirectory
from adapters.durable.publish import STAGING_PREFIX, replace
from domain.model.jobs.ids import JobId
from domain.model.jobs.pointer import (
    DamagedPointer,
    NoPointer,
    Pointer,
    PointerError,
    decode_pointer,
    encode_pointer,
    pointer_file_name,
)
from ports.pointers import PointerReading

_MAX_POINTER_BYTES = 64 * 1024


def default_pointer_dir(env: Mapping[str, str] | None = None) -> Path:
    return config_home(env) / "dunscaith" / "jobs"


class FilePointers:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def write(self, pointer: Pointer) -> None:
        name = pointer_file_name(pointer.job)
        try:
            ensure_dunscaith_dir(self.directory)
        except UnsafeDirectory as exc:
            raise PointerError(f"pointer of job {pointer.job} cannot be written: {exc}") from None
        replace(self.directory, name, encode_pointer(pointer), mode=0o600)

    def read(self, job: JobId) -> Pointer:
        path = self.directory / pointer_file_name(job)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except FileNotFoundError:
            raise NoPointer(job) from None
        except OSError as exc:
            if os.path.islink(path):
                raise DamagedPointer(job, "it is a symbolic link") from None
            raise DamagedPointer(job, exc.strerror or str(exc)) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise DamagedPointer(job, "not a regular file")
            if st.st_uid != os.geteuid():
                raise DamagedPointer(job, f"owned by uid {st.st_uid}, not by you")
            if st.st_size > _MAX_POINTER_BYTES:
                raise DamagedPointer(job, f"{st.st_size} bytes, too large for a pointer")
            data = os.read(fd, _MAX_POINTER_BYTES + 1)
        except OSError as exc:
            raise DamagedPointer(job, exc.strerror or str(exc)) from None
        finally:
            os.close(fd)
        return decode_pointer(job, data)

    def all(self) -> list[PointerReading]:
        try:
            names = sorted(os.listdir(self.directory))
        except FileNotFoundError:
            return []
        readings = []
        for name in names:
            if name.startswith(STAGING_PREFIX) or name.startswith("."):
                continue  # a writer's staging file, or a writer that died before its rename
            job = JobId(name)
            try:
                readings.append(PointerReading(job, self.read(job)))
            except PointerError as exc:
                readings.append(PointerReading(job, None, str(exc)))
        return readings

    def remove(self, job: JobId) -> None:
        try:
            os.unlink(self.directory / pointer_file_name(job))
        except FileNotFoundError:
            pass
