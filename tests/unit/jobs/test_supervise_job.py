"""One supervision as the command line asks for it (``SuperviseJob``): the record read once, another host's
job refused before anything is written, the pointer, the sweep as supervision starts, the output."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import Pointer
from dunscaith.domain.model.jobs.record import HostIdentity, JobRecord
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import JobState
from dunscaith.domain.services.jobs.job_output import JobOutputs
from dunscaith.domain.services.jobs.owning_host import Owner, OwningHost
from dunscaith.domain.services.jobs.passes import supervise_one
from dunscaith.domain.services.jobs.submit import RecordJob
from dunscaith.domain.services.jobs.supervise import Ending
from dunscaith.domain.services.jobs.supervise_job import BoundElsewhere, SuperviseJob
from dunscaith.domain.services.jobs.sweep import Sweep, SweepReport
from dunscaith.entrypoints.dunscaith.root.kinds import capabilities
from dunscaith.ports.job_store import LockBusy
from tests.unit.jobs.helpers import NoCrash, Rig, StopAfter, rig
from tests.unit.jobs.test_host_binding import LOGIN1, LOGIN2, Host, SharedStore

BINARY = "/opt/d/bin/dunscaith"


class CountingStore(SharedStore):
    """A shared store that counts whole-record reads (``read``)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def read(self, job: JobId) -> JobRecord:
        self.reads += 1
        return super().read(job)


@dataclass
class View:
    lines: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    entered: int = 0

    def committed(self, state: JobState, event: object) -> None:
        pass

    def supervised(self, state: JobState, at: datetime) -> None:
        pass

    def note(self, text: str) -> None:
        self.lines.append(text)

    def show(self, state: JobState) -> None:
        self.shown.append(str(state.name))

    def line(self, text: str) -> None:
        self.lines.append(text)

    def __enter__(self) -> View:
        self.entered += 1
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class NoFiles:
    def last_lines(self, path: str, count: int) -> list[str]:
        return [f"last of {path}"]

    def chunks(self, path: str):  # type: ignore[no-untyped-def]
        return iter(())

    def tail(self, path: str, count: int, *, limit: int | None = None) -> tuple[bytes, int]:
        return b"", 0

    def follower(self):  # type: ignore[no-untyped-def]
        raise AssertionError("not followed here")

    def remove_folder(self, folder: str, under: str) -> bool:
        return True


class BrokenPointers(InMemoryPointers):
    def write(self, pointer: Pointer, *, refresh: bool = False) -> None:
        raise OSError(30, "Read-only file system")


@dataclass
class Setup:
    rig: Rig
    use_case: SuperviseJob
    view: View
    problems: list[str]
    sweeps: list[SweepReport]
    pointers: InMemoryPointers
    store: CountingStore


def _setup(here: HostIdentity = LOGIN1, *, exit_code: int = 0, pointers: InMemoryPointers | None = None,
           sweep_fails: bool = False) -> Setup:
    store = CountingStore()
    r = rig(exit_code, store=store)
    view, problems, sweeps = View(), list[str](), list[SweepReport]()
    pointers = pointers or InMemoryPointers()
    sweep = Sweep(r.residual, lambda cluster: r.scheduler, r.clock)
    if sweep_fails:
        def broken() -> SweepReport:
            raise RuntimeError("the residual list is on a home that is gone")
        sweep = broken  # type: ignore[assignment]

    def supervisor(*, cluster: str, progress: object) -> object:
        r.supervisor.means.progress = progress  # type: ignore[assignment]  # the rig's supervisor, with the fanout
        return r.supervisor

    owning = OwningHost(pointers, here, lambda: None, capabilities=capabilities)
    use_case = SuperviseJob(store=store, pointers=pointers, owning=owning, here=here, binary=BINARY,
                            supervisor=supervisor,  # type: ignore[arg-type]
                            views=lambda job, **display: view, sweep=sweep,
                            outputs=JobOutputs(NoFiles(), lambda cluster: r.scheduler, r.clock, "/var/tmp/r"),
                            poll=1.0, on_problem=problems.append, on_sweep=sweeps.append)
    return Setup(r, use_case, view, problems, sweeps, pointers, store)


