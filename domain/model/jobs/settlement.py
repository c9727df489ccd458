"""Settlement: a record settles when every order is final and no work is outstanding."""

from __future__ import annotations

from dataclasses import dataclass

from domain.model.jobs.objects import ENDED, ObjectState
from domain.model.jobs.state import JobState, OrderState


@dataclass(frozen=True, slots=True)
class Outstanding:
    attempt: int
    what: str


def outstanding(state: JobState) -> list[Outstanding]:
    """What keeps the record open: objects not ended, attempts whose object may exist unseen."""
    left: list[Outstanding] = []
    for a in state.attempts:
        if a.order in (OrderState.SUBMITTING, OrderState.UNKNOWN):
            left.append(Outstanding(a.number, f"attempt {a.number}: unknown outcome, its object may still appear"))
        elif a.has_object and a.object_state not in ENDED and a.order is not OrderState.REFUSED:
            state_text = a.object_state or ObjectState.HELD
            doing = " (cancel requested)" if a.cancelling else ""
            left.append(Outstanding(a.number, f"attempt {a.number}: object {a.object_id} is {state_text}{doing}"))
    return left
