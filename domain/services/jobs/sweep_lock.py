"""One supervisor per sweep: the lock of the sweep's own name, held by whoever supervises its elements.

Each element has its lock, taken when its supervision starts. A sweep's supervisor with --max-running N
starts N elements and takes the others' locks only as slots free, so the elements waiting for a slot were
free for anyone: shown Unattended while their supervisor lived, and taken by a second ``supervise NAME``,
which started them beside the first's elements (twice N at once), the first then ending with exit 5 on
elements the second held. So every supervision of a sweep's elements (``submit``, ``supervise NAME``,
``supervise --all``) holds the lock of the sweep's name for as long as it supervises them: the kernel or
the server lets go of it with the process, as of any job's lock. It is a name no job has (a job is never
recorded under a sweep's name). While it is held, the elements of that sweep belong to its holder: none
is Unattended (``attendance.unattended_here``) and no other supervision takes any of them (``supervise
NAME-7`` and ``reconcile NAME-7`` are refused too), so --max-running holds whoever supervises; after the
holder dies (kill -9), the next supervisor takes every element and counts the ones already running.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.ports.job_store import JobStore, LockBusy, StoreError


class SweepSupervisedElsewhere(JobsError):
    """Another live process supervises the sweep (it holds the sweep's lock): nothing is taken."""

    def __init__(self, sweep: JobId, what: str = "sweep") -> None:
        held = ("every element it has not started yet): nothing was taken, and its --max-running holds"
                if what == "sweep" else "every step it has not started yet): nothing was taken")
        super().__init__(f"{what} {sweep} is supervised by another live process (the submit or supervise of it "
                         f"still running, which holds {held}; see it with: dunscaith status {sweep}")
        self.sweep = sweep


@contextlib.contextmanager
def holding_sweep(store: JobStore, sweep: JobId, what: str = "sweep") -> Iterator[None]:
    """Hold ``sweep``'s lock (or a pipeline's: ``what``) while inside; SweepSupervisedElsewhere when another
    live process holds it."""
    with contextlib.ExitStack() as stack:
        if not take_sweep(stack, store, sweep):
            raise SweepSupervisedElsewhere(sweep, what)
        yield


def take_sweep(stack: contextlib.ExitStack, store: JobStore, sweep: JobId) -> bool:
    """``sweep``'s lock taken and held until ``stack`` closes; False when another live process holds it.
    It is never beaten: nothing loops on it, and what shows a live loop is each element's own lock."""
    try:
        stack.enter_context(store.lock(sweep))
    except LockBusy:
        return False
    return True


def taken_sweeps(stack: contextlib.ExitStack, store: JobStore, members: list[JobSummary]) -> list[JobSummary]:
    """``members`` less the elements of a sweep whose lock another live process holds (it took the sweep
    since they were found Unattended); the lock of every other sweep among them taken, held until ``stack``
    closes (``supervise --all``)."""
    sweeps = sorted({m.sweep for m in members if m.sweep is not None})
    free = {sweep for sweep in sweeps if take_sweep(stack, store, sweep)}
    return [m for m in members if m.sweep is None or m.sweep in free]


def refuse_if_supervised(store: JobStore, sweep: JobId, what: str = "sweep") -> None:
    """For a supervision of one element (``supervise NAME-7``): SweepSupervisedElsewhere while a live
    process supervises its sweep (the element may be one it waits to start). The sweep's lock is only
    looked at, not held, so the sweep's other elements stay Unattended as they are."""
    try:
        held = store.health(sweep).held
    except StoreError:  # not known: the element's own lock still keeps two supervisors off it
        return
    if held:
        raise SweepSupervisedElsewhere(sweep, what)
