"""A sweep: many related jobs (its elements) submitted together and supervised by one process.

Each element is an ordinary job, recorded under ``NAME-<index>`` with its own record, attempts and
guarantees; what makes it an element is the membership its first event records. Every rule that finds
objects by a job's name (the residual list, sweeps of strays, ``stop --emergency``) therefore finds an
element's objects by the element's own name, as it finds any job's.
"""

from __future__ import annotations

from dataclasses import dataclass

from dunscaith.domain.model.jobs.errors import BadSpec
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.names import name_problem


@dataclass(frozen=True, slots=True)
class SweepMember:
    """That a job is one element of a sweep: recorded in its first event, never changed."""

    sweep: JobId  # the sweep's name: what the user gives `status`, `supervise`, `cancel`...
    index: int  # the element's index: its job is named ``element_name(sweep, index)``
    max_running: int | None = None  # at most this many elements of the sweep run at once (None: no bound)

    def __post_init__(self) -> None:
        if self.index < 0:
            raise BadSpec(f"element index {self.index}: an index is 0 or more")
        if self.max_running is not None and self.max_running < 1:
            raise BadSpec("--max-running must be at least 1")


def element_name(sweep: JobId, index: int) -> JobId:
    """The job name of a sweep's element: the sweep's name, '-', its index (``exp-7``)."""
    name = f"{sweep}-{index}"
    problem = name_problem("element name", name)
    if problem is not None:
        raise BadSpec(f"{problem} (the sweep's name is too long for its indices)")
    return JobId(name)


def resubmit_refusal(state: str, outcome: str | None, settled: bool) -> str | None:
    """Why ``resubmit NAME --failed`` leaves an element alone (its summary's state, outcome and whether it
    settled), or None when it is one to run again: an element that failed and settled. Never one that
    succeeded (its result stands), never one that may still run (no outcome yet, or work outstanding
    after it: an object of unknown fate), never one that ended otherwise (cancelled, refused, escalated,
    abandoned: a person decided, or must). A cheap choice from summaries: each element chosen is then
    asked as any job is, and ``requests.rerun_refusal`` on its record has the last word."""
    if outcome is None:
        return f"{state}: not resubmitted (no outcome yet: it may still run)"
    if outcome != "failed":
        return f"{outcome}: not resubmitted"
    if not settled:
        return "failed: not resubmitted (not settled: an object of it may still run)"
    return None
