"""A job's state, folded from the events of its record. The record is the only truth; this is a view."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.attempt_needs import changed, requested_needs, submitting_needs
from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ENDED, ObjectState
from dunscaith.domain.model.jobs.record import EventLine, JobRecord
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.jobs.spec import JobSpec

RERUN = "resubmitted"  # the label of a failed element a resubmit reopened, until its next attempt starts


class RecordInconsistent(JobsError, ValueError):
    """The events do not tell one story (an event about an attempt never started, a second outcome...)."""


_E = TypeVar("_E", bound=StrEnum)


class AttemptState(StrEnum):
    """One attempt is one order (DESIGN §2): it makes at most one object and is never sent twice."""

    SUBMITTING = "submitting"  # durable before the request; the request may or may not have gone out
    CREATED = "created"  # the scheduler gave an id; the object is held
    UNKNOWN = "unknown"  # no answer: an object may exist
    REFUSED = "refused"  # final: no object was made
    CONFIRMED = "confirmed"  # a query showed the object with our nonce is the one recorded
    RELEASED = "released"  # opened: the scheduler may start it


class OutcomeKind(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"  # the object ended otherwise, or recovery ran out of attempts
    REFUSED = "refused"  # the scheduler refused to make the object
    ESCALATED = "escalated"  # the policy could not decide; a person must
    CANCELLED = "cancelled"  # the user cancelled the job
    ABANDONED = "abandoned"  # the user let the job go: its objects are the residual list's


class Action(StrEnum):
    """What a job command asks of the job (docs/job-commands.md)."""

    HOLD = "hold"
    RELEASE = "release"
    CANCEL = "cancel"
    GIVE_UP = "give-up"
    ABANDON = "abandon"
    REQUEUE = "requeue"
    RESUBMIT = "resubmit"


@dataclass(frozen=True, slots=True)
class Request:
    id: str
    action: Action
    at: datetime
    result: str | None = None  # "confirmed" | "refused"; None while unanswered
    detail: str = ""
    needs: Resources | None = None  # a resubmit's needs for the new attempt (only those named)


class EscalationReason(StrEnum):
    VANISHED = "vanished"  # absent from every complete query for longer than the deadline
    MISMATCH = "mismatch"  # the object with our nonce has another id than the one recorded
    DUPLICATE = "duplicate"  # two objects carry one attempt's nonce
    UNKNOWN_ATTEMPT = "unknown-attempt"  # the manual residual policy: an unknown attempt waits for the user


@dataclass(frozen=True, slots=True)
class Attempt:
    number: int
    nonce: Nonce
    order: AttemptState
    object_id: ObjectId | None = None
    object_state: ObjectState | None = None
    exit_code: int | None = None
    signal: int | None = None
    reason: str = ""
    absent_since: datetime | None = None
    cancelling: bool = False
    residual: bool = False  # moved to the residual list: sweeps look after its object now
    stdout: str | None = None  # where the object's output goes, as the scheduler said at release
    stderr: str | None = None
    released_at: datetime | None = None
    started_at: datetime | None = None  # first seen running (or ended in a way only a run ends, its run unseen)
    ended_at: datetime | None = None  # first seen ended
    needs: Resources | None = None  # what this attempt asked for (None: a state made before attempts had needs)
    cause: str = ""  # what made it with needs of its own (attempt_needs.AttemptCause), "" for none
    why: str = ""  # that cause in words: "attempt 1 ended out_of_memory: memory 4G -> 8G"

    @property
    def ended(self) -> bool:
        return self.object_state in ENDED

    @property
    def has_object(self) -> bool:
        return self.object_id is not None


@dataclass(frozen=True, slots=True)
class JobOutcome:
    kind: OutcomeKind
    detail: str


@dataclass(frozen=True, slots=True)
class Escalation:
    reason: EscalationReason
    attempt: int | None
    detail: str
    at: datetime
    delivered: bool = False  # passed to the configured escalation command


@dataclass(frozen=True, slots=True)
class JobState:
    spec: JobSpec
    host: str
    recorded_at: datetime
    attempts: tuple[Attempt, ...] = ()
    outcome: JobOutcome | None = None
    escalations: tuple[Escalation, ...] = ()
    notified: tuple[str, ...] = ()  # the ids of the notices delivered (domain/model/jobs/notices.py)
    settled: bool = False
    updated_at: datetime | None = None
    requests: tuple[Request, ...] = ()
    # what confirmed requests made the job's own; the plan carries them out
    hold_wanted: bool = False  # keep the current object held (release it no more)
    release_wanted: bool = False  # release the current object again (a user hold ends)
    cancel_wanted: bool = False  # stop the current object and make no new attempt
    given_up: bool = False  # make no new attempt: the current attempt's end is the outcome
    abandoned: bool = False  # let the job go: its open attempts move to the residual list
    requeue_wanted: bool = False  # put the current (started) object back in the queue, once
    resubmit_of: int | None = None  # replace this attempt (not started) by a new one
    # a failed, settled element run again by a confirmed resubmit (requests.rerun_refusal): this attempt's
    # failure was the outcome, now withdrawn; the next attempt runs the element again
    rerun_of: int | None = None
    machine_id: str | None = None  # with ``host``: the machine that owns the record, or the job's objects
    requeue_in_flight: int | None = None  # the attempt whose requeue was committed but not its answer
    failures: tuple[str, ...] = ()  # confirmed actions that were not carried out, and why
    pruned_at: datetime | None = None  # pruned by the user: off ``list``, on the residual list
    outcome_at: datetime | None = None
    # the needs a confirmed resubmit gave the next attempt (whole: the current attempt's, changed), until
    # that attempt's "submitting"
    next_needs: Resources | None = None

    def request(self, request_id: str) -> Request | None:
        return next((r for r in self.requests if r.id == request_id), None)

    @property
    def unanswered(self) -> list[Request]:
        return [r for r in self.requests if r.result is None]

    @property
    def name(self) -> JobId:
        return self.spec.name

    @property
    def current(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None

    def attempt(self, number: int) -> Attempt:
        if not 1 <= number <= len(self.attempts):
            raise RecordInconsistent(f"event about attempt {number}, which was never started")
        return self.attempts[number - 1]

    def by_nonce(self, nonce: Nonce | None) -> Attempt | None:
        return next((a for a in self.attempts if nonce is not None and a.nonce == nonce), None)


class _AttemptDraft:
    """An attempt while the fold changes it: plain attributes, frozen into an ``Attempt`` at the end."""

    __slots__ = (
        "absent_since",
        "cancelling",
        "cause",
        "ended_at",
        "exit_code",
        "needs",
        "nonce",
        "number",
        "object_id",
        "object_state",
        "order",
        "reason",
        "released_at",
        "residual",
        "signal",
        "started_at",
        "stderr",
        "stdout",
        "why",
    )

    def __init__(self, a: Attempt) -> None:
        self.number: int = a.number
        self.nonce: Nonce = a.nonce
        self.order: AttemptState = a.order
        self.object_id: ObjectId | None = a.object_id
        self.object_state: ObjectState | None = a.object_state
        self.exit_code: int | None = a.exit_code
        self.signal: int | None = a.signal
        self.reason: str = a.reason
        self.absent_since: datetime | None = a.absent_since
        self.cancelling: bool = a.cancelling
        self.residual: bool = a.residual
        self.stdout: str | None = a.stdout
        self.stderr: str | None = a.stderr
        self.released_at: datetime | None = a.released_at
        self.started_at: datetime | None = a.started_at
        self.ended_at: datetime | None = a.ended_at
        self.needs: Resources | None = a.needs
        self.cause: str = a.cause
        self.why: str = a.why

    def freeze(self) -> Attempt:
        return Attempt(self.number, self.nonce, self.order, self.object_id, self.object_state, self.exit_code,
                       self.signal, self.reason, self.absent_since, self.cancelling, self.residual, self.stdout,
                       self.stderr, self.released_at, self.started_at, self.ended_at, self.needs, self.cause,
                       self.why)


class _Fold:
    """The state being folded, changed in place event by event; ``freeze`` makes the ``JobState``.

    An event changes a field or two, so nothing is copied per event: a collection is turned into a
    list the first time an event changes it, requests are found by id through an index, and the
    frozen state is built once. ``apply`` below is this same table for one event.
    """

    def __init__(self, state: JobState) -> None:
        self._base = state
        self.outcome = state.outcome
        self.notified = state.notified
        self.settled = state.settled
        self.updated_at = state.updated_at
        self.hold_wanted = state.hold_wanted
        self.release_wanted = state.release_wanted
        self.cancel_wanted = state.cancel_wanted
        self.given_up = state.given_up
        self.abandoned = state.abandoned
        self.requeue_wanted = state.requeue_wanted
        self.resubmit_of = state.resubmit_of
        self.rerun_of = state.rerun_of
        self.requeue_in_flight = state.requeue_in_flight
        self.pruned_at = state.pruned_at
        self.outcome_at = state.outcome_at
        self.next_needs = state.next_needs
        self._attempts: list[Attempt | _AttemptDraft] | None = None
        self._requests: list[Request] | None = None
        self._request_index: dict[str, int] | None = None
        self._escalations: list[Escalation] | None = None
        self._failures: list[str] | None = None

    # ---- the collections, turned into lists when first changed ------------------------------------

    def _attempt_list(self) -> list[Attempt | _AttemptDraft]:
        if self._attempts is None:
            self._attempts = list(self._base.attempts)
        return self._attempts

    def _count(self) -> int:
        return len(self._base.attempts) if self._attempts is None else len(self._attempts)

    def _last(self) -> Attempt | _AttemptDraft | None:
        attempts = self._base.attempts if self._attempts is None else self._attempts
        return attempts[-1] if attempts else None

    def _draft(self, number: int) -> _AttemptDraft:
        attempts = self._attempts
        if attempts is not None and 0 < number <= len(attempts):  # the common case: a draft already
            known = attempts[number - 1]
            if type(known) is _AttemptDraft:
                return known
        if not 1 <= number <= self._count():
            raise RecordInconsistent(f"event about attempt {number}, which was never started")
        attempts = self._attempt_list()
        found = attempts[number - 1]
        if isinstance(found, _AttemptDraft):
            return found
        draft = attempts[number - 1] = _AttemptDraft(found)
        return draft

    def _request_list(self) -> tuple[list[Request], dict[str, int]]:
        if self._requests is None or self._request_index is None:
            self._requests = list(self._base.requests)
            self._request_index = {r.id: i for i, r in enumerate(self._requests)}
        return self._requests, self._request_index

    def _failure_list(self) -> list[str]:
        if self._failures is None:
            self._failures = list(self._base.failures)
        return self._failures

    def _escalation_list(self) -> list[Escalation]:
        if self._escalations is None:
            self._escalations = list(self._base.escalations)
        return self._escalations

    # ---- the transition table ---------------------------------------------------------------------

    def _intent(self, action: Action, needs: Resources | None = None) -> None:
        """A confirmed request becomes the job's own intent, which the plan then carries out."""
        match action:
            case Action.HOLD:
                self.hold_wanted, self.release_wanted = True, False
            case Action.RELEASE:
                self.hold_wanted, self.release_wanted = False, True
            case Action.CANCEL:
                self.cancel_wanted, self.given_up, self.hold_wanted = True, True, False
            case Action.GIVE_UP:
                self.given_up = True
            case Action.ABANDON:
                self.abandoned, self.given_up = True, True
            case Action.REQUEUE:
                self.requeue_wanted = True
            case Action.RESUBMIT:
                current = self._last()
                # the next attempt's needs: the current one's, with those given (none given: the current's)
                base = current.needs if current is not None and current.needs is not None else self._base.spec.resources
                self.next_needs = None if needs is None else changed(base, needs)
                if self.outcome is not None:
                    # confirmed only for a failed, settled element (requests.rerun_refusal): its outcome is
                    # withdrawn, the record reopens, and the next attempt runs it again
                    self.outcome, self.outcome_at, self.settled = None, None, False
                    self.given_up = self.hold_wanted = self.release_wanted = self.requeue_wanted = False
                    self.rerun_of = current.number if current is not None else None
                else:
                    self.resubmit_of = current.number if current is not None else None
            case _:
                raise RecordInconsistent(f"unhandled action {action!r}")

    def apply(self, event: ev.Event, at: datetime) -> None:
        """One event onto the state: the transition table of the record (``_TRANSITIONS``), in one place."""
        self.updated_at = at
        step = _TRANSITIONS.get(type(event))
        if step is None:
            raise RecordInconsistent(f"unhandled event {event!r}")
        step(self, event, at)

    def freeze(self) -> JobState:
        base = self._base
        attempts = base.attempts if self._attempts is None else tuple(
            a.freeze() if isinstance(a, _AttemptDraft) else a for a in self._attempts)
        return JobState(
            spec=base.spec, host=base.host, recorded_at=base.recorded_at, attempts=attempts, outcome=self.outcome,
            escalations=base.escalations if self._escalations is None else tuple(self._escalations),
            notified=self.notified, settled=self.settled, updated_at=self.updated_at,
            requests=base.requests if self._requests is None else tuple(self._requests),
            hold_wanted=self.hold_wanted, release_wanted=self.release_wanted, cancel_wanted=self.cancel_wanted,
            given_up=self.given_up, abandoned=self.abandoned, requeue_wanted=self.requeue_wanted,
            resubmit_of=self.resubmit_of, rerun_of=self.rerun_of, requeue_in_flight=self.requeue_in_flight,
            failures=base.failures if self._failures is None else tuple(self._failures), pruned_at=self.pruned_at,
            outcome_at=self.outcome_at, machine_id=base.machine_id, next_needs=self.next_needs)


