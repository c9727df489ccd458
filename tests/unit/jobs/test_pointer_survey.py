"""PointerSurveys: other hosts' jobs and damaged pointers from the index, never from every pointer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import DamagedPointer, Pointer, PointerReading
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.services.jobs.pointer_survey import PointerSurveys

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
HERE = HostIdentity(machine_id="a" * 32, hostname="login1")
THERE = HostIdentity(machine_id="b" * 32, hostname="login2")


def _pointer(job: str, state: str, host: HostIdentity = THERE, seen: datetime | None = None,
             root: str = "/var/tmp/dunscaith-ada") -> Pointer:
    return Pointer(JobId(job), host.hostname, root, host, "/opt/bin/dunscaith", "local", "local", state, T0, seen)


class _Counting(InMemoryPointers):
    """Counts the pointers read one by one, and whether every pointer was read."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []
        self.all_calls = 0
        self.damaged: set[str] = set()

    def read(self, job: JobId) -> Pointer:
        self.reads.append(job)
        if job in self.damaged:
            raise DamagedPointer(job, "not JSON")
        return super().read(job)

    def all(self) -> list[PointerReading]:
        self.all_calls += 1
        return [PointerReading(r.job, None, "damaged") if r.job in self.damaged else r for r in super().all()]


def _surveys(pointers: InMemoryPointers, clock: FakeClock | None = None, shared: str | None = None) -> PointerSurveys:
    return PointerSurveys(pointers, clock or FakeClock(T0 + timedelta(hours=1)), poll=5.0, here=HERE, shared=shared)


def test_the_survey_reads_only_the_indexed_pointers_once_the_index_is_built() -> None:
    pointers = _Counting()
    pointers.index_built()
    for i in range(50):
        pointers.write(_pointer(f"done-{i}", "succeeded"))
    pointers.write(_pointer("far", "running"))
    pointers.reads.clear()
    survey = _surveys(pointers).unsettled()
    assert [p.pointer.job for p in survey.elsewhere] == ["far"] and survey.elsewhere[0].unattended
    assert pointers.reads == ["far"] and pointers.all_calls == 0


def test_a_home_never_indexed_is_read_whole_once_and_indexed_for_the_next_command() -> None:
    pointers = _Counting()
    pointers.pointers[JobId("old-far")] = _pointer("old-far", "running")  # as an older dunscaith wrote it
    pointers.pointers[JobId("old-done")] = _pointer("old-done", "failed")
    first = _surveys(pointers).unsettled()
    assert [p.pointer.job for p in first.elsewhere] == ["old-far"] and pointers.all_calls == 1
    assert pointers.indexed() == ["old-far"]
    second = _surveys(pointers).unsettled()
    assert [p.pointer.job for p in second.elsewhere] == ["old-far"] and pointers.all_calls == 1


def test_a_stale_entry_is_passed_over_and_removed_only_on_the_host_that_wrote_the_pointer() -> None:
    pointers = InMemoryPointers()
    pointers.index_built()
    pointers.pointers[JobId("mine")] = _pointer("mine", "succeeded", HERE)  # settled; the crash kept its entry
    pointers.entries[JobId("mine")] = HERE
    pointers.pointers[JobId("theirs")] = _pointer("theirs", "succeeded", THERE)
    pointers.entries[JobId("theirs")] = THERE
    pointers.entries[JobId("no-pointer")] = HERE  # a crash between the entry and the first pointer
    survey = _surveys(pointers).unsettled()
    assert survey.elsewhere == () and survey.damaged == ()
    assert pointers.indexed() == ["no-pointer", "theirs"]  # login2's entry is login2's to remove


def test_damaged_indexed_pointers_are_reported_and_kept_in_the_index() -> None:
    pointers = _Counting()
    pointers.index_built()
    pointers.write(_pointer("bad", "running"))
    pointers.damaged.add("bad")
    survey = _surveys(pointers).unsettled()
    assert [job for job, _ in survey.damaged] == ["bad"] and "damaged" in survey.damaged[0][1]
    assert pointers.indexed() == ["bad"]


def test_this_host_s_and_the_shared_store_s_jobs_are_not_elsewhere() -> None:
    pointers = InMemoryPointers()
    pointers.index_built()
    pointers.write(_pointer("here", "running", HERE))
    pointers.write(_pointer("shared", "running", THERE, root="postgresql://ada@db/dunscaith"))
    pointers.write(_pointer("far", "running", THERE, seen=T0 + timedelta(minutes=59)))
    survey = _surveys(pointers, shared="postgresql://ada@db/dunscaith").unsettled()
    assert [(p.pointer.job, p.unattended) for p in survey.elsewhere] == [("far", False)]  # seen recently
    assert survey.recorded_here  # "here": a store of this host should hold it (list opens it, which says if lost)


def test_a_survey_of_other_hosts_and_the_shared_store_s_jobs_only_names_none_recorded_here() -> None:
    pointers = InMemoryPointers()
    pointers.index_built()
    pointers.write(_pointer("shared", "running", THERE, root="postgresql://ada@db/dunscaith"))
    pointers.write(_pointer("far", "running", THERE))
    pointers.write(_pointer("done-here", "succeeded", HERE))  # settled: not in the index
    assert not _surveys(pointers, shared="postgresql://ada@db/dunscaith").unsettled().recorded_here


def test_everything_reads_every_pointer_settled_ones_too() -> None:
    pointers = _Counting()
    pointers.index_built()
    pointers.write(_pointer("done", "succeeded"))
    pointers.write(_pointer("far", "running"))
    survey = _surveys(pointers).everything()
    assert [(p.pointer.job, p.unattended) for p in survey.elsewhere] == [("done", False), ("far", True)]


def test_damaged_of_names_the_damaged_pointers_among_those_asked_and_a_missing_one_is_no_damage() -> None:
    pointers = _Counting()
    pointers.write(_pointer("ok", "succeeded", HERE))
    pointers.write(_pointer("bad", "succeeded", HERE))
    pointers.damaged.add("bad")
    found = _surveys(pointers).damaged_of([JobId("ok"), JobId("bad"), JobId("none")])
    assert [job for job, _ in found] == ["bad"] and pointers.all_calls == 0


def test_elsewhere_of_gives_the_pointer_of_another_host_s_job_only() -> None:
    pointers = InMemoryPointers()
    pointers.write(_pointer("far", "succeeded"))
    pointers.write(_pointer("here", "running", HERE))
    surveys = _surveys(pointers)
    found = surveys.elsewhere_of(JobId("far"))
    assert found is not None and found.host == "login2"
    assert surveys.elsewhere_of(JobId("here")) is None and surveys.elsewhere_of(JobId("none")) is None


def test_listed_reports_each_damaged_pointer_once_from_the_index_and_the_shown_jobs() -> None:
    pointers = _Counting()
    pointers.index_built()
    pointers.write(_pointer("far-bad", "running"))
    pointers.write(_pointer("mine-bad", "succeeded", HERE))
    pointers.write(_pointer("mine-ok", "succeeded", HERE))
    pointers.write(_pointer("not-shown-bad", "succeeded", HERE))
    pointers.damaged |= {"far-bad", "mine-bad", "not-shown-bad"}
    survey = _surveys(pointers).listed([JobId("mine-bad"), JobId("mine-ok"), JobId("far-bad")])
    assert [job for job, _ in survey.damaged] == ["far-bad", "mine-bad"] and pointers.all_calls == 0
    every = _surveys(pointers).listed([JobId("mine-bad")], every=True)
    assert sorted(job for job, _ in every.damaged) == ["far-bad", "mine-bad", "not-shown-bad"]