def _record_local(s: Setup, host: HostIdentity = LOGIN1) -> JobId:
    spec = JobSpec(JobId("j1"), "local", "local", ("true",))
    return RecordJob(s.store, s.rig.clock, NoCrash(), Host(host), capabilities=capabilities)(spec)


def test_a_job_bound_to_another_host_is_refused_before_anything_is_written_or_locked() -> None:
    s = _setup(here=LOGIN2)
    job = _record_local(s, LOGIN1)
    s.pointers.write(Pointer(job, "login1", "postgresql://alice@db/records", LOGIN1, "/there/bin/dunscaith",
                             "local", "local", "running", datetime.now(UTC), None))
    before = s.store.read(job).events
    with pytest.raises(BoundElsewhere) as refused:
        s.use_case(job, StopAfter(s.rig.clock), fresh=True)
    assert refused.value.owner == Owner("login1", "/there/bin/dunscaith")  # dunscaith's path on the owning host
    assert "host login1" in str(refused.value)
    assert s.store.read(job).events == before and s.view.entered == 0 and s.sweeps == []
    assert not s.store.health(job).held


def test_a_job_another_supervisor_holds_is_refused_and_nothing_is_sent() -> None:
    s = _setup()
    job = s.rig.record()
    with s.store.lock(job), pytest.raises(LockBusy):
        s.use_case(job, StopAfter(s.rig.clock), fresh=False)
    assert not s.rig.scheduler.query([job], confirm_absent=True).objects  # nothing was created
    assert s.rig.kinds(job) == ["job-recorded"]


def test_a_pointer_that_cannot_be_written_is_reported_and_supervision_goes_on() -> None:
    s = _setup(pointers=BrokenPointers())
    job = s.rig.record()
    done = s.use_case(job, StopAfter(s.rig.clock), fresh=True)
    assert done.end.ending is Ending.OUTCOME
    assert any("pointer of j1 not written: Read-only file system" in p for p in s.problems)


def test_a_sweep_that_cannot_run_is_reported_and_never_stops_supervision() -> None:
    s = _setup(sweep_fails=True)
    job = s.rig.record()
    done = s.use_case(job, StopAfter(s.rig.clock), fresh=True)
    assert done.end.ending is Ending.OUTCOME
    assert s.problems == ["sweep not run: the residual list is on a home that is gone"]


def test_the_record_is_read_once_before_the_supervisor_s_loop_and_a_fresh_job_gets_its_pointer() -> None:
    s = _setup()
    job = s.rig.record()
    s.store.reads = 0
    done = s.use_case(job, StopAfter(s.rig.clock), fresh=True)
    assert done.end.ending is Ending.OUTCOME and len(s.sweeps) == 1 and s.view.shown == ["j1"]
    # the same job supervised by the supervisor alone: it reads the record once more before its loop
    s2 = _setup()
    job2 = s2.rig.record()
    s2.store.reads = 0
    with s2.store.lock(job2) as lock:
        supervise_one(s2.rig.supervisor, job2, lock, StopAfter(s2.rig.clock))
    assert s.store.reads == s2.store.reads  # the use case's one read stands in for that one
    pointer = s.pointers.read(job)
    assert (pointer.binary, pointer.host, pointer.state) == (BINARY, "login1", "succeeded")


def test_a_reattached_supervisor_says_so() -> None:
    s = _setup(exit_code=3)
    job = s.rig.record()
    s.use_case(job, StopAfter(s.rig.clock), fresh=True)
    again = s.use_case(job, StopAfter(s.rig.clock), fresh=False)
    assert any(line.startswith("already done: outcome failed") for line in s.view.lines)
    assert again.end.ending is Ending.OUTCOME


def _failed_local(stdout: str) -> JobState:
    from dunscaith.domain.model.jobs.state import fold

    store = InMemoryStore()
    spec = JobSpec(JobId("j1"), "local", "local", ("false",))
    RecordJob(store, rig().clock, NoCrash())(spec)
    r = rig(3, store=store)
    r.run(spec.name)
    state = fold(store.read(spec.name))
    assert state.outcome is not None and state.attempts
    attempt = state.attempts[-1]
    from dataclasses import replace

    return replace(state, attempts=(*state.attempts[:-1], replace(attempt, stdout=stdout, stderr=stdout)))


