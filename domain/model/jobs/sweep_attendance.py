"""A sweep supervisor's word that it holds the elements it names: one small file in place of a refresh of
each element's supervised-at.

Seed 000 refreshes a pointer's supervised-at "at most once every ten poll intervals to keep NFS writes
rare". A supervisor of 500 elements would still rewrite 500 pointers in a network home every ten poll
intervals (and spend most of its CPU on it). So it writes one attendance per sweep instead, at the same
rate, naming the indices of the elements it holds; another login node judges an element from the newer
of its pointer's supervised-at and the attendance naming its index (``attendance.last_seen``). One file
per supervising process: two processes may hold parts of one sweep. Like every pointer it is display
only, read for no decision about a job; a lost or stale one only makes its elements look Unattended
sooner.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import Pointer
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.recorded_time import aware_time
from dunscaith.domain.model.strict_json import DecodeError, check_fields, dumps_canonical, loads_object

ATTENDANCE_VERSION = 1
_RANGE = re.compile(r"(\d{1,9})(?:-(\d{1,9}))?\Z", re.ASCII)


class DamagedAttendance(JobsError):
    """An attendance file that does not read; its elements are judged from their pointers alone."""


@dataclass(frozen=True, slots=True)
class SweepAttendance:
    sweep: JobId
    holder: str  # the supervising process (its host and a token of its own): its file, beside the sweep's name
    root_host: HostIdentity  # the record root its elements' pointers name
    supervised_at: datetime
    indices: frozenset[int]  # the elements it holds

    def covers(self, pointer: Pointer) -> bool:
        """Whether this attendance speaks for ``pointer``'s job: an element of its sweep, from its root,
        whose index it names."""
        if pointer.sweep != self.sweep or pointer.root_host != self.root_host:
            return False
        index = element_index(pointer.job, self.sweep)
        return index is not None and index in self.indices


def element_index(job: JobId, sweep: JobId) -> int | None:
    """The index of ``job`` as an element of ``sweep`` (``exp-7`` -> 7); None when it is not named so."""
    prefix = f"{sweep}-"
    suffix = job[len(prefix):] if job.startswith(prefix) else ""
    return int(suffix) if suffix.isascii() and suffix.isdigit() else None


def indices_text(indices: Iterable[int]) -> str:
    """``1-250,252,254-500``: runs of consecutive indices, short whatever the sweep's size."""
    ordered = sorted(set(indices))
    runs: list[str] = []
    first = 0
    while first < len(ordered):
        last = first
        while last + 1 < len(ordered) and ordered[last + 1] == ordered[last] + 1:
            last += 1
        runs.append(str(ordered[first]) if first == last else f"{ordered[first]}-{ordered[last]}")
        first = last + 1
    return ",".join(runs)


def parse_indices(text: str) -> frozenset[int]:
    if not text:
        return frozenset()
    found: set[int] = set()
    for run in text.split(","):
        match = _RANGE.match(run)
        if match is None:
            raise DecodeError(f"attendance: {run!r} is not an index nor a run of them")
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        if last < first or last - first > 1_000_000:
            raise DecodeError(f"attendance: run {run!r} is not an ascending run")
        found.update(range(first, last + 1))
    return frozenset(found)


_FIELDS = {
    "version": (int,),
    "sweep": (str,),
    "holder": (str,),
    "root_machine_id": (str,),
    "root_hostname": (str,),
    "supervised_at": (str,),
    "indices": (str,),
}


def attendance_file_name(sweep: JobId, holder: str) -> str:
    return f"{sweep}@{holder}"


def encode_attendance(attendance: SweepAttendance) -> bytes:
    if attendance.supervised_at.utcoffset() is None:
        raise ValueError("an attendance's time needs a time zone")
    return dumps_canonical({
        "version": ATTENDANCE_VERSION,
        "sweep": attendance.sweep,
        "holder": attendance.holder,
        "root_machine_id": attendance.root_host.machine_id,
        "root_hostname": attendance.root_host.hostname,
        "supervised_at": attendance.supervised_at.isoformat(),
        "indices": indices_text(attendance.indices),
    })


def decode_attendance(data: bytes | str) -> SweepAttendance:
    """An attendance file's text; DamagedAttendance (never another exception) if it is not one."""
    try:
        fields = loads_object(data)
        check_fields(fields, _FIELDS, "attendance")
        if fields["version"] != ATTENDANCE_VERSION:
            raise DecodeError(f"version {fields['version']}, this dunscaith reads version {ATTENDANCE_VERSION}")
        at = aware_time(fields["supervised_at"], "supervised_at")
        return SweepAttendance(sweep=JobId(fields["sweep"]), holder=fields["holder"],
                               root_host=HostIdentity(fields["root_machine_id"], fields["root_hostname"]),
                               supervised_at=at, indices=parse_indices(fields["indices"]))
    except DecodeError as exc:
        raise DamagedAttendance(f"an attendance file is damaged ({exc})") from None
