"""The per-job lock of the SQLite store: an flock on a 0600 file, which also carries the loop's last beat.

Nothing outside this adapter knows the lock is a file: the store hands out a JobLock.
"""

from __future__ import annotations

import hashlib
import os
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from dunscaith.adapters.durable.lock import FlockLock
from dunscaith.adapters.durable.private_read import read_private
from dunscaith.adapters.store.event_codec import decode_time, encode_time
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.ports.job_store import LockLost, StoreError

_MAX_NAME = 200
_MAX_BEAT_BYTES = 128


def lock_file_name(job: JobId) -> str:
    """A file name for any job name: no slash, no hidden or special name, bounded length."""
    quoted = quote(job, safe="-_.")
    if len(quoted) > _MAX_NAME:
        quoted = "sha256-" + hashlib.sha256(job.encode()).hexdigest()
    return f"job-{quoted}.lock"


class FlockJobLock:
    def __init__(self, flock: FlockLock, job: JobId) -> None:
        self._flock = flock
        self._job = job
        self._held = True
        self._beat_size = -1  # the length of the last beat written: the file is cut only when it changes

    def check(self) -> None:
        """The kernel holds an flock until the holder lets go, so only the file can fail it: the lock is
        sound while the path still names the very file it locks (a lock file removed or replaced lets
        another actor lock a new file of the same name)."""
        if not self._held:
            raise LockLost(f"the lock of job {self._job} was released; nothing more may be done under it")
        try:
            held = os.fstat(self._flock.fd)
            named = os.stat(self._flock.path, follow_symlinks=False)
        except OSError as exc:
            raise LockLost(f"the lock file of job {self._job} is gone ({exc.strerror or exc}): another actor "
                           "may hold the job now; this one stops acting") from None
        if (held.st_dev, held.st_ino) != (named.st_dev, named.st_ino):
            raise LockLost(f"the lock file of job {self._job} was replaced: another actor may hold the job now; "
                           "this one stops acting")

    def beat(self, at: datetime, next_at: datetime | None = None) -> None:
        if not self._held:
            raise StoreError(f"the lock of job {self._job} was released; its loop cannot beat")
        words = encode_time(at) if next_at is None else f"{encode_time(at)} {encode_time(next_at)}"
        line = (words + "\n").encode()
        fd = self._flock.fd
        # Same width every time, written in place: a reader sees the old beat or the new one. Not
        # synced on purpose: it is display only, and a beat every loop must cost next to nothing.
        os.pwrite(fd, line, 0)
        if len(line) != self._beat_size:
            os.ftruncate(fd, len(line))
            self._beat_size = len(line)

    def release(self) -> None:
        if self._held:
            self._held = False
            self._flock.release()


def read_beat(path: Path) -> tuple[datetime | None, datetime | None]:
    """The last beat in a lock file and the next loop it announced; None for what is not there (or does
    not read: display only)."""
    try:
        words = read_private(path, _MAX_BEAT_BYTES).decode("ascii").split()
        if not words or len(words) > 2:
            return None, None
        return decode_time(words[0]), (decode_time(words[1]) if len(words) == 2 else None)
    except (OSError, ValueError):
        return None, None
