"""A folded snapshot of a record: the ``JobState`` after one of its events, kept by the store beside the
job's summary, so that ``status`` of a long record folds only the events after it.

The fold carries nothing from one event to the next but the ``JobState`` (``state.resume``), so the
snapshot of event N with the events after N folds to exactly what the whole record does. A store makes
one in the transaction of every append whose seq is a multiple of ``EVERY`` (while the record reads),
from the fold it carries anyway; ``rebuild`` (a migration, doctor) makes them from the events alone.

A snapshot is plain JSON values, never pickle, and never trusted blindly: it is used only when it is
this very build's (its version, and the shape of the state it encodes, are in it), names the seq the
store keeps it at, and decodes whole into values the domain accepts. Anything else is
``SnapshotUnusable``, and the record is folded from its first event as before. The events stay the
only truth: a snapshot is a cache of their fold.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from datetime import UTC, datetime
from typing import Any, TypeVar

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ObjectState
from dunscaith.domain.model.jobs.record import JsonValue, RecordTail
from dunscaith.domain.model.jobs.recovery_settings import Growth, Recovery, SignalBefore
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import (
    Action,
    Attempt,
    AttemptState,
    Escalation,
    EscalationReason,
    JobOutcome,
    JobState,
    OutcomeKind,
    Request,
    decoded_lines,
    fold_events,
    resume,
)
from dunscaith.domain.model.jobs.sweeps import SweepMember
from dunscaith.domain.model.jobs.waits import Dependency, DependencyKind, PipelineMember
from dunscaith.domain.model.strict_json import check_fields, dataclass_spec
from dunscaith.domain.model.version import VERSION

FORMAT = "job-state/1"
# A snapshot at every seq that is a multiple of this: ``status``, and an append whose process carries no
# fold of the job (a command's), fold fewer events than this; an append pays for one snapshot (the
# state's size: ~15 ms for 10,000 requests, far less for a plain job) once in this many appends. 1,024
# left a command's append beside a long record up to 4x one beside a short record (the tail's fold); 128
# still 1.95x on SQLite and 1.54x on PostgreSQL (a tail of up to 127 events folded, ~20 us each).
EVERY = 32
_CLASSES = (JobState, Attempt, Request, Escalation, JobOutcome, JobSpec, Resources, Recovery, Growth, SignalBefore)
# the first event's fields that hold the recovery settings, and an event to put them in (recovery_of reads it)
_RECOVERY_FIELDS = {name: types for name, types in dataclass_spec(ev.JobRecorded).items()
                    if name in ev.recovery_fields(JobSpec(JobId("x"), "x", "x", ("x",)))}
_NO_JOB = ev.JobRecorded("x", "x", "x", ("x",), None, None, 1, "", None, "", "", None, None)
# The fields of every class a snapshot encodes: a build whose state has other fields reads none of
# another's snapshots, whatever its version says (a checksum, not a seal: nothing here is adversarial;
# zlib rather than hashlib, whose OpenSSL costs every status 3 ms to import).
_FIELDS = ";".join(c.__name__ + ":" + ",".join(f.name for f in fields(c)) for c in _CLASSES)
SHAPE = f"{zlib.crc32(_FIELDS.encode()):08x}"


class SnapshotUnusable(JobsError):
    """A snapshot this build does not take: another build's, another seq's, or one that does not decode."""


def due(seq: int, every: int = EVERY) -> bool:
    """Whether the append of event ``seq`` also makes the record's snapshot."""
    return seq % every == 0


def encode(state: JobState, seq: int) -> dict[str, JsonValue]:
    """The snapshot of ``state``, the fold of a record's events 1..``seq``."""
    s = state
    return {
        "format": FORMAT, "version": VERSION, "shape": SHAPE, "seq": seq,
        "spec": [s.spec.name, s.spec.cluster, s.spec.adapter, list(s.spec.command), s.spec.script, s.spec.workdir,
                 s.spec.max_attempts, list(s.spec.options), list(s.spec.env),
                 [getattr(s.spec.resources, f.name) for f in fields(Resources)],
                 None if s.spec.member is None else [s.spec.member.sweep, s.spec.member.index,
                                                     s.spec.member.max_running],
                 [[w.on, w.kind.value] for w in s.spec.waits],
                 None if s.spec.step_of is None else [s.spec.step_of.pipeline, s.spec.step_of.step]],
        # the job's recovery settings, as its first event holds them (events.recovery_fields)
        "recovery": ev.recovery_fields(s.spec),
        "host": s.host, "machine_id": s.machine_id, "recorded_at": _time(s.recorded_at),
        "updated_at": _opt_time(s.updated_at), "outcome_at": _opt_time(s.outcome_at),
        "pruned_at": _opt_time(s.pruned_at),
        "attempts": [[a.number, a.nonce, a.order.value, a.object_id,
                      a.object_state.value if a.object_state is not None else None, a.exit_code, a.signal, a.reason,
                      _opt_time(a.absent_since), a.cancelling, a.residual, a.stdout, a.stderr,
                      _opt_time(a.released_at), _opt_time(a.started_at), _opt_time(a.ended_at), _needs(a.needs),
                      a.cause, a.why]
                     for a in s.attempts],
        "outcome": None if s.outcome is None else [s.outcome.kind.value, s.outcome.detail],
        "escalations": [[e.reason.value, e.attempt, e.detail, _time(e.at), e.delivered] for e in s.escalations],
        "requests": [[r.id, r.action.value, _time(r.at), r.result, r.detail] if r.needs is None
                     else [r.id, r.action.value, _time(r.at), r.result, r.detail, _needs(r.needs)]
                     for r in s.requests],
        "flags": [s.settled, s.hold_wanted, s.release_wanted, s.cancel_wanted, s.given_up, s.abandoned,
                  s.requeue_wanted],
        "resubmit_of": s.resubmit_of, "rerun_of": s.rerun_of, "requeue_in_flight": s.requeue_in_flight,
        "failures": list(s.failures), "next_needs": _needs(s.next_needs),
        "notify": list(s.spec.notify), "notified": list(s.notified),
    }


