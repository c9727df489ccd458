"""What goes wrong on a real Grid Engine (../shared/notes/gridengine.md "traps"): a lost or cut qsub reply is
unknown and found by its nonce, never resent; a refusal is a refusal; "unable to send message to qmaster" is
unknown; a job deleted before it ran (no accounting record, ever) is absent, not waited for."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.gridengine import GridEngineConfig, GridEngineScheduler
from dunscaith.domain.model.jobs.ids import JobId, ObjectId
from dunscaith.domain.model.jobs.objects import ENDED, CreateOutcome, ObjectSpec, ObjectState
from dunscaith.domain.model.jobs.resources import Resources
from tests.infra.gridengine import GridEngineTestCluster
from tests.integration.gridengine.conftest import bin_dir, new_name, wait_for

pytestmark = pytest.mark.slow

_UNREACHABLE = (
    'echo "error: commlib error: got select error (Connection refused)" >&2; '
    'echo "Unable to run job: unable to send message to qmaster using port 6444 on host \\"vm\\": got send '
    'error" >&2; echo "Exiting." >&2; exit 1'
)


def _with(config: GridEngineConfig, tmp: str, qsub: str) -> GridEngineScheduler:
    return GridEngineScheduler(dataclasses.replace(config, bin_dir=bin_dir(Path(tmp), {"qsub": qsub})))


def _mine(scheduler: GridEngineScheduler, name: JobId, nonce: str) -> list[ObjectId]:
    result = scheduler.query([name], confirm_absent=True)
    assert result.complete, result
    return [v.object_id for v in result.objects if v.nonce == nonce]


def test_a_lost_qsub_reply_is_unknown_and_the_job_is_found_by_its_nonce_held(
    config: GridEngineConfig, scheduler: GridEngineScheduler, tmp_path: Path
) -> None:
    # the real qsub makes the job, and its answer is replaced by qmaster's "unable to send message" text
    lossy = _with(config, f"{tmp_path}/bin", f'"$REAL/qsub" "$@" > /dev/null 2>&1; {_UNREACHABLE}')
    name, nonce = new_name()
    answer = lossy.create_held(ObjectSpec(name, nonce, command=("sleep", "60")))
    assert (answer.outcome, answer.object_id) == (CreateOutcome.UNKNOWN, None), answer
    [found] = [v for v in scheduler.query([name], confirm_absent=True).objects if v.nonce == nonce]
    assert (found.state, found.started) == (ObjectState.HELD, False)
    assert scheduler.stop_by_name(name) == [found.object_id]
    view = wait_for(
        "cancelled",
        lambda: next((v for v in scheduler.query([name], confirm_absent=True).objects if v.state in ENDED), None),
    )
    assert (view.state, view.started, view.nonce) == (ObjectState.CANCELLED, False, nonce)


def test_qmaster_unreachable_is_unknown_never_a_refusal(config: GridEngineConfig, tmp_path: Path) -> None:
    unreachable = _with(config, f"{tmp_path}/bin", _UNREACHABLE)
    name, nonce = new_name()
    answer = unreachable.create_held(ObjectSpec(name, nonce, command=("true",)))
    assert answer.outcome is CreateOutcome.UNKNOWN, answer
    assert "unable to send message to qmaster" in answer.detail


@pytest.mark.parametrize("delay_ms", [0, 5, 20, 60, 150])
def test_a_qsub_killed_with_its_reply_in_flight_is_unknown_and_makes_at_most_one_job(
    config: GridEngineConfig, scheduler: GridEngineScheduler, tmp_path: Path, delay_ms: int
) -> None:
    # kill -9 of qsub itself, some ms after it started: the notes saw jobs made though qsub printed nothing
    killer = f'"$REAL/qsub" "$@" & pid=$!; sleep {delay_ms / 1000:.3f}; kill -9 $pid 2>/dev/null; wait $pid; kill -9 $$'
    cut = _with(config, f"{tmp_path}/bin", killer)
    name, nonce = new_name()
    answer = cut.create_held(ObjectSpec(name, nonce, command=("sleep", "60")))
    assert answer.outcome in (CreateOutcome.UNKNOWN, CreateOutcome.CREATED), answer
    assert answer.outcome is CreateOutcome.UNKNOWN or answer.object_id is not None
    made = _mine(scheduler, name, nonce)
    assert len(made) <= 1, made  # one request, never resent: at most the one job it may have made
    for object_id in made:
        assert scheduler.query([name], confirm_absent=False).objects[0].state is ObjectState.HELD
        assert scheduler.cancel_if_not_started([object_id]) == [object_id]  # (the residual sweep's stop)


@pytest.mark.parametrize(
    ("resources", "options", "said"),
    [
        (Resources(queue="nosuch.q"), (), "unknown queue"),
        (Resources(cpus=64), (), "no suitable queues"),  # impossible: -w e refuses instead of waiting for ever
        (Resources(), ("-l", "nosuch=1"), "unknown resource"),
    ],
)
def test_a_refusal_is_a_refusal_and_makes_nothing(
    scheduler: GridEngineScheduler, resources: Resources, options: tuple[str, ...], said: str
) -> None:
    name, nonce = new_name()
    answer = scheduler.create_held(ObjectSpec(name, nonce, command=("true",), resources=resources, options=options))
    assert answer.outcome is CreateOutcome.REFUSED, answer
    assert said in answer.detail
    assert scheduler.query([name], confirm_absent=True).objects == ()


def test_a_job_deleted_by_hand_before_it_ran_is_absent_at_once_not_waited_for(
    scheduler: GridEngineScheduler, sge: GridEngineTestCluster
) -> None:
    name, nonce = new_name()
    answer = scheduler.create_held(ObjectSpec(name, nonce, command=("true",)))
    assert answer.object_id is not None
    assert [v.state for v in scheduler.query([name], confirm_absent=True).objects] == [ObjectState.HELD]
    sge.run("qdel", answer.object_id)  # not through dunscaith: Grid Engine keeps no record of it, ever
    started = time.monotonic()
    result = scheduler.query([name], confirm_absent=True)
    assert (result.objects, result.complete) == ((), True)  # absent: the domain's deadline decides, not qacct
    assert time.monotonic() - started < 30  # one qstat and one qacct, no wait


def test_a_job_needing_cpus_memory_and_time_gets_them_as_grid_engine_words(
    scheduler: GridEngineScheduler, config: GridEngineConfig
) -> None:
    name, nonce = new_name()
    out = config.workdir / "needs.txt"  # type: ignore[operator]
    answer = scheduler.create_held(
        ObjectSpec(
            name,
            nonce,
            command=("sh", "-c", f'echo "$NSLOTS $PE $(ulimit -v)" > {out}'),
            resources=Resources(cpus=2, memory_mb=512, time_limit_s=120),
        )
    )
    assert answer.object_id is not None, answer
    scheduler.release(answer.object_id)
    view = wait_for(
        "the end",
        lambda: next((v for v in scheduler.query([name], confirm_absent=True).objects if v.state in ENDED), None),
    )
    assert view.state is ObjectState.COMPLETED, view
    # h_vmem is per slot: 256M asked for each of 2 slots, a 512M limit for the job as a whole (in KiB)
    assert out.read_text().split() == ["2", "smp", str(512 * 1024)]
