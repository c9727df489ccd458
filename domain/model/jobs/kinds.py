"""What a scheduler kind declares of itself, as a value the domain receives: never a table of adapter names.

Each scheduler package declares its ``CAPABILITIES`` (``adapters/scheduler/<kind>/kind.py``), registered
with its name in ``entrypoints/dunscaith/root/kinds.py``; a use case is handed ``capabilities``, a job's
``adapter`` (as its record names it) -> what that kind declared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the registry reads a kind's capabilities on the way to a forward: no job state loaded
    from dunscaith.domain.model.jobs.state import Action


@dataclass(frozen=True, slots=True)
class SchedulerCapabilities:
    # its objects are processes of the host that made them (the local scheduler): on a store that several
    # login nodes share, such a job is still acted on only where it was submitted
    host_bound: bool = False
    # what it cannot do at all, and why: refused before anything is asked
    cannot: tuple[tuple[Action, str], ...] = ()

    def refuses(self, action: Action) -> str | None:
        """Why this kind cannot do ``action`` at all, or None."""
        return next((why for cannot, why in self.cannot if cannot is action), None)


# A kind no registration declares anything for (a record of a kind no longer configured): no limit known.
ANY_KIND = SchedulerCapabilities()

Capabilities = Callable[[str], SchedulerCapabilities]  # a job's adapter -> what its kind declares


def declared_nothing(adapter: str) -> SchedulerCapabilities:
    """For a use case built without the registry (a test's fake scheduler): every kind alike."""
    return ANY_KIND
