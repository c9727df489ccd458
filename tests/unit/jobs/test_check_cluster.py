"""``dunscaith check CLUSTER``'s use case over a fake scheduler and probe: failures first."""

from __future__ import annotations

import itertools

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.residual.memory import InMemoryResidualList
from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.domain.model.jobs.check import CHECK_FAILED_EXIT, Probe, Result
from dunscaith.domain.model.jobs.objects import ObjectState
from dunscaith.domain.model.jobs.residual import ResidualReason
from dunscaith.domain.services.jobs.check import CheckCluster


class ScriptedProbe:
    def __init__(self, controller: Probe, accounting: Probe | None = None) -> None:
        self._controller = controller
        self._accounting = accounting or Probe(Result.OK, "sacct answers")
        self.asked: list[str] = []

    def controller(self) -> Probe:
        self.asked.append("controller")
        return self._controller

    def accounting(self) -> Probe:
        self.asked.append("accounting")
        return self._accounting


UP = Probe(Result.OK, "slurmctld at vm answers")


def _check(probe: ScriptedProbe, scheduler: FakeScheduler,
           residual: InMemoryResidualList | None = None) -> tuple[CheckCluster, InMemoryResidualList]:
    residual = residual if residual is not None else InMemoryResidualList()
    tokens = (f"{n:016x}" for n in itertools.count(1))
    return CheckCluster(probe, scheduler, residual, FakeClock(), lambda: next(tokens), "hpc", "slurm"), residual


def _results(report: object) -> list[tuple[str, Result]]:
    return [(line.check, line.result) for line in report.lines]  # type: ignore[attr-defined]


def test_a_controller_that_is_not_reached_fails_and_nothing_is_sent_to_it() -> None:
    scheduler = FakeScheduler()
    probe = ScriptedProbe(Probe(Result.FAILED, "slurmctld at vm:1 is DOWN"))
    report = _check(probe, scheduler)[0]()
    assert _results(report) == [("controller", Result.FAILED), ("accounting", Result.NOT_TRIED),
                                ("held object", Result.NOT_TRIED)]
    assert report.exit_code == CHECK_FAILED_EXIT and not report.passed
    assert probe.asked == ["controller"] and scheduler.count("create_held") == 0


def test_a_refused_held_object_fails_the_check() -> None:
    scheduler = FakeScheduler()
    scheduler.refuse_next_create("sbatch: error: Invalid account")
    report = _check(ScriptedProbe(UP), scheduler)[0]()
    assert report.lines[-1].result is Result.FAILED and "Invalid account" in report.lines[-1].detail
    assert report.exit_code == CHECK_FAILED_EXIT


def test_a_held_object_whose_create_was_not_answered_goes_on_the_residual_list() -> None:
    scheduler = FakeScheduler()
    scheduler.lose_next_create_reply("sbatch gave no answer in time")
    report, residual = _check(ScriptedProbe(UP), scheduler)
    done = report()
    line = done.lines[-1]
    assert line.result is Result.FAILED and "it is on the residual list" in line.detail
    [entry] = residual.kept.values()
    [made] = scheduler.objects().values()
    assert entry.reason is ResidualReason.UNKNOWN and entry.cluster == "hpc" and entry.adapter == "slurm"
    assert (entry.job, entry.nonce) == (made.view.name, made.view.nonce)  # the sweep stops exactly that one


def test_a_held_object_that_could_not_be_cancelled_fails_and_goes_on_the_residual_list() -> None:
    scheduler = FakeScheduler()
    scheduler.fail_next("cancel_if_not_started", "scancel: no answer")
    report, residual = _check(ScriptedProbe(UP), scheduler)
    line = report().lines[-1]
    assert line.result is Result.FAILED and "scancel: no answer" in line.detail
    assert len(residual.kept) == 1


def test_a_cluster_without_accounting_passes_and_says_so() -> None:
    scheduler = FakeScheduler()
    report = _check(ScriptedProbe(UP, Probe(Result.NOT_KEPT, "not kept")), scheduler)[0]()
    assert report.passed and report.exit_code == 0
    assert _results(report)[1] == ("accounting", Result.NOT_KEPT)


def test_every_check_passes_and_the_test_object_is_made_held_and_cancelled_never_started() -> None:
    scheduler = FakeScheduler()
    report, residual = _check(ScriptedProbe(UP), scheduler)
    done = report()
    assert done.passed and _results(done) == [("controller", Result.OK), ("accounting", Result.OK),
                                              ("held object", Result.OK)]
    [made] = scheduler.objects().values()
    assert made.view.name.startswith("dunscaith-check-") and made.view.state is ObjectState.CANCELLED
    assert made.releases == 0 and not residual.kept
