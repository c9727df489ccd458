"""What a job waits for before it may be created: other jobs or sweeps, by name (docs/pipelines.md).

Recorded in the job's first event (``JobSpec.waits``), read by the dependency rule
(domain/model/jobs/dependencies.py). By name, never by a scheduler's id: a new attempt or a requeue of
what is waited for changes nothing in the waiting job's record.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from dunscaith.domain.model.jobs.ids import JobId


class DependencyKind(StrEnum):
    """How a job waits for another job or a sweep (docs/pipelines.md, "When a step waits")."""

    AFTER = "after"  # until every job of it succeeded (a sweep: every element)
    AFTER_ANY = "after_any"  # until every job of it has its outcome, whatever it is
    AFTER_EACH = "after_each"  # element i of a sweep waits until element i of another sweep succeeded


@dataclass(frozen=True, slots=True)
class PipelineMember:
    """That a job is a step of a pipeline (or an element of a step's sweep): recorded in its first event,
    never changed, so the pipeline's jobs are found by what they recorded, never by their names' prefix."""

    pipeline: JobId  # the pipeline's name: what the user gives status, supervise, cancel...
    step: str  # the step's own name ("reduce"): its job is PIPELINE.STEP


@dataclass(frozen=True, slots=True)
class Dependency:
    """One job or sweep a job waits for, and how."""

    on: JobId  # a job's name, or a sweep's (then its elements are what is waited for)
    kind: DependencyKind


def same_indices_problem(mine: str, theirs: str, my_indices: set[int], their_indices: set[int]) -> str | None:
    """Why sweep ``mine`` cannot wait element by element (after_each) for sweep ``theirs``: their indices
    differ (the first index only one has is named); None when they are the same."""
    if my_indices == their_indices:
        return None
    only_mine, only_theirs = sorted(my_indices - their_indices), sorted(their_indices - my_indices)
    said = f'index {only_mine[0]} is in "{mine}" only' if only_mine else f'index {only_theirs[0]} is in "{theirs}" only'
    return (
        f'"{mine}" has {len(my_indices):,} elements and "{theirs}" {len(their_indices):,}, not the same indices '
        f"({said}); element i waits for element i, so both need the same indices"
    )


def not_here_problem(flag: str, dependency: str, pointer_host: str | None) -> str:
    """Why ``--after A`` (``flag``, ``dependency``) is refused when this store holds no record of A:
    ``pointer_host`` is the host a pointer of the user's says A is recorded on, if any. A store of one host
    cannot show another host's records, so the waiting job could never see A's outcome."""
    if pointer_host is None:
        return f"{flag} {dependency}: no job or sweep of that name is recorded (dunscaith list shows them)"
    return (
        f"{flag} {dependency}: it is recorded on host {pointer_host}, in that host's own store, where this "
        f"job could never see its outcome: submit this job on {pointer_host}, or share one store between "
        "the login nodes (PostgreSQL: docs/record-backing.md)"
    )