def _needs(needs: Resources | None) -> list[Any] | None:
    return None if needs is None else [getattr(needs, f.name) for f in fields(Resources)]


def _resources(v: Any) -> Resources | None:
    return None if v is None else _whole_needs(v)


def _whole_needs(v: Any) -> Resources:
    cpus, memory_mb, time_limit_s, gpus, gpu_type, queue, account, qos, export = _list(v)
    return Resources(_opt_int(cpus), _opt_int(memory_mb), _opt_int(time_limit_s), _opt_int(gpus),
                     _opt_str(gpu_type), _opt_str(queue), _opt_str(account), _opt_str(qos), _opt_str(export))


def decode(data: Mapping[str, JsonValue], seq: int) -> JobState:
    """The state a snapshot kept at ``seq`` holds; SnapshotUnusable if it is not this build's or does not
    decode whole."""
    if data.get("format") != FORMAT or data.get("version") != VERSION or data.get("shape") != SHAPE:
        raise SnapshotUnusable(f"written by another build ({data.get('format')!r}, {data.get('version')!r})")
    if data.get("seq") != seq or type(seq) is not int:
        raise SnapshotUnusable(f"made at event {data.get('seq')!r}, kept at event {seq}")
    try:
        return _state(data)
    except (KeyError, IndexError, TypeError, ValueError, OverflowError, JobsError) as exc:
        raise SnapshotUnusable(f"does not decode: {type(exc).__name__}: {exc}") from None


def resumed(tail: RecordTail) -> JobState | None:
    """The state the record tells, folded from its snapshot on (from its first event without one).

    None when the snapshot does not serve (not this build's, does not decode) or the events after it do
    not fold: the caller then folds the whole record, which says why at the event it concerns, exactly
    as without snapshots. Without a snapshot the lines are the whole record, folded (and refused) as
    ``fold`` does."""
    if tail.snapshot is None:
        return fold_events(decoded_lines(tail.events))
    try:
        base = decode(tail.snapshot, tail.after)
        if tail.events and tail.events[0].seq != tail.after + 1:
            return None
        return resume(base, decoded_lines(tail.events))
    except JobsError:
        return None


# ---- values -----------------------------------------------------------------------------------------

def _time(at: datetime) -> str:
    if at.tzinfo is None or at.utcoffset() is None:
        raise SnapshotUnusable(f"a time without a zone ({at.isoformat()})")
    return at.astimezone(UTC).isoformat()


def _at(value: Any) -> datetime:
    if type(value) is not str:
        raise TypeError(f"a time is {type(value).__name__}")
    at = datetime.fromisoformat(value)
    if at.tzinfo is None:
        raise ValueError(f"a time without a zone ({value})")
    return at


T = TypeVar("T")


def _exactly(kind: type[T], words: str) -> Callable[[Any], T]:
    """A reader of a value that must be of type ``kind`` itself (True is no integer here)."""

    def read(value: Any) -> T:
        if type(value) is not kind:
            raise TypeError(f"{value!r} is no {words}")
        return value

    return read


def _optional(read: Callable[[Any], T]) -> Callable[[Any], T | None]:
    """``read`` of a value that may be None (null), which stays None."""
    return lambda value: None if value is None else read(value)


_str = _exactly(str, "text")
_int = _exactly(int, "integer")
_bool = _exactly(bool, "true/false")
_opt_str, _opt_int, _opt_at, _opt_time = _optional(_str), _optional(_int), _optional(_at), _optional(_time)


def _strs(value: Any) -> tuple[str, ...]:
    if type(value) is not list:
        raise TypeError(f"{value!r} is no list")
    return tuple(_str(v) for v in value)


