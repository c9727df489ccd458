"""A supervisor's pointer notes: the state written durably on every change, supervised-at rarely and as a
refresh (its name not synced: a power loss only leaves it older)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import Pointer
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.state import JobState
from dunscaith.domain.services.jobs.pointer_notes import PointerNotes

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
HOST = HostIdentity(machine_id="a" * 32, hostname="login1")


class Recording(InMemoryPointers):
    def __init__(self) -> None:
        super().__init__()
        self.refreshes: list[bool] = []

    def write(self, pointer: Pointer, *, refresh: bool = False) -> None:
        self.refreshes.append(refresh)
        super().write(pointer, refresh=refresh)


def test_supervised_at_is_written_as_a_refresh_at_most_once_every_ten_poll_intervals() -> None:
    pointers = Recording()
    start = Pointer(job=JobId("j-1"), host="login1", record_root="/var/tmp/r", root_host=HOST, binary="/opt/d",
                    cluster="local", adapter="local", state="running", state_at=T0, supervised_at=None)
    notes = PointerNotes(pointers, start, poll=10.0)
    state: JobState = None  # type: ignore[assignment]  # supervised() does not look at the state
    notes.supervised(state, T0)
    notes.supervised(state, T0 + timedelta(seconds=99))
    notes.supervised(state, T0 + timedelta(seconds=100))
    assert pointers.refreshes == [True, True]
    assert pointers.read(JobId("j-1")).supervised_at == T0 + timedelta(seconds=100)


class Refusing(InMemoryPointers):
    """A home directory that refuses writes until told otherwise."""

    def __init__(self) -> None:
        super().__init__()
        self.refusing = True

    def write(self, pointer: Pointer, *, refresh: bool = False) -> None:
        if self.refusing:
            raise OSError(28, "No space left on device")
        super().write(pointer, refresh=refresh)


def test_a_pointer_write_that_fails_is_said_once_while_it_fails_and_again_after_one_succeeds() -> None:
    pointers, said = Refusing(), list[str]()
    start = Pointer(job=JobId("j-1"), host="login1", record_root="/var/tmp/r", root_host=HOST, binary="/opt/d",
                    cluster="local", adapter="local", state="running", state_at=T0, supervised_at=None)
    notes = PointerNotes(pointers, start, poll=10.0, on_problem=said.append)
    state: JobState = None  # type: ignore[assignment]  # supervised() does not look at the state
    for minutes in (0, 2, 4):
        notes.supervised(state, T0 + timedelta(minutes=minutes))
    assert len(said) == 1 and said[0].startswith("pointer of j-1 not updated: ") and "said once" in said[0]
    pointers.refusing = False
    notes.supervised(state, T0 + timedelta(minutes=6))
    pointers.refusing = True
    notes.supervised(state, T0 + timedelta(minutes=8))
    assert len(said) == 2