# ---- the transition table: one function per kind of event, each changing the fold in place -------------

def _observed(f: _Fold, e: ev.Observed, at: datetime) -> None:
    a = f._draft(e.attempt)
    seen = a.object_state = _OBJECT_STATES.get(e.state) or _member(ObjectState, e.state, "observed")
    a.exit_code, a.signal, a.reason, a.absent_since = e.exit_code, e.signal, e.reason, None
    if a.started_at is None and (seen is ObjectState.RUNNING or (seen in _RAN and a.released_at is not None)):
        a.started_at = at
    a.ended_at = (a.ended_at or at) if seen in ENDED else None


def _recorded_again(f: _Fold, e: ev.JobRecorded, at: datetime) -> None:
    raise RecordInconsistent("a second job-recorded event")


def _submitting(f: _Fold, e: ev.Submitting, at: datetime) -> None:
    if e.attempt != f._count() + 1:
        raise RecordInconsistent(f"attempt {e.attempt} started after attempt {f._count()}")
    f._attempt_list().append(Attempt(e.attempt, e.nonce, AttemptState.SUBMITTING,
                                     needs=submitting_needs(e, f._base.spec), cause=e.cause or "", why=e.why or ""))
    f.next_needs = None  # a resubmit's needs went to this attempt


def _created(f: _Fold, e: ev.Created, at: datetime) -> None:
    a = f._draft(e.attempt)
    a.order, a.object_id, a.object_state = AttemptState.CREATED, e.object_id, ObjectState.HELD


