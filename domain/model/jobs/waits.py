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
class Dependency:
    """One job or sweep a job waits for, and how."""

    on: JobId  # a job's name, or a sweep's (then its elements are what is waited for)
    kind: DependencyKind
