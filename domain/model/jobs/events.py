"""The typed events of a job's record, and their encoding to the (kind, data) that stores keep.

Every decision the supervisor takes and every scheduler answer it acts on is one of these. A record
holding a kind or a field this build does not know is refused (DecodeError), never half-read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar, NamedTuple

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.record import JsonValue, StoreIdentity
from dunscaith.domain.model.jobs.recovery_settings import (
    NO_RECOVERY,
    Recovery,
    SignalBefore,
    parse_signal_before,
    recovery_from_values,
    recovery_values,
)
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.sweeps import SweepMember
from dunscaith.domain.model.jobs.waits import Dependency, DependencyKind, PipelineMember
from dunscaith.domain.model.strict_json import DecodeError, FieldSpec, check_fields, dataclass_spec


class EventUndecodable(JobsError, DecodeError):
    """A record line this build cannot read: an unknown kind, or data that is not exactly its kind's."""


def recovery_fields(spec: JobSpec) -> dict[str, Any]:
    """The first event's fields of a job's recovery settings (None where not set)."""
    return {**recovery_values(spec.recovery),
            "signal_before": str(spec.signal_before) if spec.signal_before else None}


def recovery_of(e: JobRecorded) -> tuple[Recovery, SignalBefore | None]:
    """A job's recovery settings from its first event (BadSpec when they are no such settings)."""
    signal = parse_signal_before(e.signal_before, "signal_before") if e.signal_before is not None else None
    return recovery_from_values({name: getattr(e, name) for name in recovery_values(NO_RECOVERY)}), signal


@dataclass(frozen=True, slots=True, kw_only=True)
class NeedFields:
    """What a job needs (domain/model/jobs/resources.py), one field a need, in the events that carry needs
    (a job's first event, an attempt's ``submitting``, a request's): keyword-only, each None when not given."""

    cpus: int | None = None
    memory_mb: int | None = None
    time_limit_s: int | None = None
    gpus: int | None = None
    gpu_type: str | None = None
    queue: str | None = None
    account: str | None = None
    qos: str | None = None
    export: str | None = None


@dataclass(frozen=True, slots=True)
class JobRecorded(NeedFields):
    """The first event: what to run, where, and which host's store holds the record."""

    KIND: ClassVar[str] = "job-recorded"
    name: str
    cluster: str
    adapter: str
    command: tuple[str, ...]
    script: str | None
    workdir: str | None
    max_attempts: int
    host: str  # the machine that owns the record (its hostname); "" for a store bound to none
    machine_id: str | None
    store: str  # the record's identity: the store's backend, location, device and inode
    location: str
    device: int | None
    inode: int | None
    # Added later, so a record written before them reads with their defaults (see ``decode``).
    options: tuple[str, ...] = ()  # the scheduler's own options, each as one argument
    env: tuple[str, ...] = ()  # NAME=VALUE set in the job's environment
    # what the job needs: NeedFields (a record made before them holds none)
    # the sweep the job is an element of (domain/model/jobs/sweeps.py); None for a job of its own
    sweep: str | None = None
    sweep_index: int | None = None
    max_running: int | None = None
    # what the job waits for before it may be created, by name (domain/model/jobs/waits.py): written only
    # when given, so the first event of a job that waits for nothing is what builds before them wrote
    after: tuple[str, ...] = ()
    after_any: tuple[str, ...] = ()
    after_each: tuple[str, ...] = ()
    # the pipeline the job is a step of, and the step's name (domain/model/jobs/waits.py); None for others
    pipeline: str | None = None
    pipeline_step: str | None = None
    # the opt-in recovery (domain/model/jobs/recovery_settings.py), written only when set: a job without it
    # is written as before
    oom_memory_factor: float | int | None = None  # JSON may carry 2.0 as 2
    oom_max_memory_mb: int | None = None
    oom_attempts: int | None = None
    time_factor: float | int | None = None
    time_max_s: int | None = None
    time_attempts: int | None = None
    requeue_on_time_limit: int | None = None
    signal_before: str | None = None  # SIGNAL@SECONDS
    # the notices the job's record owes (domain/model/jobs/notices.py); written only when there are some
    notify: tuple[str, ...] = ()

    @classmethod
    def of(cls, spec: JobSpec, where: StoreIdentity) -> JobRecorded:
        host = where.host
        member = spec.member
        return cls(spec.name, spec.cluster, spec.adapter, spec.command, spec.script, spec.workdir,
                   spec.max_attempts, host.hostname if host else "", host.machine_id if host else None,
                   where.backend, where.location, where.device, where.inode, spec.options, spec.env,
                   **{f.name: getattr(spec.resources, f.name) for f in fields(Resources)},
                   sweep=member.sweep if member else None, sweep_index=member.index if member else None,
                   max_running=member.max_running if member else None, after=_on(spec, DependencyKind.AFTER),
                   after_any=_on(spec, DependencyKind.AFTER_ANY), after_each=_on(spec, DependencyKind.AFTER_EACH),
                   pipeline=spec.step_of.pipeline if spec.step_of else None,
                   pipeline_step=spec.step_of.step if spec.step_of else None, notify=spec.notify,
                   **recovery_fields(spec))

    def spec(self) -> JobSpec:
        resources = Resources(*(getattr(self, f.name) for f in fields(Resources)))
        member = (SweepMember(JobId(self.sweep), self.sweep_index, self.max_running)
                  if self.sweep is not None and self.sweep_index is not None else None)
        waits = tuple(Dependency(JobId(on), kind) for kind in DependencyKind for on in getattr(self, kind.value))
        step_of = (PipelineMember(JobId(self.pipeline), self.pipeline_step)
                   if self.pipeline is not None and self.pipeline_step is not None else None)
        return JobSpec(JobId(self.name), self.cluster, self.adapter, tuple(self.command), self.script,
                       self.workdir, self.max_attempts, tuple(self.options), tuple(self.env), resources, member,
                       waits, step_of, *recovery_of(self), notify=tuple(self.notify))