def _refused(f: _Fold, e: ev.Refused, at: datetime) -> None:
    a = f._draft(e.attempt)
    a.order, a.reason = AttemptState.REFUSED, e.detail


def _unknown(f: _Fold, e: ev.Unknown, at: datetime) -> None:
    f._draft(e.attempt).order = AttemptState.UNKNOWN


def _found(f: _Fold, e: ev.Found, at: datetime) -> None:
    a = f._draft(e.attempt)
    a.order, a.object_id, a.object_state, a.absent_since = AttemptState.CREATED, e.object_id, ObjectState.HELD, None


def _confirmed(f: _Fold, e: ev.Confirmed, at: datetime) -> None:
    a = f._draft(e.attempt)
    a.order, a.object_id = AttemptState.CONFIRMED, e.object_id


def _released(f: _Fold, e: ev.Released, at: datetime) -> None:
    a = f._draft(e.attempt)
    a.stdout = e.stdout if e.stdout is not None else a.stdout
    a.stderr = e.stderr if e.stderr is not None else a.stderr
    a.released_at = a.released_at or at
    f.release_wanted = False
    if a.object_state in (None, ObjectState.HELD):
        a.object_state = ObjectState.PENDING
    a.order, a.object_id = AttemptState.RELEASED, e.object_id


