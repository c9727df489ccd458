"""Pointers as files: ``~/.config/dunscaith/jobs/<job>``, 0600 in 0700 directories, replaced whole.

The home directory is usually NFS and seen from every login node; each write is one atomic replace,
so a reader on another node sees the old pointer or the new one, never a mix.

The index of pointers not settled is a folder beside them, ``jobs/.unsettled/<job>`` (a name that starts
with a dot is never a job's, so no pointer can collide with it, and a dunscaith that kept no index
passes over it): one small entry per job whose pointer is not settled, naming the host that wrote
it. It is made synced before the pointer that needs it and removed, unsynced, after the settled
pointer is written: a power cut can only leave an entry too many. ``.unsettled/.built`` says that
every pointer was indexed once; until it exists, readers read every pointer (``indexed`` is None).

Sweep supervisors' attendances live in ``jobs/.attending/<sweep>@<holder>`` (domain/model/jobs/
sweep_attendance.py), written whole without the folder's sync (a power loss only leaves one older).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from dunscaith.adapters.durable.config_dir import config_home, ensure_dunscaith_dir
from dunscaith.adapters.durable.private_dir import UnsafeDirectory, ensure_private_dir
from dunscaith.adapters.durable.private_read import UnsafeFile, read_private
from dunscaith.adapters.durable.publish import STAGING_PREFIX, discard, replace, replace_staged, stage, sync_staged
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import (
    DamagedPointer,
    IndexEntry,
    NoPointer,
    Pointer,
    PointerError,
    decode_index_entry,
    decode_pointer,
    encode_index_entry,
    encode_pointer,
    pointer_file_name,
)
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.sweep_attendance import (
    DamagedAttendance,
    SweepAttendance,
    attendance_file_name,
    decode_attendance,
    encode_attendance,
)
from dunscaith.ports.pointers import PointerReading

_MAX_POINTER_BYTES = 64 * 1024
_MAX_ENTRY_BYTES = 4 * 1024
INDEX_DIR = ".unsettled"
ATTENDANCE_DIR = ".attending"  # sweep supervisors' attendances (domain/model/jobs/sweep_attendance.py)
_BUILT = ".built"


def default_pointer_dir(env: Mapping[str, str] | None = None) -> Path:
    return config_home(env) / "dunscaith" / "jobs"


class FilePointers:
    def __init__(self, directory: Path, checkpoint: Callable[[str], None] = lambda _step: None) -> None:
        self.directory = directory
        self.index_dir = directory / INDEX_DIR
        self.attendance_dir = directory / ATTENDANCE_DIR
        self._checkpoint = checkpoint  # the crash-point sweep's seam between the index's steps

    def write(self, pointer: Pointer, *, refresh: bool = False) -> None:
        name = pointer_file_name(pointer.job)
        try:
            ensure_dunscaith_dir(self.directory)
        except UnsafeDirectory as exc:
            raise PointerError(f"pointer of job {pointer.job} cannot be written: {exc}") from None
        # Here, not at the top: a routed command reads one pointer on its way to ssh, and the attendance
        # rules import the whole job state (~20-35 ms) that only a write needs.
        from dunscaith.domain.model.jobs.attendance import pointer_settled

        settled = pointer_settled(pointer)
        if not settled and self._make_entry(pointer.job, pointer.root_host):
            self._checkpoint("pointer-indexed")  # an entry with the older pointer (or none) behind it
        replace(self.directory, name, encode_pointer(pointer), mode=0o600, durable_name=not refresh)
        if settled:
            self._checkpoint("pointer-settled")  # a settled pointer with its entry still there: stale
            self.unindex(pointer.job)

    def write_many(self, pointers: Sequence[Pointer]) -> None:
        """As ``write`` of each, in the same order of steps, with one sync for the batch at each step: every
        entry and pointer file staged unsynced, the filesystem synced once (``sync_files``), the new
        entries renamed into the index and its folder synced, then the pointers renamed and their folder
        synced. Four syncs for a sweep's 500 fresh elements, where ``write`` makes four each."""
        if not pointers:
            return
        names = [pointer_file_name(p.job) for p in pointers]  # every name checked before anything is written
        try:
            ensure_dunscaith_dir(self.directory)
        except UnsafeDirectory as exc:
            raise PointerError(f"pointers of {len(pointers)} jobs cannot be written: {exc}") from None
        from dunscaith.domain.model.jobs.attendance import pointer_settled

        settled = [pointer_settled(p) for p in pointers]
        fresh = [(name, p) for name, p, done in zip(names, pointers, settled, strict=True)
                 if not done and not os.path.lexists(self.index_dir / name)]
        entries: list[tuple[str, str]] = []
        files: list[tuple[str, str]] = []
        try:
            if fresh:
                self._index_folder()
            entries = [stage(self.index_dir, name, encode_index_entry(p.job, p.root_host)) for name, p in fresh]
            files = [stage(self.directory, name, encode_pointer(p)) for name, p in zip(names, pointers, strict=True)]
            sync_staged(self.directory, entries + files)  # the index is a folder inside: one filesystem
            replace_staged(self.index_dir, entries)  # every new entry's name durable before any pointer's
            entries = []
        except BaseException:
            discard(entries + files)
            raise
        try:
            if fresh:
                self._checkpoint("pointer-indexed")  # entries with the older pointers (or none) behind them
            replace_staged(self.directory, files)
        except BaseException:
            discard(files)  # those renamed are not there any more; a kill leaves them, never read as pointers
            raise
        for p, done in zip(pointers, settled, strict=True):
            if done:
                self._checkpoint("pointer-settled")
                self.unindex(p.job)

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
        self.unindex(job)

    # --- the index of pointers not settled -----------------------------------------------------------
    def indexed(self) -> list[JobId] | None:
        try:
            names = os.listdir(self.index_dir)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if _BUILT not in names:
            return None
        return sorted(JobId(name) for name in names if not name.startswith("."))

    def index_entry(self, job: JobId) -> IndexEntry | None:
        try:
            data = read_private(self.index_dir / pointer_file_name(job), _MAX_ENTRY_BYTES)
        except FileNotFoundError:
            return None
        except (UnsafeFile, OSError):
            return IndexEntry(job, None)
        return decode_index_entry(job, data)

    def index(self, job: JobId, owner: HostIdentity) -> None:
        self._make_entry(job, owner)

    def unindex(self, job: JobId) -> None:
        # unsynced: an unlink a power cut undoes leaves a stale entry, which readers pass over
        try:
            os.unlink(self.index_dir / pointer_file_name(job))
        except (FileNotFoundError, NotADirectoryError):
            pass

    def check_writable(self) -> None:
        try:
            ensure_dunscaith_dir(self.directory)
        except UnsafeDirectory as exc:
            raise PointerError(f"the folder of pointers cannot be used: {exc}") from None
        except OSError as exc:
            raise PointerError(f"the folder of pointers {self.directory} cannot be made: "
                               f"{exc.strerror or exc}") from None
        if not os.access(self.directory, os.W_OK | os.X_OK):
            read_only = bool(os.statvfs(self.directory).f_flag & os.ST_RDONLY)
            raise PointerError(f"the folder of pointers {self.directory} "
                               f"{'is on a read-only filesystem' if read_only else 'is not writable by you'}")

    def index_built(self) -> None:
        self._index_folder()
        replace(self.index_dir, _BUILT, b"", mode=0o600)

    def _make_entry(self, job: JobId, owner: HostIdentity) -> bool:
        """The job's entry, made synced unless it is there; True if this call made it."""
        name = pointer_file_name(job)
        if os.path.lexists(self.index_dir / name):
            return False
        self._index_folder()
        replace(self.index_dir, name, encode_index_entry(job, owner), mode=0o600)
        return True

    def _index_folder(self) -> None:
        try:
            ensure_dunscaith_dir(self.directory)
            ensure_private_dir(self.index_dir)
        except UnsafeDirectory as exc:
            raise PointerError(f"the index of pointers cannot be written: {exc}") from None

    # --- sweep supervisors' attendances --------------------------------------------------------------
    def write_attendance(self, attendance: SweepAttendance) -> None:
        name = pointer_file_name(JobId(attendance_file_name(attendance.sweep, attendance.holder)))
        try:
            ensure_dunscaith_dir(self.directory)
            ensure_private_dir(self.attendance_dir)
        except UnsafeDirectory as exc:
            raise PointerError(f"the attendance of sweep {attendance.sweep} cannot be written: {exc}") from None
        replace(self.attendance_dir, name, encode_attendance(attendance), mode=0o600, durable_name=False)

    def attendances(self) -> list[SweepAttendance]:
        try:
            names = sorted(os.listdir(self.attendance_dir))
        except (FileNotFoundError, NotADirectoryError):
            return []
        found = []
        for name in names:
            if name.startswith(STAGING_PREFIX) or name.startswith("."):
                continue
            try:
                found.append(decode_attendance(read_private(self.attendance_dir / name, _MAX_ENTRY_BYTES * 16)))
            except (DamagedAttendance, UnsafeFile, OSError):
                continue  # display only: its elements are judged from their pointers alone
        return found

    def remove_attendance(self, sweep: JobId, holder: str) -> None:
        try:
            os.unlink(self.attendance_dir / pointer_file_name(JobId(attendance_file_name(sweep, holder))))
        except (FileNotFoundError, NotADirectoryError):
            pass
