"""The executor of the supervision engine's decision (``domain/model/jobs/engine.py``) for one job's loop.

``Record`` makes each event durable before anything else is sent (an append that fails is kept and
committed first, an append in doubt is read back so nothing is written twice). ``Executor`` performs the
engine's actions through the ports: each request sent only while the job's lock is ours, each answer
committed before the next request, a create whose answer is lost recorded ``unknown`` and never resent.
``Deliveries`` hands escalations to the configured command, backing off on failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from dunscaith.domain.model.jobs import attempt_needs as needs_
from dunscaith.domain.model.jobs import engine as en
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs import supervision as sv
from dunscaith.domain.model.jobs.dependencies import Ready
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.kinds import ANY_KIND, Capabilities
from dunscaith.domain.model.jobs.objects import CreateOutcome, ObjectState, ObjectView, QueryResult
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.residual import ResidualEntry, ResidualPolicy, ResidualReason
from dunscaith.domain.model.jobs.state import AttemptState, JobState, apply, fold
from dunscaith.domain.services.jobs.gates import Gates
from dunscaith.domain.services.jobs.notify import Notifier
from dunscaith.domain.services.jobs.supervise_loop import Loop, Means, SuperviseSettings, output_paths
from dunscaith.ports.escalation_delivery import EscalationDelivery
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_store import LockLost, StoreError
from dunscaith.ports.residual import ResidualList
from dunscaith.ports.scheduler import SchedulerError


class Record:
    """One job's record as its loop writes and reads it."""

    def __init__(self, means: Means, settings: SuperviseSettings) -> None:
        self._means = means
        self._settings = settings

    def commit(self, job: JobId, loop: Loop, event: ev.Event, point: str) -> bool:
        """Make ``event`` durable; on a store failure keep it to commit later, before anything else."""
        loop.unsaved.append(event)
        ok = self.flush(job, loop)
        if ok:
            self._means.crash.reached(point)
        return ok

    def flush(self, job: JobId, loop: Loop) -> bool:
        if loop.lost:
            return False  # a write now could only fail (its session is gone) or race the new holder
        if loop.doubt and not self._settle_doubt(job, loop):
            return False
        means = self._means
        while loop.unsaved:
            event = loop.unsaved[0]
            now = means.clock.now()
            try:
                kind, data = ev.encode(event)
                means.store.append(job, now, kind, data)
            except LockLost as exc:
                loop.lost = str(exc)
                loop.doubt = True
                return False
            except StoreError as exc:
                loop.problem = f"the record could not be written: {exc}"
                loop.doubt = True  # the append may have landed all the same: read before trying again
                return False
            loop.known += 1
            loop.unsaved.pop(0)
            loop.state = apply(loop.state, event, now)
            loop.quiet = 0  # a change: the polls start short again
            means.progress.committed(loop.state, event)
        return True

    def _settle_doubt(self, job: JobId, loop: Loop) -> bool:
        """After a failed append, learn from the record which of the unsaved events did land, so none
        is written twice."""
        try:
            record = self._means.store.read(job)
        except StoreError as exc:
            loop.problem = f"the record could not be read: {exc}"
            return False
        # only this actor appends anything but requests while it holds the lock: count what landed of its own
        landed = sum(1 for line in record.events[loop.known:] if line.kind != ev.Requested.KIND)
        if len(record.events) != loop.known:
            loop.state = fold(record)
            for event in loop.unsaved[:landed]:
                self._means.progress.committed(loop.state, event)
            del loop.unsaved[:landed]
            loop.known = len(record.events)
        loop.doubt = False
        return True

    def refresh(self, job: JobId, loop: Loop) -> bool:
        """Commands append requests to the record while this supervisor holds the lock: read them in.
        False when the record could not be read (a loop that cannot read it does not advance)."""
        if loop.unsaved or loop.doubt:
            return True  # nothing is read until they are settled: the loop is not healthy meanwhile anyway
        try:
            record = self._means.store.read(job)
        except StoreError as exc:
            loop.problem = f"the record could not be read: {exc}"
            return False
        if len(record.events) != loop.known:
            loop.state = fold(record)
            loop.known = len(record.events)
            loop.quiet = 0  # a request came in: what it asks for is looked at soon
        return True

    def read_until_giveup(self, job: JobId, cancel: Interrupts) -> tuple[JobState, int] | None:
        clock = self._means.clock
        started = clock.monotonic()
        while True:
            try:
                record = self._means.store.read(job)
                return fold(record), len(record.events)
            except StoreError:
                if (clock.monotonic() - started > self._settings.giveup
                        or cancel.wait(self._settings.poll) is not None):
                    return None


