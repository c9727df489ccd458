"""A scheduler that makes, releases and reports objects (local processes, Slurm jobs, fakes).

No method here is ever retried by an adapter when it makes an object: ``create_held`` sends at most
one request, and when its answer is lost it says UNKNOWN.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from domain.model.jobs.ids import JobId, Nonce, ObjectId
from domain.model.jobs.objects import CreateAnswer, ObjectSpec, QueryResult


class SchedulerError(Exception):
    """The scheduler refused or failed an action on an existing object; the message says which."""


class Scheduler(Protocol):
    def create_held(self, spec: ObjectSpec) -> CreateAnswer:
        """Create one object, held (not started until released). One request, never retried."""
        ...

    def release(self, object_id: ObjectId) -> None: ...

    def hold(self, object_id: ObjectId) -> None: ...

    def requeue(self, object_id: ObjectId) -> None: ...

    def cancel(self, object_id: ObjectId) -> None: ...

    def query(self, names: Sequence[JobId]) -> QueryResult:
        """Every object carrying any of ``names``, in one request whatever the number of names."""
        ...

    def emergency_stop(self, name: JobId) -> list[ObjectId]:
        """Stop every object carrying ``name``, running ones too, with no store; what was stopped."""
        ...

    def sweep(self, targets: Mapping[JobId, frozenset[Nonce] | None]) -> list[ObjectId]:
        """Stop the residual objects of ``targets``' names: ONE batched query for every name, then stop
        only objects that never started and are not foreign, carrying one of the name's nonces (or,
        for None, any such object of the name). Never a started or running object. What was stopped."""
        ...
