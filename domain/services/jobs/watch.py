"""Watch: the live view of a job supervised elsewhere (another terminal, another login node, or nobody),
read from its record as it grows, to the ending its supervisor would have.

A watcher reads only: it takes no lock (not even for a moment), writes nothing to the record or the
pointer, and never asks the scheduler, so the supervisor it watches pays nothing for it. It follows the
record with the store's notice of appends where the store gives one (``JobStore.follow_appends``: every
append, the holder's own too), and looks every ``interval`` otherwise (the job's summary first, one row:
the record is read only when it has more lines than were shown); whether a supervisor holds the
job is asked of the lock's health, which changes with no append (a supervisor that ends with work
outstanding, one that gives up, one that reattaches), every ``interval`` too; for a sweep's element, of
its sweep's lock as well (sweep_lock.py: the sweep's live supervisor holds the elements it has not
started yet).

A job with no outcome that no supervisor holds (Unattended) ends the watch at the next look (one
``interval`` after it is found so, which spares a supervisor about to take the job): only a supervisor
writes its record, so following it would wait for ever however the job fares (its scheduler may have
ended it long ago, and a watcher never asks the scheduler). The command says so once, how to reattach,
and exits 5.

Each event is shown as the supervisor's own live view shows it (the same ``SupervisionView``), with the
time it was committed: the record's lines so far first, then each new one as it lands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import EventLine
from dunscaith.domain.model.jobs.settlement import Outstanding, outstanding
from dunscaith.domain.model.jobs.state import JobState, apply, decoded_lines, initial, label
from dunscaith.domain.model.shown import reason
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_progress import SupervisionView
from dunscaith.ports.job_store import AppendWatch, JobStore, StoreError, UnknownJob


class WatchEnding(StrEnum):
    SETTLED = "settled"  # the record has its outcome and nothing is left: the supervisor's exit is the outcome's
    OUTSTANDING = "outstanding"  # an outcome, work left, and no supervisor holds the job (its exit 5)
    UNATTENDED = "unattended"  # no outcome and no supervisor: nothing will change the record until one comes
    STOPPED = "stopped"  # a signal ended the watch; nothing was done to the job


@dataclass(frozen=True, slots=True)
class WatchEnd:
    ending: WatchEnding
    state: JobState
    left: tuple[Outstanding, ...] = ()
    signal: str | None = None  # the signal's name, when STOPPED


class WatchJob:
    def __init__(self, store: JobStore, views: Callable[..., SupervisionView], interval: float,
                 delivering: bool = False) -> None:
        self._store = store
        self._views = views  # (job=, and the command's display options) -> the live view, as a supervisor's
        self._interval = max(interval, 0.05)  # seconds between looks at the lock (and reads, with no watch)
        self._delivering = delivering

    def __call__(self, job: JobId, interrupts: Interrupts, **display: object) -> WatchEnd:
        """Follow ``job``'s record until it ends as its supervisor would, or a signal ends the watch.
        UnknownJob when it is not recorded; RecordDamaged, a JobsError or a StoreError when its record
        does not read at the start (later, a store that does not answer is said once and tried again).
        ``display``: how the command shows the live view (its stream)."""
        woken = [True]

        def wake() -> None:
            woken[0] = True
            interrupts.wake()

        # opened before the first read: an append between the read and the watch cannot be missed
        watch = self._follow(job, wake)
        try:
            return self._watch(job, interrupts, self._views(job=job, **display), watch, woken)
        finally:
            if watch is not None:
                watch.close()

    def _follow(self, job: JobId, wake: Callable[[], None]) -> AppendWatch | None:
        try:
            return self._store.follow_appends(job, wake)
        except StoreError:  # it cannot listen now: the record is read every interval instead
            return None

    def _watch(self, job: JobId, interrupts: Interrupts, view: SupervisionView, watch: AppendWatch | None,
               woken: list[bool]) -> WatchEnd:
        lines = self._store.read(job).events
        events = list(decoded_lines(lines))
        state = initial(*events[0])
        seen = len(lines)
        held = self._held(job, state)
        with view:
            view.show(state)
            view.committed(state, events[0][1])
            for at, event in events[1:]:
                state = apply(state, event, at)
                view.committed(state, event)
            ended = self._ended(state, held, looked=False)
            if ended is not None:
                return ended
            view.line(f"watching: a supervisor elsewhere holds this job (now {label(state)}); Ctrl-C ends the "
                      "watch, never the job" if held else
                      f"no supervisor holds this job (Unattended, {label(state)}): nothing changes its record "
                      f"until one reattaches (dunscaith supervise {job})")
            failing = ""
            while True:
                stop = interrupts.wait(self._interval)
                if stop is not None:
                    return WatchEnd(WatchEnding.STOPPED, state, signal=stop)
                # taken before the read: an append committed after this wakes the next look
                was_woken, woken[0] = woken[0], False
                try:
                    now_held = self._held(job, state)  # before the read: a holder appends, then lets go
                    # the summary (one row, kept with each append) says whether there is more: a store's
                    # watch that wakes for any job's commit (SQLite) costs no read of this record then
                    looked = was_woken or watch is None or not watch.live() or now_held != held
                    if looked and self._store.summary(job).seq > seen:
                        fresh = self._store.read(job).events
                        for line in fresh[seen:]:
                            state = self._shown(state, line, view)
                        seen = max(seen, len(fresh))
                except UnknownJob:
                    raise
                except StoreError as exc:  # a store that does not answer now: said once, tried again
                    woken[0] = woken[0] or was_woken
                    if not failing:
                        failing = reason(exc)
                        view.note(f"the record does not read now ({failing}); trying again")
                    continue
                if failing:
                    failing = ""
                    view.note("the record reads again")
                if now_held != held:
                    view.line("a supervisor holds this job now" if now_held else
                              f"its supervisor ended (no supervisor holds it now, {label(state)})")
                    held = now_held
                ended = self._ended(state, held)
                if ended is not None:
                    return ended

    def _shown(self, state: JobState, line: EventLine, view: SupervisionView) -> JobState:
        for at, event in decoded_lines([line]):
            state = apply(state, event, at)
            view.committed(state, event)
        return state

    def _held(self, job: JobId, state: JobState) -> bool:
        """Whether a live supervisor holds the job: its lock, or (an element not settled) its sweep's."""
        if self._store.health(job).held:
            return True
        member = state.spec.member
        return member is not None and not state.settled and self._store.health(member.sweep).held

    def _ended(self, state: JobState, held: bool, *, looked: bool = True) -> WatchEnd | None:
        """Where the supervisor would have ended: settled (its outcome), or an outcome with work left and
        no supervisor on it any more (its wait ended: exit 5). With no outcome and no supervisor, at a look
        after the first read (``looked``), Unattended: nobody will write the record. Else the watch goes on."""
        if state.settled and state.outcome is not None:
            return WatchEnd(WatchEnding.SETTLED, state)
        if state.outcome is not None and not held:
            return WatchEnd(WatchEnding.OUTSTANDING, state, tuple(outstanding(state, delivering=self._delivering)))
        if not held and looked:
            return WatchEnd(WatchEnding.UNATTENDED, state)
        return None

