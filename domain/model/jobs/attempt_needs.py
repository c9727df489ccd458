"""Each attempt's own needs: what it asked of the scheduler, and why it asked for that.

An attempt asks for the job's needs (``JobSpec.resources``) unless something changed them for it: a
``resubmit --memory 8G`` (cause ``resubmit``), the recovery policy's growth after an end out of memory or
past the time limit (``out-of-memory``, ``time-limit``), or a checkpoint requeue, which keeps the needs
(``checkpoint``). Its ``submitting`` event, durable before the create request, records them whole
whenever they differ from the job's, or whenever a cause made it, so a record tells each attempt's needs
and the supervisor that sends the request (or its successor after a crash) sends exactly those.
"""

from __future__ import annotations

from dataclasses import fields, replace
from enum import StrEnum
from typing import Any

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import Nonce
from dunscaith.domain.model.jobs.objects import ObjectSpec
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.jobs.spec import JobSpec

NEED_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Resources))


class AttemptCause(StrEnum):
    """What made an attempt with needs of its own (or a requeue at the time limit)."""

    RESUBMIT = "resubmit"  # the user's resubmit, with needs given or not
    OUT_OF_MEMORY = "out-of-memory"  # the recovery policy grew the memory
    TIME_LIMIT = "time-limit"  # the recovery policy grew the time limit
    CHECKPOINT = "checkpoint"  # requeued at the time limit after its signal: same needs, not a failure


def changed(base: Resources, change: Resources) -> Resources:
    """``base`` with each need ``change`` gives: the others stay. A gpu count given takes its type with it
    (``--gpus 2`` after ``a100:1`` asks for 2 of any type, as submit's ``--gpus 2`` would)."""
    given: dict[str, Any] = {name: getattr(change, name) for name in NEED_NAMES if getattr(change, name) is not None}
    if change.gpus is not None:
        given["gpu_type"] = change.gpu_type
    return replace(base, **given)


def needs_fields(needs: Resources | None) -> dict[str, Any]:
    """The event fields that record ``needs`` (none for None)."""
    return {} if needs is None else {name: getattr(needs, name) for name in NEED_NAMES}


def requested_needs(event: ev.Requested) -> Resources | None:
    """The needs a request gives the next attempt (only those named), or None when it names none."""
    needs = Resources(*(getattr(event, name) for name in NEED_NAMES))
    return needs if needs else None


def submitting_needs(event: ev.Submitting, spec: JobSpec) -> Resources:
    """The needs an attempt asked for: those its ``submitting`` records, else the job's."""
    if event.cause is None and all(getattr(event, name) is None for name in NEED_NAMES):
        return spec.resources
    return Resources(*(getattr(event, name) for name in NEED_NAMES))


def submitting(
    attempt: int, nonce: Nonce, spec: JobSpec, needs: Resources | None, cause: str | None, why: str | None
) -> ev.Submitting:
    """The ``submitting`` of a new attempt: the job's needs unless ``needs`` differ or a cause made it
    (then recorded whole, with the cause and why)."""
    if cause is None and (needs is None or needs == spec.resources):
        return ev.Submitting(attempt, nonce)
    return ev.Submitting(
        attempt,
        nonce,
        **needs_fields(spec.resources if needs is None else needs),
        cause=None if cause is None else str(cause),
        why=why,
    )


def object_spec(spec: JobSpec, event: ev.Submitting) -> ObjectSpec:
    """What the create request of the attempt ``event`` started asks for: its own needs."""
    return replace(spec.object_spec(event.nonce), resources=submitting_needs(event, spec))
