"""Where a job may be acted on. A record in a store that several login nodes share is reachable from
all of them, and so are a cluster's objects; a local-scheduler object is a process of one host, so its
job is acted on only there (seed 000: the objects still live on a cluster)."""

from __future__ import annotations

from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.state import JobState


def bound_elsewhere(state: JobState, here: HostIdentity, host_bound: bool) -> str | None:
    """Why this host may not act on the job, in one sentence; None when it may.

    Only a job whose objects are bound to a host (``host_bound``: what its scheduler kind declares) and
    whose record names one is bound: a record in a host's own store names that store's host, which is this
    one (the store was opened here)."""
    if not host_bound or not state.host:
        return None
    if state.host == here.hostname and state.machine_id in (None, here.machine_id):
        return None
    return (f"job {state.name} runs on the {state.spec.adapter} scheduler of host {state.host}, whose processes "
            f"are its objects: run the command on {state.host}")
