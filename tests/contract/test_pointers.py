"""One contract for the Pointers port, its file adapter and its in-memory fake: the pointers and the
index of pointers not settled that the Unattended notice, ``status`` and ``list`` read."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dunscaith.adapters.pointers.files import FilePointers
from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import BadPointerName, IndexEntry, NoPointer, Pointer
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.ports.pointers import Pointers

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
LOGIN1 = HostIdentity(machine_id="a" * 32, hostname="login1")
LOGIN2 = HostIdentity(machine_id="b" * 32, hostname="login2")


def pointer(job: str, state: str = "running", host: HostIdentity = LOGIN1) -> Pointer:
    return Pointer(job=JobId(job), host=host.hostname, record_root="/var/tmp/dunscaith-ada", root_host=host,
                   binary="/opt/dunscaith/bin/dunscaith", cluster="local", adapter="local", state=state,
                   state_at=T0, supervised_at=None)


ADAPTERS: dict[str, Callable[[Path], Pointers]] = {
    "files": lambda tmp: FilePointers(tmp / "home" / ".config" / "dunscaith" / "jobs"),
    "memory": lambda tmp: InMemoryPointers(),
}


@pytest.fixture(params=sorted(ADAPTERS))
def pointers(request: pytest.FixtureRequest, tmp_path: Path) -> Pointers:
    return ADAPTERS[request.param](tmp_path)


def test_an_index_never_built_answers_none_until_it_is(pointers: Pointers) -> None:
    pointers.write(pointer("a"))
    assert pointers.indexed() is None  # pointers an older dunscaith wrote may be missing from it
    pointers.index_built()
    assert pointers.indexed() == ["a"]


def test_a_pointer_not_settled_is_indexed_naming_its_host_and_leaves_the_index_when_it_settles(
        pointers: Pointers) -> None:
    pointers.index_built()
    pointers.write(pointer("a", "submitting"))
    pointers.write(pointer("b", "running", LOGIN2))
    pointers.write(pointer("a", "running"))
    assert pointers.indexed() == ["a", "b"]
    assert pointers.index_entry(JobId("b")) == IndexEntry(JobId("b"), LOGIN2)
    pointers.write(pointer("a", "succeeded"))
    assert pointers.indexed() == ["b"] and pointers.index_entry(JobId("a")) is None
    assert pointers.read(JobId("a")).state == "succeeded"


def test_a_settled_pointer_is_never_indexed(pointers: Pointers) -> None:
    pointers.index_built()
    for word in ("succeeded", "failed", "refused", "escalated", "cancelled", "abandoned"):
        pointers.write(pointer(f"j-{word}", word))
    assert pointers.indexed() == []
    assert len(pointers.all()) == 6


def test_remove_drops_the_pointer_and_its_entry_and_tolerates_either_missing(pointers: Pointers) -> None:
    pointers.index_built()
    pointers.write(pointer("a"))
    pointers.remove(JobId("a"))
    assert pointers.indexed() == [] and pointers.all() == []
    with pytest.raises(NoPointer):
        pointers.read(JobId("a"))
    pointers.index(JobId("gone"), LOGIN1)  # an entry a crash left without its pointer
    pointers.remove(JobId("gone"))
    pointers.remove(JobId("gone"))
    assert pointers.indexed() == []


def test_index_keeps_an_entry_there_and_unindex_tolerates_a_missing_one(pointers: Pointers) -> None:
    pointers.index_built()
    pointers.index(JobId("a"), LOGIN2)
    pointers.index(JobId("a"), LOGIN1)
    assert pointers.index_entry(JobId("a")) == IndexEntry(JobId("a"), LOGIN2)
    pointers.unindex(JobId("a"))
    pointers.unindex(JobId("a"))
    assert pointers.indexed() == [] and pointers.index_entry(JobId("a")) is None


def test_an_entry_without_a_pointer_is_listed_for_its_reader_to_pass_over(pointers: Pointers) -> None:
    pointers.index_built()
    pointers.index(JobId("half"), LOGIN1)
    assert pointers.indexed() == ["half"]
    with pytest.raises(NoPointer):
        pointers.read(JobId("half"))


def test_a_name_that_cannot_be_a_file_is_refused_by_the_index_too(pointers: Pointers) -> None:
    with pytest.raises(BadPointerName):
        pointers.index(JobId("../x"), LOGIN1)
    with pytest.raises(BadPointerName):
        pointers.write(pointer(".hidden"))


def test_a_usable_folder_passes_the_check_and_is_made_if_missing(pointers: Pointers) -> None:
    pointers.check_writable()
    pointers.write(pointer("a"))
    pointers.check_writable()


def test_a_pointers_folder_that_is_a_file_fails_the_check_naming_it(tmp_path: Path) -> None:
    from dunscaith.domain.model.jobs.pointer import PointerError

    folder = tmp_path / "home" / ".config" / "dunscaith" / "jobs"
    folder.parent.mkdir(parents=True)
    folder.write_text("")
    with pytest.raises(PointerError, match=f"^the folder of pointers cannot be used: {folder} is not a directory$"):
        FilePointers(folder).check_writable()


def test_a_refresh_of_supervised_at_reads_back_as_any_write_and_keeps_the_pointer_indexed(pointers: Pointers) -> None:
    pointers.index_built()
    first = pointer("refreshed")
    pointers.write(first)
    later = first.with_supervised(T0.replace(hour=13))
    pointers.write(later, refresh=True)
    assert pointers.read(JobId("refreshed")) == later
    assert pointers.indexed() == ["refreshed"]


def test_a_sweeps_attendances_are_written_whole_listed_and_removed_one_holder_at_a_time(pointers: Pointers) -> None:
    from dunscaith.domain.model.jobs.sweep_attendance import SweepAttendance

    first = SweepAttendance(JobId("exp"), "login1-aa", LOGIN1, T0, frozenset({1, 2, 3}))
    second = SweepAttendance(JobId("exp"), "login1-bb", LOGIN1, T0, frozenset({4}))
    assert pointers.attendances() == []
    pointers.write_attendance(first)
    pointers.write_attendance(second)
    later = SweepAttendance(JobId("exp"), "login1-aa", LOGIN1, T0.replace(hour=13), frozenset({1, 3}))
    pointers.write_attendance(later)  # the same holder's replaces its older one
    assert pointers.attendances() == [later, second]
    assert [reading.job for reading in pointers.all()] == []  # never taken for a pointer
    pointers.remove_attendance(JobId("exp"), "login1-aa")
    pointers.remove_attendance(JobId("exp"), "login1-aa")  # gone already: harmless
    assert pointers.attendances() == [second]


def test_a_damaged_attendance_file_is_left_out(tmp_path: Path) -> None:
    from dunscaith.domain.model.jobs.sweep_attendance import SweepAttendance

    files = FilePointers(tmp_path / "jobs")
    kept = SweepAttendance(JobId("exp"), "login1-aa", LOGIN1, T0, frozenset({1}))
    files.write_attendance(kept)
    (files.attendance_dir / "exp@login1-zz").write_text("not json")
    assert files.attendances() == [kept]


def test_a_batch_is_written_as_each_of_its_pointers_would_be(pointers: Pointers) -> None:
    pointers.index_built()
    pointers.write(pointer("old", "running"))
    pointers.write_many([pointer("s-1", "submitting"), pointer("s-2", "submitting", LOGIN2),
                         pointer("old", "succeeded"), pointer("s-1", "created")])  # a later one of a name wins
    assert pointers.read(JobId("s-1")).state == "created"
    assert pointers.read(JobId("s-2")).root_host == LOGIN2 and pointers.read(JobId("old")).state == "succeeded"
    assert pointers.indexed() == ["s-1", "s-2"]  # the settled one left the index, the others entered it
    assert pointers.index_entry(JobId("s-2")) == IndexEntry(JobId("s-2"), LOGIN2)
    assert [reading.job for reading in pointers.all()] == ["old", "s-1", "s-2"]


def test_a_batch_with_a_name_that_cannot_be_a_file_writes_none_of_it(pointers: Pointers) -> None:
    pointers.index_built()
    with pytest.raises(BadPointerName):
        pointers.write_many([pointer("fine"), pointer("../escape")])
    with pytest.raises(NoPointer):
        pointers.read(JobId("fine"))
    assert pointers.indexed() == [] and pointers.all() == []


def test_an_empty_batch_writes_nothing(pointers: Pointers) -> None:
    pointers.write_many([])
    assert pointers.all() == [] and pointers.indexed() is None
