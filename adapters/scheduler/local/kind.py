"""The local scheduler as a kind (``adapter = "local"``, built in as the cluster ``local``): what it
declares of itself, its settings model and how it is opened (adapters/scheduler/opening.py)."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

from dunscaith.domain.model.jobs.kinds import SchedulerCapabilities
from dunscaith.domain.model.jobs.state import Action

if TYPE_CHECKING:
    from dunscaith.adapters.kind_settings import ClusterSettings
    from dunscaith.adapters.scheduler.opening import Opening
    from dunscaith.ports.cluster_probe import ClusterProbe
    from dunscaith.ports.scheduler import Scheduler

# Its objects are processes of the host that made them; an object runs once.
CAPABILITIES = SchedulerCapabilities(host_bound=True, cannot=(
    (Action.REQUEUE, "the local scheduler cannot requeue: an object runs once (use `resubmit` before it starts, "
                     "or `cancel`)"),
))


def settings_model() -> type[ClusterSettings]:
    from dunscaith.adapters.scheduler.local.settings import LocalClusterSettings

    return LocalClusterSettings


def open_scheduler(opening: Opening) -> AbstractContextManager[Scheduler]:
    from dunscaith.adapters.scheduler.local.scheduler import LocalScheduler

    crash = opening.crash()
    # the local scheduler's own durable steps of a release join the crash-point sweep as "local-<step>"
    return nullcontext(LocalScheduler(opening.state_root, checkpoint=lambda step: crash.reached(f"local-{step}"),
                                      terminate=opening.terminate_here))


def open_probe(opening: Opening) -> ClusterProbe:
    from dunscaith.adapters.scheduler.local.probe import LocalProbe

    return LocalProbe(opening.state_root)