def test_a_failed_job_s_stderr_tail_is_read_and_a_succeeded_one_s_is_not() -> None:
    outputs = JobOutputs(NoFiles(), lambda cluster: rig().scheduler, rig().clock, "/var/tmp/r")
    state = _failed_local("/var/tmp/r/objects/j1-1/stdout")
    assert outputs.failure_tail(state, "/var/tmp/r/objects/j1-1/stderr") == ("last of /var/tmp/r/objects/j1-1/stderr",)
    assert outputs.failure_tail(state, None) == ()


@pytest.mark.parametrize(("stdout", "removed"), [
    ("/var/tmp/r/objects/j1-1/stdout", ["/var/tmp/r/objects/j1-1"]),  # in this host's record root
    ("/home/me/out/j1-1/stdout", []),  # elsewhere: never touched
    ("/var/tmp/r/j1-1/stdout", []),  # not an object folder of the root
])
def test_prune_outputs_removes_only_a_pruned_local_job_s_folders_in_the_record_root(
        stdout: str, removed: list[str]) -> None:
    from dataclasses import replace

    outputs = JobOutputs(NoFiles(), lambda cluster: rig().scheduler, rig().clock, "/var/tmp/r")
    state = _failed_local(stdout)
    assert outputs.remove_folders([state]) == []  # not pruned: nothing removed
    assert outputs.remove_folders([replace(state, pruned_at=datetime.now(UTC))]) == removed


class Written:
    """Output files of the given contents (a path missing from it does not read)."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def tail(self, path: str, count: int, *, limit: int | None = None) -> tuple[bytes, int]:
        if path not in self.files:
            raise FileNotFoundError(2, "No such file or directory")
        data = self.files[path]
        lines = data.splitlines(keepends=True)[-count:]
        return b"".join(lines)[-(limit or len(data)):], len(data)


def _succeeded_local() -> JobState:
    from dunscaith.domain.model.jobs.state import OutcomeKind

    state = _failed_local("/o/stdout")
    from dataclasses import replace

    assert state.outcome is not None
    return replace(state, outcome=replace(state.outcome, kind=OutcomeKind.SUCCEEDED))


def test_the_end_of_the_output_once_the_job_ended_bounded_and_said_when_cut() -> None:
    from dunscaith.domain.services.jobs.job_output import OUTPUT_TAIL_LINES, OutputTail

    many = b"".join(b"%d\n" % i for i in range(100))
    files = Written({"/o/stdout": b"hi\n", "/o/stderr": b"", "/o/long": many, "/o/warn": b"careful\n"})
    outputs = JobOutputs(files, lambda cluster: rig().scheduler, rig().clock, "/var/tmp/r")  # type: ignore[arg-type]
    ok, failed = _succeeded_local(), _failed_local("/o/stdout")
    assert outputs.ending_tails(ok, "/o/stdout", "/o/stderr") == (OutputTail("stdout", "/o/stdout", ("hi",)),)
    assert outputs.ending_tails(ok, "/o/long", "/o/warn") == (
        OutputTail("stdout", "/o/long", tuple(str(i) for i in range(100 - OUTPUT_TAIL_LINES, 100)), cut=True),
        OutputTail("stderr", "/o/warn", ("careful",)))
    # a failed job's stderr is the failure tail's; one file for both is "output"
    assert outputs.ending_tails(failed, "/o/stdout", "/o/warn") == (OutputTail("stdout", "/o/stdout", ("hi",)),)
    assert outputs.ending_tails(ok, "/o/stdout", "/o/stdout") == (OutputTail("output", "/o/stdout", ("hi",)),)
    assert outputs.ending_tails(ok, "/o/gone", None) == (
        OutputTail("stdout", "/o/gone", problem="No such file or directory"),)
    assert outputs.ending_tails(ok, None, None) == ()
