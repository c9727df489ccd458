"""What a scheduler is asked to make, and what it says about what it made.

Shared by every scheduler adapter (local, Slurm, fakes): the adapter translates its own states
and messages into these values, and the domain decides from them alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.recovery_settings import SignalBefore
from dunscaith.domain.model.jobs.resources import NO_NEEDS, Resources


@dataclass(frozen=True, slots=True)
class ObjectSpec:
    """One object to create, held: the job's name, this attempt's nonce and what to run."""

    name: JobId
    nonce: Nonce
    command: tuple[str, ...] = ()  # argv, when the job is a command
    script: str | None = None  # batch script text, when the job is a script
    workdir: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    options: tuple[str, ...] = ()  # the scheduler's own options from the job spec (e.g. sbatch flags)
    resources: Resources = NO_NEEDS  # what the job needs: the adapter translates it, or refuses it
    signal_before: SignalBefore | None = None  # a signal sent this long before the time limit (--signal-before)


class ObjectState(StrEnum):
    HELD = "held"  # created, not released
    PENDING = "pending"  # released, waiting to start
    RUNNING = "running"
    STOPPING = "stopping"  # being cancelled or requeued, not ended yet
    COMPLETED = "completed"  # ended with exit code 0
    FAILED = "failed"  # ended with a non-zero exit code or a signal
    CANCELLED = "cancelled"
    TIMEOUT = "timeout"
    OUT_OF_MEMORY = "out_of_memory"
    NODE_FAIL = "node_fail"
    BOOT_FAIL = "boot_fail"
    PREEMPTED = "preempted"
    REQUEUED = "requeued"
    UNKNOWN = "unknown"  # ended, but how is not known (its owner could not record the end): a person decides


ENDED: frozenset[ObjectState] = frozenset(
    {
        ObjectState.COMPLETED,
        ObjectState.FAILED,
        ObjectState.CANCELLED,
        ObjectState.TIMEOUT,
        ObjectState.OUT_OF_MEMORY,
        ObjectState.NODE_FAIL,
        ObjectState.BOOT_FAIL,
        ObjectState.PREEMPTED,
        ObjectState.UNKNOWN,
    }
)
NOT_STARTED: frozenset[ObjectState] = frozenset({ObjectState.HELD, ObjectState.PENDING})


@dataclass(frozen=True, slots=True)
class ObjectView:
    """One object as the scheduler reported it."""

    object_id: ObjectId
    name: JobId
    nonce: Nonce | None  # None when the object carries no nonce we can read
    state: ObjectState
    owner: str  # the user the scheduler says owns it; another user's object is foreign
    exit_code: int | None = None
    signal: int | None = None
    reason: str = ""
    started: bool = False  # has it ever started running (a sweep never stops one that has)


@dataclass(frozen=True, slots=True)
class QueryResult:
    """The answer to one batched query for many names.

    ``complete`` is False when the scheduler could not be asked or answered in part: then an object
    absent from ``objects`` proves nothing. Even when complete, absence is not an ending: a scheduler
    forgets finished objects, so the domain treats absence as unknown until a deadline passes.
    """

    objects: tuple[ObjectView, ...]
    complete: bool
    detail: str = ""
    # when the scheduler was asked for this answer, when it is not the caller's own request (a shared
    # answer): an answer asked before the caller's last action says nothing about that action
    asked_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class OutputPaths:
    """Where an object's output goes, as its scheduler says; None for a stream it does not name."""

    stdout: str | None
    stderr: str | None


@dataclass(frozen=True, slots=True)
class ObjectTimes:
    """An object's times as its scheduler keeps them (display only: the record keeps its own).

    ``started`` is None for an object that never started (cancelled while pending: sacct's
    ``Start=None``), ``ended`` None while it has not ended; ``source`` says where they were read
    (``sacct``, ``squeue``, ``local``), since a scheduler may keep them in more than one place."""

    submitted: datetime | None
    started: datetime | None
    ended: datetime | None
    source: str


class CreateOutcome(StrEnum):
    CREATED = "created"  # the scheduler answered with an id
    REFUSED = "refused"  # an answer that proves no object was made
    UNKNOWN = "unknown"  # no answer, a timeout, a killed client: an object may exist


@dataclass(frozen=True, slots=True)
class CreateAnswer:
    outcome: CreateOutcome
    object_id: ObjectId | None = None
    detail: str = ""
