"""What one supervision loop carries, shared by the supervisor and the executor of its actions.

``Means``: the ports a supervision acts through (one place, so a test or a sweep that swaps one swaps it
for every part); ``Loop``: one job's loop as the executor left it; the settings and how it ends.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import OutputPaths
from dunscaith.domain.model.jobs.settlement import Outstanding
from dunscaith.domain.model.jobs.state import JobState
from dunscaith.ports.clock import Clock
from dunscaith.ports.crash_points import CrashPoints
from dunscaith.ports.job_progress import JobProgress
from dunscaith.ports.job_store import JobLock, JobStore
from dunscaith.ports.scheduler import Scheduler


@dataclass(frozen=True, slots=True)
class SuperviseSettings:
    poll: float = 10.0  # seconds between loops (and batched queries, while the job is young)
    poll_max: float = 160.0  # the longest interval between queries of a job that has settled in
    drain: float = 30.0  # seconds a drain may take to commit what it holds
    giveup: float = 600.0  # seconds the loop may fail to advance before the supervisor stops (exit 4)
    wait: float = 300.0  # seconds of work on what is outstanding after the outcome (then exit 5)
    supervised_every: int = 10  # supervised-at is reported at most once per this many poll intervals


SIGNAL_SLICE = 1.0  # seconds: a wait on the scheduler is cut in slices so a signal is seen within one
NEVER = datetime.max.replace(tzinfo=UTC)


class Ending(StrEnum):
    OUTCOME = "outcome"  # the job has its outcome and nothing is outstanding
    OUTSTANDING = "outstanding"  # supervise.wait ended with work left
    GAVE_UP = "gave-up"  # the loop could not advance for longer than supervise.giveup
    DRAINED = "drained"  # a stop was requested; everything received is committed
    BLOCKED = "blocked"  # it waits for jobs one of which ended without success: nothing was created


@dataclass(frozen=True, slots=True)
class SupervisionEnd:
    ending: Ending
    state: JobState | None
    left: tuple[Outstanding, ...] = ()
    detail: str = ""


def output_paths(scheduler: Scheduler, object_id: ObjectId) -> OutputPaths:
    """Where the released object's output goes, for the record; display only, so never fatal."""
    try:
        return scheduler.output_paths(object_id) or OutputPaths(None, None)
    except Exception:  # a scheduler that could not say: the record just lacks the paths
        return OutputPaths(None, None)


def new_nonce() -> Nonce:
    return Nonce(secrets.token_hex(8))


@dataclass
class Loop:
    state: JobState
    unsaved: list[ev.Event] = field(default_factory=list)  # answers received but not yet durable
    known: int = 0  # events of the record reflected in ``state``
    doubt: bool = False  # an append failed: it may or may not have landed
    unsent: ev.Submitting | None = None  # a create decided but not sent (its "submitting" not yet durable)
    last_ok: float = 0.0
    problem: str = ""
    asked_at: datetime | None = None  # when the scheduler was last queried
    answered: bool = False  # whether that query was answered whole
    lock: JobLock | None = None  # checked right before every request that changes the scheduler's objects
    lost: str = ""  # the lock is gone: nothing more is sent or written by this actor
    quiet: int = 0  # answered queries since the record last changed: the polls back off with it
    acted_at: datetime | None = None  # when this supervisor's last scheduler action returned
    ask_now: bool = False  # the scheduler said an object changed, or an answer was too old: ask at once
    noted: str = ""  # the running object's reason last said in the live view ("disk full: ...")
    announced: datetime | None = None  # the next loop its last beat announced (the lock's health, display only)


@dataclass
class Means:
    """The ports one supervision acts through."""

    store: JobStore
    scheduler: Scheduler
    clock: Clock
    crash: CrashPoints
    progress: JobProgress
