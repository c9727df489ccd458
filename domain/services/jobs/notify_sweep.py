"""A sweep's one notice for its outcome (docs/notifications.md): once every element has its outcome, the
sweep's ``--json`` result is handed to notify.command, by the path a job's notices take (delivered, then
``notice-delivered`` committed; retried with back-off; never delivered twice by one process), and recorded
in its first element's record, under that element's lock. Whoever supervises the sweep afterwards
(``supervise NAME``, ``reconcile NAME``) delivers it when an earlier supervisor could not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.notices import NoticeKind, sweep_gave_up_id, sweep_notice, sweep_owed
from dunscaith.domain.model.jobs.state import fold
from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.domain.services.jobs.sweep_members import index_key
from dunscaith.ports.clock import Clock
from dunscaith.ports.crash_points import CrashPoints
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_store import JobStore, LockBusy
from dunscaith.ports.notice_delivery import NoticeDelivery

_BACKOFF_CAP = 600.0


class NotifySweep:
    def __init__(self, store: JobStore, delivery: NoticeDelivery, clock: Clock, crash: CrashPoints,
                 wait: float, first_backoff: float = 1.0) -> None:
        self._store = store
        self._delivery = delivery
        self._clock = clock
        self._crash = crash
        self._wait = wait  # supervise.wait: how long a failing delivery is retried before it is left outstanding
        self._first = max(first_backoff, 1.0)

    def __call__(self, sweep: JobId, elements: Sequence[JobSummary], document: Mapping[str, Any],
                 drain: Interrupts) -> str:
        """Deliver the sweep's notice if it owes one; "" when it is delivered or none is owed, else why it is
        still outstanding (the caller exits 5, as for any work left)."""
        if not elements or any(e.outcome is None for e in elements):
            return ""
        first = min(elements, key=index_key)
        attempts = sum(e.attempts for e in elements)
        outcomes = [e.outcome for e in elements]
        if sweep_owed(sweep, fold(self._store.read(first.job)), outcomes, attempts) is None:
            return ""  # none owed, or delivered already: nothing to lock
        try:
            with self._store.lock(first.job):
                return self._deliver(sweep, first.job, outcomes, attempts, document, drain)
        except LockBusy:
            return f"the notice of sweep {sweep} waits: another supervisor holds {first.job}"

    def gave_up(self, sweep: JobId, elements: Sequence[JobSummary], document: Mapping[str, Any],
                detail: str) -> str:
        """The supervision of ``sweep`` (or a pipeline) gave up: told once, now, when its jobs asked for it,
        as a job's give-up is: best effort, never retried nor recorded (what failed may be the record
        itself). What went wrong, or ""."""
        if not elements or not self._delivery.configured:
            return ""
        try:
            at = self._clock.now()
            nid = sweep_gave_up_id(sweep, fold(self._store.read(min(elements, key=index_key).job)), at)
            if nid is None:
                return ""
            self._delivery.deliver(nid, sweep_notice(sweep, dict(document), nid, at, NoticeKind.GAVE_UP, detail))
        except Exception as exc:  # best effort: the give-up is on the terminal and in the exit code anyway
            return f"the give-up of {sweep} not told to notify.command: {exc}"
        return ""

    def _deliver(self, sweep: JobId, first: JobId, outcomes: list[str | None], attempts: int,
                 document: Mapping[str, Any], drain: Interrupts) -> str:
        notice = sweep_owed(sweep, fold(self._store.read(first)), outcomes, attempts)  # read again, locked
        if notice is None:
            return ""
        if not self._delivery.configured:
            return f"notice {notice.id} not yet delivered: no notify.command is configured"
        deadline = self._clock.monotonic() + self._wait
        backoff = self._first
        while True:
            try:
                self._delivery.deliver(notice.id, sweep_notice(sweep, dict(document), notice.id, self._clock.now()))
            except Exception as exc:  # whatever the command did, the notice stays owed
                problem = f"notice {notice.id} not yet delivered: {exc}"
                left = deadline - self._clock.monotonic()
                if left <= 0 or drain.wait(min(backoff, left)) is not None:
                    return problem
                backoff = min(backoff * 2, _BACKOFF_CAP)
                continue
            break
        self._crash.reached("notice-delivered")
        kind, data = ev.encode(ev.NoticeDelivered(notice.id))
        self._store.append(first, self._clock.now(), kind, data)
        self._crash.reached("notice-committed")
        return ""