class Deliveries:
    """Escalations handed to the configured command; a failure is retried later, backing off, and never
    holds up supervision."""

    def __init__(self, delivery: EscalationDelivery | None, record: Record, means: Means,
                 settings: SuperviseSettings, notifier: Notifier | None = None) -> None:
        self._notifier = notifier  # notices to notify.command (domain/services/jobs/notify.py), by the same path
        self._delivery = delivery if delivery is not None and delivery.configured else None
        self.delivering = self._delivery is not None
        self.retrying: dict[int, tuple[float, float]] = {}  # index -> (next try, current backoff)
        self._record = record
        self._means = means
        self._settings = settings

    def deliver(self, job: JobId, loop: Loop) -> None:
        if self._delivery is None or loop.unsaved:
            self._notify(job, loop)
            return
        now = self._means.clock.monotonic()
        for index, esc in enumerate(loop.state.escalations):
            if esc.delivered:
                continue
            due, backoff = self.retrying.get(index, (now, max(self._settings.poll, 1.0)))
            if now < due:
                continue
            try:
                self._delivery.deliver(job, index, esc)
            except Exception as exc:  # whatever the command did, the escalation stays undelivered
                self.retrying[index] = (now + backoff, min(backoff * 2, 600.0))
                loop.problem = f"escalation {index + 1} not delivered: {exc}"
                continue
            self.retrying.pop(index, None)
            self._record.commit(job, loop, ev.Delivered(index), "delivery-committed")
        self._notify(job, loop)

    def _notify(self, job: JobId, loop: Loop) -> None:
        """The notices the record owes, handed to notify.command as escalations are (domain/services/jobs/notify.py)."""
        if self._notifier is None or loop.unsaved:
            return
        problem = self._notifier.deliver_owed(loop.state, lambda event: self._record.commit(job, loop, event,
                                                                                              "notice-committed"))
        if problem:
            loop.problem = problem
            self._means.progress.note(problem)  # said at each failed try (they back off), the job goes on meanwhile

    def due(self) -> float | None:
        """When the next retry of an undelivered escalation or notice is due (monotonic), if one is waiting."""
        escalation = min((due for due, _ in self.retrying.values()), default=None) if self.delivering else None
        notice = self._notifier.next_due() if self._notifier is not None else None
        return min((d for d in (escalation, notice) if d is not None), default=None)


