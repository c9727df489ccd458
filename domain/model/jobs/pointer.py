"""The pointer: a small file in the user's home that says where a job's record lives.

Records are local to one host; the home directory is seen from every login node. A pointer lets a
command on any node find the owning host (to forward to it) and show the job's last known state.
Everything in it is for display, except routing: the owning host and the binary path decide where a
command goes. Nothing about safety reads a pointer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.recorded_time import aware_time
from dunscaith.domain.model.strict_json import DecodeError, check_fields, decode_exact, dumps_canonical, loads_object

POINTER_VERSION = 1
# supervised-at is refreshed at most once per this many poll intervals: homes are often NFS.
SUPERVISED_REFRESH_POLLS = 10
_MAX_NAME_BYTES = 255


class PointerError(JobsError):
    """A pointer cannot be used; the message names the job and why."""


class NoPointer(PointerError):
    def __init__(self, job: str) -> None:
        super().__init__(f"no pointer for job {job}: it was not submitted from this account, or was pruned")
        self.job = job


class DamagedPointer(PointerError):
    def __init__(self, job: str, why: str) -> None:
        super().__init__(f"the pointer of job {job} is damaged ({why}); the record on its host is unaffected")
        self.job = job
        self.why = why


class BadPointerName(PointerError):
    def __init__(self, job: str, why: str) -> None:
        super().__init__(f"job name {job!r} cannot name a pointer file: {why}")


@dataclass(frozen=True, slots=True)
class Pointer:
    job: JobId
    host: str  # the owning host, as commands reach it (ssh HOST)
    record_root: str  # absolute path of the record root on that host
    root_host: HostIdentity  # the root's HOST: compared with this machine's to decide local or forwarded
    binary: str  # absolute path of dunscaith on the owning host (PATH may be set only by a login profile)
    cluster: str
    adapter: str  # "local", "slurm", ...
    state: str  # last known state, written on the owning host only
    state_at: datetime
    supervised_at: datetime | None  # when a supervisor last confirmed it was running
    # the sweep the job is an element of: another host's ``list`` shows a sweep as one row from its
    # elements' pointers. Written only when set, so a job of its own has the pointer older builds read.
    sweep: JobId | None = None

    def with_state(self, state: str, at: datetime) -> Pointer:
        return replace(self, state=state, state_at=at)

    def with_supervised(self, at: datetime) -> Pointer:
        return replace(self, supervised_at=at)


@dataclass(frozen=True, slots=True)
class PointerReading:
    """One job's pointer as found: the pointer, or why it could not be read (a damaged one is reported)."""

    job: JobId
    pointer: Pointer | None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One entry of the index of pointers not settled: the job, and the host whose pointer made it (None
    when the entry does not read). Display only, like the pointer it stands for."""

    job: JobId
    owner: HostIdentity | None


_INDEX_FIELDS = {"version": (int,), "job": (str,), "machine_id": (str,), "hostname": (str,)}


def encode_index_entry(job: JobId, owner: HostIdentity) -> bytes:
    return dumps_canonical({"version": POINTER_VERSION, "job": job, "machine_id": owner.machine_id,
                            "hostname": owner.hostname})


def decode_index_entry(job: str, text: bytes | str) -> IndexEntry:
    """An index entry's text; one that does not read has no owner (never an exception)."""
    try:
        fields = decode_exact(text, _INDEX_FIELDS, "pointer index entry")
    except DecodeError:
        return IndexEntry(JobId(job), None)
    if fields["version"] != POINTER_VERSION or fields["job"] != job:
        return IndexEntry(JobId(job), None)
    return IndexEntry(JobId(job), HostIdentity(machine_id=fields["machine_id"], hostname=fields["hostname"]))


def pointer_file_name(job: str) -> str:
    """The pointer's file name is the job's name; refuse a name that cannot be one safely."""
    if not job:
        raise BadPointerName(job, "it is empty")
    if "/" in job or "\0" in job:
        raise BadPointerName(job, "it contains '/' or a NUL byte")
    if job.startswith("."):
        raise BadPointerName(job, "it starts with '.'")
    if len(job.encode()) > _MAX_NAME_BYTES:
        raise BadPointerName(job, f"it is longer than {_MAX_NAME_BYTES} bytes")
    return job


def supervised_at_due(last_written: datetime | None, now: datetime, poll_interval: timedelta) -> bool:
    """Whether the supervisor should write supervised-at now: at most once every ten poll intervals."""
    if last_written is None or now < last_written:  # never written, or the clock went back
        return True
    return now - last_written >= SUPERVISED_REFRESH_POLLS * poll_interval


_FIELDS = {
    "version": (int,),
    "job": (str,),
    "host": (str,),
    "record_root": (str,),
    "root_machine_id": (str,),
    "root_hostname": (str,),
    "binary": (str,),
    "cluster": (str,),
    "adapter": (str,),
    "state": (str,),
    "state_at": (str,),
    "supervised_at": (str, type(None)),
}


# A shared store's location (``postgresql://alice@db:5432/records``): the record root of its jobs' pointers.
_STORE_LOCATION = re.compile(r"[a-z][a-z0-9+.-]*://[^\s]+\Z")


def encode_pointer(pointer: Pointer) -> bytes:
    return dumps_canonical(
        {
            **({"sweep": pointer.sweep} if pointer.sweep is not None else {}),
            "version": POINTER_VERSION,
            "job": pointer.job,
            "host": pointer.host,
            "record_root": pointer.record_root,
            "root_machine_id": pointer.root_host.machine_id,
            "root_hostname": pointer.root_host.hostname,
            "binary": pointer.binary,
            "cluster": pointer.cluster,
            "adapter": pointer.adapter,
            "state": pointer.state,
            "state_at": _time_text(pointer.state_at),
            "supervised_at": None if pointer.supervised_at is None else _time_text(pointer.supervised_at),
        }
    )


def decode_pointer(job: str, text: bytes | str) -> Pointer:
    """Read a pointer file's text; DamagedPointer (never another exception) if it is not one."""
    try:
        fields = loads_object(text)
        sweep = fields.pop("sweep", None)  # an element's only
        if sweep is not None and not isinstance(sweep, str):
            raise DecodeError("pointer: field sweep has the wrong type")
        check_fields(fields, _FIELDS, "pointer")
        if fields["version"] != POINTER_VERSION:
            raise DecodeError(f"version {fields['version']}, this dunscaith reads version {POINTER_VERSION}")
        if fields["job"] != job:
            raise DecodeError(f"it names job {fields['job']}")
        if not fields["binary"].startswith("/"):
            raise DecodeError("binary is not an absolute path")
        if not (fields["record_root"].startswith("/") or _STORE_LOCATION.match(fields["record_root"])):
            raise DecodeError("record_root is not an absolute path (nor a shared store's location)")
        supervised = fields["supervised_at"]
        return Pointer(
            job=JobId(fields["job"]),
            host=fields["host"],
            record_root=fields["record_root"],
            root_host=HostIdentity(machine_id=fields["root_machine_id"], hostname=fields["root_hostname"]),
            binary=fields["binary"],
            cluster=fields["cluster"],
            adapter=fields["adapter"],
            state=fields["state"],
            state_at=aware_time(fields["state_at"], "state_at"),
            supervised_at=None if supervised is None else aware_time(supervised, "supervised_at"),
            sweep=None if sweep is None else JobId(sweep),
        )
    except DecodeError as exc:
        raise DamagedPointer(job, str(exc)) from None


def _time_text(at: datetime) -> str:
    if at.utcoffset() is None:
        raise ValueError(f"pointer time {at.isoformat()} has no time zone")
    return at.isoformat()


