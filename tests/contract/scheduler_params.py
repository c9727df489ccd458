"""The schedulers the scheduler contract suite runs against, one factory each.

To add one (the Slurm adapter, say):

1. write ``def make_slurm(tmp_path: Path) -> SchedulerHarness`` below. It returns the scheduler and
   the things the suite cannot know about it: how to say "a job that ends with code N"
   (``command_exiting``), "a job that runs until stopped" (``command_running``), an id that
   names no object of that scheduler (``unknown_id``), whether its objects' output lands in
   files the test can read (``writes_output``), and whether it requeues (``requeues``). When the
   real component is missing, call ``pytest.skip("<component> is not available: <why>")``, never fail;
2. add it to ``FACTORIES`` (``"slurm": make_slurm``, and ``"shared-slurm": shared(make_slurm)`` so
   the shared query runs in front of it too) and mark both in ``PARAMS`` if they are slow
   (``pytest.param("slurm", marks=[pytest.mark.slow, pytest.mark.slurm])``).

Every test gets fresh job names from ``harness.name()``, and at teardown every object made under
those names is stopped with ``stop_by_name``, so a failing test leaves nothing running.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.adapters.scheduler.local import LocalScheduler
from dunscaith.adapters.scheduler.local.spawn import default_dunscaith
from dunscaith.adapters.scheduler.shared_query import sharing
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import CreateOutcome, ObjectSpec, QueryResult
from dunscaith.ports.scheduler import Scheduler

SETTLE_SECONDS = 60.0


@dataclass
class SchedulerHarness:
    scheduler: Scheduler
    command_exiting: Callable[[int], tuple[str, ...]]
    command_running: tuple[str, ...]
    unknown_id: ObjectId
    writes_output: bool = True  # the objects' stdout and stderr are files this test can read
    requeues: bool = True  # requeue puts a started object back in the queue (Slurm's meaning), else refuses
    names: list[JobId] = field(default_factory=list)

    def name(self) -> JobId:
        job = JobId(f"contract-{uuid.uuid4().hex[:12]}")
        self.names.append(job)
        return job

    def spec(self, name: JobId, command: tuple[str, ...], nonce: str | None = None) -> ObjectSpec:
        return ObjectSpec(name=name, nonce=Nonce(nonce or uuid.uuid4().hex), command=command)

    def created(self, spec: ObjectSpec) -> ObjectId:
        """Create ``spec``'s object, which must be created; its id."""
        answer = self.scheduler.create_held(spec)
        assert answer.outcome is CreateOutcome.CREATED, answer
        assert answer.object_id is not None
        return answer.object_id

    def settle(self, names: Sequence[JobId], until: Callable[[QueryResult], bool]) -> QueryResult:
        """Query until ``until`` holds: a deadline, never a fixed sleep. Fails with the last answer."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            result = self.scheduler.query(names, confirm_absent=True)
            if until(result):
                return result
            if time.monotonic() > deadline:
                pytest.fail(f"the scheduler never reached the expected state; last answer: {result}")
            time.sleep(0.05)

    def stop_everything(self) -> None:
        for job in self.names:
            try:
                self.scheduler.stop_by_name(job)
            except Exception:  # teardown: the test's own assertion is what matters
                pass


def _exit_code_of_contract_command(spec: ObjectSpec) -> int | None:
    match spec.command:
        case ("sh", "-c", text) if text.startswith("exit "):
            return int(text.removeprefix("exit "))
    return None  # anything else runs until stopped


def _command_exiting(code: int) -> tuple[str, ...]:
    return ("sh", "-c", f"exit {code}")


def make_fake(tmp_path: Path) -> SchedulerHarness:
    return SchedulerHarness(
        scheduler=FakeScheduler(exit_code_of=_exit_code_of_contract_command),
        command_exiting=_command_exiting,
        command_running=("sleep", "300"),
        unknown_id=ObjectId("fake-999999"),
        writes_output=False,
    )


@cache
def remote_run_problem() -> str:
    """Why ``dunscaith remote run`` cannot own a process here, or "" when it can."""
    dunscaith = default_dunscaith()
    probe = Path(os.environ.get("TMPDIR", "/tmp")) / f"dunscaith-remote-probe-{uuid.uuid4().hex}"
    try:
        done = subprocess.run(
            [*dunscaith, "remote", "run", "--instance-dir", str(probe / "i"), "--", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0 or not (probe / "i" / "outcome.json").exists():
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
            return f"dunscaith remote run is not available ({tail[0]})"
        return ""
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"dunscaith remote run is not available ({exc})"
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def make_local(tmp_path: Path) -> SchedulerHarness:
    problem = remote_run_problem()
    if problem:
        pytest.skip(problem)
    return SchedulerHarness(
        scheduler=LocalScheduler(tmp_path / "records", grace_seconds=1.0),
        command_exiting=_command_exiting,
        command_running=("sleep", "300"),
        unknown_id=ObjectId("00000000-20000101T000000Z-00000000"),
        requeues=False,  # an object runs once: a new attempt is a new object
    )


def make_slurm(tmp_path: Path) -> SchedulerHarness:
    """The Slurm adapter on the real single-node Slurm 22.05 the test setup starts (tests/infra/slurm.py)."""
    from dunscaith.adapters.scheduler.slurm import SlurmCliScheduler, SlurmClusterConfig
    from tests.infra.slurm import SlurmUnavailable, shared_cluster

    try:
        cluster = shared_cluster()
    except SlurmUnavailable as exc:
        pytest.skip(str(exc))
    workdir = tmp_path / "slurm-work"  # jobs without a workdir write slurm-N.out where sbatch runs
    workdir.mkdir()
    return SchedulerHarness(
        scheduler=SlurmCliScheduler(SlurmClusterConfig(name="contract", env=cluster.env, workdir=workdir)),
        command_exiting=_command_exiting,
        command_running=("sleep", "300"),
        unknown_id=ObjectId("999999999"),
    )


def make_gridengine(tmp_path: Path) -> SchedulerHarness:
    """The Grid Engine adapter on the real single-node SGE 8.1.9 the test setup starts (tests/infra/gridengine.py)."""
    from dunscaith.adapters.scheduler.gridengine import GridEngineConfig, GridEngineScheduler
    from tests.infra.gridengine import GridEngineUnavailable, shared_cluster

    try:
        cluster = shared_cluster()
    except GridEngineUnavailable as exc:
        pytest.skip(str(exc))
    workdir = tmp_path / "sge-work"  # jobs without a workdir write NAME.oID where qsub runs
    workdir.mkdir()
    return SchedulerHarness(
        scheduler=GridEngineScheduler(
            GridEngineConfig(name="contract", env=cluster.env, workdir=workdir, ledger_dir=tmp_path / "sge-ledger")
        ),
        command_exiting=_command_exiting,
        command_running=("sleep", "300"),
        unknown_id=ObjectId("999999999"),
        requeues=False,  # Grid Engine requeues only a running job submitted rerunnable: an ended one is refused
    )


def shared(make: Callable[[Path], SchedulerHarness]) -> Callable[[Path], SchedulerHarness]:
    """The same scheduler behind a SharedQueryScheduler, as every Slurm cluster runs in dunscaith.

    A short ``max_age`` keeps the suite's waits short; the sharing itself is as in production."""

    def make_shared(tmp_path: Path) -> SchedulerHarness:
        harness = make(tmp_path)
        # as the container does: a SharedArrayQueryScheduler when the scheduler makes arrays
        harness.scheduler = sharing(harness.scheduler, tmp_path / "shared-query", SystemClock(), max_age=0.5)
        return harness

    return make_shared


FACTORIES: dict[str, Callable[[Path], SchedulerHarness]] = {
    "fake": make_fake,
    "local": make_local,
    "slurm": make_slurm,
    "shared-fake": shared(make_fake),
    "shared-local": shared(make_local),
    "shared-slurm": shared(make_slurm),
    "gridengine": make_gridengine,
    "shared-gridengine": shared(make_gridengine),
}
PARAMS = [
    "fake",
    pytest.param("local", marks=pytest.mark.slow),
    pytest.param("slurm", marks=[pytest.mark.slow, pytest.mark.slurm]),
    "shared-fake",
    pytest.param("shared-local", marks=pytest.mark.slow),
    pytest.param("shared-slurm", marks=[pytest.mark.slow, pytest.mark.slurm]),
    # Grid Engine as every cluster runs it, behind the shared query (the adapter alone: "gridengine" in FACTORIES,
    # and tests/integration/gridengine); one variant keeps its share of CI to a couple of minutes
    pytest.param("shared-gridengine", marks=pytest.mark.slow),
]
