"""The residual list as files: ``~/.config/dunscaith/residual/<job>/<key>``, 0600 in 0700 directories.

One file per entry, published whole (linked into place, never replacing): two writers adding the same
entry leave one, and no read-modify-write of a shared file can lose another writer's entry. Dropping
an expired entry is one unlink. The home directory is usually NFS, seen from every login node.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from dunscaith.adapters.durable.config_dir import config_home, ensure_dunscaith_dir
from dunscaith.adapters.durable.private_dir import UnsafeDirectory, ensure_private_dir
from dunscaith.adapters.durable.private_read import UnsafeFile, read_private
from dunscaith.adapters.durable.publish import STAGING_PREFIX, publish
from dunscaith.adapters.durable.sync import sync_dir
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import BadPointerName, pointer_file_name
from dunscaith.domain.model.jobs.residual import ResidualEntry, ResidualReading, decode_entry, encode_entry
from dunscaith.domain.model.strict_json import DecodeError
from dunscaith.ports.residual import ResidualError

_MAX_ENTRY_BYTES = 16 * 1024


def default_residual_dir() -> Path:
    return config_home() / "dunscaith" / "residual"


class FileResidualList:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def add(self, entry: ResidualEntry) -> bool:
        try:
            name = pointer_file_name(entry.job)  # a job name that is safe as a file name
            ensure_dunscaith_dir(self.directory)
            job_dir = ensure_private_dir(self.directory / name)
            return publish(job_dir, entry.key, encode_entry(entry))
        except (BadPointerName, UnsafeDirectory, OSError) as exc:
            raise ResidualError(f"residual entry {entry.describe()} not written: {exc}") from None

    def entries(self) -> list[ResidualReading]:
        readings: list[ResidualReading] = []
        for job in _names(self.directory):
            job_dir = self.directory / job
            if not _private_dir(job_dir):
                readings.append(ResidualReading(JobId(job), "", None, f"{job_dir} is not a directory of yours"))
                continue
            for key in _names(job_dir):
                readings.append(self._read(JobId(job), key, job_dir / key))
        return readings

    def drop(self, entry: ResidualEntry) -> None:
        job_dir = self.directory / pointer_file_name(entry.job)
        try:
            os.unlink(job_dir / entry.key)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise ResidualError(f"expired residual entry {entry.describe()} not removed: {exc}") from None
        sync_dir(job_dir)
        try:
            os.rmdir(job_dir)  # the job's last entry: its folder goes too (fails harmlessly otherwise)
        except OSError:
            pass

    @staticmethod
    def _read(job: JobId, key: str, path: Path) -> ResidualReading:
        try:
            data = read_private(path, _MAX_ENTRY_BYTES)
        except UnsafeFile as exc:
            return ResidualReading(job, key, None, f"{path} cannot be used: {exc.reason}")
        except OSError as exc:
            return ResidualReading(job, key, None, f"cannot open {path}: {exc.strerror or exc}")
        try:
            entry = decode_entry(job, data)
        except DecodeError as exc:
            return ResidualReading(job, key, None, f"{path} is damaged: {exc}")
        if entry.key != key:
            return ResidualReading(job, key, None, f"{path} is damaged: it holds entry {entry.key}")
        return ResidualReading(job, key, entry)


def _names(directory: Path) -> list[str]:
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(n for n in names if not n.startswith(STAGING_PREFIX) and not n.startswith("."))


def _private_dir(path: Path) -> bool:
    st = os.lstat(path)
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
