"""Residual sweeps: drop expired entries (reporting each), then stop the objects nobody owns.

Per cluster on the list: ONE query for every name on it (live objects only: a sweep never acts on
an ended one), the domain's rule ``sweepable`` on the answer, and, when it chose anything, ONE
``cancel_if_not_started`` on exactly those ids, which the scheduler itself skips if one started
meanwhile. A sweep never stops an object that has started, nor a foreign one; for an unknown or
abandoned attempt only that attempt's object (by its nonce), for a pruned job any not-started object
of its name. A sweep never fails the command it rides on: what it could not do is reported, and the
next sweep tries again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dunscaith.domain.model.jobs.ids import JobId, ObjectId
from dunscaith.domain.model.jobs.residual import ResidualEntry, Targets, sweepable, targets_by_cluster
from dunscaith.domain.model.shown import reason
from dunscaith.ports.clock import Clock
from dunscaith.ports.residual import ResidualList
from dunscaith.ports.scheduler import Scheduler


@dataclass
class SweepReport:
    stopped: list[tuple[str, ObjectId]] = field(default_factory=list)  # (cluster, object)
    swept: dict[str, list[JobId]] = field(default_factory=dict)  # cluster -> the names looked up there in full
    expired: list[ResidualEntry] = field(default_factory=list)
    kept: list[ResidualEntry] = field(default_factory=list)  # entries still on the list
    problems: list[str] = field(default_factory=list)
    damaged: list[tuple[JobId, str, str]] = field(default_factory=list)  # (job, key, why): entries that do not read


class Sweep:
    def __init__(self, residual: ResidualList, schedulers: Callable[[str], Scheduler], clock: Clock) -> None:
        self._residual = residual
        self._schedulers = schedulers  # a cluster's name -> its scheduler (raises if it cannot be opened)
        self._clock = clock

    def expire(self) -> SweepReport:
        """Drop the entries 30 days old; each one dropped is in the report. No scheduler is asked."""
        report = SweepReport()
        now = self._clock.now()
        try:
            readings = self._residual.entries()
        except Exception as exc:  # the home cannot be read: nothing to sweep now
            report.problems.append(f"the residual list cannot be read: {exc}")
            return report
        for reading in readings:
            entry = reading.entry
            if entry is None:
                report.problems.append(f"residual entry {reading.job}/{reading.key}: {reading.problem}")
                report.damaged.append((reading.job, reading.key, reading.problem or "damaged"))
            elif entry.expired(now):
                try:
                    self._residual.drop(entry)
                    report.expired.append(entry)
                except Exception as exc:
                    report.problems.append(str(exc))
                    report.kept.append(entry)
            else:
                report.kept.append(entry)
        return report

    def __call__(self) -> SweepReport:
        report = self.expire()
        for cluster, targets in sorted(targets_by_cluster(report.kept).items()):
            self._sweep_cluster(cluster, targets, report)
        return report

    def _sweep_cluster(self, cluster: str, targets: Targets, report: SweepReport) -> None:
        names = sorted(targets)
        try:
            scheduler = self._schedulers(cluster)
            found = scheduler.query(names, confirm_absent=False)
            chosen = sweepable(found.objects, targets, scheduler.user)
            # An answer in part still shows real objects: those it shows are judged like any other.
            stopped = scheduler.cancel_if_not_started(chosen) if chosen else []
        except Exception as exc:  # learned nothing, stopped (perhaps) nothing: the next sweep tries again
            report.problems.append(f"sweep of cluster {cluster}: {reason(exc)}")
            return
        report.stopped += [(cluster, oid) for oid in stopped]
        if found.complete:
            report.swept[cluster] = names
        else:
            report.problems.append(f"sweep of cluster {cluster}: the scheduler answered in part: {found.detail}")