class Executor:
    """Performs the engine's actions for one job's loop, each committed before the next request."""

    def __init__(self, means: Means, record: Record, policy: Policy, nonces: Callable[[], Nonce],
                 residual: ResidualList | None, capabilities: Capabilities, delivering: bool) -> None:
        self._means = means
        self._record = record
        self._policy = policy
        self._nonces = nonces
        self._residual = residual
        self._capabilities = capabilities
        self._delivering = delivering
        self.planned: JobState | None = None  # the state whose decision was last found empty (nothing to do)
        self.seen: tuple[JobState, tuple[ObjectView, ...]] | None = None  # a quiet answer: nothing new in it
        self._gate_open = False  # its dependencies were found as it asks: its first create may be made

    # ------------------------------------------------------------------ the decision, performed

    def act(self, job: JobId, loop: Loop, cancel: Interrupts, *, commands_only: bool = False) -> None:
        """Decide (``en.decide``) and perform, until nothing is left, an action fails, or a stop is requested.
        The query is the loop's own (it is timed with the watches): asks are left to it."""
        for _ in range(100):  # a decision always moves the state on; the bound only guards a bug
            if not self._record.flush(job, loop) or not self._send_if_durable(job, loop):
                return
            decision = en.decide([self.view(job, loop, commands_only)], self._means.clock.now(), self._policy,
                                 _NO_PACING, delivering=self._delivering)
            todo = [a for a in decision.actions if not isinstance(a, en.Ask)]
            if not todo and loop.unsent is None and not commands_only:
                self.planned = loop.state  # nothing to do in this state (``Supervisor`` carrying)
            if not todo:
                return
            for action in todo:
                if cancel.pending() is not None or not self.perform(job, loop, action):
                    return

    def view(self, job: JobId, loop: Loop, commands_only: bool = False) -> en.JobView:
        """The loop as the engine decides on it."""
        return en.JobView(job, loop.state, sending=loop.unsent.attempt if loop.unsent is not None else None,
                          asked_at=loop.asked_at, answered=loop.answered, ask_now=loop.ask_now, quiet=loop.quiet,
                          kind=self._capabilities(loop.state.spec.adapter) if loop.state.unanswered else ANY_KIND,
                          commands_only=commands_only,  # (what the kind cannot do matters to answers only)
                          start_waits=self._start_waits(loop))

    def _start_waits(self, loop: Loop) -> bool:
        """Whether the job's first create still waits for other jobs (``submit --after``, a pipeline's step).
        Its callers start a loop only once the rule said Ready; this asks again before the create itself, so
        no path (a ``supervise`` of the job alone, a ``reconcile``) ever creates it early. Ready, once seen,
        stays so (what it waited for succeeded, or ended); only a job not started that waits is asked."""
        state = loop.state
        if not state.spec.waits or state.attempts or state.outcome is not None or self._gate_open:
            return False
        self._gate_open = isinstance(Gates(self._means.store).readiness(state.spec), Ready)
        return not self._gate_open

    def perform(self, job: JobId, loop: Loop, action: en.Action) -> bool:
        match action:
            case en.AnswerRequest(answer=answer):
                return self._record.commit(job, loop, answer, "request-answered")
            case en.TakeStep(step=step):
                return self.step(job, loop, step)
        raise AssertionError(f"not an action of one job: {action!r}")

    def step(self, job: JobId, loop: Loop, step: sv.Step) -> bool:
        commit = self._record.commit
        match step:
            case sv.StartAttempt(attempt=n, reason=why, needs=needs, cause=cause):
                self._means.crash.reached("start-decided")  # the last end is durable, the next attempt's intent not yet
                return self._create(job, loop, needs_.submitting(n, self._nonces(), loop.state.spec, needs, cause, why))
            case sv.MarkUnknown(attempt=n):
                return commit(job, loop, ev.Unknown(n, "the supervisor that sent it stopped before "
                                                       "reading the reply"), "unknown-committed")
            case sv.Release(attempt=n, object_id=oid):
                return self._release(job, loop, n, oid)
            case sv.Cancel(attempt=n, object_id=oid):
                return self._cancel(job, loop, n, oid)
            case sv.MoveToResidual(attempt=n, reason=reason):
                return self._move_to_residual(job, loop, n, reason)
            case sv.Requeue(attempt=n, object_id=oid):
                return self._requeue(job, loop, n, oid)
            case sv.ReportUncertain(attempt=n):
                return commit(job, loop, ev.ActionFailed(
                    "requeue", n, f"attempt {n}: the requeue's sender stopped before its answer: it may or may "
                                  "not have reached the scheduler, and is never sent again; look at `status` and "
                                  "requeue again if it did not"), "uncertain-committed")
            case sv.Hold(attempt=n, object_id=oid):
                return self._hold(job, loop, n, oid)
            case sv.Escalate(reason=reason, attempt=n, detail=detail):
                return commit(job, loop, ev.Escalated(str(reason), n, detail), "escalation-committed")
            case sv.Conclude(outcome=outcome):
                return commit(job, loop, ev.OutcomeReached(str(outcome.kind), outcome.detail), "outcome-committed")
            case sv.Settle():
                return commit(job, loop, ev.Settled(), "settled-committed")
        raise AssertionError(f"unplanned step {step!r}")

    # ------------------------------------------------------------------ requests that change objects

    def _release(self, job: JobId, loop: Loop, n: int, oid: ObjectId) -> bool:
        """Sent under the lock; a refusal is this step's problem and nothing is committed."""
        scheduler = self._means.scheduler
        sent, refused = self._ask_scheduler(loop, scheduler.release, oid)
        if refused is not None:
            loop.problem = f"release of {oid} failed: {refused}"
        if not sent or refused is not None:
            return False
        self._means.crash.reached("release-sent")
        paths = output_paths(scheduler, oid)
        return self._record.commit(job, loop, ev.Released(n, oid, paths.stdout, paths.stderr), "release-committed")

    def _cancel(self, job: JobId, loop: Loop, n: int, oid: ObjectId) -> bool:
        sent, refused = self._ask_scheduler(loop, self._means.scheduler.cancel, oid)
        if refused is not None:
            loop.problem = f"cancel of {oid} failed: {refused}"
        if not sent or refused is not None:
            return False
        return self._record.commit(job, loop, ev.Cancelling(n, oid), "cancel-committed")

    def _requeue(self, job: JobId, loop: Loop, n: int, oid: ObjectId) -> bool:
        """"Requeueing" is durable before the request goes out: a crash after it reports the requeue uncertain
        (``sv.ReportUncertain``) and never sends it again."""
        commit = self._record.commit
        if not commit(job, loop, ev.Requeueing(n, oid), "requeueing-committed"):
            return False  # not durable: nothing is sent
        sent, refused = self._ask_scheduler(loop, self._means.scheduler.requeue, oid)
        if not sent:
            return False
        if refused is not None:
            return commit(job, loop, ev.ActionFailed("requeue", n, f"requeue of {oid}: {refused}"),
                          "requeue-failed-committed")
        return commit(job, loop, ev.Requeued(n, oid), "requeued-committed")

    def _hold(self, job: JobId, loop: Loop, n: int, oid: ObjectId) -> bool:
        sent, refused = self._ask_scheduler(loop, self._means.scheduler.hold, oid)
        if not sent:
            return False
        if refused is not None:  # it started meanwhile, or the scheduler refused: reported
            return self._record.commit(job, loop, ev.ActionFailed("hold", n, f"hold of {oid}: {refused}"),
                                       "hold-failed-committed")
        return self._record.commit(job, loop, ev.HeldByUser(n, oid), "hold-committed")

    def _ask_scheduler(self, loop: Loop, request: Callable[[ObjectId], None],
                       oid: ObjectId) -> tuple[bool, SchedulerError | None]:
        """One request that changes an object, sent only while the lock is still ours: (False, None) when it
        is not (nothing sent); else (True, the scheduler's refusal or None). Either way the loop has acted."""
        if not self.still_held(loop):
            return False, None
        try:
            request(oid)
        except SchedulerError as exc:
            return True, exc
        finally:
            self._acted(loop)
        return True, None

    def _move_to_residual(self, job: JobId, loop: Loop, n: int, reason: ResidualReason) -> bool:
        """The entry is durable in the list before the record says the attempt moved: a crash between
        the two adds it again (the first one stands) and then commits."""
        assert self._residual is not None
        spec = loop.state.spec
        entry = ResidualEntry(job, spec.cluster, spec.adapter, reason, n,
                              loop.state.attempt(n).nonce, self._means.clock.now())
        try:
            self._residual.add(entry)
        except Exception as exc:  # a home that refuses the write: the attempt stays outstanding
            loop.problem = f"attempt {n} not moved to the residual list: {exc}"
            return False
        self._means.crash.reached("residual-added")
        return self._record.commit(job, loop, ev.MovedToResidual(n, str(reason)), "residual-committed")

    def _create(self, job: JobId, loop: Loop, submitting: ev.Submitting) -> bool:
        loop.unsent = submitting  # the request goes out only once this is durable, and then only once
        if not self._record.commit(job, loop, submitting, "submitting-committed"):
            return False  # kept: once it is durable (or found to be), the request is sent then
        return self._send(job, loop, submitting)

    def _send(self, job: JobId, loop: Loop, submitting: ev.Submitting) -> bool:
        if not self.still_held(loop):
            return False  # its "submitting" is durable: whoever holds the job now finds it unanswered
        loop.unsent = None
        n = submitting.attempt
        try:
            answer = self._means.scheduler.create_held(needs_.object_spec(loop.state.spec, submitting))
            event: ev.Event
            if answer.outcome is CreateOutcome.CREATED and answer.object_id is not None:
                event = ev.Created(n, answer.object_id)
            elif answer.outcome is CreateOutcome.REFUSED:
                event = ev.Refused(n, answer.detail or "refused")
            else:
                event = ev.Unknown(n, answer.detail or "no reply")
        except Exception as exc:  # whatever went wrong, the request may have gone out: unknown, never resent
            event = ev.Unknown(n, f"{type(exc).__name__}: {exc}")
        finally:
            self._acted(loop)
        self._means.crash.reached("create-answered")
        return self._record.commit(job, loop, event, "answer-committed")

    def _send_if_durable(self, job: JobId, loop: Loop) -> bool:
        """A create whose "submitting" became durable late (the store failed first): send it now."""
        pending = loop.unsent
        if pending is None:
            return True
        recorded = loop.state.by_nonce(pending.nonce)
        if recorded is None or recorded.order is not AttemptState.SUBMITTING:
            return True  # not durable yet: nothing is sent
        return self._send(job, loop, pending)

    def _acted(self, loop: Loop) -> None:
        """An action just returned (or failed): no answer asked before now may become an observation."""
        loop.acted_at = self._means.clock.now()

    def still_held(self, loop: Loop) -> bool:
        """Right before a request that changes the scheduler's objects: is the lock still ours? A lost
        lock means another actor may act on the job now; this one sends nothing more."""
        if loop.lost:
            return False
        if loop.lock is None:
            return True
        try:
            loop.lock.check()
        except LockLost as exc:
            loop.lost = str(exc)
            return False
        return True

    # ------------------------------------------------------------------ the query

    def observe(self, job: JobId, loop: Loop) -> bool:
        try:
            # confirm_absent: a purged object must still say how it ended
            result = self._means.scheduler.query([job], confirm_absent=True)
        except Exception as exc:  # a query makes nothing; its failure only means we learned nothing
            loop.problem = f"the scheduler did not answer: {type(exc).__name__}: {exc}"
            return False
        if sv.stale(result, loop.acted_at):
            loop.ask_now = True  # a shared answer asked before this supervisor's last action: ask again
            return False
        if not result.complete:
            loop.problem = f"the scheduler answered in part: {result.detail}"
        events = sv.observe(loop.state, result, self._means.clock.now(), self._policy)
        # an answer that brought nothing new, and the state it was judged on (carrying)
        self.seen = (loop.state, result.objects) if not events and result.complete else None
        self._note_running_reason(loop, result)  # before the commit: on a full disk the commit may wait
        for event in events:
            if not self._record.commit(job, loop, event, "observation-committed"):
                return False
        if not events and result.complete:
            loop.quiet += 1  # nothing changed: the next poll waits twice as long (to the cap)
        return result.complete

    def _note_running_reason(self, loop: Loop, result: QueryResult) -> None:
        """A running object the scheduler gives a reason for (the local scheduler's "disk full: the worker
        ended with exit code 0; its outcome is kept ...") is said in the live view once, and again when it
        changes, whether or not its observation can be recorded now (the record may be on that full disk)."""
        current = loop.state.current
        if current is None or current.object_id is None:
            return
        for view in result.objects:
            if view.object_id != current.object_id or view.state is not ObjectState.RUNNING:
                continue
            reason = view.reason if view.reason not in ("", "None") else ""
            if reason != loop.noted:
                loop.noted = reason
                if reason:
                    self._means.progress.note(f"attempt {current.number}: {view.object_id} is running: {reason}")


# the executor leaves asking to the loop (``act``): the pacing given to the decision is never used for it
_NO_PACING = en.Pacing.of(0.0, 0.0)


def without_residual(policy: Policy, residual: ResidualList | None) -> Policy:
    """Without a residual list to move to, an unknown attempt can only wait for the user."""
    return policy if residual is not None else replace(policy, residual=ResidualPolicy.MANUAL)