def _on(spec: JobSpec, kind: DependencyKind) -> tuple[str, ...]:
    return tuple(w.on for w in spec.waits if w.kind is kind)


@dataclass(frozen=True, slots=True)
class Submitting(NeedFields):
    """Durable before the create request goes out: from here on an object may exist."""

    KIND: ClassVar[str] = "submitting"
    attempt: int
    nonce: Nonce
    # Added later, written only when set (domain/model/jobs/attempt_needs.py): an attempt whose needs differ
    # from the job's records them all (NeedFields), with what made it (cause) and why, in words; an attempt
    # without them has the job's needs, and a record without them reads as before.
    cause: str | None = None  # an AttemptCause value: resubmit, out-of-memory, time-limit, checkpoint
    why: str | None = None


@dataclass(frozen=True, slots=True)
class Created:
    """The scheduler answered the create with this id (the object is held)."""

    KIND: ClassVar[str] = "created"
    attempt: int
    object_id: ObjectId


@dataclass(frozen=True, slots=True)
class Refused:
    """The scheduler's answer proves no object was made."""

    KIND: ClassVar[str] = "refused"
    attempt: int
    detail: str


@dataclass(frozen=True, slots=True)
class Unknown:
    """No answer came: an object may exist. The request is never sent again."""

    KIND: ClassVar[str] = "unknown"
    attempt: int
    detail: str


@dataclass(frozen=True, slots=True)
class Found:
    """A query found the object of an unknown attempt by its nonce: the record learns its id."""

    KIND: ClassVar[str] = "found"
    attempt: int
    object_id: ObjectId


@dataclass(frozen=True, slots=True)
class Confirmed:
    """A query showed the object carrying this attempt's nonce is the one recorded."""

    KIND: ClassVar[str] = "confirmed"
    attempt: int
    object_id: ObjectId


@dataclass(frozen=True, slots=True)
class Released:
    """The object is released; where its output goes, as the scheduler said then (None: not said)."""

    KIND: ClassVar[str] = "released"
    attempt: int
    object_id: ObjectId
    stdout: str | None = None  # added later: a record written before reads with None
    stderr: str | None = None


@dataclass(frozen=True, slots=True)
class Observed:
    """The scheduler reported a new state for an attempt's object."""

    KIND: ClassVar[str] = "observed"
    attempt: int
    object_id: ObjectId
    state: str  # an ObjectState value
    exit_code: int | None
    signal: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class Absent:
    """A complete query did not list the attempt's object (not an ending: absence is unknown)."""

    KIND: ClassVar[str] = "absent"
    attempt: int


