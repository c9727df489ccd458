"""A cluster asked what ``dunscaith check`` needs beyond the scheduler port: is it there, does it keep accounting."""

from __future__ import annotations

from typing import Protocol

from dunscaith.domain.model.jobs.check import Probe


class ClusterProbe(Protocol):
    def controller(self) -> Probe:
        """Ask the scheduler's controller to answer, bounded by the probe's own timeout (a few seconds):
        OK naming it, or FAILED saying what did not answer and why (a configuration it cannot read)."""
        ...

    def accounting(self) -> Probe:
        """Whether ended objects are kept where a supervisor can learn them after the controller forgot
        them: OK (and answering), NOT_KEPT, or FAILED (kept, or said to be, but not answering)."""
        ...
