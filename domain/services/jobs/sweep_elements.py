"""A sweep's elements as its pass loop holds them: taken (locked, not begun), active (their supervision's rounds
under way), what their watches told of, and the room each sweep's --max-running leaves."""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from dunscaith.domain.model.jobs import engine as en
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import Pointer
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.state import JobState
from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.domain.services.jobs.round_query import RoundQuery
from dunscaith.domain.services.jobs.supervise import Loop, Rounds, Supervisor
from dunscaith.domain.services.jobs.sweep_members import index_key
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_progress import JobProgress
from dunscaith.ports.job_store import JobLock


@dataclass(eq=False)
class Taken:
    """An element whose lock is held and whose supervisor is made, its loop not begun yet."""

    member: JobSummary
    root: HostIdentity
    state: JobState
    known: int  # events of its record reflected in ``state``
    lock: JobLock
    stack: contextlib.ExitStack
    supervisor: Supervisor
    progress: JobProgress
    query: RoundQuery
    pointer: Pointer  # as its supervision began (a fresh element's first one: written with its array's)
    untold: ev.Event | None = None  # the last event committed and not yet told to ``progress`` (display only)


class Notices:
    """What the elements' watches told of since the loop last looked (an element, and whether an object of it
    changed or an append was seen), written from the watches' threads. Each element is told at most once
    of each kind until the loop takes it: on SQLite every commit wakes every element's watch, hundreds of
    wakes a commit while a sweep starts, and this stays as small as the sweep."""

    def __init__(self) -> None:
        self._told: deque[tuple[JobId, bool]] = deque()
        self._pending: set[tuple[JobId, bool]] = set()

    def tell(self, job: JobId, moved: bool) -> None:
        key = (job, moved)
        if key not in self._pending:
            self._pending.add(key)
            self._told.append(key)

    def told(self) -> bool:
        """Whether anything was told since the last take."""
        return bool(self._told)

    def take(self) -> tuple[set[JobId], set[JobId]]:
        """(the elements whose object changed, those an append woke) since the last take. Each is no longer
        pending once taken, before the caller looks at what it concerns: a wake after that is told again,
        and one before it is in what the caller looks at (an append's commit shows before its wake)."""
        moved: set[JobId] = set()
        appended: set[JobId] = set()
        while self._told:
            key = self._told.popleft()
            self._pending.discard(key)
            (moved if key[1] else appended).add(key[0])
        return moved, appended


@dataclass
class Pass:
    """When the loop's current pass over the elements began: every element stepped in it times its polls
    from this moment, so elements answered by one query stay on the same ticks (one query a round) however
    long the pass takes. And what the elements' watches told of since the last pass."""

    wall: datetime
    mono: float
    notices: Notices = field(default_factory=Notices)
    beats_until: Callable[[], datetime | None] = lambda: None  # when the sweep's loop beats every lock again

    def wall_time(self) -> datetime:
        return self.wall


@dataclass
class Active:
    """A job the pass loop supervises now (``passes.Passes``): its loop's rounds under way."""

    job: JobId
    supervisor: Supervisor
    rounds: Rounds
    stack: contextlib.ExitStack
    sweep: str | None  # the sweep it is an element of
    query: RoundQuery | None  # the round query of its cluster (None: a job supervised alone asks for itself)
    root: HostIdentity | None  # the record root its pointer names (the sweep's attendance names the same)
    index: int | None  # its index in its sweep
    loop: Loop | None = None
    due: float = 0.0  # monotonic: when its loop means to run again
    paced: bool = True  # its polls timed from each pass's start (many jobs); False: from its own step (one job)


def room(member: JobSummary, active: dict[JobId, Active], bounds: dict[str, int | None]) -> bool:
    """Whether ``member`` may be started now: its sweep's --max-running counts every supervised element
    of that sweep without an outcome yet. A job of its own, or one with attempts already (it may be
    running: it is watched whatever the bound), always may."""
    bound = bounds.get(member.sweep) if member.sweep is not None else None
    if bound is None or member.attempts > 0:
        return True
    busy = sum(1 for e in active.values() if e.sweep == member.sweep
               and (e.loop is None or e.loop.state.outcome is None))
    return en.may_start(bound, member.attempts, busy)


def room_for_next(waiting: deque[JobSummary], active: dict[JobId, Active], bounds: dict[str, int | None]) -> bool:
    """Whether the next waiting element may be started now."""
    return bool(waiting) and room(waiting[0], active, bounds)


def begin(taken: Taken, drain: Interrupts, began: Pass) -> Active:
    """The element's loop, from its record as last read (or as the array's commits left it)."""
    job = taken.member.job
    notices = began.notices
    try:
        steps = taken.stack.enter_context(taken.supervisor.rounds(
            job, taken.lock, drain, first=(taken.state, taken.known), paced_from=began.wall_time,
            attended=taken.member.sweep is not None,  # an element's supervised-at: its sweep's attendance
            on_wake=lambda moved: notices.tell(job, moved), beats_until=began.beats_until))
    except BaseException:
        taken.stack.close()
        raise
    return Active(taken.member.job, taken.supervisor, steps, taken.stack, taken.member.sweep, taken.query,
                   taken.root, taken.member.sweep_index)


def held(active: dict[JobId, Active]) -> dict[JobId, tuple[HostIdentity, frozenset[int]]]:
    """Each sweep's root and the indices of its elements supervised now: what its attendance names."""
    held: dict[JobId, tuple[HostIdentity, set[int]]] = {}
    for element in active.values():
        if element.sweep is not None and element.index is not None and element.root is not None:
            held.setdefault(JobId(element.sweep), (element.root, set()))[1].add(element.index)
    return {sweep: (root, frozenset(indices)) for sweep, (root, indices) in held.items()}


def next_due(active: dict[JobId, Active], refresh: datetime | None, began: Pass) -> float:
    """When the sweep's next pass is due (monotonic): the soonest element's time, or the attendance file's
    refresh (``refresh``, wall time) when that is sooner."""
    refresh_in = None if refresh is None else (refresh - began.wall).total_seconds()
    return en.next_pass((e.due for e in active.values()), refresh_in, began.mono)


def arm(unarmed: set[JobId], active: dict[JobId, Active], drain: Interrupts) -> None:
    """The watches of an element's objects change only when it steps: armed once then, not each pass."""
    for job in unarmed:
        armed = active.get(job)
        if armed is not None and armed.loop is not None:
            armed.supervisor.watches.await_change(armed.loop, drain)
    unarmed.clear()


def unsettled_in_order(members: list[JobSummary]) -> deque[JobSummary]:
    """The elements to supervise, those with attempts first: they may be running and must be watched whatever
    the bound; then by sweep and index."""
    return deque(sorted((m for m in members if not m.settled),
                        key=lambda m: (m.attempts == 0, m.sweep or "", index_key(m))))