@dataclass(frozen=True, slots=True)
class Cancelling:
    """The supervisor asked the scheduler to stop an object that never started (a late, held one)."""

    KIND: ClassVar[str] = "cancelling"
    attempt: int
    object_id: ObjectId


@dataclass(frozen=True, slots=True)
class Escalated:
    """Something the recovery policy cannot decide; a person must."""

    KIND: ClassVar[str] = "escalated"
    reason: str  # an EscalationReason value
    attempt: int | None
    detail: str


@dataclass(frozen=True, slots=True)
class Delivered:
    """The escalation at ``index`` (0-based, in record order) reached the configured command."""

    KIND: ClassVar[str] = "escalation-delivered"
    index: int


@dataclass(frozen=True, slots=True)
class NoticeDelivered:
    """The notice ``id`` (domain/model/jobs/notices.py) reached notify.command: it is never delivered again."""

    KIND: ClassVar[str] = "notice-delivered"
    id: str


@dataclass(frozen=True, slots=True)
class MovedToResidual:
    """An attempt of unknown outcome is on the residual list now (the default residual policy): sweeps
    look for its object by nonce, and it no longer keeps the record from settling."""

    KIND: ClassVar[str] = "moved-to-residual"
    attempt: int
    reason: str  # a ResidualReason value


@dataclass(frozen=True, slots=True)
class Requested(NeedFields):
    """A job command's request (hold, release, cancel, give-up, abandon), answered once by the actor:
    a live supervisor, or the command itself when it holds the job's lock."""

    KIND: ClassVar[str] = "request"
    request: str  # the request's id: it is answered once, never acted on twice
    action: str  # an Action value
    # Added later, written only when set (NeedFields): the needs a ``resubmit --memory ...`` gives the new
    # attempt (only the needs named; the others stay the current attempt's)


@dataclass(frozen=True, slots=True)
class Answered:
    """The answer to a request: ``confirmed`` (the action is now the job's, carried out by the plan) or
    ``refused`` with the reason."""

    KIND: ClassVar[str] = "answer"
    request: str
    result: str  # "confirmed" | "refused"
    detail: str


@dataclass(frozen=True, slots=True)
class HeldByUser:
    """A hold the user asked for reached the scheduler: the object is held until a release."""

    KIND: ClassVar[str] = "held"
    attempt: int
    object_id: ObjectId


@dataclass(frozen=True, slots=True)
class Requeueing:
    """Durable before a requeue the user asked for goes out: a requeue is never sent twice. One found
    without its ``requeued`` (its sender died) is reported as uncertain, never resent."""

    KIND: ClassVar[str] = "requeueing"
    attempt: int
    object_id: ObjectId


@dataclass(frozen=True, slots=True)
class Requeued:
    KIND: ClassVar[str] = "requeued"
    attempt: int
    object_id: ObjectId


@dataclass(frozen=True, slots=True)
class ActionFailed:
    """A confirmed action was not carried out (the scheduler refused it, or a requeue's sender died and
    nobody knows whether it went out): dropped, and reported."""

    KIND: ClassVar[str] = "action-failed"
    action: str
    attempt: int
    detail: str


@dataclass(frozen=True, slots=True)
class OutcomeReached:
    KIND: ClassVar[str] = "outcome"
    result: str  # an OutcomeKind value
    detail: str


@dataclass(frozen=True, slots=True)
class Settled:
    """Every order is final and nothing is outstanding."""

    KIND: ClassVar[str] = "settled"


@dataclass(frozen=True, slots=True)
class Pruned:
    """The user pruned a settled job: it is on the residual list (reason ``pruned``), its pointer goes,
    and ``list`` no longer shows it. The record itself is kept whole, as every record is."""

    KIND: ClassVar[str] = "pruned"


Event = (JobRecorded | Submitting | Created | Refused | Unknown | Found | Confirmed | Released | Observed
         | Absent | Cancelling | Escalated | Delivered | MovedToResidual | Requested | Answered | HeldByUser
         | Requeueing | Requeued | ActionFailed | OutcomeReached | Settled | Pruned | NoticeDelivered)

