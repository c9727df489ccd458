"""What a query reports for one local object, from its steps, its launch lock and its instance."""

from __future__ import annotations

import signal
from collections.abc import Callable

from dunscaith.adapters.scheduler.local.instance import InstanceReading
from dunscaith.adapters.scheduler.local.layout import StoredSpec
from dunscaith.adapters.scheduler.local.steps import Phase
from dunscaith.domain.model.jobs.objects import ObjectState, ObjectView
from dunscaith.domain.model.remote.control import INSTANCE
from dunscaith.domain.model.remote.state import State, blocked_text

STRANDED_RELEASE = "a release was interrupted before it started the object; release it again to start it"
STRANDED_START = (
    "the process owner never started its instance (the release was interrupted, or the owner failed early: "
    "see the object's stderr); nothing ran"
)
LOST_OWNER = "the process owner ended without recording an outcome; the worker may have outlived it"


def view_of(
    spec: StoredSpec, owner: str, phase: Phase, launch_live: bool, reading: InstanceReading | None
) -> ObjectView:
    """``launch_live`` must be observed before ``reading``: the process owner holds the launch lock
    for its whole life, so "not live, then no instance" means no process owner will ever write one."""

    def view(
        state: ObjectState,
        *,
        started: bool = False,
        exit_code: int | None = None,
        signal_number: int | None = None,
        reason: str = "",
    ) -> ObjectView:
        return ObjectView(
            object_id=spec.object_id,
            name=spec.name,
            nonce=spec.nonce,
            state=state,
            owner=owner,
            exit_code=exit_code,
            signal=signal_number,
            reason=reason,
            started=started,
        )

    if phase is Phase.HELD:
        return view(ObjectState.HELD)
    if phase is Phase.CANCELLED:
        return view(ObjectState.CANCELLED, reason="cancelled before it started")
    if phase is Phase.PENDING:
        return view(ObjectState.PENDING, reason="" if launch_live else STRANDED_RELEASE)
    state = State.EMPTY if reading is None else reading.state
    if state is State.EMPTY:
        return view(ObjectState.PENDING) if launch_live else view(ObjectState.BOOT_FAIL, reason=STRANDED_START)
    if state is State.LAUNCHING:
        return view(ObjectState.PENDING)
    assert reading is not None
    return _instance_view(view, state, reading)


def _instance_view(view: Callable[..., ObjectView], state: State, reading: InstanceReading) -> ObjectView:
    """The object once its process owner wrote an instance: from its state and records."""
    records = reading.records
    if state is State.FAILED:
        failure = records.failure
        detail = f"{failure.stage}: {failure.message}" if failure else "it could not be started"
        return view(ObjectState.FAILED, reason=f"could not start ({detail})")
    note = records.blocked
    if state is State.RUNNING:
        return view(ObjectState.RUNNING, started=True, reason=blocked_text(note, True) if note else "")
    if state is State.TERMINATING:
        return view(ObjectState.STOPPING, started=True,
                    reason="terminating" + (f"; {blocked_text(note, True)}" if note else ""))
    if state is State.LOST and note is not None:
        if note.file == INSTANCE:  # the worker is released only once instance.json is written: nothing ran
            return view(ObjectState.BOOT_FAIL, reason=f"the process owner could not write {INSTANCE} "
                                                      f"({note.reason}); nothing ran")
        return view(ObjectState.UNKNOWN, started=records.instance is not None, reason=blocked_text(note, False))
    if state is State.LOST:
        return view(ObjectState.FAILED, started=records.instance is not None, reason=LOST_OWNER)
    return _ended_view(view, reading)


def _ended_view(view: Callable[..., ObjectView], reading: InstanceReading) -> ObjectView:
    """An object with an outcome: terminated on request (the grace kill named), or ended by itself."""
    records = reading.records
    outcome = records.outcome
    assert outcome is not None
    if records.terminated is not None:
        ended = ObjectState.CANCELLED
        killed = records.killed is not None and outcome.signal == signal.SIGKILL
        reason = "killed after the grace" if killed else "terminated on request"
    else:
        ended = ObjectState.COMPLETED if outcome.exit_code == 0 else ObjectState.FAILED
        reason = ""
    return view(ended, started=True, exit_code=outcome.exit_code, signal_number=outcome.signal, reason=reason)
