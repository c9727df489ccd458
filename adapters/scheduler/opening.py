"""What a scheduler kind is: the module its package registers (``entrypoints/dunscaith/root/kinds.py``), and
what opening one of its clusters is given. docs/architecture.md "Add a scheduler".

A kind module (``adapters/scheduler/<kind>/kind.py``) declares its ``CAPABILITIES`` and three functions;
it imports nothing heavy at its top (the registry imports it to learn what the kind can do, on the
front door's lean paths too): its settings model and its scheduler are imported by the functions.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from dunscaith.adapters.kind_settings import ClusterSettings
    from dunscaith.domain.model.jobs.kinds import SchedulerCapabilities
    from dunscaith.ports.clock import Clock
    from dunscaith.ports.cluster_probe import ClusterProbe
    from dunscaith.ports.crash_points import CrashPoints
    from dunscaith.ports.scheduler import Scheduler

Table = TypeVar("Table", bound="ClusterSettings")


@dataclass(frozen=True, slots=True)
class Opening:
    """One cluster of the kind, as a command opens it (once for the command, closed with it)."""

    cluster: str  # its name in the configuration ([clusters.NAME])
    table: Callable[[], ClusterSettings]  # its table, validated by the kind's own model: read when asked
    state_root: Path  # this host's scheduler state (scheduler_state.root, default records.root): a kind's own files
    clock: Callable[[], Clock]
    crash: Callable[[], CrashPoints]  # the fault-injection seam (a kind's own durable steps may join it)
    say: Callable[[str], None]  # a word to the user while a call waits (on stderr)
    # ``remote terminate``'s use case in this process, for a kind whose objects run under ``dunscaith remote
    # run`` (the local scheduler): a cancel answered without starting a Python of its own
    # (instance directory, nonce, grace, wait) -> the wrapper's answer (adapters/scheduler/local/spawn.py's)
    terminate_here: Callable[[Path, str | None, float, float], Any] | None = None

    def table_as(self, model: type[Table]) -> Table:
        """Its table, as the kind's own settings model (the table was validated by the model its adapter
        names)."""
        t = self.table()
        assert isinstance(t, model)
        return t


class SchedulerKind(Protocol):
    """A scheduler kind's module, as the registry reads it."""

    @property
    def CAPABILITIES(self) -> SchedulerCapabilities:
        """What the kind declares of itself: the domain receives it (domain/model/jobs/kinds.py)."""

    def settings_model(self) -> type[ClusterSettings]:
        """The model a ``[clusters.NAME]`` table with ``adapter = "<kind>"`` is validated by."""

    def open_scheduler(self, opening: Opening) -> AbstractContextManager[Scheduler]:
        """The cluster's scheduler, inside a context the command closes (``nullcontext`` if nothing to close)."""

    def open_probe(self, opening: Opening) -> ClusterProbe:
        """What ``dunscaith check CLUSTER`` asks the cluster besides the scheduler port."""
