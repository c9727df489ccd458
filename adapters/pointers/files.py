"""Pointers as files: ``~/.config/dunscaith/jobs/<job>``, 0600 in 0700 directories, replaced whole.

The home directory is usually NFS and seen from every login node; each write is one atomic replace,
so a reader on another node sees the old pointer or the new one, never a mix.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from adapters.durable.config_dir import config_home, ensure_dunscaith_dir
from adapters.durable.private_dir import UnsafeDirectory
from adapters.durable.private_read import UnsafeFile, read_private
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
            data = read_private(path, _MAX_POINTER_BYTES)
        except FileNotFoundError:
            raise NoPointer(job) from None
        except UnsafeFile as exc:
            raise DamagedPointer(job, exc.reason) from None
        except OSError as exc:
            raise DamagedPointer(job, exc.strerror or str(exc)) from None
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
