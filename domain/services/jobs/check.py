"""``dunscaith check CLUSTER``: reach the controller, see accounting, make and cancel a held test object.

The test object is made as every job's is (``create_held``, one request, never retried) and never
released, so it never runs. Its create may go unanswered like any other: then it may exist, and it goes
on the residual list (as an attempt of unknown outcome), where the next sweep stops it if it appears.
"""

from __future__ import annotations

from collections.abc import Callable

from dunscaith.domain.model.jobs.check import CheckLine, CheckReport, Probe, Result, check_object_name
from dunscaith.domain.model.jobs.ids import JobId, Nonce
from dunscaith.domain.model.jobs.objects import CreateOutcome, ObjectSpec
from dunscaith.domain.model.jobs.residual import ResidualEntry, ResidualReason
from dunscaith.ports.clock import Clock
from dunscaith.ports.cluster_probe import ClusterProbe
from dunscaith.ports.residual import ResidualError, ResidualList
from dunscaith.ports.scheduler import Scheduler, SchedulerError

CONTROLLER, ACCOUNTING, HELD_OBJECT = "controller", "accounting", "held object"


class CheckCluster:
    def __init__(self, probe: ClusterProbe, scheduler: Scheduler, residual: ResidualList, clock: Clock,
                 new_token: Callable[[], str], cluster: str, adapter: str) -> None:
        self._probe = probe
        self._scheduler = scheduler
        self._residual = residual
        self._clock = clock
        self._new_token = new_token
        self._cluster = cluster
        self._adapter = adapter

    def __call__(self) -> CheckReport:
        reached = self._probe.controller()
        lines = [CheckLine(CONTROLLER, reached.result, reached.detail)]
        if reached.result is not Result.OK:
            skipped = "not tried: the controller was not reached (nothing was sent)"
            lines += [CheckLine(check, Result.NOT_TRIED, skipped) for check in (ACCOUNTING, HELD_OBJECT)]
        else:
            kept = self._probe.accounting()
            lines.append(CheckLine(ACCOUNTING, kept.result, kept.detail))
            made = self._held_object()
            lines.append(CheckLine(HELD_OBJECT, made.result, made.detail))
        return CheckReport(self._cluster, self._adapter, tuple(lines))

    def _held_object(self) -> Probe:
        name = check_object_name(self._new_token())
        nonce = Nonce(self._new_token())
        answer = self._scheduler.create_held(ObjectSpec(name=name, nonce=nonce, command=("true",)))
        if answer.outcome is CreateOutcome.REFUSED:
            return Probe(Result.FAILED, f"the scheduler refused a held object named {name}: {answer.detail}")
        if answer.outcome is CreateOutcome.UNKNOWN or answer.object_id is None:
            return Probe(Result.FAILED, f"no answer when making a held object named {name} ({answer.detail}); "
                                        f"{self._left(name, nonce)}")
        try:
            stopped = self._scheduler.cancel_if_not_started([answer.object_id])
        except SchedulerError as exc:
            stopped, problem = [], str(exc)
        else:
            problem = "the scheduler did not say it cancelled it"
        if answer.object_id in stopped:
            return Probe(Result.OK, f"made {name} held (object {answer.object_id}) and cancelled it")
        return Probe(Result.FAILED, f"made {name} held (object {answer.object_id}) but could not cancel it "
                                    f"({problem}); {self._left(name, nonce)}")

    def _left(self, name: JobId, nonce: Nonce) -> str:
        """A test object that may be left held: on the residual list, so a later sweep stops it."""
        entry = ResidualEntry(name, self._cluster, self._adapter, ResidualReason.UNKNOWN, 1, nonce, self._clock.now())
        try:
            self._residual.add(entry)
        except (ResidualError, OSError) as exc:
            return (f"it may be left held, and it could not be put on the residual list ({exc}): stop it with "
                    f"`dunscaith stop --emergency {name} --cluster {self._cluster}`")
        return "it may be left held: it is on the residual list, and the next sweep stops it if it appears"