def _absent(f: _Fold, e: ev.Absent, at: datetime) -> None:
    f._draft(e.attempt).absent_since = at


def _cancelling(f: _Fold, e: ev.Cancelling, at: datetime) -> None:
    f._draft(e.attempt).cancelling = True


def _moved_to_residual(f: _Fold, e: ev.MovedToResidual, at: datetime) -> None:
    f._draft(e.attempt).residual = True


def _requested(f: _Fold, e: ev.Requested, at: datetime) -> None:
    requests, index = f._request_list()
    if e.request in index:
        raise RecordInconsistent(f"request {e.request} made twice")
    index[e.request] = len(requests)
    requests.append(Request(e.request, _member(Action, e.action, "request"), at, needs=requested_needs(e)))


def _answered(f: _Fold, e: ev.Answered, at: datetime) -> None:
    requests, index = f._request_list()
    i = index.get(e.request)
    if i is None:
        raise RecordInconsistent(f"an answer to request {e.request}, which was never made")
    req = requests[i]
    if req.result is not None:
        raise RecordInconsistent(f"request {e.request} answered twice")
    requests[i] = Request(req.id, req.action, req.at, e.result, e.detail, req.needs)
    if e.result == "confirmed":
        f._intent(req.action, req.needs)


def _held_by_user(f: _Fold, e: ev.HeldByUser, at: datetime) -> None:
    a = f._draft(e.attempt)
    a.object_id, a.object_state = e.object_id, ObjectState.HELD


