"""Settlement: a record settles when every order is final and no work is outstanding."""

from __future__ import annotations

from dataclasses import dataclass

from dunscaith.domain.model.jobs.notices import owed
from dunscaith.domain.model.jobs.objects import ENDED, ObjectState
from dunscaith.domain.model.jobs.state import AttemptState, JobState


@dataclass(frozen=True, slots=True)
class Outstanding:
    attempt: int
    what: str


def outstanding(state: JobState, *, delivering: bool = False) -> list[Outstanding]:
    """What keeps the record open: objects not ended, attempts whose object may exist unseen, and
    (when an escalation command is configured) escalations it has not yet received, and the notices the
    job was submitted to give (domain/model/jobs/notices.py) that notify.command has not yet received."""
    left: list[Outstanding] = [Outstanding(0, f"notice {n.id} not yet delivered") for n in owed(state)]
    if delivering:
        for i, esc in enumerate(state.escalations):
            if not esc.delivered:
                left.append(Outstanding(esc.attempt or 0, f"escalation {i + 1} ({esc.reason}) not yet delivered"))
    for a in state.attempts:
        if a.residual:
            continue  # on the residual list: sweeps look after its object
        if a.order in (AttemptState.SUBMITTING, AttemptState.UNKNOWN):
            left.append(Outstanding(a.number, f"attempt {a.number}: unknown outcome, its object may still appear"))
        elif a.has_object and a.object_state not in ENDED and a.order is not AttemptState.REFUSED:
            state_text = a.object_state or ObjectState.HELD
            doing = " (cancel requested)" if a.cancelling else ""
            left.append(Outstanding(a.number, f"attempt {a.number}: object {a.object_id} is {state_text}{doing}"))
    return left