def _list(value: Any) -> list[Any]:
    if type(value) is not list:
        raise TypeError(f"{type(value).__name__} is no list")
    return value


def _attempt(v: Any) -> Attempt:
    (number, nonce, order, object_id, object_state, exit_code, signal, reason, absent_since, cancelling, residual,
     stdout, stderr, released_at, started_at, ended_at, needs, cause, why) = _list(v)
    oid = _opt_str(object_id)
    return Attempt(_int(number), Nonce(_str(nonce)), AttemptState(_str(order)), None if oid is None else ObjectId(oid),
                   ObjectState(_str(object_state)) if object_state is not None else None, _opt_int(exit_code),
                   _opt_int(signal), _str(reason), _opt_at(absent_since), _bool(cancelling), _bool(residual),
                   _opt_str(stdout), _opt_str(stderr), _opt_at(released_at), _opt_at(started_at), _opt_at(ended_at),
                   _resources(needs), _str(cause), _str(why))


_ACTIONS: dict[str, Action] = {action.value: action for action in Action}


def _request(v: Any) -> Request:
    # the bulk of a snapshot of many requests: checked inline, the action from a table (KeyError if unknown)
    if type(v) is not list or len(v) not in (5, 6):
        raise TypeError("a request is no list of five (or six, with needs)")
    rid, action, at, result, detail = v[:5]
    if type(rid) is not str or type(detail) is not str or (result is not None and type(result) is not str):
        raise TypeError(f"request {rid!r} holds a value of the wrong type")
    return Request(rid, _ACTIONS[action], _at(at), result, detail, _resources(v[5]) if len(v) == 6 else None)


def _escalation(v: Any) -> Escalation:
    reason, attempt, detail, at, delivered = _list(v)
    return Escalation(EscalationReason(_str(reason)), _opt_int(attempt), _str(detail), _at(at), _bool(delivered))


def _member(v: Any) -> SweepMember:
    """The sweep an element is of (its index, --max-running): kept with the spec, so that a record folded
    from its snapshot still names its sweep (status, the summary a store carries)."""
    sweep, index, max_running = _list(v)
    return SweepMember(JobId(_str(sweep)), _int(index), _opt_int(max_running))


def _wait(v: Any) -> Dependency:
    on, kind = _list(v)
    return Dependency(JobId(_str(on)), DependencyKind(_str(kind)))


def _step_of(v: Any) -> PipelineMember:
    pipeline, step = _list(v)
    return PipelineMember(JobId(_str(pipeline)), _str(step))


def _state(d: Mapping[str, Any]) -> JobState:
    name, cluster, adapter, command, script, workdir, max_attempts, options, env, needs, sweep, waits, step_of = (
        _list(d["spec"]))
    resources = _whole_needs(needs)
    recovery = d["recovery"]
    if not isinstance(recovery, Mapping) or set(recovery) != set(_RECOVERY_FIELDS):
        raise TypeError("the recovery settings are no mapping of theirs")
    check_fields(recovery, _RECOVERY_FIELDS, "snapshot recovery")
    spec = JobSpec(JobId(_str(name)), _str(cluster), _str(adapter), _strs(command), _opt_str(script),
                   _opt_str(workdir), _int(max_attempts), _strs(options), _strs(env), resources,
                   None if sweep is None else _member(sweep), tuple(_wait(w) for w in _list(waits)),
                   None if step_of is None else _step_of(step_of),
                   *ev.recovery_of(replace(_NO_JOB, **recovery)), notify=_strs(d["notify"]))
    outcome = d["outcome"]
    if outcome is not None:
        kind, detail = _list(outcome)
        outcome = JobOutcome(OutcomeKind(_str(kind)), _str(detail))
    settled, hold, release, cancel, given_up, abandoned, requeue = (_bool(f) for f in _list(d["flags"]))
    return JobState(
        spec=spec, host=_str(d["host"]), recorded_at=_at(d["recorded_at"]),
        attempts=tuple(_attempt(a) for a in _list(d["attempts"])), outcome=outcome,
        escalations=tuple(_escalation(e) for e in _list(d["escalations"])), settled=settled,
        notified=_strs(d["notified"]), updated_at=_opt_at(d["updated_at"]),
        requests=tuple(_request(r) for r in _list(d["requests"])),
        hold_wanted=hold, release_wanted=release, cancel_wanted=cancel, given_up=given_up, abandoned=abandoned,
        requeue_wanted=requeue, resubmit_of=_opt_int(d["resubmit_of"]),
        rerun_of=_opt_int(d["rerun_of"]), machine_id=_opt_str(d["machine_id"]),
        requeue_in_flight=_opt_int(d["requeue_in_flight"]), failures=_strs(d["failures"]),
        pruned_at=_opt_at(d["pruned_at"]), outcome_at=_opt_at(d["outcome_at"]), next_needs=_resources(d["next_needs"]))