_BY_KIND: Mapping[str, type[Any]] = {
    cls.KIND: cls
    for cls in (JobRecorded, Submitting, Created, Refused, Unknown, Found, Confirmed, Released, Observed,
                Absent, Cancelling, Escalated, Delivered, MovedToResidual, Requested, Answered, HeldByUser,
                Requeueing, Requeued, ActionFailed, OutcomeReached, Settled, Pruned, NoticeDelivered)
}


class _Decoding(NamedTuple):
    """What decoding one kind takes, read off its dataclass: a field added to an event is decoded with it."""

    fields: FieldSpec  # what its data must hold
    defaults: Mapping[str, JsonValue]  # fields added after records were written with it: read with the default
    with_lists: bool  # a field JSON carries as a list (a tuple in the event); the others are built as read


_DECODING: dict[str, _Decoding] = {}  # each kind's, made when a record first holds it (not at import: 4 ms)


def _decoding(kind: str, cls: type[Any]) -> _Decoding:
    found = _DECODING.get(kind)
    if found is None:
        spec = dataclass_spec(cls)
        defaults = {f.name: list(f.default) if isinstance(f.default, tuple) else f.default
                    for f in fields(cls) if f.default is not MISSING}
        found = _DECODING[kind] = _Decoding(spec, defaults, any(list in types for types in spec.values()))
    return found


def field_spec(kind: str) -> FieldSpec:
    """What the data of an event of ``kind`` must hold (KeyError: no such kind)."""
    return _decoding(kind, _BY_KIND[kind]).fields


# Fields written only when set: a job of its own records none of them, so its first event stays what
# builds before sweeps wrote and read (a login node with an older dunscaith reads it as before). The same
# for an attempt's own needs and a request's: an attempt with the job's needs is written as before.
_NEED_FIELDS = frozenset(f.name for f in fields(Resources))
_ONLY_WHEN_SET: Mapping[type[Any], frozenset[str]] = {
    JobRecorded: frozenset({"sweep", "sweep_index", "max_running", "pipeline", "pipeline_step", "oom_memory_factor",
                            "oom_max_memory_mb", "oom_attempts", "time_factor", "time_max_s", "time_attempts",
                            "requeue_on_time_limit", "signal_before"}),
    Submitting: _NEED_FIELDS | {"cause", "why"},
    Requested: _NEED_FIELDS,
}
# omitted when empty, for the same reason
_ONLY_WHEN_GIVEN = frozenset(kind.value for kind in DependencyKind) | {"notify"}


def encode(event: Event) -> tuple[str, dict[str, JsonValue]]:
    data: dict[str, JsonValue] = {}
    only_when_set = _ONLY_WHEN_SET.get(type(event), frozenset())
    for f in fields(event):
        value = getattr(event, f.name)
        if (value is None and f.name in only_when_set) or (
                isinstance(event, JobRecorded) and value == () and f.name in _ONLY_WHEN_GIVEN):
            continue
        data[f.name] = list(value) if isinstance(value, tuple) else value
    return event.KIND, data


def decode(kind: str, data: Mapping[str, JsonValue]) -> Event:
    cls = _BY_KIND.get(kind)
    if cls is None:
        raise EventUndecodable(f"unknown event kind {kind!r} (written by a newer dunscaith?)")
    decoding = _decoding(kind, cls)
    data = {**decoding.defaults, **data}
    try:
        check_fields(data, decoding.fields, f"event {kind}")
    except DecodeError as exc:
        raise EventUndecodable(str(exc)) from None
    if not decoding.with_lists:
        event: Event = cls(**data)
        return event
    values = {name: tuple(v) if isinstance(v, list) else v for name, v in data.items()}
    if kind == JobRecorded.KIND and not all(isinstance(a, str) for field in ("command", "options", "env", "notify")
                                            for a in values[field]):
        raise EventUndecodable("event job-recorded: command, options, env or notify holds a non-string")
    if kind == JobRecorded.KIND and not all(isinstance(a, str) for field in _ONLY_WHEN_GIVEN for a in values[field]):
        raise EventUndecodable("event job-recorded: after, after_any or after_each holds a non-string")
    recorded: Event = cls(**values)
    return recorded