def _requeueing(f: _Fold, e: ev.Requeueing, at: datetime) -> None:
    f._draft(e.attempt)
    f.requeue_wanted, f.requeue_in_flight = False, e.attempt


def _requeued(f: _Fold, e: ev.Requeued, at: datetime) -> None:
    f.requeue_in_flight = None
    a = f._draft(e.attempt)
    a.object_state, a.exit_code, a.signal, a.reason = ObjectState.REQUEUED, None, None, "requeued"


def _action_failed(f: _Fold, e: ev.ActionFailed, at: datetime) -> None:
    f._failure_list().append(f"{e.action}: {e.detail}")
    if e.action == Action.HOLD:
        f.hold_wanted = False
    elif e.action == Action.REQUEUE:
        f.requeue_wanted, f.requeue_in_flight = False, None


def _escalated(f: _Fold, e: ev.Escalated, at: datetime) -> None:
    reason = _member(EscalationReason, e.reason, "escalated")
    f._escalation_list().append(Escalation(reason, e.attempt, e.detail, at))


def _delivered(f: _Fold, e: ev.Delivered, at: datetime) -> None:
    escalations = f._escalation_list()
    if not 0 <= e.index < len(escalations):
        raise RecordInconsistent(f"delivery of escalation {e.index}, which was never raised")
    escalations[e.index] = replace(escalations[e.index], delivered=True)


def _notice_delivered(f: _Fold, e: ev.NoticeDelivered, at: datetime) -> None:
    if e.id not in f.notified:
        f.notified = (*f.notified, e.id)


def _outcome_reached(f: _Fold, e: ev.OutcomeReached, at: datetime) -> None:
    if f.outcome is not None:
        raise RecordInconsistent("a second outcome")
    f.outcome = JobOutcome(_member(OutcomeKind, e.result, "outcome"), e.detail)
    f.outcome_at = at


def _settled(f: _Fold, e: ev.Settled, at: datetime) -> None:
    f.settled = True


def _pruned(f: _Fold, e: ev.Pruned, at: datetime) -> None:
    if not f.settled:
        raise RecordInconsistent("pruned before the record settled")
    if f.pruned_at is None:  # a second prune only repeats the first (its time stands)
        f.pruned_at = at


# Keyed by the event's exact class (events are final dataclasses): one dict look-up per event, where the
# ``match`` it replaces tried the kinds in turn.
_TRANSITIONS: dict[type[ev.Event], Callable[[_Fold, Any, datetime], None]] = {
    ev.Observed: _observed, ev.JobRecorded: _recorded_again, ev.Submitting: _submitting, ev.Created: _created,
    ev.Refused: _refused, ev.Unknown: _unknown, ev.Found: _found, ev.Confirmed: _confirmed,
    ev.Released: _released, ev.Absent: _absent, ev.Cancelling: _cancelling,
    ev.MovedToResidual: _moved_to_residual, ev.Requested: _requested, ev.Answered: _answered,
    ev.HeldByUser: _held_by_user, ev.Requeueing: _requeueing, ev.Requeued: _requeued,
    ev.ActionFailed: _action_failed, ev.Escalated: _escalated, ev.Delivered: _delivered,
    ev.OutcomeReached: _outcome_reached, ev.Settled: _settled, ev.Pruned: _pruned,
    ev.NoticeDelivered: _notice_delivered,
}


