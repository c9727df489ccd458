"""Deliver the notices a record owes (domain/model/jobs/notices.py) to notify.command, by the escalations'
path: whoever holds the job's lock (its supervisor, ``reconcile``) hands each owed notice over, commits
``notice-delivered`` once it got there, and on a failure tries again later, backing off (from
``supervise.poll`` or 1 s, doubling to 10 minutes), never holding up supervision meanwhile. Nothing is
delivered twice by one process; a crash between the delivery and its commit delivers it once more (the
command sees the same ``delivery_id`` again: it is how a receiver tells a repeat).

A give-up (the supervisor stops, exit 4) is told once, at once, and not recorded: the record may be what
could not be written.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.job_result import RecordPlace, job_result
from dunscaith.domain.model.jobs.notices import (
    NoticeKind,
    OwedNotice,
    gave_up_notice_id,
    job_notice,
    owed,
    wants,
)
from dunscaith.domain.model.jobs.state import JobState
from dunscaith.ports.clock import Clock
from dunscaith.ports.job_store import JobStore
from dunscaith.ports.notice_delivery import NoticeDelivery

_BACKOFF_CAP = 600.0


class Notifier:
    """One supervisor's deliveries of notices (each job supervisor has its own)."""

    def __init__(self, delivery: NoticeDelivery, clock: Clock, store: JobStore, here: str,
                 first_backoff: float = 1.0) -> None:
        self._delivery = delivery
        self._clock = clock
        self._store = store
        self._here = here  # this host's name
        self._first = max(first_backoff, 1.0)
        self._next: dict[str, tuple[float, float]] = {}  # notice id -> (next try, monotonic; current backoff)

    @property
    def configured(self) -> bool:
        return self._delivery.configured

    def _place(self, state: JobState) -> RecordPlace:
        """Where the record is (as ``SuperviseJob`` tells a script): the store, the host it is bound to."""
        try:
            identity = self._store.identity()
            location = self._store.location()
        except Exception:  # display only
            return RecordPlace(store="", backend="", host=state.host or self._here)
        bound = identity.host.hostname if identity.host is not None else None
        return RecordPlace(store=location, backend=identity.backend, host=bound or state.host or self._here)

    def document(self, state: JobState, notice: OwedNotice, detail: str = "") -> dict[str, object]:
        current = state.current
        stdout, stderr = (current.stdout, current.stderr) if current is not None else (None, None)
        result = job_result(state, stdout, stderr, self._place(state))
        return job_notice(result, notice, self._clock.now(), detail=detail)

    def deliver_owed(self, state: JobState, commit: Callable[[ev.Event], bool]) -> str:
        """Hand each notice ``state`` owes, and that is due, to the command; ``commit`` makes its delivery
        durable (False: not written now; the notice is delivered again later). What went wrong, or ""."""
        if not self._delivery.configured:
            return ""
        problem = ""
        now = self._clock.monotonic()
        for notice in owed(state):
            due, backoff = self._next.get(notice.id, (now, self._first))
            if now < due:
                continue
            detail = ""
            if notice.index is not None:
                esc = state.escalations[notice.index]
                detail = f"escalation {notice.index + 1} ({esc.reason}): {esc.detail}"
            try:
                self._delivery.deliver(notice.id, self.document(state, notice, detail))
            except Exception as exc:  # whatever the command did, the notice stays owed
                self._next[notice.id] = (now + backoff, min(backoff * 2, _BACKOFF_CAP))
                problem = f"notice {notice.id} not delivered: {exc}"
                continue
            self._next.pop(notice.id, None)
            if not commit(ev.NoticeDelivered(notice.id)):
                return problem or "a notice's delivery is not recorded yet"
        return problem

    def waiting(self, state: JobState) -> bool:
        """A notice to retry, or one ``state`` owes: a step must run for it (``Supervisor._carriable``)."""
        return bool(self._next) or (self._delivery.configured and bool(owed(state)))

    def next_due(self) -> float | None:
        """When the next retry of an undelivered notice is due (monotonic), if one is waiting."""
        return min((due for due, _ in self._next.values()), default=None)

    def gave_up(self, job: JobId, state: JobState | None, detail: str, at: datetime) -> str:
        """The supervisor of ``job`` gave up: told once, now, if the job asked for it. What went wrong, or ""."""
        if state is None or not self._delivery.configured or not wants(state, NoticeKind.GAVE_UP):
            return ""
        notice = OwedNotice(gave_up_notice_id(state, at), NoticeKind.GAVE_UP)
        try:
            self._delivery.deliver(notice.id, self.document(state, notice, detail))
        except Exception as exc:  # best effort: the give-up is on the terminal and in the exit code anyway
            return f"the give-up of {job} not told to notify.command: {exc}"
        return ""