def apply(state: JobState, event: ev.Event, at: datetime) -> JobState:
    """``state`` with one more event (the supervisor's step after each append); the same table as the fold."""
    folding = _Fold(state)
    folding.apply(event, at)
    return folding.freeze()


# what an observation's state names, looked up without the enum's call (most events of a long record)
_OBJECT_STATES: dict[str, ObjectState] = {state.value: state for state in ObjectState}
# Ends only a run reaches: an attempt seen ending so, its run unseen between two polls, did start (when it
# did is not known: the end's time stands in). A cancelled, preempted or failed-to-boot object may never
# have run (cancelled while pending: Slurm's Start=None), so it gets no start it may not have had.
_RAN: frozenset[ObjectState] = frozenset({ObjectState.COMPLETED, ObjectState.FAILED, ObjectState.TIMEOUT,
                                          ObjectState.OUT_OF_MEMORY})


def _member(kind: type[_E], value: str, event: str) -> _E:
    try:
        return kind(value)
    except ValueError:
        raise RecordInconsistent(f"event {event}: {value!r} is no {kind.__name__} this build knows") from None


def initial(at: datetime, head: ev.Event) -> JobState:
    """The state the first event makes; RecordInconsistent unless it is job-recorded."""
    if not isinstance(head, ev.JobRecorded):
        raise RecordInconsistent("the record does not start with job-recorded")
    return JobState(spec=head.spec(), host=head.host, recorded_at=at, updated_at=at, machine_id=head.machine_id)


def resume(state: JobState, lines: Iterable[tuple[datetime, ev.Event]]) -> JobState:
    """``state`` with the events that follow it: the fold carries nothing but the ``JobState`` from one
    event to the next, so folding a record from any of its states on gives what folding it whole does
    (a snapshot kept with the record, snapshot.py, is such a state)."""
    folding = _Fold(state)
    for at, event in lines:
        folding.apply(event, at)
    return folding.freeze()


def fold_events(lines: Iterable[tuple[datetime, ev.Event]]) -> JobState:
    items = iter(lines)
    first = next(items, None)
    if first is None:
        raise RecordInconsistent("the record does not start with job-recorded")
    return resume(initial(*first), items)


def fold(record: JobRecord) -> JobState:
    """The state a record tells; EventUndecodable or RecordInconsistent (both JobsError) when it does not read."""
    return fold_events(decoded(record))


def decoded(record: JobRecord) -> Iterator[tuple[datetime, ev.Event]]:
    """Each line's time and event, in order; EventUndecodable at the first line that does not decode.

    A store hands the lines of one text one mapping (adapters/store/event_codec.py), so a line whose
    mapping and kind were decoded already takes that event again: events are frozen, one may stand for
    many lines. Keyed by identity, which the record keeps alive while this runs; any other record
    (a mapping per line) decodes each line, as before."""
    return decoded_lines(record.events)


def decoded_lines(lines: Iterable[EventLine]) -> Iterator[tuple[datetime, ev.Event]]:
    """``decoded`` of some of a record's lines (those after a snapshot)."""
    seen: dict[tuple[str, int], ev.Event] = {}
    for line in lines:
        key = (line.kind, id(line.data))
        event = seen.get(key)
        if event is None:
            event = seen[key] = ev.decode(line.kind, line.data)
        yield line.at, event


def label(state: JobState) -> str:
    """One word for where the job is, for status lines and the pointer (display only)."""
    if state.outcome is not None:
        return str(state.outcome.kind)
    current = state.current
    if current is None:
        return "recorded"
    if state.rerun_of == current.number:
        return RERUN  # its failed attempt stays as it ended; the next one is the supervisor's to make
    if current.order in (AttemptState.CREATED, AttemptState.CONFIRMED) or current.object_state is ObjectState.HELD:
        return "held"
    if current.order is AttemptState.RELEASED:
        return str(current.object_state or ObjectState.PENDING)
    return str(current.order)
